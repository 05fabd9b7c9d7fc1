"""The Discord listeners' work: a click on one of askbridge's components, or a form's
submission (a typed form's too), becomes one `Broker.act` call (or one `Broker.answer_form`)
and a private note.

Acknowledge first (Discord allows 3 seconds), then act, then reply ephemerally. The first
response goes through a `First`: a REST callback over the gateway (`Callback`), the reply to
Discord's request in HTTP interactions mode (`endpoint.Inline`). See ARCHITECTURE.md.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import discord
from discord import ui

from askbridge.adapters.discord import clicks
from askbridge.adapters.discord.clicks import Click
from askbridge.adapters.discord.forms import Modal, change_form, fill_form, form, why_no_form
from askbridge.adapters.discord.ids import ActionButton, BadCustomId, CustomId
from askbridge.adapters.discord.notes import cancel_note, form_note, note
from askbridge.adapters.discord.render import change_fits
from askbridge.adapters.discord.text import shorten
from askbridge.core.broker import Broker
from askbridge.core.errors import NotFound
from askbridge.core.intents import Action, Fill, Outcome, Refusal, Refused
from askbridge.core.view import (
    CANCEL_QUESTION,
    CANCEL_SURE,
    CANCEL_WARNING,
    FAILED,
    FOREIGN_CLICK,
)

log = logging.getLogger("askbridge.discord")

MAX_CONTENT = 2000
FILL_AGAIN = "Fill in again"
Style = discord.ButtonStyle
NO_PINGS = discord.AllowedMentions.none()


class First(Protocol):
    """An interaction's one first response, within Discord's 3 seconds.

    A note is sent with embeds suppressed, as every note is: it quotes labels and answers
    others wrote, and a link in one must not grow a card of the linked site's choosing.
    """

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
            shorten(text, MAX_CONTENT),
            ephemeral=True,
            allowed_mentions=NO_PINGS,
            suppress_embeds=True,
        )

    async def ask(self, text: str, buttons: ui.View) -> None:
        await self._response.send_message(
            shorten(text, MAX_CONTENT),
            view=buttons,
            ephemeral=True,
            allowed_mentions=NO_PINGS,
            suppress_embeds=True,
        )

    async def delivered(self) -> None:
        """Each first response above has returned once Discord took it."""


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

    async def read() -> Click:
        return clicks.parse(interaction, custom_id, values)

    await act_and_tell(
        broker,
        interaction,
        first,
        custom_id,
        read,
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
    read: Callable[[], Awaitable[Click]],
    word: Callable[[Outcome], str | None],
    *,
    replace: bool = False,
    buttons: Callable[[Outcome], ui.View | None] | None = None,
) -> None:
    """Acknowledge an interaction at once (a click, or a form's submission), act on what
    `read` makes of it, and tell the person privately what `word` makes of the outcome: in a
    note of its own, or (`replace`) in place of the private note that was clicked; with the
    buttons `buttons` gives for the outcome, if any."""
    under: ui.View | None = None
    try:
        # Type 6: "got it", with no visible change; the broker's answer may take a moment.
        await first.defer()
    except discord.HTTPException:
        log.warning("could not acknowledge %s in time", custom_id, exc_info=True)
        return
    try:
        click = await read()
        outcome = await broker.act(
            click.request_id, click.person, click.intent, click.origin, sent_at=click.sent_at
        )
        text = word(outcome)
        under = buttons(outcome) if buttons is not None else None
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
        await (replaced if replace else tell)(interaction, text, under)


async def replaced(
    interaction: discord.Interaction[Any], text: str, buttons: ui.View | None = None
) -> None:
    """The private note whose button was clicked, now saying `text`, with `buttons` in place
    of its own."""
    try:
        await interaction.edit_original_response(
            content=shorten(text, MAX_CONTENT), view=buttons, allowed_mentions=NO_PINGS
        )
    except discord.HTTPException:
        log.warning("could not tell %s: %s", interaction.user.id, text, exc_info=True)


async def tell(
    interaction: discord.Interaction[Any], text: str, buttons: ui.View | None = None
) -> None:
    """A private note to the person, after the interaction was acknowledged (with no link
    preview, as every note)."""
    content = shorten(text, MAX_CONTENT)
    try:
        if buttons is None:
            await interaction.followup.send(
                content, ephemeral=True, allowed_mentions=NO_PINGS, suppress_embeds=True
            )
        else:
            await interaction.followup.send(
                content,
                view=buttons,
                ephemeral=True,
                allowed_mentions=NO_PINGS,
                suppress_embeds=True,
            )
    except discord.HTTPException:
        log.warning("could not tell %s: %s", interaction.user.id, text, exc_info=True)


async def show_form(
    interaction: discord.Interaction[Any],
    first: First,
    custom_id: CustomId,
    modal: Modal | None,
    text: str | None,
    kind: str,
) -> None:
    """Answer a click on a button that opens a form with its `modal`, or with the note `text`
    saying why there is none; `kind` names the form in the log."""
    try:
        if modal is not None:
            await first.modal(modal)
        elif text:
            await first.note(text)
    except discord.HTTPException:
        log.warning("could not answer a click on %s in time", custom_id, exc_info=True)
    log.info(
        "discord: %s of %s %s for user %s",
        kind,
        custom_id.request_id,
        "opened" if modal is not None else "refused",
        interaction.user.id,
    )


async def open_form(
    broker: Broker, interaction: discord.Interaction[Any], first: First, custom_id: CustomId
) -> None:
    """Answer a click on the form's button with the form, or with why there is none. The
    modal must be the click's first response, so nothing is deferred first: the request and
    the person's draft are read once (`Broker.answer_form`)."""
    person = clicks.who(interaction)
    modal: Modal | None = None
    text: str | None = None
    try:
        opening = await broker.answer_form(custom_id.request_id, person, clicks.where(interaction))
        if isinstance(opening, Refused):
            text = note(opening)
        elif custom_id.action is Action.CHANGE:
            field = change_fits(opening.view)
            if field is None:
                text = FOREIGN_CLICK
            else:
                modal = change_form(opening.view, field)
                modal.stop()
        elif (text := why_no_form(opening.view, opening.draft)) is None:
            modal = form(opening.view, opening.draft)
            # Submissions are read from the raw interaction (see `forms`): a stopped modal is
            # not kept in discord.py's memory.
            modal.stop()
    except Exception:
        log.exception("opening the form of %s failed", custom_id.request_id)
        text = FAILED
    await show_form(interaction, first, custom_id, modal, text, "form")


async def submitted(
    broker: Broker, interaction: discord.Interaction[Any], first: First, custom_id: CustomId
) -> None:
    """Record a submitted form as the person's vote, or tell them privately why not."""

    async def read() -> Click:
        return clicks.parse_submission(interaction, custom_id)

    await act_and_tell(broker, interaction, first, custom_id, read, form_note)


# --- typed forms ------------------------------------------------------------------------------


class Kept:
    """What people gave typed forms that refused it, by request and person, so that "Fill in…"
    opens the form again as they left it. Kept in this process's memory only, the most recent
    `most`: nothing of a refused submission is recorded, so another replica, or a restart,
    opens the form with its defaults."""

    def __init__(self, most: int = 1000) -> None:
        self._values: OrderedDict[tuple[str, str], Mapping[str, object]] = OrderedDict()
        self._most = most

    def keep(self, request_id: str, person_id: str, values: Mapping[str, object]) -> None:
        self._values[request_id, person_id] = values
        self._values.move_to_end((request_id, person_id))
        while len(self._values) > self._most:
            self._values.popitem(last=False)

    def get(self, request_id: str, person_id: str) -> Mapping[str, object] | None:
        return self._values.get((request_id, person_id))

    def drop(self, request_id: str, person_id: str) -> None:
        self._values.pop((request_id, person_id), None)


async def open_fill(
    broker: Broker,
    interaction: discord.Interaction[Any],
    first: First,
    custom_id: CustomId,
    kept: Kept,
) -> None:
    """Answer a click on a typed form's "Fill in…" with its modal (prefilled with what the
    person gave before, if it was refused, else the defaults), or with why there is none. A
    form that is a link to open has "Done" instead, which fills it in with nothing."""
    person = clicks.who(interaction)
    modal: Modal | None = None
    text: str | None = None
    try:
        origin = clicks.origin(interaction)
        opening = await broker.answer_form(custom_id.request_id, person, origin)
        if isinstance(opening, Refused):
            text = note(opening)
        elif (form := opening.view.form) is None:
            text = FOREIGN_CLICK
        elif form.url is not None:
            await respond(broker, interaction, first, custom_id, ())
            return
        else:
            modal = fill_form(custom_id.request_id, form, kept.get(custom_id.request_id, person.id))
            # Submissions are read from the raw interaction (see `forms`).
            modal.stop()
    except Exception:
        log.exception("opening the form of %s failed", custom_id.request_id)
        text = FAILED
    await show_form(interaction, first, custom_id, modal, text, "typed form")


async def fill_submitted(
    broker: Broker,
    interaction: discord.Interaction[Any],
    first: First,
    custom_id: CustomId,
    kept: Kept,
) -> None:
    """Hand a typed form's submission to the broker (`Fill`), which checks every value: what
    it refuses is named privately, field by field, and nothing is recorded."""
    person = clicks.who(interaction)
    given: Click | None = None

    async def read() -> Click:
        nonlocal given
        try:
            request = await broker.get(custom_id.request_id)
        except NotFound:
            # The broker says so: it is gone.
            request = None
        form = request.form if request is not None else None
        if form is None and request is not None:
            raise BadCustomId(f"{custom_id.pack()!r} names a request without a typed form")
        if form is None:
            given = clicks.Click(
                custom_id.request_id,
                person,
                clicks.origin(interaction),
                Fill({}),
                clicks.sent(interaction),
            )
        else:
            given = clicks.parse_fill(interaction, custom_id, form)
        return given

    def word(outcome: Outcome) -> str | None:
        if refused_values(outcome):
            if given is not None and isinstance(given.intent, Fill):
                kept.keep(custom_id.request_id, person.id, given.intent.values)
        else:
            kept.drop(custom_id.request_id, person.id)
        return note(outcome)

    def again(outcome: Outcome) -> ui.View | None:
        if not refused_values(outcome):
            return None
        buttons = ui.View(timeout=None)
        button = ActionButton.make(CustomId.fill(custom_id.request_id), FILL_AGAIN, Style.primary)
        buttons.add_item(button)
        # Its click reaches askbridge by the button's custom_id, as every other's does.
        buttons.stop()
        return buttons

    # A form opened from the note of an earlier refusal answers in that note, so that its
    # button always names the note of the form's first submission (see `clicks.origin`).
    from_note = clicks.on_note(interaction)
    await act_and_tell(
        broker, interaction, first, custom_id, read, word, replace=from_note, buttons=again
    )


def refused_values(outcome: Outcome) -> bool:
    return isinstance(outcome, Refused) and outcome.reason is Refusal.BAD_VALUES
