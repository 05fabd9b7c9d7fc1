"""Message validation with Discord's limits and its "Invalid Form Body" error shape."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .components import (
    ACTION_ROW,
    BUTTON,
    CONTAINER,
    FILE,
    LINK_STYLE,
    MEDIA_GALLERY,
    PREMIUM_STYLE,
    SECTION,
    SELECT_TYPES,
    SEPARATOR,
    STRING_SELECT,
    TEXT_DISPLAY,
    THUMBNAIL,
    count_components,
    walk,
)
from .mentions import allowed_mentions_problems
from .payloads import Component, JSONObject

IS_COMPONENTS_V2 = 1 << 15
EPHEMERAL = 1 << 6
LOADING = 1 << 7

MAX_CONTENT = 2000
MAX_EMBEDS = 10
MAX_LEGACY_ROWS = 5
MAX_ROW_BUTTONS = 5
MAX_BUTTON_LABEL = 80
MAX_BUTTON_URL = 512
MAX_CUSTOM_ID = 100
MAX_OPTIONS = 25
MAX_OPTION_TEXT = 100
MAX_PLACEHOLDER = 150
MAX_SELECT_VALUES = 25
MAX_V2_COMPONENTS = 40
MAX_V2_TEXT = 4000
MAX_SECTION_TEXTS = 3
MAX_COLOUR = 0xFFFFFF
MAX_COMPONENT_ID = 2**31 - 1
SEPARATOR_SPACINGS = (1, 2)

V2_TOP_LEVEL = frozenset(
    {ACTION_ROW, SECTION, TEXT_DISPLAY, MEDIA_GALLERY, FILE, SEPARATOR, CONTAINER}
)
CONTAINER_CHILDREN = V2_TOP_LEVEL - {CONTAINER}

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Invalid:
    """Why Discord would refuse a message: the HTTP 400 body and a flat summary."""

    code: int
    message: str
    errors: JSONObject = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def body(self) -> JSONObject:
        body: JSONObject = {"code": self.code, "message": self.message}
        if self.errors:
            body["errors"] = self.errors
        return body


class Collector:
    def __init__(self) -> None:
        self.tree: JSONObject = {}
        self.flat: list[str] = []

    def add(self, path: Path, code: str, message: str) -> None:
        node = self.tree
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})
        self.flat.append(f"{'.'.join(str(p) for p in path)}: {code}: {message}")

    def max_length(self, path: Path, value: object, limit: int) -> None:
        if isinstance(value, str) and len(value) > limit:
            self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")

    def bad_length(self, path: Path, value: object, low: int, high: int) -> None:
        size = len(value) if isinstance(value, str | list) else 0
        if not low <= size <= high:
            self.add(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {low} and {high} in length.")


def validate_message(message: Mapping[str, Any]) -> Invalid | None:
    """Check a message as it would be stored (after merging an edit into it), together with
    the `allowed_mentions` of the request when the mapping holds one."""
    flags = int(message.get("flags") or 0)
    content = message.get("content") or ""
    embeds: list[Any] = list(message.get("embeds") or [])
    components: list[Any] = list(message.get("components") or [])
    out = Collector()

    if not isinstance(content, str):
        out.add(("content",), "BASE_TYPE_STRING", "Must be a string.")
        content = ""
    out.max_length(("content",), content, MAX_CONTENT)
    if len(embeds) > MAX_EMBEDS:
        out.add(("embeds",), "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_EMBEDS} or fewer in length.")
    for index, embed in enumerate(embeds):
        if isinstance(embed, dict):
            out.max_length(("embeds", index, "title"), embed.get("title"), 256)
            out.max_length(("embeds", index, "description"), embed.get("description"), 4096)

    if flags & IS_COMPONENTS_V2:
        _check_v2(out, content, embeds, message.get("poll"), components)
    else:
        _check_legacy(out, components)
    _check_custom_ids(out, components)
    _check_component_ids(out, components)
    for path, code, text in allowed_mentions_problems(message.get("allowed_mentions")):
        out.add(("allowed_mentions", *path), code, text)

    if out.flat:
        return Invalid(50035, "Invalid Form Body", out.tree, tuple(out.flat))
    # Discord trims the content first: a message of only spaces and line breaks is empty.
    has_body = content.strip() or embeds or components or message.get("sticker_ids")
    if not has_body and not message.get("attachments") and not message.get("poll"):
        return Invalid(50006, "Cannot send an empty message", problems=("empty message",))
    return None


def _check_legacy(out: Collector, components: list[Any]) -> None:
    if len(components) > MAX_LEGACY_ROWS:
        out.add(
            ("components",),
            "BASE_TYPE_MAX_LENGTH",
            f"Must be {MAX_LEGACY_ROWS} or fewer in length.",
        )
    for index, row in enumerate(components):
        path: Path = ("components", index)
        if not isinstance(row, dict) or row.get("type") != ACTION_ROW:
            kind = row.get("type") if isinstance(row, dict) else None
            out.add(
                (*path, "type"),
                "UNION_TYPE_CHOICES",
                f'Value of field "type" must be one of ({ACTION_ROW},); got {kind!r}. '
                "Other top-level components need the IS_COMPONENTS_V2 flag.",
            )
            continue
        _check_row(out, path, row)


def _check_v2(
    out: Collector, content: str, embeds: list[Any], poll: object, components: list[Any]
) -> None:
    legacy = "LEGACY_FIELDS_WITH_COMPONENTS_V2"
    why = "cannot be used when using MessageFlags.IS_COMPONENTS_V2"
    if content:
        out.add(("content",), legacy, f"The 'content' field {why}")
    if embeds:
        out.add(("embeds",), legacy, f"The 'embeds' field {why}")
    if poll:
        out.add(("poll",), legacy, f"The 'poll' field {why}")
    valid = [c for c in components if isinstance(c, dict)]
    total = count_components(valid)
    if total > MAX_V2_COMPONENTS:
        out.add(
            ("components",),
            "COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED",
            f"The message has {total} components; the maximum is {MAX_V2_COMPONENTS} "
            "(nested ones count).",
        )
    text = sum(
        len(p.component.get("content") or "")
        for p in walk(valid)
        if p.component.get("type") == TEXT_DISPLAY
    )
    if text > MAX_V2_TEXT:
        out.add(
            ("components",),
            "MAX_TEXT_DISPLAY_LENGTH_EXCEEDED",
            f"Text displays hold {text} characters in total; the maximum is {MAX_V2_TEXT}.",
        )
    for index, item in enumerate(components):
        _check_v2_item(out, ("components", index), item, V2_TOP_LEVEL)


def _check_v2_item(out: Collector, path: Path, item: object, allowed: frozenset[int]) -> None:
    if not isinstance(item, dict) or item.get("type") not in allowed:
        kind = item.get("type") if isinstance(item, dict) else None
        out.add(
            (*path, "type"),
            "UNION_TYPE_CHOICES",
            f'Value of field "type" must be one of {sorted(allowed)}; got {kind!r}.',
        )
        return
    kind = item["type"]
    if kind == ACTION_ROW:
        _check_row(out, path, item)
    elif kind == CONTAINER:
        _check_colour(out, (*path, "accent_color"), item.get("accent_color"))
        nested = item.get("components")
        out.bad_length((*path, "components"), nested, 1, MAX_V2_COMPONENTS)
        for index, child in enumerate(nested if isinstance(nested, list) else []):
            _check_v2_item(out, (*path, "components", index), child, CONTAINER_CHILDREN)
    elif kind == SECTION:
        texts = item.get("components")
        out.bad_length((*path, "components"), texts, 1, MAX_SECTION_TEXTS)
        for index, child in enumerate(texts if isinstance(texts, list) else []):
            _check_v2_item(out, (*path, "components", index), child, frozenset({TEXT_DISPLAY}))
        accessory = item.get("accessory")
        if not isinstance(accessory, dict) or accessory.get("type") not in (BUTTON, THUMBNAIL):
            out.add(
                (*path, "accessory"), "BASE_TYPE_REQUIRED", "A button or thumbnail is required."
            )
        elif accessory["type"] == BUTTON:
            _check_button(out, (*path, "accessory"), accessory)
    elif kind == TEXT_DISPLAY:
        out.bad_length((*path, "content"), item.get("content"), 1, MAX_V2_TEXT)
    elif kind == SEPARATOR:
        spacing = item.get("spacing", 1)
        if spacing not in SEPARATOR_SPACINGS or isinstance(spacing, bool):
            out.add(
                (*path, "spacing"),
                "BASE_TYPE_CHOICES",
                f"Value must be one of {{{', '.join(map(str, SEPARATOR_SPACINGS))}}}.",
            )
        if not isinstance(item.get("divider", True), bool):
            out.add((*path, "divider"), "BASE_TYPE_BOOLEAN", "Must be either true or false.")


def _check_colour(out: Collector, path: Path, colour: object) -> None:
    if colour is None:
        return
    if not isinstance(colour, int) or isinstance(colour, bool):
        out.add(path, "NUMBER_TYPE_COERCE", f'Value "{colour}" is not int.')
    elif colour > MAX_COLOUR:
        out.add(path, "NUMBER_TYPE_MAX", f"int value should be less than or equal to {MAX_COLOUR}.")
    elif colour < 0:
        out.add(path, "NUMBER_TYPE_MIN", "int value should be greater than or equal to 0.")


def _check_row(out: Collector, path: Path, row: Component) -> None:
    items = row.get("components")
    if not isinstance(items, list) or not items:
        out.add(
            (*path, "components"),
            "BASE_TYPE_BAD_LENGTH",
            f"Must be between 1 and {MAX_ROW_BUTTONS} in length.",
        )
        return
    selects = [i for i in items if isinstance(i, dict) and i.get("type") in SELECT_TYPES]
    if selects and len(items) > 1:
        out.add(
            (*path, "components"),
            "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
            "The specified component exceeds the maximum width: a select must be alone in its row.",
        )
    elif len(items) > MAX_ROW_BUTTONS:
        out.add(
            (*path, "components"),
            "BASE_TYPE_BAD_LENGTH",
            f"Must be between 1 and {MAX_ROW_BUTTONS} in length.",
        )
    for index, item in enumerate(items):
        item_path: Path = (*path, "components", index)
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == BUTTON:
            _check_button(out, item_path, item)
        elif kind in SELECT_TYPES:
            check_select(out, item_path, item)
        else:
            out.add(
                (*item_path, "type"),
                "UNION_TYPE_CHOICES",
                f"An action row holds buttons or one select; got type {kind!r}.",
            )


def _check_button(out: Collector, path: Path, button: Component) -> None:
    style = button.get("style")
    if style not in range(1, 7):
        out.add((*path, "style"), "BASE_TYPE_CHOICES", f"Value must be one of 1-6; got {style!r}.")
    out.max_length((*path, "label"), button.get("label"), MAX_BUTTON_LABEL)
    if style == LINK_STYLE:
        if not button.get("url"):
            out.add((*path, "url"), "BASE_TYPE_REQUIRED", "This field is required")
        out.max_length((*path, "url"), button.get("url"), MAX_BUTTON_URL)
        if "custom_id" in button:
            out.add(
                (*path, "custom_id"), "BUTTON_COMPONENT_INVALID", "Link buttons have no custom_id."
            )
    elif style != PREMIUM_STYLE:
        if "custom_id" not in button:
            out.add((*path, "custom_id"), "BASE_TYPE_REQUIRED", "This field is required")
        if "url" in button:
            out.add((*path, "url"), "BUTTON_COMPONENT_INVALID", "Only link buttons have a url.")
        if not button.get("label") and not button.get("emoji"):
            out.add(
                (*path, "label"), "BUTTON_COMPONENT_MISSING_LABEL", "A label or emoji is required."
            )


def check_select(out: Collector, path: Path, select: Component) -> None:
    """A select: its custom_id, placeholder, min/max values and, for a string select, its
    options (in a message or in a modal)."""
    if "custom_id" not in select:
        out.add((*path, "custom_id"), "BASE_TYPE_REQUIRED", "This field is required")
    out.max_length((*path, "placeholder"), select.get("placeholder"), MAX_PLACEHOLDER)
    min_values = select.get("min_values", 1)
    max_values = select.get("max_values", 1)
    if not isinstance(min_values, int) or not 0 <= min_values <= MAX_SELECT_VALUES:
        out.add(
            (*path, "min_values"),
            "NUMBER_TYPE_MAX",
            f"int value should be between 0 and {MAX_SELECT_VALUES}.",
        )
        min_values = 0
    if not isinstance(max_values, int) or not 1 <= max_values <= MAX_SELECT_VALUES:
        out.add(
            (*path, "max_values"),
            "NUMBER_TYPE_MAX",
            f"int value should be between 1 and {MAX_SELECT_VALUES}.",
        )
        max_values = MAX_SELECT_VALUES
    if min_values > max_values:
        out.add((*path, "min_values"), "NUMBER_TYPE_MAX", "min_values must be <= max_values.")
    if select.get("type") != STRING_SELECT:
        return
    options = select.get("options")
    out.bad_length((*path, "options"), options, 1, MAX_OPTIONS)
    option_list: Sequence[Any] = options if isinstance(options, list) else []
    if option_list and max_values > len(option_list):
        out.add(
            (*path, "max_values"),
            "NUMBER_TYPE_MAX",
            f"max_values ({max_values}) must not exceed the option count ({len(option_list)}).",
        )
    values: set[str] = set()
    defaults = 0
    for index, option in enumerate(option_list):
        option_path: Path = (*path, "options", index)
        if not isinstance(option, dict):
            out.add(
                option_path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType"
            )
            continue
        out.bad_length((*option_path, "label"), option.get("label"), 1, MAX_OPTION_TEXT)
        out.bad_length((*option_path, "value"), option.get("value"), 1, MAX_OPTION_TEXT)
        out.max_length((*option_path, "description"), option.get("description"), MAX_OPTION_TEXT)
        value = option.get("value")
        if isinstance(value, str):
            if value in values:
                out.add(
                    (*option_path, "value"),
                    "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
                    "Select component option value cannot be duplicated",
                )
            values.add(value)
        defaults += 1 if option.get("default") else 0
    if defaults > max_values:
        out.add(
            (*path, "options"),
            "SELECT_COMPONENT_TOO_MANY_DEFAULT_VALUES",
            f"{defaults} options are default but max_values is {max_values}.",
        )


def _with_paths(items: list[Any], path: Path) -> Iterator[tuple[Path, Component]]:
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        here: Path = (*path, index)
        yield here, item
        nested = item.get("components")
        if isinstance(nested, list):
            yield from _with_paths(nested, (*here, "components"))
        accessory = item.get("accessory")
        if isinstance(accessory, dict):
            yield (*here, "accessory"), accessory


def _check_custom_ids(out: Collector, components: list[Any]) -> None:
    seen: set[str] = set()
    for path, component in _with_paths(components, ("components",)):
        if "custom_id" not in component:
            continue
        check_custom_id(out, path, component["custom_id"], seen)


def _check_component_ids(out: Collector, components: list[Any]) -> None:
    """The numeric `id`s: 32-bit, and unique within the message. 0 means "assign one" (what
    components of messages from before Components V2 carry), so it may repeat."""
    seen: dict[int, Path] = {}
    for path, component in _with_paths(components, ("components",)):
        if "id" not in component:
            continue
        component_id = component["id"]
        if not isinstance(component_id, int) or isinstance(component_id, bool):
            out.add((*path, "id"), "NUMBER_TYPE_COERCE", f'Value "{component_id}" is not int.')
        elif not 0 <= component_id <= MAX_COMPONENT_ID:
            out.add(
                (*path, "id"),
                "NUMBER_TYPE_MAX",
                f"int value should be between 0 and {MAX_COMPONENT_ID}.",
            )
        elif component_id in seen:
            first = ".".join(str(p) for p in seen[component_id])
            out.add(
                (*path, "id"),
                "COMPONENT_ID_DUPLICATED",
                f"Component id {component_id} is already used by {first}; "
                "ids must be unique within a message.",
            )
        elif component_id != 0:
            seen[component_id] = path


def check_custom_id(out: Collector, path: Path, custom_id: object, seen: set[str]) -> None:
    """A component's custom_id: 1-100 characters, and unique in its message or modal."""
    if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
        out.add(
            (*path, "custom_id"),
            "BASE_TYPE_BAD_LENGTH",
            f"Must be between 1 and {MAX_CUSTOM_ID} in length.",
        )
    elif custom_id in seen:
        out.add(
            (*path, "custom_id"),
            "COMPONENT_CUSTOM_ID_DUPLICATED",
            f"Component custom id cannot be duplicated ({custom_id!r}).",
        )
    else:
        seen.add(custom_id)
