"""A click in Slack becomes one `Broker.act` call, and its outcome a private note; so does the
submission of an answer form.

`parse` reads bolt's `body` into who clicked, on which message, meaning what; `Clicks.on_action`
is the one bolt listener for actions: it acknowledges every action at once (Slack shows a
warning after 3 s otherwise) and does the work afterwards. Radio and checkbox changes stay in
the person's Slack client until they press Submit, whose payload carries `state.values` for the
whole message. "Other…" and "Add a note" open the answer form (`form`) with the click's
trigger id; `Clicks.on_submit` takes its `view_submission` (`parse_submission`) and answers in
the acknowledgement itself: errors under the inputs, the reason the answer cannot be taken, or
closing the form.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from slack_bolt.context.ack.async_ack import AsyncAck

from adapters.slack.blockkit import ModalView, StateValues
from adapters.slack.form import field_errors, field_id, form, notice, picked, read
from adapters.slack.ids import (
    FORM_KINDS,
    ActionId,
    BadActionId,
    FormMetadata,
    Kind,
)
from adapters.slack.render import NOTE_LABEL, OTHER_LABEL
from adapters.slack.richtext import Line, Span, answerer, joined, shorten
from adapters.slack.surface import PLATFORM, SlackSurface
from core.answers import merge
from core.broker import Broker
from core.errors import NotFound
from core.intents import (
    Cancel,
    Counted,
    Drafted,
    Intent,
    Outcome,
    Pick,
    Refusal,
    Refused,
    Submit,
)
from core.models import MessageRef, Person, Selections
from core.view import end_sentence, given, missing_sentence

log = logging.getLogger("askbridge.slack")

NO_LONGER_AVAILABLE = "This question is no longer available."
FOREIGN = "This button does not belong to this question, so it was not counted."
FAILED = "Something went wrong, so your click was not counted. Please try again."
FORM_FAILED = "Something went wrong, so your answer was not counted. Please submit it again."
FORM_NOT_OPENED = "Slack did not open the form in time. Please click {label} again."
SHUTDOWN_GRACE_S = 5.0
ACK_WITHIN_S = 2.0
T = TypeVar("T")
NOTE_ANSWER_BUDGET = 300


@dataclass(frozen=True)
class Interaction:
    """One click as askbridge needs it: who, on which message, in which install, and the
    message's current choices."""

    action_id: str
    person: Person
    origin: MessageRef
    state: StateValues
    response_url: str | None = None
    sent_at: datetime | None = None
    """The click's `action_ts`: a replayed or redelivered click carries the same one."""
    trigger_id: str = ""
    """What opens a modal for this person: once, within 3 seconds of the click."""


def parse(body: Mapping[str, Any]) -> Interaction:
    """Read a `block_actions` payload; ValueError when it is not a click on a message."""
    if body.get("type") != "block_actions":
        raise ValueError(f"not a block_actions payload (type {body.get('type')!r})")
    actions = body.get("actions")
    user = body.get("user")
    container = body.get("container")
    if not (isinstance(actions, list) and actions and isinstance(actions[0], dict)):
        raise ValueError("block_actions payload without actions")
    if not (isinstance(user, dict) and user.get("id")):
        raise ValueError("block_actions payload without a user")
    if not (
        isinstance(container, dict) and container.get("channel_id") and container.get("message_ts")
    ):
        raise ValueError(f"click outside a message (container {container!r})")
    message = body.get("message")
    thread_ts = message.get("thread_ts") if isinstance(message, dict) else None
    ts = str(container["message_ts"])
    team = body.get("team")
    team_id = str((team.get("id") if isinstance(team, dict) else None) or user.get("team_id") or "")
    # What the click claims about its workspace and app; the broker checks each claim against
    # what was recorded when the message was posted, so a click from another install of the
    # app cannot answer.
    claims: dict[str, Any] = {"team_id": team_id, "app_id": str(body.get("api_app_id") or "")}
    if thread_ts and thread_ts != ts:
        claims["thread_ts"] = thread_ts
    origin = MessageRef(
        platform=PLATFORM, channel=str(container["channel_id"]), message_id=ts, data=claims
    )
    response_url = body.get("response_url")
    return Interaction(
        sent_at=_time(actions[0].get("action_ts")),
        action_id=str(actions[0].get("action_id", "")),
        person=_person(user),
        origin=origin,
        state=_values(body.get("state")),
        response_url=response_url if isinstance(response_url, str) else None,
        trigger_id=str(body.get("trigger_id") or ""),
    )


