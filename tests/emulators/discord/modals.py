"""Modals: what Discord accepts as a MODAL response (callback type 9), the form a person then
sees, and what Discord sends the bot when they submit it (a MODAL_SUBMIT interaction).

Limits from the API docs (`components/reference.mdx`, `interactions/receiving-and-responding`):
a modal has a `custom_id` of 1-100 characters, a `title` of 1-45 and 1-5 top-level components:
Labels (18; `label` 1-45, `description` up to 100, one `component`), Text Displays (10), or the
deprecated Action Row holding one Text Input. A Text Input (4) has a `custom_id` of 1-100, a
`style` of 1 (short) or 2 (paragraph), `min_length` 0-4000, `max_length` 1-4000, `required`
(default true), a prefilled `value` of up to 4000 and a `placeholder` of up to 100; its own
`label` (1-45) is deprecated, and needed only in an Action Row. A String Select (3) in a Label
has what a message's has (1-25 options, each `label` and `value` 1-100 and `description` up to
100, distinct values, a `placeholder` up to 150, `min_values` 0-25, `max_values` 1-25 and no
more than its options, no more defaults than `max_values`) and `required` (default true), with
which `min_values` must be at least 1. Nothing in a modal may be disabled: discord.py sends
`"disabled": false` with every select, which Discord takes; `true` is refused
(`MODAL_COMPONENT_DISABLED`, as Discord answers JDA's discord-jda/JDA#2984).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .components import (
    ACTION_ROW,
    CHANNEL_SELECT,
    LABEL,
    MENTIONABLE_SELECT,
    ROLE_SELECT,
    STRING_SELECT,
    TEXT_DISPLAY,
    TEXT_INPUT,
    USER_SELECT,
    assign_ids,
)
from .payloads import Component, ModalSubmitData
from .validation import MAX_CUSTOM_ID, Collector, Invalid, Path, check_custom_id, check_select

MAX_TITLE = 45
MAX_MODAL_COMPONENTS = 5
MAX_LABEL = 45
MAX_DESCRIPTION = 100
MAX_INPUT_PLACEHOLDER = 100
MAX_INPUT_TEXT = 4000
MAX_TEXT_DISPLAY = 4000
TEXT_STYLES = (1, 2)
FILE_UPLOAD, RADIO_GROUP, CHECKBOX_GROUP, CHECKBOX = 19, 21, 22, 23

MODAL_TOP_LEVEL = frozenset({ACTION_ROW, TEXT_DISPLAY, LABEL})
LABEL_CHILDREN = frozenset(
    {
        TEXT_INPUT,
        STRING_SELECT,
        USER_SELECT,
        ROLE_SELECT,
        MENTIONABLE_SELECT,
        CHANNEL_SELECT,
        FILE_UPLOAD,
        RADIO_GROUP,
        CHECKBOX_GROUP,
        CHECKBOX,
    }
)


class CannotSubmit(AssertionError):
    """What Discord's client would not let the simulated person submit."""


# --- the bot's MODAL response ------------------------------------------------------------


def validate_modal(data: Mapping[str, Any]) -> Invalid | None:
    """Check the `data` of a MODAL interaction response as Discord does."""
    out = Collector()
    out.bad_length(("custom_id",), data.get("custom_id"), 1, MAX_CUSTOM_ID)
    out.bad_length(("title",), data.get("title"), 1, MAX_TITLE)
    components = data.get("components")
    out.bad_length(("components",), components, 1, MAX_MODAL_COMPONENTS)
    seen: set[str] = set()
    for index, item in enumerate(components if isinstance(components, list) else []):
        _check_top_level(out, ("components", index), item, seen)
    if out.flat:
        return Invalid(50035, "Invalid Form Body", out.tree, tuple(out.flat))
    return None


