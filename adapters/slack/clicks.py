"""What a click or an answer form's submission in Slack means: who, on which message, and
which intent, read from bolt's `body`. `handlers` act on it; `notes` words what came of it.

Radio and checkbox changes stay in the person's Slack client until they press Submit, whose
payload carries `state.values` for the whole message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from askbridge.adapters.slack.blockkit import StateValues
from askbridge.adapters.slack.controls import DONE
from askbridge.adapters.slack.fill import read_fill
from askbridge.adapters.slack.forms import picked, read
from askbridge.adapters.slack.ids import (
    CHOICE_ACTIONS,
    FILL_CALLBACK_ID,
    ActionId,
    BadActionId,
    FormMetadata,
)
from askbridge.adapters.slack.surface import PLATFORM
from askbridge.core.intents import Action, Cancel, Decline, Fill, Intent, Pick, Submit
from askbridge.core.models import MessageRef, Person, Selections


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
    value: str = ""
    """The clicked button's value."""


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
        value=str(actions[0].get("value") or ""),
    )


@dataclass(frozen=True)
class FormSubmission:
    """An answer form or a typed form's modal sent: who, for which request, from which
    message, saying what (a `Submit` of an answer form, a `Fill` of a typed form)."""

    request_id: str
    person: Person
    origin: MessageRef
    intent: Submit | Fill
    sent_at: datetime
    trigger_id: str | None = None
    """Slack's id of this submission, the same when it is delivered again (a retry, another
    replica); a submission carries no time of its own."""


def parse_submission(body: Mapping[str, Any], received_at: datetime) -> FormSubmission:
    """Read a `view_submission` of an answer form or a typed form's modal; ValueError when it
    is not one askbridge opened (BadFormMetadata when its private_metadata is not askbridge's).

    The message it answers comes from the form's private_metadata, which askbridge wrote when
    it opened the form and Slack hands back unchanged: so the broker checks the submission
    against that message (channel, ts, thread, workspace, app) exactly like a click on it.
    A submission carries no time of its own; it counts as made when it arrived, and is known
    again by its trigger_id."""
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
    values = _values(view.get("state"))
    filled = view.get("callback_id") == FILL_CALLBACK_ID
    meant: Submit | Fill = Fill(read_fill(values)) if filled else read(values)
    trigger_id = body.get("trigger_id")
    return FormSubmission(
        metadata.request_id,
        _person(user),
        origin,
        meant,
        received_at,
        trigger_id if isinstance(trigger_id, str) and trigger_id else None,
    )


def _person(user: Mapping[str, Any]) -> Person:
    name = str(user.get("username") or user.get("name") or "")
    return Person(platform=PLATFORM, id=str(user["id"]), name=name)


def _values(state: object) -> StateValues:
    values = state.get("values") if isinstance(state, dict) else None
    return values if isinstance(values, dict) else {}


def _time(ts: object) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(str(ts)), UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def intent(action: ActionId, state: StateValues, value: str = "") -> Intent | None:
    """What a click on an askbridge element means; None for a choice that stays in the client.
    A FILL button whose value is DONE is a URL-mode form's Done: a Fill of nothing."""
    match action.action:
        case Action.FILL if value == DONE:
            return Fill({})
        case Action.CANCEL:
            return Cancel()
        case Action.DECLINE:
            return Decline()
        case Action.PICK:
            question, option = action.choice()
            return Pick(question, option)
        case Action.SUBMIT:
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
            if action.request_id != request_id or action.action not in CHOICE_ACTIONS:
                continue
            if not isinstance(entry, dict) or action.question is None:
                continue
            if indices := picked(entry):
                chosen[action.question] = indices
    return chosen
