"""What a person's Slack client knows about a message: where things are, and what they picked.

Slack keeps un-submitted radio/checkbox/menu choices in the person's own client, keyed by
`block_id` and `action_id`. So when `chat.update` keeps a block_id, the old choice survives (and
a new `initial_option` is ignored); a new block_id starts from the message's initial values.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from .blocks import block_texts, placed_elements, text_of, visible_text
from .types import ActionPayload, Block, JSONDict, StateEntry, StateValues
from .workspace import Message

SINGLE_CHOICE = frozenset({"radio_buttons", "static_select"})
MULTI_CHOICE = frozenset({"checkboxes", "multi_static_select"})
VALUE_INPUTS = frozenset({"plain_text_input", "number_input", "email_text_input", "url_text_input"})
PICKERS = {
    "datepicker": ("initial_date", "selected_date"),
    "timepicker": ("initial_time", "selected_time"),
    "datetimepicker": ("initial_date_time", "selected_date_time"),
}
"""Each picker's initial field, and the field of `state.values` that holds what is picked."""
STATELESS = frozenset({"button", "overflow"})

StateKey = tuple[str, str]


@dataclass(frozen=True)
class Target:
    """An element a person can act on, with the text that surrounds it on screen."""

    block_id: str
    action_id: str
    type: str
    element: JSONDict
    context: str

    def matches(self, hint: str | None) -> bool:
        return hint is None or hint.casefold() in self.context.casefold()


def targets(blocks: Sequence[Block]) -> list[Target]:
    """Interactive elements in reading order. An element's context is its block_id plus the text
    shown since the previous interactive block (a question's header and prompt, typically)."""
    found: list[Target] = []
    pending: list[str] = []
    for block in blocks:
        pending.extend(block_texts(block, with_elements=False))
        placed = list(placed_elements([block]))
        for item in placed:
            context = "\n".join([item.block_id, *pending])
            found.append(Target(item.block_id, item.action_id, item.type, item.element, context))
        if placed:
            pending = []
    return found


def options_of(element: JSONDict) -> list[JSONDict]:
    options = [o for o in element.get("options") or [] if isinstance(o, dict)]
    for group in element.get("option_groups") or []:
        options.extend(o for o in group.get("options") or [] if isinstance(o, dict))
    return options


def _describe(message: Message) -> str:
    return f"message {message.channel}/{message.ts} (version {message.version})"


def _screen(message: Message) -> str:
    shown = visible_text(message.text, message.blocks) or "(nothing)"
    return "\n".join("    " + line for line in shown.splitlines())


def find_button(message: Message, label: str, hint: str | None) -> Target:
    buttons = [t for t in targets(message.blocks) if t.type == "button"]
    matches = [
        t
        for t in buttons
        if text_of(t.element.get("text")).strip() == label.strip() and t.matches(hint)
    ]
    if len(matches) == 1:
        return matches[0]
    visible = [f"{text_of(t.element.get('text'))!r} (block {t.block_id})" for t in buttons]
    problem = "No button" if not matches else f"{len(matches)} buttons"
    raise AssertionError(
        f"{problem} labelled {label!r}"
        + (f" near {hint!r}" if hint else "")
        + f" in {_describe(message)}.\n  Buttons on screen: {visible or 'none'}\n"
        + f"  Message shows:\n{_screen(message)}"
    )


def find_option(
    message: Message, label: str, kinds: frozenset[str], hint: str | None
) -> tuple[Target, JSONDict]:
    groups = [t for t in targets(message.blocks) if t.type in kinds]
    matches = [
        (t, option)
        for t in groups
        if t.matches(hint)
        for option in options_of(t.element)
        if text_of(option.get("text")).strip() == label.strip()
    ]
    if len(matches) == 1:
        return matches[0]
    visible = {
        f"{t.type} {t.block_id}/{t.action_id}": [
            text_of(o.get("text")) for o in options_of(t.element)
        ]
        for t in groups
    }
    problem = "No option" if not matches else f"{len(matches)} options (pass a hint)"
    raise AssertionError(
        f"{problem} labelled {label!r} among {sorted(kinds)}"
        + (f" near {hint!r}" if hint else "")
        + f" in {_describe(message)}.\n  Choices on screen: {visible or 'none'}\n"
        + f"  Message shows:\n{_screen(message)}"
    )