def _check_top_level(out: Collector, path: Path, item: object, seen: set[str]) -> None:
    kind = item.get("type") if isinstance(item, dict) else None
    if not isinstance(item, dict) or kind not in MODAL_TOP_LEVEL:
        out.add(
            (*path, "type"),
            "UNION_TYPE_CHOICES",
            f'Value of field "type" must be one of {sorted(MODAL_TOP_LEVEL)}; got {kind!r}.',
        )
        return
    if kind == TEXT_DISPLAY:
        out.bad_length((*path, "content"), item.get("content"), 1, MAX_TEXT_DISPLAY)
    elif kind == LABEL:
        out.bad_length((*path, "label"), item.get("label"), 1, MAX_LABEL)
        out.max_length((*path, "description"), item.get("description"), MAX_DESCRIPTION)
        child = item.get("component")
        child_kind = child.get("type") if isinstance(child, dict) else None
        if not isinstance(child, dict) or child_kind not in LABEL_CHILDREN:
            out.add(
                (*path, "component", "type"),
                "UNION_TYPE_CHOICES",
                f"A label holds one of {sorted(LABEL_CHILDREN)}; got {child_kind!r}.",
            )
        else:
            _check_interactive(out, (*path, "component"), child, seen, labelled=True)
    else:
        row = item.get("components")
        inputs = [c for c in row if isinstance(c, dict)] if isinstance(row, list) else []
        if len(inputs) != 1 or inputs[0].get("type") != TEXT_INPUT or len(inputs) != len(row or []):
            out.add(
                (*path, "components"),
                "BASE_TYPE_BAD_LENGTH",
                "An action row in a modal holds exactly one text input.",
            )
            return
        _check_interactive(out, (*path, "components", 0), inputs[0], seen, labelled=False)


def _check_interactive(
    out: Collector, path: Path, item: Component, seen: set[str], *, labelled: bool
) -> None:
    check_custom_id(out, path, item.get("custom_id"), seen)
    disabled = item.get("disabled", False)
    if disabled is not False:
        why = "Modals do not support disabled components"
        out.add((*path, "disabled"), "MODAL_COMPONENT_DISABLED", why)
    if item.get("type") == TEXT_INPUT:
        _check_text_input(out, path, item, labelled=labelled)
    elif item.get("type") == STRING_SELECT:
        _check_select(out, path, item)


def _check_select(out: Collector, path: Path, item: Component) -> None:
    check_select(out, path, item)
    required = item.get("required", True)
    if not isinstance(required, bool):
        out.add((*path, "required"), "BASE_TYPE_BOOLEAN", "Must be either true or false.")
    elif required and item.get("min_values", 1) == 0:
        out.add(
            (*path, "min_values"),
            "COMPONENT_INVALID",
            "min_values must be omitted or at least 1 when required is omitted or true.",
        )


def _check_text_input(out: Collector, path: Path, item: Component, *, labelled: bool) -> None:
    style = item.get("style")
    if style not in TEXT_STYLES or isinstance(style, bool):
        out.add((*path, "style"), "BASE_TYPE_CHOICES", f"Value must be one of 1, 2; got {style!r}.")
    label = item.get("label")
    if labelled:
        # Deprecated inside a Label, which carries the label; tolerated when it fits.
        out.max_length((*path, "label"), label, MAX_LABEL)
    else:
        out.bad_length((*path, "label"), label, 1, MAX_LABEL)
    out.max_length((*path, "placeholder"), item.get("placeholder"), MAX_INPUT_PLACEHOLDER)
    out.max_length((*path, "value"), item.get("value"), MAX_INPUT_TEXT)
    low = _bounded(out, (*path, "min_length"), item.get("min_length"), 0)
    high = _bounded(out, (*path, "max_length"), item.get("max_length"), 1)
    if low is not None and high is not None and low > high:
        out.add((*path, "min_length"), "NUMBER_TYPE_MAX", "min_length must be <= max_length.")
    required = item.get("required")
    if required is not None and not isinstance(required, bool):
        out.add((*path, "required"), "BASE_TYPE_BOOLEAN", "Must be either true or false.")


