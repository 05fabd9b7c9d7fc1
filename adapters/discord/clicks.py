"""A click on one of askbridge's components, turned into one broker call.

`parse` reads the interaction, `apply` makes the broker call and says what to tell the person,
`respond` wires both to Discord: acknowledge first (Discord allows 3 seconds), then act, then
reply ephemerally if there is something to say. Every broker call is idempotent or guarded by
the store's compare-and-set, so a duplicate click is harmless.

Who may answer is the broker's call: the click carries the member's roles (as
`discord-role:<id>` groups), and a refusal becomes a private note naming who may answer.
With a quorum, a vote that does not decide the request yet is confirmed privately.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import discord

from adapters.discord.approvals import groups, not_eligible, plain, vote_note
from adapters.discord.bot import BridgeBot
from adapters.discord.codec import Action, ComponentId
from adapters.discord.text import shorten
from core.answers import unanswered
from core.broker import Broker
from core.errors import (
    AlreadyEnded,
    ForeignMessage,
    MissingAnswers,
    NotEligible,
    NotFound,
    describe_end,
)
from core.models import MessageRef, Person, Request, Selections

log = logging.getLogger("askbridge.discord")

MAX_CONTENT = 2000
GONE = "This question is no longer available."
FAILED = "Sorry, that did not work. Please try again in a moment."
NO_PINGS = discord.AllowedMentions.none()


def is_one_click(request: Request) -> bool:
    """A request of one single-select question is answered by clicking an option."""
    return len(request.questions) == 1 and not request.questions[0].multi_select


@dataclass(frozen=True)
class Click:
    component: ComponentId
    person: Person
    origin: MessageRef
    values: tuple[str, ...] = ()


def parse(
    interaction: discord.Interaction[Any], component: ComponentId, values: Sequence[str]
) -> Click:
    user = interaction.user
    message_id = interaction.message.id if interaction.message is not None else 0
    person = Person(
        platform="discord",
        id=str(user.id),
        name=user.display_name,
        groups=groups(user, interaction.guild_id),
    )
    return Click(
        component=component,
        person=person,
        origin=MessageRef(
            platform="discord", channel=str(interaction.channel_id), message_id=str(message_id)
        ),
        values=tuple(values),
    )


async def apply(broker: Broker, click: Click) -> str | None:
    """Make the broker call the click stands for; return the ephemeral reply, if any."""
    component, person, origin = click.component, click.person, click.origin
    request_id = component.request_id
    try:
        match component.action:
            case Action.CHOOSE | Action.PICK:
                assert component.question is not None
                question = component.question
                if component.option is not None:
                    options: tuple[int, ...] = (component.option,)
                else:
                    options = _indices(click.values)
                request = await broker.get(request_id)
                if is_one_click(request):
                    voted = await broker.submit(request_id, person, {question: options}, origin)
                    return vote_note(voted, person)
                draft = await broker.select(request_id, person, question, options, origin)
                return _chosen(request, question, draft)
            case Action.SUBMIT:
                voted = await broker.submit(request_id, person, None, origin)
                return vote_note(voted, person)
            case Action.CANCEL:
                await broker.cancel(request_id, person, origin)
    except NotEligible as error:
        return not_eligible(error.answerers)
    except MissingAnswers as error:
        return str(error)
    except AlreadyEnded as error:
        return already_ended(error.request)
    except NotFound:
        return GONE
    except ForeignMessage as error:
        return str(error)
    return None


async def respond(
    interaction: discord.Interaction[Any], component: ComponentId, values: Sequence[str]
) -> None:
    """Acknowledge the click at once, act on it, and tell the person what they need to know."""
    try:
        # Type 6: "got it", with no visible change; the broker's answer may take a moment.
        await interaction.response.defer()
    except discord.HTTPException:
        log.warning("could not acknowledge a click on %s in time", component.pack(), exc_info=True)
        return
    client = interaction.client
    if not isinstance(client, BridgeBot):
        log.error("a click on %s reached a client without a broker", component.pack())
        return
    click = parse(interaction, component, values)
    try:
        reply = await apply(client.broker, click)
    except Exception:
        log.exception("handling a click on %s failed", component.pack())
        reply = FAILED
    log.info(
        "discord: %s on %s by user %s",
        component.action.name.lower(),
        component.request_id,
        click.person.id,
    )
    if reply:
        try:
            await interaction.followup.send(
                shorten(reply, MAX_CONTENT), ephemeral=True, allowed_mentions=NO_PINGS
            )
        except discord.HTTPException:
            log.warning("could not tell %s: %s", click.person.id, reply, exc_info=True)


def already_ended(request: Request) -> str:
    """Why a click came too late, with names safe to show in Discord markdown."""
    return plain(describe_end(request))


def _indices(values: Sequence[str]) -> tuple[int, ...]:
    if not all(v.isdigit() for v in values):
        raise ForeignMessage()
    return tuple(int(v) for v in values)


def _chosen(request: Request, question: int, draft: Selections) -> str:
    """What a person is told after a choice: the choice, and what is left before Submit."""
    asked = request.questions[question]
    picked = ", ".join(asked.options[o].label for o in draft.get(question, ()))
    missing = unanswered(request.questions, draft)
    if missing:
        rest = ", ".join(f"**{h}**" for h in missing)
        return f"**{asked.header}**: {picked}. Still to answer: {rest}; then press **Submit**."
    return f"**{asked.header}**: {picked}. Press **Submit** to send your answers."