@dataclass(frozen=True)
class FormSubmission:
    """An answer form sent: who, for which request, from which message, saying what."""

    request_id: str
    person: Person
    origin: MessageRef
    submit: Submit
    sent_at: datetime


def parse_submission(body: Mapping[str, Any], received_at: datetime) -> FormSubmission:
    """Read a `view_submission` of an answer form; ValueError when it is not one askbridge
    opened (BadFormMetadata when its private_metadata is not askbridge's).

    The message it answers comes from the form's private_metadata, which askbridge wrote when
    it opened the form and Slack hands back unchanged: so the broker checks the submission
    against that message (channel, ts, thread, workspace, app) exactly like a click on it.
    A submission carries no time of its own; it counts as made when it arrived."""
    if body.get("type") != "view_submission":
        raise ValueError(f"not a view_submission payload (type {body.get('type')!r})")
    user, view = body.get("user"), body.get("view")
    if not (isinstance(user, dict) and user.get("id")):
        raise ValueError("view_submission payload without a user")
    if not isinstance(view, dict):
        raise ValueError("view_submission payload without a view")
    metadata = FormMetadata.unpack(view.get("private_metadata"))
    origin = MessageRef(
        platform=PLATFORM,
        channel=metadata.channel,
        message_id=metadata.message_ts,
        data=dict(metadata.claims),
    )
    chosen, typed, note = read(_values(view.get("state")))
    return FormSubmission(
        metadata.request_id, _person(user), origin, Submit(chosen, typed, note), received_at
    )


def _person(user: Mapping[str, Any]) -> Person:
    name = str(user.get("username") or user.get("name") or "")
    return Person(platform=PLATFORM, id=str(user["id"]), name=name)


def _values(state: object) -> StateValues:
    values = state.get("values") if isinstance(state, dict) else None
    return values if isinstance(values, dict) else {}


def _json(view: ModalView) -> dict[str, Any]:
    # bolt types views as plain dicts; ours are TypedDicts of the same JSON.
    return cast("dict[str, Any]", view)


def _time(ts: object) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(str(ts)), UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def intent(action: ActionId, state: StateValues) -> Intent | None:
    """What a click on an askbridge element means; None for a choice that stays in the client."""
    match action.kind:
        case Kind.CANCEL:
            return Cancel()
        case Kind.PICK:
            question, option = action.choice()
            return Pick(question, option)
        case Kind.SUBMIT:
            return Submit(selections(action.request_id, state))
    return None


def selections(request_id: str, state: StateValues) -> Selections:
    """What the person picked in the message's radio buttons and checkboxes for `request_id`."""
    chosen: Selections = {}
    for elements in state.values():
        if not isinstance(elements, dict):
            continue
        for action_id, entry in elements.items():
            try:
                action = ActionId.unpack(action_id)
            except BadActionId:
                continue
            if action.request_id != request_id or action.kind not in (Kind.RADIO, Kind.CHECK):
                continue
            if not isinstance(entry, dict) or action.question is None:
                continue
            if indices := picked(entry):
                chosen[action.question] = indices
    return chosen


def note(outcome: Outcome) -> Line | None:
    """What the person who clicked is told privately; None when the message says it all."""
    if isinstance(outcome, Counted):
        answers = shorten(given(outcome.receipt.answers), NOTE_ANSWER_BUDGET)
        return [
            Span(
                f"Your vote is counted: {outcome.receipt.matching} of {outcome.receipt.quorum} "
                f"so far for {answers}. You can change it until the question is decided."
            )
        ]
    if isinstance(outcome, Drafted) or (
        isinstance(outcome, Refused) and outcome.reason is Refusal.REPLAYED
    ):
        return None
    if not isinstance(outcome, Refused):
        return None
    match outcome.reason:
        case Refusal.UNKNOWN_REQUEST:
            return [Span(NO_LONGER_AVAILABLE)]
        case Refusal.FOREIGN_MESSAGE:
            return [Span(FOREIGN)]
        case Refusal.MISSING_ANSWERS:
            return [Span(missing_sentence(outcome.missing))]
        case Refusal.BAD_TEXT:
            problems = "; ".join(outcome.problems.values())
            return [Span(f"Your answer was not counted: {problems}")]
        case Refusal.ALREADY_ENDED if outcome.view is not None:
            return [Span(end_sentence(outcome.view, lambda p: p.name or p.id))]
    return not_answerer(outcome)


