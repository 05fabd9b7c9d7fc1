"""Block Kit as Slack checks it: the shapes and limits that make Slack answer `invalid_blocks`.

Unknown block, element and text types are refused, and so is any field a block, element, text
object or option does not define: Slack's schema allows no additional properties. The emulator
knows the blocks and elements a question message can use; rarer ones (video, file, table...)
are refused as unknown.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .problems import Problems
from .rich_text import check_rich_text
from .schema import (
    BLOCK_FIELDS,
    CONFIRM_LIMITS,
    EITHER,
    ELEMENT_FIELDS,
    IN_ACCESSORY,
    IN_ACTIONS,
    IN_INPUT,
    MAX_ACTIONS_ELEMENTS,
    MAX_ALT_TEXT,
    MAX_BLOCKS,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_URL,
    MAX_BUTTON_VALUE,
    MAX_CONTEXT_ELEMENTS,
    MAX_CONTEXT_TEXT,
    MAX_FIELD_TEXT,
    MAX_HEADER_TEXT,
    MAX_ID_LENGTH,
    MAX_LABEL,
    MAX_MARKDOWN_TEXT,
    MAX_OPTION_DESCRIPTION,
    MAX_OPTION_GROUPS,
    MAX_OPTION_TEXT,
    MAX_OPTION_VALUE,
    MAX_OPTIONS,
    MAX_PLACEHOLDER,
    MAX_SECTION_FIELDS,
    MAX_SECTION_TEXT,
    MRKDWN_OPTIONS,
    MULTI_SELECTS,
    PLAIN,
    TEXT_FIELDS,
)


class _Checker(Problems):
    def __init__(self, require_block_ids: bool) -> None:
        super().__init__()
        self.require_block_ids = require_block_ids

    # ---- composition objects ---------------------------------------------------------------

    def text_object(
        self,
        obj: object,
        pointer: str,
        *,
        limit: int,
        kinds: tuple[str, ...] = EITHER,
        required: bool = True,
    ) -> None:
        if obj is None:
            if required:
                self.fail("missing required field: text object", pointer)
            return
        if not isinstance(obj, dict):
            self.fail("must be a text object", pointer)
            return
        kind = str(obj.get("type"))
        if kind not in TEXT_FIELDS:
            self.fail(f"unsupported type: {kind} (expected plain_text | mrkdwn)", f"{pointer}/type")
            return
        if kind not in kinds:
            self.fail(f"must be {' or '.join(kinds)}, not {kind}", f"{pointer}/type")
        self.only_fields(obj, TEXT_FIELDS[kind], pointer)
        self.boolean(obj, "emoji", pointer)
        self.boolean(obj, "verbatim", pointer)
        if self.non_empty_text(obj.get("text"), f"{pointer}/text"):
            self.max_length(obj["text"], limit, f"{pointer}/text")

    def confirm(self, confirm: object, pointer: str) -> None:
        if not isinstance(confirm, dict):
            self.fail("confirm must be an object", pointer)
            return
        self.only_fields(confirm, {*CONFIRM_LIMITS, "style"}, pointer)
        for key, limit in CONFIRM_LIMITS.items():
            if key not in confirm:
                self.fail(f"missing required field: {key}", pointer)
                continue
            kinds = EITHER if key == "text" else PLAIN
            self.text_object(confirm[key], f"{pointer}/{key}", limit=limit, kinds=kinds)
        self.style(confirm, pointer)

    def style(self, obj: Mapping[str, Any], pointer: str) -> None:
        if "style" in obj and obj["style"] not in ("primary", "danger"):
            self.fail("style must be `primary` or `danger`", f"{pointer}/style")

    # ---- blocks ------------------------------------------------------------------------------

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

    def block_id(
        self, block: dict[str, Any], pointer: str, index: int, seen: dict[str, int]
    ) -> None:
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

    def block(self, block: dict[str, Any], pointer: str) -> None:
        kind = block["type"]
        if kind not in BLOCK_FIELDS:
            known = " | ".join(BLOCK_FIELDS)
            self.fail(f"unsupported type: {kind} (the emulator knows {known})", f"{pointer}/type")
            return
        if kind == "rich_text":
            check_rich_text(block, pointer, self)
            return
        self.only_fields(block, BLOCK_FIELDS[kind], pointer)
        if kind == "section":
            self.section(block, pointer)
        elif kind == "header":
            self.text_object(
                block.get("text"), f"{pointer}/text", limit=MAX_HEADER_TEXT, kinds=PLAIN
            )
        elif kind == "context":
            self.context(block, pointer)
        elif kind == "actions":
            self.actions(block, pointer)
        elif kind == "input":
            self.input(block, pointer)
        elif kind == "image":
            self.image(block, pointer)
            title = block.get("title")
            self.text_object(
                title, f"{pointer}/title", limit=MAX_LABEL, kinds=PLAIN, required=False
            )
        elif kind == "markdown" and self.non_empty_text(block.get("text"), f"{pointer}/text"):
            self.max_length(block["text"], MAX_MARKDOWN_TEXT, f"{pointer}/text")

    def section(self, block: dict[str, Any], pointer: str) -> None:
        text = block.get("text")
        if text is None and "fields" not in block:
            self.fail("must define either `text` or `fields`", f"{pointer}/type")
        self.text_object(text, f"{pointer}/text", limit=MAX_SECTION_TEXT, required=False)
        if "fields" in block:
            fields = self.array(
                block["fields"], f"{pointer}/fields", low=1, high=MAX_SECTION_FIELDS
            )
            for position, item in enumerate(fields):
                self.text_object(item, f"{pointer}/fields/{position}", limit=MAX_FIELD_TEXT)
        self.boolean(block, "expand", pointer)
        if "accessory" in block:
            self.element(block["accessory"], f"{pointer}/accessory", IN_ACCESSORY, "an accessory")

    def context(self, block: dict[str, Any], pointer: str) -> None:
        elements = self.array(
            block.get("elements"), f"{pointer}/elements", low=1, high=MAX_CONTEXT_ELEMENTS
        )
        for position, element in enumerate(elements):
            element_pointer = f"{pointer}/elements/{position}"
            kind = element.get("type") if isinstance(element, dict) else None
            if kind in TEXT_FIELDS or kind is None:
                self.text_object(element, element_pointer, limit=MAX_CONTEXT_TEXT)
            else:
                self.element(element, element_pointer, {"image"}, "a context block")

    def actions(self, block: dict[str, Any], pointer: str) -> None:
        elements = self.array(
            block.get("elements"), f"{pointer}/elements", low=1, high=MAX_ACTIONS_ELEMENTS
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
                continue
            action_id = element.get("action_id")
            if isinstance(action_id, str):
                if action_id in seen:
                    self.fail(
                        f"duplicate action_id {action_id!r} in this block",
                        f"{element_pointer}/action_id",
                    )
                seen.add(action_id)
            self.element(element, element_pointer, IN_ACTIONS, "an actions block")

    def input(self, block: dict[str, Any], pointer: str) -> None:
        self.text_object(block.get("label"), f"{pointer}/label", limit=MAX_LABEL, kinds=PLAIN)
        hint = block.get("hint")
        self.text_object(hint, f"{pointer}/hint", limit=MAX_LABEL, kinds=PLAIN, required=False)
        self.boolean(block, "optional", pointer)
        self.boolean(block, "dispatch_action", pointer)
        if "element" not in block:
            self.fail("missing required field: element", pointer)
        else:
            self.element(block["element"], f"{pointer}/element", IN_INPUT, "an input block")

    def image(self, obj: Mapping[str, Any], pointer: str) -> None:
        if "image_url" not in obj and "slack_file" not in obj:
            self.fail("must define either `image_url` or `slack_file`", pointer)
        if self.non_empty_text(obj.get("alt_text"), f"{pointer}/alt_text"):
            self.max_length(obj["alt_text"], MAX_ALT_TEXT, f"{pointer}/alt_text")

    # ---- elements ----------------------------------------------------------------------------

    def element(self, element: object, pointer: str, allowed: Collection[str], where: str) -> None:
        if not isinstance(element, dict):
            self.fail("must be an object", pointer)
            return
        kind = str(element.get("type"))
        if kind not in ELEMENT_FIELDS:
            self.fail(f"unsupported type: {kind}", f"{pointer}/type")
            return
        if kind not in allowed:
            self.fail(f"{kind} is not allowed in {where}", f"{pointer}/type")
            return
        self.only_fields(element, ELEMENT_FIELDS[kind], pointer)
        if kind == "image":
            self.image(element, pointer)
            return
        action_id = element.get("action_id")
        if action_id is not None:
            if not isinstance(action_id, str) or not action_id:
                self.fail("action_id must be a non-empty string", f"{pointer}/action_id")
            else:
                self.max_length(action_id, MAX_ID_LENGTH, f"{pointer}/action_id")
        if kind == "button":
            self.button(element, pointer)
        if kind in MAX_OPTIONS:
            self.options(element, kind, pointer)
        if "placeholder" in element:
            self.text_object(
                element["placeholder"], f"{pointer}/placeholder", limit=MAX_PLACEHOLDER, kinds=PLAIN
            )
        if "confirm" in element:
            self.confirm(element["confirm"], f"{pointer}/confirm")

    def button(self, element: dict[str, Any], pointer: str) -> None:
        text = element.get("text")
        self.text_object(text, f"{pointer}/text", limit=MAX_BUTTON_TEXT, kinds=PLAIN)
        self.max_length(element.get("value"), MAX_BUTTON_VALUE, f"{pointer}/value")
        self.max_length(element.get("url"), MAX_BUTTON_URL, f"{pointer}/url")
        self.style(element, pointer)

    def options(self, element: dict[str, Any], kind: str, pointer: str) -> None:
        kinds = EITHER if kind in MRKDWN_OPTIONS else PLAIN
        placed: list[tuple[object, str]] = []
        if "option_groups" in element and kind in ("static_select", "multi_static_select"):
            groups = self.array(
                element["option_groups"], f"{pointer}/option_groups", low=1, high=MAX_OPTION_GROUPS
            )
            for g, group in enumerate(groups):
                group_pointer = f"{pointer}/option_groups/{g}"
                if not isinstance(group, dict):
                    self.fail("must be an object", group_pointer)
                    continue
                self.only_fields(group, ("label", "options"), group_pointer)
                label = group.get("label")
                self.text_object(
                    label, f"{group_pointer}/label", limit=MAX_OPTION_TEXT, kinds=PLAIN
                )
                options = self.array(
                    group.get("options"), f"{group_pointer}/options", low=1, high=MAX_OPTIONS[kind]
                )
                placed.extend((o, f"{group_pointer}/options/{i}") for i, o in enumerate(options))
        else:
            options = self.array(
                element.get("options"), f"{pointer}/options", low=1, high=MAX_OPTIONS[kind]
            )
            placed.extend((o, f"{pointer}/options/{i}") for i, o in enumerate(options))
        seen: dict[str, str] = {}
        for option, option_pointer in placed:
            value = self.option(option, option_pointer, kinds, with_url=kind == "overflow")
            if value is None:
                continue
            if value in seen:
                self.fail(
                    f"duplicate option value {value!r} (also at {seen[value]}); "
                    "option values must be unique within an element",
                    f"{option_pointer}/value",
                )
            else:
                seen[value] = option_pointer

    def option(
        self, option: object, pointer: str, kinds: tuple[str, ...], *, with_url: bool
    ) -> str | None:
        if not isinstance(option, dict):
            self.fail("option must be an object", pointer)
            return None
        allowed = {"text", "value", "description", *(("url",) if with_url else ())}
        self.only_fields(option, allowed, pointer)
        self.text_object(option.get("text"), f"{pointer}/text", limit=MAX_OPTION_TEXT, kinds=kinds)
        if "description" in option:
            self.text_object(
                option["description"],
                f"{pointer}/description",
                limit=MAX_OPTION_DESCRIPTION,
                kinds=kinds,
            )
        value = option.get("value")
        if not isinstance(value, str):
            self.fail("option value must be a string", f"{pointer}/value")
            return None
        self.max_length(value, MAX_OPTION_VALUE, f"{pointer}/value")
        return value


def validate_blocks(blocks: object, *, require_block_ids: bool = True) -> list[str]:
    """Everything Slack would object to in `blocks`; an empty list means Slack accepts them.

    `require_block_ids` is stricter than Slack, which invents ids for blocks without one: stable
    block_ids keep `state.values` keys meaningful, so by default a missing one is an error.
    """
    checker = _Checker(require_block_ids)
    checker.blocks(blocks)
    return checker.errors
