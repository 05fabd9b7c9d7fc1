"""A press on a card (an `adaptiveCard/action` invoke) read as the person, the message and the
intent the broker acts on."""

from __future__ import annotations

from dataclasses import dataclass

from microsoft_agents.activity import Activity

from askbridge.adapters.teams.form import read_fill
from askbridge.adapters.teams.ids import CANCEL, CHANGE, DECLINE, FILL, PICK, BadPress, Press
from askbridge.core.forms import Form
from askbridge.core.intents import Cancel, Decline, Fill, Intent, Pick, Submit, allow_with_changes
from askbridge.core.models import MessageRef, Person

PLATFORM = "teams"
ACTION_INVOKE = "adaptiveCard/action"


@dataclass(frozen=True)
class Click:
    request_id: str
    person: Person
    origin: MessageRef
    intent: Intent


def read_click(activity: Activity, press: Press, form: Form | None = None) -> Click:
    """The click an `adaptiveCard/action` invoke is (its `press`, read by `read_press`), or
    BadPress naming what is missing; a typed form's inputs are read against `form`. The person
    is their Entra object id, the one Teams gives on every surface of Microsoft 365."""
    sender = activity.from_property
    person_id = getattr(sender, "aad_object_id", None) if sender is not None else None
    if not person_id or sender is None:
        raise BadPress("the press names nobody (no from.aadObjectId)")
    conversation = activity.conversation
    if conversation is None or not conversation.id or not activity.reply_to_id:
        raise BadPress("the press names no message (conversation.id, replyToId)")
    person = Person(platform=PLATFORM, id=person_id, name=sender.name or "")
    origin = MessageRef(platform=PLATFORM, channel=conversation.id, message_id=activity.reply_to_id)
    intent: Intent
    if press.verb == PICK and press.question is not None and press.option is not None:
        pick: dict[int, tuple[int, ...]] = {press.question: (press.option,)}
        typed = press.typed or press.note
        intent = (
            Submit(selections=pick, typed=dict(press.typed), note=press.note)
            if typed
            else Pick(press.question, press.option)
        )
    elif press.verb == CANCEL:
        intent = Cancel()
    elif press.verb == CHANGE:
        intent = allow_with_changes(press.changed or "", press.note)
    elif press.verb == DECLINE:
        intent = Decline()
    elif press.verb == FILL:
        intent = Fill(read_fill(form, press.inputs) if form is not None else {})
    else:
        intent = Submit(selections=dict(press.chosen), typed=dict(press.typed), note=press.note)
    return Click(press.request_id, person, origin, intent)
