"""Reading message components the way a person sees them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from .payloads import Component, JSONObject

ACTION_ROW = 1
BUTTON = 2
STRING_SELECT = 3
TEXT_INPUT = 4
USER_SELECT = 5
ROLE_SELECT = 6
MENTIONABLE_SELECT = 7
CHANNEL_SELECT = 8
SECTION = 9
TEXT_DISPLAY = 10
THUMBNAIL = 11
MEDIA_GALLERY = 12
FILE = 13
SEPARATOR = 14
CONTAINER = 17
LABEL = 18

SELECT_TYPES = frozenset(
    {STRING_SELECT, USER_SELECT, ROLE_SELECT, MENTIONABLE_SELECT, CHANNEL_SELECT}
)
LINK_STYLE = 5
PREMIUM_STYLE = 6


class ComponentNotFound(AssertionError):
    """The simulated person cannot find the control a test asked for."""


@dataclass(frozen=True)
class Placed:
    """A component with its action-row index in reading order (None outside rows)."""

    component: Component
    row: int | None


def children(component: Component) -> list[Component]:
    found: list[Component] = []
    nested = component.get("components")
    if isinstance(nested, list):
        found.extend(c for c in nested if isinstance(c, dict))
    for key in ("accessory", "component"):
        single = component.get(key)
        if isinstance(single, dict):
            found.append(single)
    return found


def walk(components: Sequence[Component]) -> Iterator[Placed]:
    """Every component depth-first, in the order a reader meets them."""
    row_counter = 0

    def visit(items: Sequence[Component], row: int | None) -> Iterator[Placed]:
        nonlocal row_counter
        for item in items:
            if item.get("type") == ACTION_ROW:
                this_row = row_counter
                row_counter += 1
                yield Placed(item, this_row)
                yield from visit(children(item), this_row)
            else:
                yield Placed(item, row)
                yield from visit(children(item), row)

    yield from visit(components, None)


def count_components(components: Sequence[Component]) -> int:
    return sum(1 for _ in walk(components))


def assign_ids(components: list[Component]) -> None:
    """Number components without an `id` in reading order, as Discord does."""
    placed = list(walk(components))
    used = {p.component["id"] for p in placed if isinstance(p.component.get("id"), int)}
    next_id = 1
    for p in placed:
        if isinstance(p.component.get("id"), int):
            continue
        while next_id in used:
            next_id += 1
        p.component["id"] = next_id
        used.add(next_id)


def is_clickable(component: Component) -> bool:
    """A control that sends an interaction when used (not disabled, not a link)."""
    if component.get("disabled"):
        return False
    kind = component.get("type")
    if kind == BUTTON:
        return component.get("style") not in (LINK_STYLE, PREMIUM_STYLE)
    return kind in SELECT_TYPES


def has_interactive_components(components: Sequence[Component]) -> bool:
    return any(is_clickable(p.component) for p in walk(components))


def _embed_lines(embed: JSONObject) -> Iterator[str]:
    author = embed.get("author")
    if isinstance(author, dict) and author.get("name"):
        yield str(author["name"])
    for key in ("title", "description"):
        if embed.get(key):
            yield str(embed[key])
    for field in embed.get("fields") or []:
        if isinstance(field, dict):
            yield f"{field.get('name', '')}: {field.get('value', '')}"
    footer = embed.get("footer")
    if isinstance(footer, dict) and footer.get("text"):
        yield str(footer["text"])


def _component_lines(component: Component) -> Iterator[str]:
    kind = component.get("type")
    if kind == BUTTON:
        emoji = component.get("emoji")
        emoji_name = emoji.get("name") if isinstance(emoji, dict) else None
        label = component.get("label") or emoji_name
        if label:
            yield f"[{label}]"
    elif kind in SELECT_TYPES:
        if component.get("placeholder"):
            yield str(component["placeholder"])
        for option in component.get("options") or []:
            line = f"- {option.get('label', '')}"
            if option.get("description"):
                line += f": {option['description']}"
            yield line
    elif kind == TEXT_DISPLAY and component.get("content"):
        yield str(component["content"])


def visible_text(
    content: str, embeds: Sequence[JSONObject], components: Sequence[Component]
) -> str:
    """Everything a person can read on a message, one line per piece."""
    lines: list[str] = [content] if content else []
    for embed in embeds:
        lines.extend(_embed_lines(embed))
    for placed in walk(components):
        lines.extend(_component_lines(placed.component))
    return "\n".join(lines)


def describe_controls(components: Sequence[Component]) -> str:
    """A listing of the visible controls, for failure messages."""
    parts: list[str] = []
    for placed in walk(components):
        c = placed.component
        where = f"row {placed.row}" if placed.row is not None else "section"
        state = " (disabled)" if c.get("disabled") else ""
        if c.get("type") == BUTTON:
            style = " (link)" if c.get("style") == LINK_STYLE else ""
            parts.append(f"button {c.get('label')!r} in {where}{state}{style}")
        elif c.get("type") in SELECT_TYPES:
            labels = [o.get("label") for o in c.get("options") or []]
            parts.append(
                f"select placeholder={c.get('placeholder')!r} options={labels} "
                f"min={c.get('min_values', 1)} max={c.get('max_values', 1)} in {where}{state}"
            )
    return "; ".join(parts) or "no controls at all"


def find_button(
    components: Sequence[Component], label: str, *, row: int | None = None, nth: int | None = None
) -> Component:
    matches = [
        p
        for p in walk(components)
        if p.component.get("type") == BUTTON
        and p.component.get("label") == label
        and (row is None or p.row == row)
    ]
    return _pick(matches, f"button labelled {label!r}", components, nth).component


def find_select(
    components: Sequence[Component], *, placeholder: str | None = None, index: int | None = None
) -> Component:
    selects = [p for p in walk(components) if p.component.get("type") in SELECT_TYPES]
    wanted = "select"
    if placeholder is not None:
        selects = [p for p in selects if p.component.get("placeholder") == placeholder]
        wanted = f"select with placeholder {placeholder!r}"
    return _pick(selects, wanted, components, index).component


def _pick(
    matches: list[Placed], wanted: str, components: Sequence[Component], nth: int | None
) -> Placed:
    visible = describe_controls(components)
    if not matches:
        raise ComponentNotFound(f"no {wanted} on the message. Visible: {visible}")
    if nth is not None:
        if not 0 <= nth < len(matches):
            raise ComponentNotFound(
                f"asked for {wanted} number {nth} but there are {len(matches)}. Visible: {visible}"
            )
        chosen = matches[nth]
    elif len(matches) > 1:
        rows = [m.row for m in matches]
        raise ComponentNotFound(
            f"{len(matches)} matches for {wanted} (rows {rows}); pass row= or nth=. "
            f"Visible: {visible}"
        )
    else:
        chosen = matches[0]
    if not is_clickable(chosen.component):
        raise ComponentNotFound(
            f"the {wanted} cannot be used (disabled or a link). Visible: {visible}"
        )
    return chosen