def not_answerer(outcome: Refused) -> Line:
    """The note for someone who may not answer; names the groups Slack could not tell about."""
    entries = outcome.view.answerers if outcome.view is not None else ()
    line: Line = [
        Span("Only these people may answer this question: "),
        *joined((answerer(e) for e in entries), 1500),
        Span(". Your click was not counted."),
    ]
    if outcome.unchecked:
        line += [
            Span(" askbridge could not check who is in "),
            *joined((answerer(e) for e in outcome.unchecked), 500),
            Span(" just now; if you are, please try again in a minute."),
        ]
    return line


class Clicks:
    """The bolt listeners for every action and for answer forms, and the broker calls and
    notes behind them."""

    def __init__(self, broker: Broker, surface: SlackSurface) -> None:
        self.broker = broker
        self.surface = surface
        self._tasks: set[asyncio.Task[Any]] = set()

    async def on_action(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        try:
            interaction = parse(body)
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
        if action.kind in FORM_KINDS:
            # The click's trigger id opens a modal only within 3 s: nothing comes before it but
            # the acknowledgement and one read of the request.
            await ack()
            self._spawn(
                self._open_form(interaction, action), f"askbridge-slack-form-{action.request_id}"
            )
            return
        meant = intent(action, interaction.state)
        if meant is None:
            await ack()
            return
        name = f"askbridge-slack-{action.kind.value}-{action.request_id}"
        acting = self._spawn(self._act(interaction, action.request_id, meant), name)
        # Slack never redelivers a click it saw acknowledged, so the vote is recorded first
        # (it takes milliseconds); only a store slower than ACK_WITHIN_S is acknowledged first.
        await asyncio.wait({acting}, timeout=ACK_WITHIN_S)
        await ack()
        self._spawn(self._tell(interaction, acting), f"{name}-note")

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
        """Open the answer form of `action`'s button, prefilled with what the person picked in
        the message; tell them instead why not, when it cannot be opened."""
        person, origin = interaction.person, interaction.origin
        line: Line | None
        try:
            view, draft = await self.broker.answer_form(action.request_id, person)
            if view.waiting:
                picks = merge(draft, selections(action.request_id, interaction.state))
                claims = {k: str(v) for k, v in origin.data.items()}
                metadata = FormMetadata(
                    action.request_id, origin.channel, origin.message_id, claims
                )
                opened = form(view, picks, action.kind, metadata)
                await self.surface.open_form(interaction.trigger_id, opened)
                return
            line = note(Refused(Refusal.ALREADY_ENDED, view))
        except NotFound:
            line = note(Refused(Refusal.UNKNOWN_REQUEST))
        except Exception as error:
            log.warning("could not open the answer form of %s: %r", action.request_id, error)
            label = OTHER_LABEL if action.kind is Kind.OTHER else NOTE_LABEL
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
            await ack(response_action="errors", errors={field_id(0): FORM_FAILED})
            return
        line = note(outcome)
        if isinstance(outcome, Refused):
            questions = outcome.view.questions if outcome.view is not None else ()
            errors = field_errors(outcome, questions)
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
                submission.submit,
                submission.origin,
                sent_at=submission.sent_at,
            )
        except Exception:
            log.exception("handling an answer form for %s failed", submission.request_id)
            return None

    async def _tell_late(
        self, submission: FormSubmission, acting: asyncio.Task[Outcome | None]
    ) -> None:
        outcome = await acting
        line: Line | None = [Span(FORM_FAILED)] if outcome is None else note(outcome)
        if line is not None:
            await self.surface.tell(submission.person, submission.origin, line)

    async def _tell(self, interaction: Interaction, acting: asyncio.Task[Line | None]) -> None:
        line = await acting
        if line is not None:
            await self.surface.tell(
                interaction.person, interaction.origin, line, interaction.response_url
            )

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
