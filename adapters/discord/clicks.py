"""A click on one of askbridge's components (or a form's submission): one `Broker.act` call,
and a private note.

`parse` reads who clicked, on which message, meaning what; `notes` words each outcome once;
`respond` wires both to Discord: acknowledge first (Discord allows 3 seconds), then act, then
reply ephemerally if there is something to say. The first response goes through a `First`:
over the gateway it is a REST callback (`Callback`); in HTTP interactions mode it is the
reply to Discord's request (`adapters.discord.endpoint`). Everything else is the same. The
broker reads the request once, checks the click once and writes with a compare-and-set, so a
duplicate click is harmless.

Who may answer is the broker's call: the click carries the member's roles (as
`discord-role:<id>` groups), and a refusal names who may answer.

Cancel acts only once confirmed: its click is answered with a private note asking whether to
cancel, whose button names the question's message through Discord's own record of the click
that made the note (`interacted_message_id`), so the broker checks it like any click on it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import discord
from discord import ui

from askbridge.adapters.discord.ids import Action, ActionButton, BadCustomId, CustomId
from askbridge.adapters.discord.markdown import shorten
from askbridge.adapters.discord.notes import cancel_note, note
from askbridge.core.broker import Broker
from askbridge.core.intents import (
    Cancel,
    Choose,
    Intent,
    Outcome,
    Pick,
    Submit,
)
from askbridge.core.models import MessageRef, Person
from askbridge.core.view import (
    CANCEL_QUESTION,
    CANCEL_SURE,
    CANCEL_WARNING,
    FAILED,
    FOREIGN_CLICK,
)

log = logging.getLogger("askbridge.discord")

MAX_CONTENT = 2000
NO_PINGS = discord.AllowedMentions.none()
ROLE_KIND = "discord-role"


class First(Protocol):
    """An interaction's one first response, within Discord's 3 seconds."""

    async def defer(self) -> None:
        """Type 6, DEFERRED_UPDATE_MESSAGE: "got it", with no visible change."""

    async def modal(self, modal: ui.Modal) -> None:
        """Type 9, MODAL."""

    async def note(self, text: str) -> None:
        """Type 4, CHANNEL_MESSAGE_WITH_SOURCE: a private (ephemeral) note, pinging nobody."""

    async def ask(self, text: str, buttons: ui.View) -> None:
        """Type 4 as well: a private note with buttons under it."""

    async def delivered(self) -> None:
        """Return once Discord has the first response: a follow-up sent before that is
        refused (Unknown Webhook)."""


class Callback:
    """The first response over REST (`POST /interactions/{id}/{token}/callback`), as
    discord.py sends it for an interaction that came over the gateway."""

    def __init__(self, interaction: discord.Interaction[Any]) -> None:
        self._response = interaction.response

    async def defer(self) -> None:
        await self._response.defer()

    async def modal(self, modal: ui.Modal) -> None:
        await self._response.send_modal(modal)

    async def note(self, text: str) -> None:
        await self._response.send_message(
            shorten(text, MAX_CONTENT), ephemeral=True, allowed_mentions=NO_PINGS
        )

    async def ask(self, text: str, buttons: ui.View) -> None:
        await self._response.send_message(
            shorten(text, MAX_CONTENT), view=buttons, ephemeral=True, allowed_mentions=NO_PINGS
        )

    async def delivered(self) -> None:
        """Each first response above has returned once Discord took it."""


@dataclass(frozen=True)
class Click:
    request_id: str
    person: Person
    origin: MessageRef
    intent: Intent
    sent_at: datetime
    """When Discord made the interaction (its id is a timestamp): a redelivery is no newer."""


def parse(
    interaction: discord.Interaction[Any], custom_id: CustomId, values: Sequence[str]
) -> Click:
    """Who clicked, on which message, meaning what; BadCustomId when the select's values are
    not the option numbers askbridge gave it."""
    question, option = custom_id.question or 0, custom_id.option or 0
    intent: Intent
    match custom_id.action:
        case Action.PICK:
            intent = Pick(question, option)
        case Action.CHOOSE:
            if not all(v.isdigit() for v in values):
                raise BadCustomId(f"{custom_id.pack()!r} sent {list(values)!r}, not option numbers")
            intent = Choose(question, tuple(int(v) for v in values))
        case Action.SUBMIT:
            intent = Submit()
        case Action.CONFIRM_CANCEL:
            intent = Cancel()
        case _:
            raise BadCustomId(f"{custom_id.pack()!r} is not a click that askbridge acts on")
    origin = where(interaction)
    if custom_id.action is Action.CONFIRM_CANCEL:
        # The button sits on the private question that the Cancel click was answered with;
        # Discord names the message that click came from.
        origin = asked_from(interaction)
    return Click(custom_id.request_id, who(interaction), origin, intent, sent(interaction))


def who(interaction: discord.Interaction[Any]) -> Person:
    """The person behind an interaction, with their roles as answerer groups."""
    user = interaction.user
    return Person(
        platform="discord",
        id=str(user.id),
        name=user.display_name,
        groups=groups(user, interaction.guild_id),
    )


def where(interaction: discord.Interaction[Any]) -> MessageRef:
    """The message an interaction came from (a click's, or the one whose button opened a form);
    an interaction without one names message 0, which no request has."""
    message_id = interaction.message.id if interaction.message is not None else 0
    return MessageRef(
        platform="discord", channel=str(interaction.channel_id), message_id=str(message_id)
    )


def asked_from(interaction: discord.Interaction[Any]) -> MessageRef:
    """The message whose component was clicked to make the private note `interaction` came
    from; message 0 when Discord names none."""
    note = interaction.message
    metadata = note.interaction_metadata if note is not None else None
    message_id = (metadata.interacted_message_id if metadata is not None else None) or 0
    return MessageRef(
        platform="discord", channel=str(interaction.channel_id), message_id=str(message_id)
    )


def sent(interaction: discord.Interaction[Any]) -> datetime:
    """When Discord made the interaction: its id is a timestamp."""
    return discord.utils.snowflake_time(interaction.id)


def groups(user: discord.User | discord.Member, guild_id: int | None) -> tuple[str, ...]:
    """The clicking member's roles as answerer entries; none in a DM.

    The role ids come from the interaction's own member object, so they are right even for
    a role the client's cache has not seen. The guild's id is its @everyone role.
    """
    if not isinstance(user, discord.Member) or guild_id is None:
        return ()
    ids = {int(r) for r in getattr(user, "_roles", ())}
    ids.update(role.id for role in user.roles)
    ids.add(guild_id)
    return tuple(f"{ROLE_KIND}:{i}" for i in sorted(ids))


async def respond(
    broker: Broker,
    interaction: discord.Interaction[Any],
    first: First,
    custom_id: CustomId,
    values: Sequence[str],
) -> None:
    """Acknowledge the click at once, act on it, and tell the person what they need to know.
    Cancel interrupts the agent for good, so it first asks the person, privately, whether they
    are sure (as Slack and the web page do); their answer edits that question."""
    if custom_id.action is Action.CANCEL:
        await ask_to_cancel(first, custom_id)
        return
    confirming = custom_id.action is Action.CONFIRM_CANCEL
    await act_and_tell(
        broker,
        interaction,
        first,
        custom_id,
        lambda: parse(interaction, custom_id, values),
        cancel_note if confirming else note,
        replace=confirming,
    )


async def ask_to_cancel(first: First, custom_id: CustomId) -> None:
    sure = ui.View(timeout=None)
    confirm = CustomId.confirm_cancel(custom_id.request_id)
    sure.add_item(ActionButton.make(confirm, CANCEL_SURE, discord.ButtonStyle.danger))
    # Its clicks reach askbridge by the button's custom_id, like every other's (`ids`), not
    # through a view kept in memory.
    sure.stop()
    try:
        await first.ask(f"{CANCEL_QUESTION} {CANCEL_WARNING}", sure)
    except discord.HTTPException:
        log.warning("could not ask whether to cancel %s", custom_id.request_id, exc_info=True)


async def act_and_tell(
    broker: Broker,
    interaction: discord.Interaction[Any],
    first: First,
    custom_id: CustomId,
    read: Callable[[], Click],
    word: Callable[[Outcome], str | None],
    *,
    replace: bool = False,
) -> None:
    """Acknowledge an interaction at once (a click, or a form's submission), act on what
    `read` makes of it, and tell the person privately what `word` makes of the outcome: in a
    note of its own, or (`replace`) in place of the private note that was clicked."""
    try:
        # Type 6: "got it", with no visible change; the broker's answer may take a moment.
        await first.defer()
    except discord.HTTPException:
        log.warning("could not acknowledge %s in time", custom_id, exc_info=True)
        return
    try:
        click = read()
        outcome = await broker.act(
            click.request_id, click.person, click.intent, click.origin, sent_at=click.sent_at
        )
        text = word(outcome)
    except BadCustomId as error:
        log.warning("refused a click: %s", error)
        text = FOREIGN_CLICK
    except Exception:
        log.exception("handling %s failed", custom_id)
        text = FAILED
    log.info(
        "discord: %s on %s by user %s",
        custom_id.action.name.lower(),
        custom_id.request_id,
        interaction.user.id,
    )
    if text:
        await first.delivered()
        await (replaced(interaction, text) if replace else tell(interaction, text))


async def replaced(interaction: discord.Interaction[Any], text: str) -> None:
    """The private note whose button was clicked, now saying `text`, without its buttons."""
    try:
        await interaction.edit_original_response(
            content=shorten(text, MAX_CONTENT), view=None, allowed_mentions=NO_PINGS
        )
    except discord.HTTPException:
        log.warning("could not tell %s: %s", interaction.user.id, text, exc_info=True)


async def tell(interaction: discord.Interaction[Any], text: str) -> None:
    """A private note to the person, after the interaction was acknowledged."""
    try:
        await interaction.followup.send(
            shorten(text, MAX_CONTENT), ephemeral=True, allowed_mentions=NO_PINGS
        )
    except discord.HTTPException:
        log.warning("could not tell %s: %s", interaction.user.id, text, exc_info=True)
