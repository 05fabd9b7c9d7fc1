"""The bolt listeners: every action, and every answer form's submission.

`on_action` acknowledges each action once the click is recorded (or after ACK_WITHIN_S when the
store is slow), then tells the person what came of it; "Other…" and "Add a note" open the answer
form (`forms`); `on_submit` answers in the acknowledgement itself. See ARCHITECTURE.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from slack_bolt.context.ack.async_ack import AsyncAck

from askbridge.adapters.slack.blockkit import ModalView
from askbridge.adapters.slack.clicks import (
    FormSubmission,
    Interaction,
    intent,
    parse,
    parse_submission,
    selections,
)
from askbridge.adapters.slack.controls import (
    DONE,
    FILL_LABEL,
    LINK_ACTION,
    NOTE_LABEL,
    OTHER_LABEL,
)
from askbridge.adapters.slack.fill import errors as fill_errors
from askbridge.adapters.slack.fill import modal
from askbridge.adapters.slack.forms import field_errors, field_id, form, notice
from askbridge.adapters.slack.ids import (
    FORM_ACTIONS,
    ActionId,
    BadActionId,
    FormMetadata,
)
from askbridge.adapters.slack.notes import FORM_NOT_OPENED, note
from askbridge.adapters.slack.surface import SlackSurface
from askbridge.adapters.slack.text import Line, Span
from askbridge.core.answers import merge
from askbridge.core.broker import Broker
from askbridge.core.changes import CHANGE_ACTION
from askbridge.core.intents import Action, Fill, FormOpens, Intent, Outcome, Refusal, Refused
from askbridge.core.view import FAILED, FOREIGN_CLICK, NO_LONGER_AVAILABLE

log = logging.getLogger("askbridge.slack")

SHUTDOWN_GRACE_S = 5.0
ACK_WITHIN_S = 2.0
T = TypeVar("T")


class Handlers:
    """The bolt listeners for every action and for answer forms, and the broker calls and
    notes behind them."""

    def __init__(self, broker: Broker, surface: SlackSurface) -> None:
        self.broker = broker
        self.surface = surface
        self._tasks: set[asyncio.Task[Any]] = set()

    async def on_action(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        try:
            interaction = parse(body)
            if interaction.action_id == LINK_ACTION:
                await ack()
                return
            action = ActionId.unpack(interaction.action_id)
        except BadActionId as error:
            await ack()
            log.info("click on an element askbridge does not know: %s", error)
            gone: Line = [Span(NO_LONGER_AVAILABLE)]
            told = self.surface.tell(
                interaction.person, interaction.origin, gone, interaction.response_url
            )
            self._spawn(told, "askbridge-slack-unknown")
            return
        except ValueError as error:
            await ack()
            log.warning("ignored a Slack action: %s", error)
            return
        opens = action.action is Action.FILL and interaction.value != DONE
        if action.action in FORM_ACTIONS or opens:
            # The click's trigger id opens a modal only within 3 s: nothing comes before it but
            # the acknowledgement, one read of the request and, when Slack user groups may
            # answer it, one look at their members (kept for a minute).
            await ack()
            self._spawn(
                self._open_form(interaction, action), f"askbridge-slack-form-{action.request_id}"
            )
            return
        meant = intent(action, interaction.state, interaction.value)
        if meant is None:
            await ack()
            return
        name = f"askbridge-slack-{action.action.value}-{action.request_id}"
        # Slack never redelivers a click it saw acknowledged, so the vote is recorded first
        # (it takes milliseconds), in this task: a task of its own and a wait for it cost the
        # click a turn of the loop. Only a store slower than ACK_WITHIN_S is acknowledged first.
        late: list[asyncio.Task[Any]] = []
        timer = asyncio.get_running_loop().call_later(
            ACK_WITHIN_S, lambda: late.append(self._spawn(ack(), f"{name}-late-ack"))
        )
        this = asyncio.current_task()
        assert this is not None
        self._tasks.add(this)  # `close` lets it finish
        try:
            line = await self._act(interaction, action.request_id, meant)
        finally:
            timer.cancel()
            self._tasks.discard(this)
        if not late:
            await ack()
        if line is not None:
            told = self.surface.tell(
                interaction.person, interaction.origin, line, interaction.response_url
            )
            self._spawn(told, f"{name}-note")

    async def _act(self, interaction: Interaction, request_id: str, meant: Intent) -> Line | None:
        """Record the click; the note for the person who made it."""
        try:
            outcome = await self.broker.act(
                request_id,
                interaction.person,
                meant,
                interaction.origin,
                sent_at=interaction.sent_at,
            )
        except Exception:
            log.exception("handling a click on %s failed", request_id)
            return [Span(FAILED)]
        return note(outcome)

    async def _open_form(self, interaction: Interaction, action: ActionId) -> None:
        """Open the form of `action`'s button: a typed form's modal ("Fill in…"), or the
        answer form prefilled with what the person picked in the message; tell them instead
        why not, when it cannot be opened."""
        person, origin = interaction.person, interaction.origin
        line: Line | None
        try:
            opening = await self.broker.answer_form(action.request_id, person, origin)
            if isinstance(opening, FormOpens):
                picks = merge(opening.draft, selections(action.request_id, interaction.state))
                claims = {k: str(v) for k, v in origin.data.items()}
                metadata = FormMetadata(
                    action.request_id, origin.channel, origin.message_id, claims
                )
                typed = opening.view.form
                if (action.action is Action.FILL) != (typed is not None):
                    # "Fill in…" of a request without a form, or an answer form's button on one
                    # with a form: not a button of this request's message.
                    line = [Span(FOREIGN_CLICK)]
                else:
                    opened = (
                        modal(typed, metadata)
                        if typed is not None
                        else form(opening.view, picks, action.action, metadata)
                    )
                    await self.surface.open_form(interaction.trigger_id, opened)
                    return
            else:
                line = note(opening)
        except Exception as error:
            log.warning("could not open the answer form of %s: %r", action.request_id, error)
            labels = {
                Action.WORDS: OTHER_LABEL,
                Action.FILL: FILL_LABEL,
                Action.CHANGE: CHANGE_ACTION,
            }
            label = labels.get(action.action, NOTE_LABEL)
            line = [Span(FORM_NOT_OPENED.format(label=f'"{label}"'))]
        if line is not None:
            await self.surface.tell(person, origin, line, interaction.response_url)

    async def on_submit(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """An answer form sent: one `Broker.act`, whose outcome is the acknowledgement itself
        (errors under the inputs, the form replaced by the reason it cannot count, or closed),
        plus the vote's receipt as a note when it counted toward a quorum."""
        try:
            submission = parse_submission(body, datetime.now(UTC))
        except ValueError as error:
            log.warning("ignored an answer form: %s", error)
            await ack(response_action="update", view=_json(notice([Span(NO_LONGER_AVAILABLE)])))
            return
        name = f"askbridge-slack-answer-{submission.request_id}"
        acting = self._spawn(self._submit(submission), name)
        # As for a click, the vote is recorded before the acknowledgement, which here also
        # carries what came of it; only a store slower than ACK_WITHIN_S closes the form first
        # and tells the outcome in a note.
        done, _ = await asyncio.wait({acting}, timeout=ACK_WITHIN_S)
        if not done:
            await ack()
            self._spawn(self._tell_late(submission, acting), f"{name}-note")
            return
        outcome = acting.result()
        if outcome is None:
            failed = _first_input(body) if isinstance(submission.intent, Fill) else field_id(0)
            await ack(response_action="errors", errors={failed: FAILED})
            return
        line = note(outcome)
        if isinstance(outcome, Refused):
            errors = _errors(outcome)
            if errors:
                await ack(response_action="errors", errors=dict(errors))
                return
            if line is not None:
                await ack(response_action="update", view=_json(notice(line)))
                return
        await ack()
        if line is not None:
            told = self.surface.tell(submission.person, submission.origin, line)
            self._spawn(told, f"{name}-note")

    async def _submit(self, submission: FormSubmission) -> Outcome | None:
        """Record the form's answer; None when that failed."""
        try:
            return await self.broker.act(
                submission.request_id,
                submission.person,
                submission.intent,
                submission.origin,
                sent_at=submission.sent_at,
                click_id=submission.trigger_id,
            )
        except Exception:
            log.exception("handling an answer form for %s failed", submission.request_id)
            return None

    async def _tell_late(
        self, submission: FormSubmission, acting: asyncio.Task[Outcome | None]
    ) -> None:
        outcome = await acting
        line: Line | None = [Span(FAILED)] if outcome is None else note(outcome)
        if line is not None:
            await self.surface.tell(submission.person, submission.origin, line)

    def _spawn(self, work: Coroutine[Any, Any, T], name: str) -> asyncio.Task[T]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        """Let clicks already acknowledged finish; cancel what is left after a grace period."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=SHUTDOWN_GRACE_S)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def _errors(outcome: Refused) -> dict[str, str]:
    """The errors to show under a form's inputs for a refusal of what was typed or chosen;
    empty for any other refusal."""
    view = outcome.view
    if outcome.reason is Refusal.BAD_VALUES and view is not None and view.form is not None:
        return fill_errors(view.form, outcome.field_problems)
    return dict(field_errors(outcome, view.questions if view is not None else ()))


def _first_input(body: dict[str, Any]) -> str:
    """The block_id of the submitted modal's first input: where an error for the whole
    modal goes (Slack takes errors only for input blocks)."""
    view = body.get("view")
    blocks = view.get("blocks") if isinstance(view, dict) else None
    for found in blocks if isinstance(blocks, list) else ():
        if isinstance(found, dict) and found.get("type") == "input":
            return str(found.get("block_id"))
    return field_id(0)


def _json(view: ModalView) -> dict[str, Any]:
    # bolt types views as plain dicts; ours are TypedDicts of the same JSON.
    return cast("dict[str, Any]", view)
