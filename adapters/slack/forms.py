"""The answer form: a Slack modal for answering in one's own words or with a note, and what its
submission says. "Other…" opens it with a text input per question, prefilled with the picked
labels and read as the agent reads an answer (`core.answers.with_typed`); "Add a note" with
each question's options. Labels and hints are plain text, cut to Slack's limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from askbridge.adapters.slack.blockkit import (
    MAX_LABEL,
    MAX_PLACEHOLDER,
    MAX_TEXT_INPUT,
    MAX_VIEW_TITLE,
    Checkboxes,
    InputBlock,
    ModalView,
    PlainTextInput,
    RadioButtons,
    StateEntry,
    StateValues,
)
from askbridge.adapters.slack.controls import option, plain
from askbridge.adapters.slack.ids import FORM_CALLBACK_ID, FormMetadata
from askbridge.adapters.slack.render import one_line
from askbridge.adapters.slack.text import Line, block, section
from askbridge.core.answers import (
    MAX_TYPED_CHARS,
    NOTE_HINT,
    NOTE_LABEL,
    NOTE_PLACEHOLDER,
    NOTE_TITLE,
    OWN_WORDS_TITLE,
    answer_text,
    typing_hint,
)
from askbridge.core.changes import CHANGE_HINT, CHANGE_TITLE, Changeable
from askbridge.core.intents import (
    CHANGED,
    NOTE,
    Action,
    Refusal,
    Refused,
    Submit,
    allow_with_changes,
)
from askbridge.core.models import Selections, UserQuestion
from askbridge.core.view import RequestView

TITLES = {Action.WORDS: OWN_WORDS_TITLE, Action.ADD_NOTE: NOTE_TITLE, Action.CHANGE: CHANGE_TITLE}
SUBMIT = "Submit"
CLOSE = "Close"
NOTE_BLOCK = "note"
TEXT_ACTION = "text"
CHOICE_ACTION = "choice"
NOTE_ACTION = "note"
CHANGED_BLOCK = "changed"
CHANGED_ACTION = "changed"
MISSING = "Please answer this question."


def field_id(question: int) -> str:
    if question == CHANGED:
        return CHANGED_BLOCK
    return NOTE_BLOCK if question == NOTE else f"q{question}"


def question_of(block_id: str) -> int | None:
    number = block_id.removeprefix("q")
    return int(number) if block_id.startswith("q") and number.isdecimal() else None


# ---- the form -----------------------------------------------------------------------------------


def form(view: RequestView, picks: Selections, kind: Action, metadata: FormMetadata) -> ModalView:
    """The form `kind`'s button opens, prefilled with what the person picked (`picks`), or for
    Edit and allow with the tool call's input as asked."""
    policy = view.request.policy
    own_words = kind is Action.WORDS and policy.allow_other
    field = view.changeable if kind is Action.CHANGE else None
    blocks: list[InputBlock] = [
        _text_field(index, q, picks.get(index, ()), focus=index == 0)
        if own_words
        else _choice_field(index, q, picks.get(index, ()))
        for index, q in enumerate(view.questions)
    ]
    if field is not None:
        blocks = [_changed_field(field)]
    if policy.allow_notes:
        blocks.append(_note_field(focus=not own_words and field is None))
    return {
        "type": "modal",
        "callback_id": FORM_CALLBACK_ID,
        "title": plain(TITLES[kind], MAX_VIEW_TITLE),
        "submit": plain(SUBMIT, MAX_VIEW_TITLE),
        "close": plain(CLOSE, MAX_VIEW_TITLE),
        "private_metadata": metadata.pack(),
        "blocks": [*blocks],
    }


def notice(line: Line) -> ModalView:
    """What the form becomes when the answer cannot be taken at all (the question ended, the
    person may not answer it…): the reason, and only a Close button."""
    return {
        "type": "modal",
        "callback_id": FORM_CALLBACK_ID,
        "title": plain("Your answer", MAX_VIEW_TITLE),
        "close": plain(CLOSE, MAX_VIEW_TITLE),
        "blocks": [block("ab-notice", [section(line)])],
    }


def _label(question: UserQuestion) -> str:
    return f"{question.header}: {one_line(question.question)}"


def _text_field(
    index: int, question: UserQuestion, picked: Sequence[int], *, focus: bool
) -> InputBlock:
    initial = answer_text(question, picked, "") if picked else ""
    return {
        "type": "input",
        "block_id": field_id(index),
        "label": plain(_label(question), MAX_LABEL),
        "hint": plain(typing_hint(question, own_words=True), MAX_LABEL),
        "element": _text_input(TEXT_ACTION, multiline=False, initial=initial, focus=focus),
    }


