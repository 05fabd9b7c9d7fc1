"""Allow with changes: a person changes a tool call's input before allowing it.

What may be changed is one text: a `Bash` command, an `Edit`'s new text, a `Write`'s content,
or any other tool's whole input as a JSON object. A form is prefilled with it (`changeable`);
what comes back is read into the input to run (`changed_input`), and the message then shows
the call as it was allowed (`approved_view`). A surface offers it only where its form holds
the text whole (`offered`).

Only an asker that runs the input it is given back offers this (`allow_changes`: the Claude
Code hooks and the Agent SDK helper), and only on an approval whose first option is Allow once.

Quorum: an allow with changes is an answer of its own. Votes agree only when they allow the
same input, so nobody's vote counts for an input they did not choose; an unchanged
submission is Allow once. The request's subject digest stays that of the input asked; the
vote's event in the audit trail records the digest of the changed input (`changed_sha256`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from askbridge.core.models import Person, Request
from askbridge.core.permissions import ALLOW_ONCE
from askbridge.core.subject import subject_sha256
from askbridge.core.tool_view import Note, ToolUse, ToolView, tool_view

MAX_CHANGE_CHARS = 64 * 1024
"""The longest changed text askbridge takes (the command hook sends inputs up to this size)."""
CHANGE_ACTION = "Edit and allow…"
"""The button or link that opens the form."""
CHANGE_TITLE = "Edit and allow"
"""The form's title (a platform may allow as few as 24 characters)."""
CHANGE_HINT = "Allows the call with what you write here instead of what the agent asked."

_FIELDS = {"Bash": ("command", "Command"), "Edit": ("new_string", "New text")}
_FIELDS["Write"] = ("content", "Content")


@dataclass(frozen=True)
class Changeable:
    """The text a person may change, as the form shows it."""

    label: str
    """What the field is ("Command", "New text", "Content", "Input (JSON object)")."""
    text: str
    """The value as asked: what the form is prefilled with."""
    key: str | None
    """The input's key the text replaces; None: the text is the whole input, as JSON."""


def changeable(request: Request) -> Changeable | None:
    """What of `request`'s tool call a person may change before allowing it; None when its
    asker does not take changes, or it is no approval with an input."""
    tool = request.tool
    questions = request.questions
    if not request.policy.allow_changes or tool is None or not tool.asked:
        return None
    if len(questions) != 1 or not questions[0].options:
        return None
    if questions[0].options[0].label != ALLOW_ONCE:
        return None
    field = _FIELDS.get(tool.tool)
    if field is not None and isinstance(tool.asked.get(field[0]), str):
        key, label = field
        return Changeable(label, tool.asked[key], key)
    text = json.dumps(tool.asked, indent=2, ensure_ascii=False)
    return Changeable("Input (JSON object)", text, None)


def offered(field: Changeable | None, holds: Callable[[Changeable], bool]) -> Changeable | None:
    """`field` when a surface offers Edit and allow for it: only when its form is prefilled
    with all of the text as asked (`holds`: whether the surface's form and message have room
    for it, in the surface's own measure), and that text could be sent back unchanged. A form
    left empty or cut would have a person type the whole call again, unseen."""
    if field is None or len(field.text) > MAX_CHANGE_CHARS or not holds(field):
        return None
    return field


class ChangeRefused(ValueError):
    """What a person typed cannot be the changed input; the text says why, to them."""


def changed_input(request: Request, typed: str) -> dict[str, Any] | None:
    """The input to run instead of the one asked, from the text a person typed; None when it
    is the one asked (an unchanged submission is Allow once). ChangeRefused says why the text
    cannot be taken."""
    field = changeable(request)
    tool = request.tool
    if field is None or tool is None or tool.asked is None:
        raise ChangeRefused("This question cannot be allowed with changes.")
    text = typed.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise ChangeRefused(f"Please write the {field.label.lower()}; it cannot be empty.")
    if len(text) > MAX_CHANGE_CHARS:
        raise ChangeRefused(
            f"Please keep it to {MAX_CHANGE_CHARS} characters (this is {len(text)})."
        )
    if any(ord(c) < 32 and c not in "\n\t" for c in text):
        raise ChangeRefused("Please remove the control characters.")
    if field.key is None:
        return _json_input(tool.asked, text)
    asked = field.text.replace("\r\n", "\n")
    if text.rstrip("\n") == asked.rstrip("\n"):
        return None
    if field.key != "command" and asked.endswith("\n") and not text.endswith("\n"):
        # Chat platforms drop a text's last line break; a file's own is kept.
        text += "\n"
    if "\n" in asked and asked.count("\n") == field.text.count("\r\n"):
        # A form sends line breaks as its platform writes them: a text whose every line
        # break was CRLF (a Windows file) keeps them.
        text = text.replace("\n", "\r\n")
    return {**tool.asked, field.key: text}


def _json_input(asked: dict[str, Any], text: str) -> dict[str, Any] | None:
    try:
        given = json.loads(text)
    except json.JSONDecodeError as error:
        raise ChangeRefused(
            f"Please write the input as a JSON object: {error.msg} at line {error.lineno}, "
            f"column {error.colno}."
        ) from None
    if not isinstance(given, dict):
        raise ChangeRefused("Please write the input as a JSON object ({…}).")
    try:
        subject_sha256(given)
    except (TypeError, ValueError) as error:
        raise ChangeRefused(f"Please write plain JSON: {error}") from None
    return None if given == asked else given


CHANGED_BY = "Changed by {person} before it was allowed: this is what runs"
"""The note heading a call allowed with changes; `{person}`: who changed it."""


def approved_view(request: Request, name: str) -> ToolView | None:
    """The call as it was allowed with changes, headed by who changed it (`name`, as the
    surface names people; each surface escapes the note as any other text); None when the
    answer made no change."""
    tool = request.tool
    changed = request.approved_input
    if tool is None or changed is None:
        return None
    shown = tool_view(ToolUse(name=tool.tool, input=changed, cwd=tool.cwd))
    note = Note(text=CHANGED_BY.format(person=name))
    return shown.model_copy(update={"parts": (note, *shown.parts), "full_view": tool.full_view})


def changer(request: Request) -> Person | None:
    """Who changed the input that was allowed: the deciding voter."""
    return request.answered_by if request.approved_input is not None else None
