"""Block Kit as Slack checks it: the shapes and limits that make Slack answer `invalid_blocks`.

Unknown block, element and text types are refused, and so is any field a block, element, text
object or option does not define: Slack's schema allows no additional properties. The emulator
knows the blocks and elements a question message can use; rarer ones (video, file, table...)
are refused as unknown.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .inputs import check_element
from .problems import Problems, is_int
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
    MAX_TEXT_INPUT,
    MAX_VIEW_BLOCKS,
    MAX_VIEW_TITLE,
    MRKDWN_OPTIONS,
    MULTI_SELECTS,
    PLAIN,
    TEXT_FIELDS,
    VIEW_FIELDS,
    VIEW_LIMITS,
    VIEW_TEXTS,
)


class _Checker(Problems):
    def __init__(self, require_block_ids: bool) -> None:
        super().__init__()
        self.require_block_ids = require_block_ids
        self.focused: list[str] = []
        """Pointers of the elements with `focus_on_load`: Slack allows one per message or view."""

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

    def blocks(self, blocks: object, base: str = "/blocks", limit: int = MAX_BLOCKS) -> None:
        if not isinstance(blocks, list):
            self.fail("must be an array", base)
            return
        if len(blocks) > limit:
            self.fail(f"must be less than {limit + 1} items (got {len(blocks)})", base)
        seen_ids: dict[str, int] = {}
        for index, block in enumerate(blocks):
            pointer = f"{base}/{index}"
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
        if kind == "plain_text_input":
            self.text_input(element, pointer)
        if kind in MAX_OPTIONS:
            self.options(element, kind, pointer)
        check_element(kind, element, pointer, self)
        self.boolean(element, "focus_on_load", pointer)
        if element.get("focus_on_load") is True:
            self.focused.append(pointer)
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

    def text_input(self, element: dict[str, Any], pointer: str) -> None:
        self.boolean(element, "multiline", pointer)
        bounds: dict[str, int] = {}
        for key, low in (("min_length", 0), ("max_length", 1)):
            if key not in element:
                continue
            value = element[key]
            if not is_int(value) or not low <= value <= MAX_TEXT_INPUT:
                self.fail(
                    f"{key} must be an integer from {low} to {MAX_TEXT_INPUT}", f"{pointer}/{key}"
                )
            else:
                bounds[key] = value
        most = bounds.get("max_length", MAX_TEXT_INPUT)
        if bounds.get("min_length", 0) > most:
            self.fail("min_length must not be more than max_length", f"{pointer}/min_length")
        if "initial_value" in element:
            initial = element["initial_value"]
            if not isinstance(initial, str):
                self.fail("initial_value must be a string", f"{pointer}/initial_value")
            elif len(initial) > most:
                self.fail(
                    f"initial_value is longer than max_length {most} (got {len(initial)})",
                    f"{pointer}/initial_value",
                )

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
        self.initial_options(element, [option for option, _ in placed], pointer)

    def initial_options(self, element: dict[str, Any], options: list[object], pointer: str) -> None:
        """An initial option must be one of the element's options, exactly as given there."""
        initial = element.get("initial_option")
        chosen = [(initial, f"{pointer}/initial_option")] if "initial_option" in element else []
        many = element.get("initial_options")
        if "initial_options" in element and not isinstance(many, list):
            self.fail("must be an array", f"{pointer}/initial_options")
        elif isinstance(many, list):
            if not many:
                # Slack wants the field left out when nothing starts ticked (bolt-js#482).
                self.fail("must provide at least 1 items", f"{pointer}/initial_options")
            chosen += [(o, f"{pointer}/initial_options/{i}") for i, o in enumerate(many)]
        for option, option_pointer in chosen:
            if option not in options:
                self.fail("must match one of the options exactly", option_pointer)

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

    # ---- views ---------------------------------------------------------------------------------

    def view(self, view: object) -> None:
        if not isinstance(view, dict):
            self.fail("must be an object", "/view")
            return
        self.only_fields(view, VIEW_FIELDS, "/view")
        if view.get("type") != "modal":
            self.fail(f"type must be modal, not {view.get('type')!r}", "/view/type")
        for key in VIEW_TEXTS:
            if key in view:
                self.text_object(view[key], f"/view/{key}", limit=MAX_VIEW_TITLE, kinds=PLAIN)
            elif key == "title":
                self.fail("missing required field: title", "/view")
            elif key == "submit" and _has_inputs(view):
                self.fail("missing required field: submit (a view with input blocks)", "/view")
        for key, limit in VIEW_LIMITS.items():
            if key in view and not isinstance(view[key], str):
                self.fail("must be a string", f"/view/{key}")
            else:
                self.max_length(view.get(key), limit, f"/view/{key}")
        for key in ("clear_on_close", "notify_on_close", "submit_disabled"):
            self.boolean(view, key, "/view")
        self.blocks(view.get("blocks"), "/view/blocks", MAX_VIEW_BLOCKS)
        self.one_focus()

    def one_focus(self) -> None:
        for pointer in self.focused[1:]:
            self.fail(
                f"only one element may set focus_on_load (also {self.focused[0]})",
                f"{pointer}/focus_on_load",
            )


def _has_inputs(view: Mapping[str, Any]) -> bool:
    blocks = view.get("blocks")
    return isinstance(blocks, list) and any(
        isinstance(b, dict) and b.get("type") == "input" for b in blocks
    )


def validate_view(view: object, *, require_block_ids: bool = True) -> list[str]:
    """Everything Slack would object to in a modal given to views.open or a response_action
    `update`: its own fields (type, title, submit, close, private_metadata, callback_id) and
    its blocks (at most 100)."""
    checker = _Checker(require_block_ids)
    checker.view(view)
    return checker.errors


def validate_blocks(blocks: object, *, require_block_ids: bool = True) -> list[str]:
    """Everything Slack would object to in `blocks`; an empty list means Slack accepts them.

    `require_block_ids` is stricter than Slack, which invents ids for blocks without one: stable
    block_ids keep `state.values` keys meaningful, so by default a missing one is an error.
    """
    checker = _Checker(require_block_ids)
    checker.blocks(blocks)
    checker.one_focus()
    return checker.errors
