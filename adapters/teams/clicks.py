"""A press on a card (an `adaptiveCard/action` invoke) read as the person, the message and the
intent the broker acts on; and what the person who pressed is told."""

from __future__ import annotations

from dataclasses import dataclass

from microsoft_agents.activity import Activity

from askbridge.adapters.teams.ids import CANCEL, PICK, BadPress, read_press
from askbridge.core.intents import (
    Cancel,
    Counted,
    Decided,
    Intent,
    Outcome,
    Pick,
    Refusal,
    Refused,
    Submit,
)
from askbridge.core.models import MessageRef, Person
from askbridge.core.view import (
    FOREIGN_CLICK,
    NO_LONGER_AVAILABLE,
    NOT_ANSWERER,
    SELF_APPROVAL,
    counted_sentence,
    end_sentence,
    missing_sentence,
)

PLATFORM = "teams"
ACTION_INVOKE = "adaptiveCard/action"


@dataclass(frozen=True)
class Click:
    request_id: str
    person: Person
    origin: MessageRef
    intent: Intent


def read_click(activity: Activity) -> Click:
    """The click an `adaptiveCard/action` invoke is, or BadPress naming what is missing. The
    person is their Entra object id, the one Teams gives on every surface of Microsoft 365."""
    press = read_press(activity.value)
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
        intent = Pick(press.question, press.option)
    elif press.verb == CANCEL:
        intent = Cancel()
    else:
        intent = Submit(selections=dict(press.chosen))
    return Click(press.request_id, person, origin, intent)


def note(outcome: Outcome) -> str | None:
    """What the person who pressed is told above their card; None when the card says it."""
    match outcome:
        case Decided() | Refused(reason=Refusal.REPLAYED):
            return None
        case Counted(receipt=receipt):
            return counted_sentence(receipt)
        case Refused(reason=Refusal.NOT_ANSWERER, view=view) if view is not None:
            return NOT_ANSWERER.format(answerers=", ".join(view.answerers))
        case Refused(reason=Refusal.ALREADY_ENDED, view=view) if view is not None:
            return end_sentence(view)
        case Refused(reason=Refusal.MISSING_ANSWERS, missing=missing):
            return missing_sentence(missing)
        case Refused(reason=Refusal.FOREIGN_MESSAGE):
            return FOREIGN_CLICK
        case Refused(reason=Refusal.SELF_APPROVAL):
            return SELF_APPROVAL
    return NO_LONGER_AVAILABLE
