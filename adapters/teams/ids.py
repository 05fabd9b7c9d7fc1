"""What a card's actions carry back (`Action.Execute`'s `verb` and `data`), and reading it from
a press: Teams merges the card's input values into `data`, keyed by the inputs' ids."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Verb = Literal["pick", "submit", "cancel", "change", "fill", "decline"]
PICK: Verb = "pick"
SUBMIT: Verb = "submit"
CANCEL: Verb = "cancel"
CHANGE: Verb = "change"
"""Edit and allow: Allow once with the input in CHANGED_INPUT (`core.changes`)."""
FILL: Verb = "fill"
"""Submit a typed form's inputs."""
DECLINE: Verb = "decline"
VERBS: tuple[Verb, ...] = (PICK, SUBMIT, CANCEL, CHANGE, FILL, DECLINE)
REQUEST_KEY = "askbridge"
"""The key of the request id in an action's data; its name tells a reader whose card it is."""
QUESTION_INPUT = re.compile(r"q(?P<q>[0-9]{1,2})")
WORDS_INPUT = re.compile(r"w(?P<q>[0-9]{1,2})")
NOTE_INPUT = "note"
CHANGED_INPUT = "changed"


class BadPress(ValueError):
    """A press whose verb or data no card of askbridge's carries; the message quotes it."""


def choice_input(question: int) -> str:
    """The id of a question's Input.ChoiceSet."""
    return f"q{question}"


def words_input(question: int) -> str:
    """The id of a question's Input.Text for an answer in one's own words."""
    return f"w{question}"


def action_data(
    request_id: str, *, question: int | None = None, option: int | None = None
) -> dict[str, Any]:
    data: dict[str, Any] = {REQUEST_KEY: request_id}
    if question is not None and option is not None:
        data |= {"question": question, "option": option}
    return data


@dataclass(frozen=True)
class Press:
    """A press read from its invoke: which request, which verb, which option (a pick), and
    each question's chosen option indices from the inputs."""

    request_id: str
    verb: Verb
    question: int | None
    option: int | None
    chosen: Mapping[int, tuple[int, ...]]
    typed: Mapping[int, str]
    note: str
    changed: str | None = None
    """What the person left in the changed input's field (a CHANGE press)."""
    inputs: Mapping[str, Any] = field(default_factory=dict)
    """Every input's value as the card sent it, by input id (a typed form's fields)."""


def read_press(value: object) -> Press:
    """The press an `adaptiveCard/action` invoke's value describes, or BadPress."""
    action = value.get("action") if isinstance(value, dict) else None
    if not isinstance(action, dict) or action.get("type") != "Action.Execute":
        raise BadPress(f"not an Action.Execute: {value!r:.200}")
    verb, data = action.get("verb"), action.get("data")
    if verb not in VERBS or not isinstance(data, dict):
        raise BadPress(f"an action askbridge's cards do not have: {verb!r:.60}")
    request_id = data.get(REQUEST_KEY)
    if not isinstance(request_id, str) or not request_id:
        raise BadPress(f"no request id in the action's data: {data!r:.200}")
    question, option = data.get("question"), data.get("option")
    if verb == PICK and not (_index(question) and _index(option)):
        raise BadPress(f"a pick names no option: {data!r:.200}")
    chosen: dict[int, tuple[int, ...]] = {}
    if verb in (FILL, DECLINE):
        inputs = {k: v for k, v in data.items() if k != REQUEST_KEY}
        return Press(request_id, verb, None, None, chosen, {}, "", inputs=inputs)
    for key, raw in data.items():
        found = QUESTION_INPUT.fullmatch(str(key))
        if found is None or not isinstance(raw, str):
            continue
        picks = [part.strip() for part in raw.split(",") if part.strip()]
        if not all(part.isdigit() and len(part) <= 3 for part in picks):
            raise BadPress(f"input {key!r} holds {raw!r:.60}, not option numbers")
        chosen[int(found["q"])] = tuple(sorted({int(part) for part in picks}))
    typed = {
        int(found["q"]): raw
        for key, raw in data.items()
        if (found := WORDS_INPUT.fullmatch(str(key))) is not None
        and isinstance(raw, str)
        and raw.strip()
    }
    note = data.get(NOTE_INPUT)
    changed = data.get(CHANGED_INPUT)
    return Press(
        request_id,
        verb,
        question if isinstance(question, int) else None,
        option if isinstance(option, int) else None,
        chosen,
        typed,
        note if isinstance(note, str) else "",
        changed if isinstance(changed, str) else None,
    )


def _index(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 100