def _choice_field(index: int, question: UserQuestion, picked: Sequence[int]) -> InputBlock:
    options = [option(o, opt.label, opt.description) for o, opt in enumerate(question.options)]
    chosen = [options[o] for o in sorted(set(picked)) if 0 <= o < len(options)]
    element: RadioButtons | Checkboxes
    if question.multi_select:
        element = {"type": "checkboxes", "action_id": CHOICE_ACTION, "options": options}
        if chosen:
            element["initial_options"] = chosen
    else:
        element = {"type": "radio_buttons", "action_id": CHOICE_ACTION, "options": options}
        if chosen:
            element["initial_option"] = chosen[-1]
    return {
        "type": "input",
        "block_id": field_id(index),
        "label": plain(_label(question), MAX_LABEL),
        "element": element,
    }


def _text_input(
    action_id: str, *, multiline: bool, initial: str, focus: bool, placeholder: str = ""
) -> PlainTextInput:
    """A text input that takes what askbridge takes: at most MAX_TYPED_CHARS characters."""
    element: PlainTextInput = {
        "type": "plain_text_input",
        "action_id": action_id,
        "max_length": MAX_TYPED_CHARS,
        "multiline": multiline,
    }
    if initial:
        element["initial_value"] = initial
    if focus:
        element["focus_on_load"] = True
    if placeholder:
        element["placeholder"] = plain(placeholder, MAX_PLACEHOLDER)
    return element


def _changed_field(field: Changeable) -> InputBlock:
    element: PlainTextInput = {
        "type": "plain_text_input",
        "action_id": CHANGED_ACTION,
        "max_length": MAX_TEXT_INPUT,
        "multiline": True,
        "focus_on_load": True,
    }
    if field.text:
        element["initial_value"] = field.text
    return {
        "type": "input",
        "block_id": CHANGED_BLOCK,
        "label": plain(field.label, MAX_LABEL),
        "hint": plain(CHANGE_HINT, MAX_LABEL),
        "element": element,
    }


def _note_field(*, focus: bool) -> InputBlock:
    return {
        "type": "input",
        "block_id": NOTE_BLOCK,
        "optional": True,
        "label": plain(NOTE_LABEL, MAX_LABEL),
        "hint": plain(NOTE_HINT, MAX_LABEL),
        "element": _text_input(
            NOTE_ACTION, multiline=True, initial="", focus=focus, placeholder=NOTE_PLACEHOLDER
        ),
    }


# ---- the submission -----------------------------------------------------------------------------


def read(values: StateValues) -> Submit:
    """The options chosen, the words typed per question, and the note, from the submitted
    form's `state.values`; Edit and allow when it holds a changed input."""
    chosen: Selections = {}
    typed: dict[int, str] = {}
    note = ""
    changed: str | None = None
    for block_id, elements in values.items():
        question = question_of(block_id)
        for action_id, entry in (elements if isinstance(elements, dict) else {}).items():
            if not isinstance(entry, dict):
                continue
            value = entry.get("value")
            if block_id == NOTE_BLOCK and action_id == NOTE_ACTION:
                note = value if isinstance(value, str) else ""
            elif block_id == CHANGED_BLOCK and action_id == CHANGED_ACTION:
                changed = value if isinstance(value, str) else ""
            elif question is None:
                continue
            elif action_id == TEXT_ACTION:
                typed[question] = value if isinstance(value, str) else ""
            elif action_id == CHOICE_ACTION and (indices := picked(entry)):
                chosen[question] = indices
    if changed is not None:
        return allow_with_changes(changed, note)
    return Submit(chosen, typed, note)


def picked(entry: StateEntry) -> tuple[int, ...]:
    """The option indices a radio button group or checkbox group holds (askbridge's options
    carry their index as their value)."""
    options: list[object] = [*entry.get("selected_options", []), entry.get("selected_option")]
    values = [o.get("value") for o in options if isinstance(o, dict)]
    return tuple(sorted({int(v) for v in values if isinstance(v, str) and v.isdecimal()}))


def field_errors(outcome: Refused, questions: Sequence[UserQuestion]) -> Mapping[str, str]:
    """The errors to show under the form's inputs for a refusal about what was typed or left
    out; empty for any other refusal."""
    if outcome.reason not in (Refusal.BAD_TEXT, Refusal.MISSING_ANSWERS):
        return {}
    index = {q.header: i for i, q in enumerate(questions)}
    errors = {field_id(index[h]): MISSING for h in outcome.missing if h in index}
    errors.update({field_id(q): problem for q, problem in outcome.problems.items()})
    return errors
