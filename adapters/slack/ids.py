"""The one codec for askbridge's Slack ids: `action_id`s (`ab|<request_id>|<action>[|<q>[|<o>]]`,
a `core.intents.Action` spelled as `WIRE` says), and the answer form's `callback_id` and
`private_metadata`. They hold everything a click or a submission needs, so a message or an open
form keeps working after a restart, and a click on an old or foreign element is answered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from askbridge.adapters.slack.blockkit import MAX_ID, MAX_PRIVATE_METADATA
from askbridge.core.intents import Action

PREFIX = "ab"
SEPARATOR = "|"
ANY_ACTION = re.compile(r".*")
"""What the bolt listener is registered for: every action, so none goes unacknowledged."""


WIRE = {
    Action.PICK: "pick",
    Action.CHOOSE_ONE: "radio",
    Action.CHOOSE_ANY: "check",
    Action.SUBMIT: "submit",
    Action.CANCEL: "cancel",
    Action.WORDS: "other",
    Action.ADD_NOTE: "note",
    Action.FILL: "fill",
    Action.DECLINE: "decline",
    Action.CHANGE: "edit",
}
"""The actions a Slack message has (`core.intents.Action`), as its action_ids spell them: that
spelling never changes, so old messages keep working. PICK: a button that answers a
one-question request in one click (question, option); CHOOSE_ONE, CHOOSE_ANY: the radio buttons
or checkboxes of a question (question); WORDS ("Other…"): opens the answer form with a text
input per question; ADD_NOTE ("Add a note"): opens it with the options and a note; FILL
("Fill in…"): opens a typed form's modal; DECLINE: says no to a typed form; CHANGE ("Edit and
allow…"): opens the answer form with the tool call's input to change, and a note."""
_ACTIONS = {spelled: action for action, spelled in WIRE.items()}
ACTIONS = tuple(WIRE)

FORM_ACTIONS = frozenset({Action.WORDS, Action.ADD_NOTE, Action.CHANGE})
CHOICE_ACTIONS = frozenset({Action.CHOOSE_ONE, Action.CHOOSE_ANY})
_INDICES = {
    Action.PICK: 2,
    Action.CHOOSE_ONE: 1,
    Action.CHOOSE_ANY: 1,
    Action.SUBMIT: 0,
    Action.CANCEL: 0,
    Action.WORDS: 0,
    Action.ADD_NOTE: 0,
    Action.FILL: 0,
    Action.DECLINE: 0,
    Action.CHANGE: 0,
}
_FORMAT = "ab|<request_id>|<action>[|<question>[|<option>]]"


class BadActionId(ValueError):
    """An action_id that askbridge did not make (or no longer understands)."""


@dataclass(frozen=True)
class ActionId:
    request_id: str
    action: Action
    question: int | None = None
    option: int | None = None

    def __post_init__(self) -> None:
        if not self.request_id or SEPARATOR in self.request_id:
            raise BadActionId(
                f"request_id must be non-empty and free of {SEPARATOR!r}, got {self.request_id!r}"
            )
        if self.action not in _INDICES:
            raise BadActionId(f"a Slack message has no {self.action.value!r} element")
        given = [i for i in (self.question, self.option) if i is not None]
        expected = _INDICES[self.action]
        if len(given) != expected or (expected == 1 and self.question is None):
            raise BadActionId(
                f"a {self.wire!r} action_id takes {expected} index(es), "
                f"got question={self.question!r} option={self.option!r}"
            )
        if any(i < 0 for i in given):
            raise BadActionId(f"indices must not be negative, got {given!r}")

    @property
    def wire(self) -> str:
        """The action as the action_id spells it."""
        return WIRE[self.action]

    def choice(self) -> tuple[int, int]:
        """The (question, option) a one-click button stands for."""
        if self.question is None or self.option is None:
            raise BadActionId(f"a {self.wire!r} action_id names no option")
        return self.question, self.option

    def pack(self) -> str:
        parts = [PREFIX, self.request_id, self.wire]
        parts.extend(str(i) for i in (self.question, self.option) if i is not None)
        packed = SEPARATOR.join(parts)
        if len(packed) > MAX_ID:
            raise BadActionId(
                f"action_id {packed[:40]!r}… is {len(packed)} characters; Slack allows {MAX_ID}"
            )
        return packed

    @classmethod
    def unpack(cls, value: str) -> ActionId:
        parts = value.split(SEPARATOR)
        if len(parts) < 3 or parts[0] != PREFIX:
            raise BadActionId(f"not an askbridge action_id: {value!r} (expected {_FORMAT})")
        _, request_id, spelled, *indices = parts
        action = _ACTIONS.get(spelled)
        if action is None:
            known = ", ".join(WIRE.values())
            raise BadActionId(f"unknown kind {spelled!r} in action_id {value!r} (known: {known})")
        if len(indices) != _INDICES[action] or not all(
            i.isdecimal() and i.isascii() for i in indices
        ):
            raise BadActionId(
                f"a {spelled!r} action_id takes {_INDICES[action]} index(es), got {value!r}"
            )
        numbers = [int(i) for i in indices] + [None, None]
        try:
            return cls(request_id, action, numbers[0], numbers[1])
        except BadActionId as error:
            raise BadActionId(f"bad action_id {value!r}: {error}") from None


