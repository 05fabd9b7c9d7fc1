"""Block Kit as Slack checks and shows it: the limits that make Slack answer `invalid_blocks`,
and the text a person would read on screen.

Error strings follow Slack's style, `<what is wrong> [json-pointer:/blocks/<i>/...]`, so a failing
test points straight at the offending field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .types import Block, JSONDict

MAX_BLOCKS = 50
MAX_ID_LENGTH = 255
MAX_ACTIONS_ELEMENTS = 25
MAX_SECTION_TEXT = 3000
MAX_SECTION_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_BUTTON_URL = 3000
MAX_OPTION_TEXT = 75
MAX_OPTION_DESCRIPTION = 75
MAX_OPTION_VALUE = 150
MAX_PLACEHOLDER = 150

MAX_OPTIONS: Mapping[str, int] = MappingProxyType(
    {
        "radio_buttons": 10,
        "checkboxes": 10,
        "static_select": 100,
        "multi_static_select": 100,
        "overflow": 5,
    }
)

CONFIRM_LIMITS: Mapping[str, int] = MappingProxyType(
    {"title": 100, "text": 300, "confirm": 30, "deny": 30}
)

MULTI_SELECTS = frozenset(
    {
        "multi_static_select",
        "multi_external_select",
        "multi_users_select",
        "multi_conversations_select",
        "multi_channels_select",
    }
)

INTERACTIVE_TYPES = frozenset(
    {
        "button",
        "checkboxes",
        "radio_buttons",
        "static_select",
        "external_select",
        "users_select",
        "conversations_select",
        "channels_select",
        "overflow",
        "datepicker",
        "timepicker",
        "datetimepicker",
        "plain_text_input",
        "number_input",
        "email_text_input",
        "url_text_input",
        "rich_text_input",
        *MULTI_SELECTS,
    }
)


def text_of(obj: object) -> str:
    """The string inside a text object (`{"type": "plain_text", "text": ...}`), or `""`."""
    if isinstance(obj, dict):
        value = obj.get("text")
        return value if isinstance(value, str) else ""
    return obj if isinstance(obj, str) else ""


@dataclass(frozen=True)
class PlacedElement:
    """An interactive element together with the block that holds it."""

    block_index: int
    block: Block
    element: JSONDict
    pointer: str

    @property
    def block_id(self) -> str:
        return str(self.block.get("block_id", ""))

    @property
    def action_id(self) -> str:
        return str(self.element.get("action_id", ""))

    @property
    def type(self) -> str:
        return str(self.element.get("type", ""))


def placed_elements(blocks: Sequence[Block]) -> Iterator[PlacedElement]:
    """Every interactive element in reading order (actions elements, accessories, inputs)."""
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        base = f"/blocks/{index}"
        kind = block.get("type")
        if kind == "actions":
            elements = block.get("elements")
            for position, element in enumerate(elements if isinstance(elements, list) else []):
                if isinstance(element, dict):
                    yield PlacedElement(index, block, element, f"{base}/elements/{position}")
        elif kind == "section" and isinstance(block.get("accessory"), dict):
            yield PlacedElement(index, block, block["accessory"], f"{base}/accessory")
        elif kind == "input" and isinstance(block.get("element"), dict):
            yield PlacedElement(index, block, block["element"], f"{base}/element")


def _too_long(value: object, limit: int) -> bool:
    return isinstance(value, str) and len(value) > limit


class _Checker:
    def __init__(self, require_block_ids: bool) -> None:
        self.require_block_ids = require_block_ids
        self.errors: list[str] = []

    def fail(self, what: str, pointer: str) -> None:
        self.errors.append(f"{what} [json-pointer:{pointer}]")

    def max_length(self, value: object, limit: int, pointer: str) -> None:
        if _too_long(value, limit):
            assert isinstance(value, str)
            self.fail(f"must be less than {limit + 1} characters (got {len(value)})", pointer)

    def text_object(self, obj: object, limit: int, pointer: str, *, required: bool) -> None:
        if obj is None and not required:
            return
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            self.fail("must be a text object with a string `text`", pointer)
            return
        if required and not obj["text"].strip():
            self.fail("must not be empty", f"{pointer}/text")
        self.max_length(obj["text"], limit, f"{pointer}/text")

    def blocks(self, blocks: object) -> None:
        if not isinstance(blocks, list):
            self.fail("must be an array", "/blocks")
            return
        if len(blocks) > MAX_BLOCKS:
            self.fail(f"must be less than {MAX_BLOCKS + 1} items (got {len(blocks)})", "/blocks")
        seen_ids: dict[str, int] = {}
        for index, block in enumerate(blocks):
            pointer = f"/blocks/{index}"
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                self.fail("must be an object with a `type`", pointer)
                continue
            self.block_id(block, pointer, index, seen_ids)
            self.block(block, pointer)

    def block_id(self, block: Block, pointer: str, index: int, seen: dict[str, int]) -> None:
        block_id = block.get("block_id")
        if block_id is None:
            if self.require_block_ids:
                self.fail("missing block_id (set a unique block_id on every block)", pointer)
            return
        if not isinstance(block_id, str) or not block_id:
            self.fail("block_id must be a non-empty string", f"{pointer}/block_id")
            return
        self.max_length(block_id, MAX_ID_LENGTH, f"{pointer}/block_id")
        if block_id in seen:
            self.fail(
                f"duplicate block_id {block_id!r} (also used by block {seen[block_id]})",
                f"{pointer}/block_id",
            )
        else:
            seen[block_id] = index

    def block(self, block: Block, pointer: str) -> None:
        kind = block["type"]
        if kind == "section":
            self.section(block, pointer)
        elif kind == "header":
            text = block.get("text")
            self.text_object(text, MAX_HEADER_TEXT, f"{pointer}/text", required=True)
            if isinstance(text, dict) and text.get("type") != "plain_text":
                self.fail("header text must be plain_text", f"{pointer}/text/type")
        elif kind == "context":
            elements = block.get("elements")
            if not isinstance(elements, list) or not elements:
                self.fail("context needs 1 to 10 elements", f"{pointer}/elements")
            elif len(elements) > MAX_CONTEXT_ELEMENTS:
                self.fail(
                    f"must be less than {MAX_CONTEXT_ELEMENTS + 1} items", f"{pointer}/elements"
                )
        elif kind == "actions":
            self.actions(block, pointer)
        elif kind == "input" and isinstance(block.get("element"), dict):
            self.element(block["element"], f"{pointer}/element")

    def section(self, block: Block, pointer: str) -> None:
        text = block.get("text")
        fields = block.get("fields")
        if text is None and not fields:
            self.fail("section needs `text` or `fields`", pointer)
        self.text_object(text, MAX_SECTION_TEXT, f"{pointer}/text", required=False)
        if isinstance(fields, list):
            if len(fields) > MAX_SECTION_FIELDS:
                self.fail(f"must be less than {MAX_SECTION_FIELDS + 1} items", f"{pointer}/fields")
            for position, field in enumerate(fields):
                self.text_object(
                    field, MAX_FIELD_TEXT, f"{pointer}/fields/{position}", required=True
                )
        accessory = block.get("accessory")
        if isinstance(accessory, dict):
            self.element(accessory, f"{pointer}/accessory")

    def actions(self, block: Block, pointer: str) -> None:
        elements = block.get("elements")
        if not isinstance(elements, list) or not elements:
            self.fail("actions needs at least one element", f"{pointer}/elements")
            return
        if len(elements) > MAX_ACTIONS_ELEMENTS:
            self.fail(
                f"must be less than {MAX_ACTIONS_ELEMENTS + 1} items (got {len(elements)})",
                f"{pointer}/elements",
            )
        seen: set[str] = set()
        for position, element in enumerate(elements):
            element_pointer = f"{pointer}/elements/{position}"
            if not isinstance(element, dict):
                self.fail("must be an object", element_pointer)
                continue
            if element.get("type") in MULTI_SELECTS:
                self.fail(
                    f"{element['type']} is not allowed in an actions block "
                    "(use a section accessory or an input block)",
                    f"{element_pointer}/type",
                )
            action_id = element.get("action_id")
            if isinstance(action_id, str):
                if action_id in seen:
                    self.fail(
                        f"duplicate action_id {action_id!r} in this block",
                        f"{element_pointer}/action_id",
                    )
                seen.add(action_id)
            self.element(element, element_pointer)

    def element(self, element: JSONDict, pointer: str) -> None:
        kind = element.get("type")
        action_id = element.get("action_id")
        if action_id is not None:
            if not isinstance(action_id, str) or not action_id:
                self.fail("action_id must be a non-empty string", f"{pointer}/action_id")
            else:
                self.max_length(action_id, MAX_ID_LENGTH, f"{pointer}/action_id")
        if kind == "button":
            self.text_object(element.get("text"), MAX_BUTTON_TEXT, f"{pointer}/text", required=True)
            self.max_length(element.get("value"), MAX_BUTTON_VALUE, f"{pointer}/value")
            self.max_length(element.get("url"), MAX_BUTTON_URL, f"{pointer}/url")
            style = element.get("style")
            if style is not None and style not in ("primary", "danger"):
                self.fail("style must be `primary` or `danger`", f"{pointer}/style")
        if isinstance(kind, str) and kind in MAX_OPTIONS:
            self.options(element, kind, pointer)
        self.text_object(
            element.get("placeholder"), MAX_PLACEHOLDER, f"{pointer}/placeholder", required=False
        )
        confirm = element.get("confirm")
        if confirm is not None:
            self.confirm(confirm, f"{pointer}/confirm")

    def options(self, element: JSONDict, kind: str, pointer: str) -> None:
        options = element.get("options")
        if not isinstance(options, list) or not options:
            if "option_groups" not in element:
                self.fail("options must be a non-empty array", f"{pointer}/options")
            return
        limit = MAX_OPTIONS[kind]
        if len(options) > limit:
            self.fail(
                f"must be less than {limit + 1} items (got {len(options)})", f"{pointer}/options"
            )
        for position, option in enumerate(options):
            self.option(option, f"{pointer}/options/{position}")

    def option(self, option: object, pointer: str) -> None:
        if not isinstance(option, dict):
            self.fail("option must be an object", pointer)
            return
        self.text_object(option.get("text"), MAX_OPTION_TEXT, f"{pointer}/text", required=True)
        value = option.get("value")
        if not isinstance(value, str):
            self.fail("option value must be a string", f"{pointer}/value")
        self.max_length(value, MAX_OPTION_VALUE, f"{pointer}/value")
        self.text_object(
            option.get("description"),
            MAX_OPTION_DESCRIPTION,
            f"{pointer}/description",
            required=False,
        )

    def confirm(self, confirm: object, pointer: str) -> None:
        if not isinstance(confirm, dict):
            self.fail("confirm must be an object", pointer)
            return
        for key, limit in CONFIRM_LIMITS.items():
            self.text_object(confirm.get(key), limit, f"{pointer}/{key}", required=key != "deny")


def validate_blocks(blocks: object, *, require_block_ids: bool = True) -> list[str]:
    """Everything Slack would object to in `blocks`; an empty list means Slack accepts them.

    `require_block_ids` is stricter than Slack, which invents ids for blocks without one: stable
    block_ids keep `state.values` keys meaningful, so by default a missing one is an error.
    """
    checker = _Checker(require_block_ids)
    checker.blocks(blocks)
    return checker.errors


def has_interactive_elements(blocks: Sequence[Block]) -> bool:
    """Whether a person could still act on these blocks (buttons, menus, radios, checkboxes...)."""
    return any(placed.type in INTERACTIVE_TYPES for placed in placed_elements(blocks))


def option_texts(element: JSONDict) -> list[str]:
    """The visible label (and description) of each option an element offers."""
    lines: list[str] = []
    options: list[Any] = list(element.get("options") or [])
    for group in element.get("option_groups") or []:
        if isinstance(group, dict):
            lines.append(text_of(group.get("label")))
            options.extend(group.get("options") or [])
    for option in options:
        if isinstance(option, dict):
            lines.append(text_of(option.get("text")))
            description = text_of(option.get("description"))
            if description:
                lines.append(description)
    return lines


def element_texts(element: JSONDict) -> list[str]:
    """What a person sees on one element: button label, placeholder, option labels."""
    lines = [text_of(element.get("text")), text_of(element.get("placeholder"))]
    lines.extend(option_texts(element))
    return [line for line in lines if line]


def _rich_text(obj: object) -> list[str]:
    if isinstance(obj, dict):
        if obj.get("type") == "text" and isinstance(obj.get("text"), str):
            return [obj["text"]]
        return _rich_text(obj.get("elements"))
    if isinstance(obj, list):
        return ["".join(_rich_text(item)) for item in obj if item is not None]
    return []


def block_texts(block: Block, *, with_elements: bool = True) -> list[str]:
    """The visible text of one block, top to bottom."""
    kind = block.get("type")
    lines: list[str] = []
    if kind in ("section", "header"):
        lines.append(text_of(block.get("text")))
        lines.extend(text_of(field) for field in block.get("fields") or [])
    elif kind == "context":
        lines.extend(text_of(element) for element in block.get("elements") or [])
    elif kind == "input":
        lines.append(text_of(block.get("label")))
        lines.append(text_of(block.get("hint")))
    elif kind == "rich_text":
        lines.extend(_rich_text(block.get("elements")))
    if with_elements:
        for placed in placed_elements([block]):
            lines.extend(element_texts(placed.element))
    return [line for line in lines if line]


def visible_text(text: str, blocks: Sequence[Block]) -> str:
    """A message as a person reads it, one line per piece; `text` is shown only without blocks."""
    if not blocks:
        return text
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, dict):
            lines.extend(block_texts(block))
    return "\n".join(lines)
