"""Block Kit as a person sees it: where the interactive elements are, and the text on screen.

What Slack refuses lives in `validation`; what would ping someone, in `mrkdwn`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .rich_text import rich_text_lines
from .schema import INTERACTIVE_TYPES
from .types import Block, JSONDict


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
    elif kind == "markdown":
        lines.append(text_of(block))
    elif kind == "rich_text":
        lines.extend(rich_text_lines(block))
    if with_elements:
        for placed in placed_elements([block]):
            lines.extend(element_texts(placed.element))
    return [line for line in lines if line]


def visible_text(text: str, blocks: Sequence[Block]) -> str:
    """A message as a person reads it, one line per piece; `text` is shown only without blocks.

    mrkdwn is shown as written (`<@U1>`, `*bold*`), and rich text as the mrkdwn that would say
    the same (see `rich_text_lines`).
    """
    if not blocks:
        return text
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, dict):
            lines.extend(block_texts(block))
    return "\n".join(lines)