# ---- the answer form ----------------------------------------------------------------------------

FORM_CALLBACK_ID = "ab-answer"
"""The callback_id of every answer form: what its bolt listener is registered for."""
FILL_CALLBACK_ID = "ab-fill"
"""The callback_id of every typed form's modal (a request with a `form`); it carries the same
private_metadata as an answer form."""
FIELD_PREFIX = "ab-field-"
FIELD_ACTION = "field"
"""The action_id of each input of a typed form's modal (`Action.FIELD`)."""


def field_block_id(name: str) -> str:
    """The block_id of the input for the form's field `name`: the name itself, so a
    submission's `state.values` names its fields, and a refusal's errors key its inputs.
    (A field's name is at most 64 characters; a block_id may hold 255.)"""
    return f"{FIELD_PREFIX}{name}"


def field_of(block_id: str) -> str | None:
    """The field name a typed form's input block_id stands for; None for any other block."""
    return block_id.removeprefix(FIELD_PREFIX) if block_id.startswith(FIELD_PREFIX) else None


_FORM_VERSION = 1


class BadFormMetadata(ValueError):
    """A form's private_metadata that askbridge did not write (or no longer understands)."""


_CLAIMS = {"team_id": "t", "app_id": "a", "thread_ts": "th"}


@dataclass(frozen=True)
class FormMetadata:
    """What an answer form carries in its private_metadata: the request, and the message the
    form was opened from (its channel and ts, and what the click claimed about its workspace,
    app and thread), so that its submission is checked against that message like a click."""

    request_id: str
    channel: str
    message_ts: str
    claims: Mapping[str, str] = field(default_factory=dict)
    """team_id, app_id and thread_ts, as far as the click named them."""

    def pack(self) -> str:
        fields: dict[str, Any] = {
            "v": _FORM_VERSION,
            "r": self.request_id,
            "c": self.channel,
            "m": self.message_ts,
        }
        fields.update({short: self.claims[k] for k, short in _CLAIMS.items() if self.claims.get(k)})
        packed = json.dumps(fields, separators=(",", ":"))
        if len(packed) > MAX_PRIVATE_METADATA:
            raise BadFormMetadata(
                f"private_metadata {packed[:40]!r}… is {len(packed)} characters; "
                f"Slack allows {MAX_PRIVATE_METADATA}"
            )
        return packed

    @classmethod
    def unpack(cls, value: object) -> FormMetadata:
        try:
            fields = json.loads(value) if isinstance(value, str) else None
        except json.JSONDecodeError:
            fields = None
        if not isinstance(fields, dict) or fields.get("v") != _FORM_VERSION:
            raise BadFormMetadata(f"not an askbridge form's private_metadata: {value!r:.200}")
        texts = {k: v for k, v in fields.items() if isinstance(v, str) and v}
        if not all(k in texts for k in ("r", "c", "m")):
            raise BadFormMetadata(f"private_metadata names no request and message: {value!r:.200}")
        claims = {k: texts[short] for k, short in _CLAIMS.items() if short in texts}
        return cls(texts["r"], texts["c"], texts["m"], claims)