def _bounded(out: Collector, path: Path, value: object, low: int) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= MAX_INPUT_TEXT:
        out.add(path, "NUMBER_TYPE_MAX", f"int value should be between {low} and {MAX_INPUT_TEXT}.")
        return None
    return value


# --- the form a person sees, and submits ---------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One text input of a modal, as the person sees it."""

    label: str
    description: str | None
    custom_id: str
    style: int
    value: str
    """What it is prefilled with."""
    placeholder: str | None
    required: bool
    min_length: int
    max_length: int


@dataclass(frozen=True)
class Option:
    """One option of a select in a modal."""

    label: str
    value: str
    description: str | None
    default: bool


@dataclass(frozen=True)
class Choices:
    """One string select of a modal, as the person sees it."""

    label: str
    description: str | None
    custom_id: str
    placeholder: str | None
    options: tuple[Option, ...]
    min_values: int
    max_values: int
    required: bool

    @property
    def chosen(self) -> list[str]:
        """The labels of the options it is prefilled with."""
        return [o.label for o in self.options if o.default]


@dataclass(frozen=True)
class Modal:
    """A modal the bot showed someone; `components` carry the ids Discord assigned."""

    custom_id: str
    title: str
    components: list[Component]

    @property
    def inputs(self) -> tuple[Field | Choices, ...]:
        """Every input, in the order the person sees them."""
        return tuple(_inputs(self.components))

    @property
    def fields(self) -> tuple[Field, ...]:
        """The text inputs."""
        return tuple(i for i in self.inputs if isinstance(i, Field))

    @property
    def selects(self) -> tuple[Choices, ...]:
        """The string selects."""
        return tuple(i for i in self.inputs if isinstance(i, Choices))

    @property
    def labels(self) -> list[str]:
        return [i.label for i in self.inputs]

    def field(self, label: str) -> Field:
        found = [f for f in self.fields if f.label == label]
        if len(found) != 1:
            raise CannotSubmit(
                f"{len(found)} text inputs labelled {label!r} in modal {self.title!r}; "
                f"inputs: {self.labels}"
            )
        return found[0]

    def select(self, label: str) -> Choices:
        found = [s for s in self.selects if s.label == label]
        if len(found) != 1:
            raise CannotSubmit(
                f"{len(found)} selects labelled {label!r} in modal {self.title!r}; "
                f"inputs: {self.labels}"
            )
        return found[0]


def shown(data: Mapping[str, Any]) -> Modal:
    """The modal a valid MODAL response shows, numbered as Discord numbers components."""
    components: list[Component] = copy.deepcopy(list(data["components"]))
    assign_ids(components)
    return Modal(str(data["custom_id"]), str(data["title"]), components)


def _inputs(components: list[Component]) -> list[Field | Choices]:
    found: list[Field | Choices] = []
    for item in components:
        if item.get("type") == LABEL and item["component"].get("type") == TEXT_INPUT:
            found.append(_field(item["component"], item["label"], item.get("description")))
        elif item.get("type") == LABEL and item["component"].get("type") == STRING_SELECT:
            found.append(_choices(item["component"], item["label"], item.get("description")))
        elif item.get("type") == ACTION_ROW:
            found.append(_field(item["components"][0], item["components"][0]["label"], None))
    return found


def _field(item: Component, label: str, description: str | None) -> Field:
    max_length = item.get("max_length")
    return Field(
        label=label,
        description=description,
        custom_id=item["custom_id"],
        style=item["style"],
        value=item.get("value") or "",
        placeholder=item.get("placeholder"),
        required=item.get("required", True) is not False,
        min_length=int(item.get("min_length") or 0),
        max_length=MAX_INPUT_TEXT if max_length is None else int(max_length),
    )


def _choices(item: Component, label: str, description: str | None) -> Choices:
    options = tuple(
        Option(
            label=o["label"],
            value=o["value"],
            description=o.get("description"),
            default=o.get("default") is True,
        )
        for o in item["options"]
    )
    return Choices(
        label=label,
        description=description,
        custom_id=item["custom_id"],
        placeholder=item.get("placeholder"),
        options=options,
        min_values=int(item.get("min_values", 1)),
        max_values=int(item.get("max_values", 1)),
        required=item.get("required", True) is not False,
    )