def initial_entry(element: JSONDict) -> StateEntry | None:
    """What `state.values` holds for an element the person has not touched."""
    kind = str(element.get("type"))
    if kind in SINGLE_CHOICE:
        initial = element.get("initial_option")
        return {"type": kind, "selected_option": copy.deepcopy(initial) if initial else None}
    if kind in MULTI_CHOICE:
        return {
            "type": kind,
            "selected_options": copy.deepcopy(element.get("initial_options") or []),
        }
    if kind in VALUE_INPUTS:
        return {"type": kind, "value": element.get("initial_value")}
    if kind in PICKERS:
        return picked(kind, element.get(PICKERS[kind][0]))
    return None


def picked(kind: str, value: object) -> StateEntry:
    """A picker's `state.values` entry holding `value` (None: nothing picked)."""
    entry: StateEntry = {"type": kind}
    if kind == "datepicker":
        entry["selected_date"] = value if isinstance(value, str) else None
    elif kind == "timepicker":
        entry["selected_time"] = value if isinstance(value, str) else None
    else:
        entry["selected_date_time"] = value if isinstance(value, int) else None
    return entry


@dataclass
class ClientState:
    """One person's un-submitted choices on one message (all its versions)."""

    choices: dict[StateKey, StateEntry] = field(default_factory=dict)

    def entry(self, target: Target) -> StateEntry | None:
        chosen = self.choices.get((target.block_id, target.action_id))
        return copy.deepcopy(chosen) if chosen is not None else initial_entry(target.element)

    def state_values(self, blocks: Sequence[Block]) -> StateValues:
        values: dict[str, dict[str, StateEntry]] = {}
        for target in targets(blocks):
            if target.type in STATELESS:
                continue
            entry = self.entry(target)
            if entry is not None:
                values.setdefault(target.block_id, {})[target.action_id] = entry
        return {"values": values}

    def selected(self, target: Target) -> list[JSONDict]:
        entry = self.entry(target) or {"type": target.type}
        if "selected_options" in entry:
            return list(entry["selected_options"])
        option = entry.get("selected_option")
        return [option] if option else []

    def type_text(self, target: Target, value: str) -> StateEntry:
        """What the person typed into a text input replaces what was there."""
        entry: StateEntry = {"type": target.type, "value": value}
        self.choices[(target.block_id, target.action_id)] = entry
        return copy.deepcopy(entry)

    def pick(self, target: Target, value: str | int | None) -> StateEntry:
        """A date (YYYY-MM-DD), a time (HH:mm) or a date and time (UNIX seconds) picked, or
        the picker cleared (None)."""
        if target.type not in PICKERS:
            raise AssertionError(f"{target.type} {target.block_id} is not a date or time picker")
        entry = picked(target.type, value)
        self.choices[(target.block_id, target.action_id)] = entry
        return copy.deepcopy(entry)

    def choose(self, target: Target, options: list[JSONDict]) -> StateEntry:
        entry: StateEntry = {"type": target.type}
        if target.type in MULTI_CHOICE:
            entry["selected_options"] = copy.deepcopy(options)
        else:
            entry["selected_option"] = copy.deepcopy(options[0]) if options else None
        self.choices[(target.block_id, target.action_id)] = entry
        return copy.deepcopy(entry)


@dataclass
class ClientStates:
    _states: dict[tuple[str, str, str], ClientState] = field(default_factory=dict)

    def of(self, user_id: str, message: Message) -> ClientState:
        return self._states.setdefault((user_id, message.channel, message.ts), ClientState())


def button_action(target: Target, action_ts: str) -> ActionPayload:
    action: ActionPayload = {
        "action_id": target.action_id,
        "block_id": target.block_id,
        "text": copy.deepcopy(target.element.get("text") or {}),
        "type": "button",
        "action_ts": action_ts,
    }
    if "value" in target.element:
        action["value"] = str(target.element["value"])
    if "style" in target.element:
        action["style"] = str(target.element["style"])
    return action


def choice_action(target: Target, entry: StateEntry, action_ts: str) -> ActionPayload:
    action: ActionPayload = {
        "action_id": target.action_id,
        "block_id": target.block_id,
        "type": target.type,
        "action_ts": action_ts,
    }
    if "selected_options" in entry:
        action["selected_options"] = entry["selected_options"]
    else:
        action["selected_option"] = entry.get("selected_option")
    return action
