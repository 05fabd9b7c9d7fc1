"""The interactive parts of a waiting Slack message: its buttons, radio buttons and checkboxes,
and the block_ids that tie one render's elements together."""

from __future__ import annotations

from askbridge.adapters.slack.blockkit import (
    MAX_BUTTON_TEXT,
    MAX_CONFIRM_BUTTON,
    MAX_CONFIRM_TEXT,
    MAX_CONFIRM_TITLE,
    MAX_OPTION_DESCRIPTION,
    MAX_OPTION_TEXT,
    MAX_TEXT_INPUT,
    ActionsBlock,
    Button,
    Confirm,
    Element,
    Option,
    PlainText,
)
from askbridge.adapters.slack.ids import WIRE, ActionId, BadActionId
from askbridge.adapters.slack.text import shorten
from askbridge.core.changes import CHANGE_ACTION, offered
from askbridge.core.intents import Action
from askbridge.core.models import UserQuestion
from askbridge.core.view import CANCEL_QUESTION, CANCEL_SURE, CANCEL_WARNING, RequestView

OTHER_LABEL = "Other…"
NOTE_LABEL = "Add a note"
FILL_LABEL = "Fill in…"
DECLINE_LABEL = "Decline"
OPEN_LABEL = "Open link"
DONE_LABEL = "Done"
DONE = "done"
"""The value of a URL-mode form's Done button (a FILL button that fills in nothing)."""
LINK_ACTION = "ab-link"
"""The action_id of a URL-mode form's link button: Slack opens the link, and still tells the
app of the click, which only needs its acknowledgement."""


def block_id(rev: str, name: str) -> str:
    # Slack keeps a client's unsubmitted choices per block_id. The surface keeps `rev` while a
    # request waits, so a tally update leaves everyone's choices alone, and changes it once the
    # request ends, so the final message inherits none.
    return f"ab-{rev}-{name}"


def waiting_rev(blocks: object, request_id: str) -> str | None:
    """The `rev` of a message's blocks when they are a waiting render of `request_id` (their
    elements' action_ids name it); None for anything else, an ended render included."""
    for found in blocks if isinstance(blocks, list) else ():
        if not isinstance(found, dict) or found.get("type") != "actions":
            continue
        elements = found.get("elements")
        for element in elements if isinstance(elements, list) else ():
            try:
                action = ActionId.unpack(str(element.get("action_id", "")))
            except (AttributeError, BadActionId):
                continue
            rev = str(found.get("block_id", "")).split("-")
            if action.request_id == request_id and len(rev) > 2 and rev[0] == "ab":
                return rev[1]
    return None


def plain(text: str, limit: int) -> PlainText:
    return {"type": "plain_text", "text": shorten(text.strip() or "?", limit), "emoji": True}


def form_buttons(view: RequestView) -> list[Element]:
    """The buttons that open the answer form: "Other…" when the request takes answers in one's
    own words, "Add a note" when it takes notes, "Edit and allow…" when its tool call may be
    changed and the value fits a modal's text input."""
    policy = view.request.policy
    field = offered(view.changeable, lambda f: len(f.text) <= MAX_TEXT_INPUT)
    wanted = [
        (Action.WORDS, OTHER_LABEL, policy.allow_other),
        (Action.ADD_NOTE, NOTE_LABEL, policy.allow_notes),
        (Action.CHANGE, CHANGE_ACTION, field is not None),
    ]
    return [
        button(ActionId(view.request_id, kind), label, WIRE[kind])
        for kind, label, allowed in wanted
        if allowed
    ]


def actions(rev: str, name: str, elements: list[Element]) -> ActionsBlock:
    return {"type": "actions", "block_id": block_id(rev, name), "elements": elements}


def choices(request_id: str, index: int, question: UserQuestion) -> Element:
    options = [option(o, opt.label, opt.description) for o, opt in enumerate(question.options)]
    if question.multi_select:
        action = ActionId(request_id, Action.CHOOSE_ANY, index)
        return {"type": "checkboxes", "action_id": action.pack(), "options": options}
    action = ActionId(request_id, Action.CHOOSE_ONE, index)
    return {"type": "radio_buttons", "action_id": action.pack(), "options": options}


def option(index: int, label: str, description: str) -> Option:
    """An option of radio buttons or checkboxes; its value is its index."""
    made: Option = {"text": plain(label, MAX_OPTION_TEXT), "value": str(index)}
    if description.strip():
        made["description"] = plain(description, MAX_OPTION_DESCRIPTION)
    return made


def button(action: ActionId, label: str, value: str) -> Button:
    return {
        "type": "button",
        "action_id": action.pack(),
        "text": plain(label, MAX_BUTTON_TEXT),
        "value": value,
    }


def link(url: str) -> Button:
    """A button that opens `url` (a URL-mode form's, checked as an http(s) URL by core)."""
    return {
        "type": "button",
        "action_id": LINK_ACTION,
        "text": plain(OPEN_LABEL, MAX_BUTTON_TEXT),
        "url": url,
    }


def cancel(request_id: str) -> Button:
    confirm: Confirm = {
        "title": plain(CANCEL_QUESTION, MAX_CONFIRM_TITLE),
        "text": plain(CANCEL_WARNING, MAX_CONFIRM_TEXT),
        "confirm": plain(CANCEL_SURE, MAX_CONFIRM_BUTTON),
        "deny": plain("Keep it", MAX_CONFIRM_BUTTON),
        "style": "danger",
    }
    made = button(ActionId(request_id, Action.CANCEL), "Cancel", "cancel")
    made["style"] = "danger"
    made["confirm"] = confirm
    return made