Given = str | Sequence[str]
"""What the person gives an input: a text for a text input, option labels for a select."""


def submission(modal: Modal, values: Mapping[str, Given]) -> ModalSubmitData:
    """The `data` of the MODAL_SUBMIT interaction for `modal` filled in with `values` (by
    input label: a text for a text input, a list of option labels for a select; other inputs
    keep what they were prefilled with). CannotSubmit when Discord's client would not send it:
    an unknown label, a required input left empty, a text outside the field's
    min_length..max_length, options the select does not have or too few or too many."""
    inputs = {i.custom_id: i for i in modal.inputs}
    unknown = sorted(set(values) - {i.label for i in inputs.values()})
    if unknown:
        raise CannotSubmit(f"no fields {unknown} in modal {modal.title!r}; fields: {modal.labels}")
    given: dict[str, Given] = {}
    for custom_id, item in inputs.items():
        if isinstance(item, Field):
            given[custom_id] = _typed(item, values.get(item.label, item.value))
        else:
            given[custom_id] = _picked(item, values.get(item.label, item.chosen))
    return ModalSubmitData(
        custom_id=modal.custom_id, components=_submitted(modal.components, given)
    )


def _typed(field: Field, text: Given) -> str:
    if not isinstance(text, str):
        raise CannotSubmit(f"field {field.label!r} is a text input; type a text into it")
    if not text and field.required:
        raise CannotSubmit(f"field {field.label!r} is required; Discord won't submit it empty")
    if text and not field.min_length <= len(text) <= field.max_length:
        raise CannotSubmit(
            f"field {field.label!r} takes {field.min_length}-{field.max_length} characters; "
            f"Discord will not submit {len(text)}"
        )
    return text


def _picked(select: Choices, labels: Given) -> list[str]:
    if isinstance(labels, str):
        raise CannotSubmit(f"{select.label!r} is a select; pick options by a list of labels")
    by_label = {o.label: o.value for o in select.options}
    missing = [label for label in labels if label not in by_label]
    if missing or len(set(labels)) != len(labels):
        raise CannotSubmit(
            f"select {select.label!r} has options {list(by_label)}; cannot pick {list(labels)}"
        )
    count = len(labels)
    if count == 0 and select.required:
        raise CannotSubmit(f"select {select.label!r} is required; Discord won't submit it empty")
    if count and not select.min_values <= count <= select.max_values:
        raise CannotSubmit(
            f"select {select.label!r} takes {select.min_values}-{select.max_values} options; "
            f"Discord will not submit {count}"
        )
    return [by_label[label] for label in labels]


def _submitted(components: list[Component], given: Mapping[str, Given]) -> list[Component]:
    out: list[Component] = []
    for item in components:
        kind = item.get("type")
        if kind == LABEL:
            child = _input(item["component"], given)
            out.append({"type": LABEL, "id": item["id"], "component": child})
        elif kind == ACTION_ROW:
            inputs = [_input(c, given) for c in item["components"]]
            out.append({"type": ACTION_ROW, "id": item["id"], "components": inputs})
        elif kind == TEXT_DISPLAY:
            out.append({"type": TEXT_DISPLAY, "id": item["id"], "content": item["content"]})
    return out


def _input(item: Component, given: Mapping[str, Given]) -> Component:
    kind, custom_id = item.get("type"), item["custom_id"]
    if kind == TEXT_INPUT:
        return {"type": kind, "id": item["id"], "custom_id": custom_id, "value": given[custom_id]}
    if kind == STRING_SELECT:
        values = list(given[custom_id])
        return {"type": kind, "id": item["id"], "custom_id": custom_id, "values": values}
    raise CannotSubmit(f"the emulator fills in text inputs and string selects, not type {kind}")
