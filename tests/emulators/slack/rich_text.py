"""`rich_text` blocks: checked as strictly as Slack checks them, and read the way a person sees
them (styles gone, mentions as `@name`, dates as their fallback).

No part of a rich_text block is parsed as mrkdwn: `*`, `<@U1>` or ``` in a `text` element are
just characters, which is why user-supplied text belongs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from .problems import Problems, is_int

MAX_LIST_INDENT = 8
TEXT_STYLES = frozenset({"bold", "italic", "strike", "code"})
BROADCAST_RANGES = ("here", "channel", "everyone")
LIST_STYLES = ("bullet", "ordered")

CONTAINERS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "rich_text_section": frozenset({"type", "elements"}),
        "rich_text_list": frozenset({"type", "elements", "style", "indent", "offset", "border"}),
        "rich_text_preformatted": frozenset({"type", "elements", "border"}),
        "rich_text_quote": frozenset({"type", "elements", "border"}),
    }
)

INLINE: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "text": frozenset({"type", "text", "style"}),
        "link": frozenset({"type", "url", "text", "unsafe", "style"}),
        "emoji": frozenset({"type", "name", "unicode"}),
        "user": frozenset({"type", "user_id", "style"}),
        "usergroup": frozenset({"type", "usergroup_id", "style"}),
        "channel": frozenset({"type", "channel_id", "style"}),
        "broadcast": frozenset({"type", "range", "style"}),
        "date": frozenset({"type", "timestamp", "format", "fallback", "url"}),
    }
)

# Preformatted text is code: it holds characters and links, nothing that renders as a chip.
PREFORMATTED_INLINE = frozenset({"text", "link"})

ID_FIELDS: Mapping[str, str] = MappingProxyType(
    {"user": "user_id", "usergroup": "usergroup_id", "channel": "channel_id"}
)


# ---- checking -----------------------------------------------------------------------------------


def check_rich_text(block: Mapping[str, Any], pointer: str, out: Problems) -> None:
    """Everything Slack would refuse in one `rich_text` block (its `type` is already known)."""
    out.only_fields(block, ("type", "block_id", "elements"), pointer)
    elements = out.array(block.get("elements"), f"{pointer}/elements", low=1, high=10_000)
    for index, element in enumerate(elements):
        _container(element, f"{pointer}/elements/{index}", out)


def _container(element: object, pointer: str, out: Problems, *, only: str | None = None) -> None:
    if not isinstance(element, dict):
        out.fail("must be an object", pointer)
        return
    kind = str(element.get("type"))
    if kind not in CONTAINERS or (only is not None and kind != only):
        expected = only or " | ".join(CONTAINERS)
        out.fail(f"unsupported type: {kind} (expected {expected})", f"{pointer}/type")
        return
    out.only_fields(element, CONTAINERS[kind], pointer)
    if "border" in element and element["border"] not in (0, 1):
        out.fail("must be 0 or 1", f"{pointer}/border")
    children = out.array(element.get("elements"), f"{pointer}/elements", low=1, high=10_000)
    if kind == "rich_text_list":
        _list_fields(element, pointer, out)
        for index, item in enumerate(children):
            _container(item, f"{pointer}/elements/{index}", out, only="rich_text_section")
        return
    allowed = PREFORMATTED_INLINE if kind == "rich_text_preformatted" else frozenset(INLINE)
    for index, child in enumerate(children):
        _inline(child, f"{pointer}/elements/{index}", out, allowed)


def _list_fields(element: Mapping[str, Any], pointer: str, out: Problems) -> None:
    if element.get("style") not in LIST_STYLES:
        out.fail(f"style must be one of {' | '.join(LIST_STYLES)}", f"{pointer}/style")
    indent = element.get("indent", 0)
    if not is_int(indent) or not 0 <= indent <= MAX_LIST_INDENT:
        out.fail(f"indent must be an integer from 0 to {MAX_LIST_INDENT}", f"{pointer}/indent")
    offset = element.get("offset", 0)
    if not is_int(offset) or offset < 0:
        out.fail("offset must be a non-negative integer", f"{pointer}/offset")


def _inline(element: object, pointer: str, out: Problems, allowed: frozenset[str]) -> None:
    if not isinstance(element, dict):
        out.fail("must be an object", pointer)
        return
    kind = str(element.get("type"))
    if kind not in allowed:
        out.fail(f"unsupported type: {kind} (expected {' | '.join(allowed)})", f"{pointer}/type")
        return
    out.only_fields(element, INLINE[kind], pointer)
    if "style" in element:
        _style(element["style"], f"{pointer}/style", out)
    if kind == "text":
        out.non_empty_text(element.get("text"), f"{pointer}/text")
    elif kind == "link":
        out.non_empty_text(element.get("url"), f"{pointer}/url")
        if "text" in element:
            out.non_empty_text(element["text"], f"{pointer}/text")
        out.boolean(element, "unsafe", pointer)
    elif kind == "emoji":
        out.non_empty_text(element.get("name"), f"{pointer}/name")
        if "unicode" in element and not isinstance(element["unicode"], str):
            out.fail("must be a string", f"{pointer}/unicode")
    elif kind in ID_FIELDS:
        out.non_empty_text(element.get(ID_FIELDS[kind]), f"{pointer}/{ID_FIELDS[kind]}")
    elif kind == "broadcast":
        if element.get("range") not in BROADCAST_RANGES:
            out.fail(f"range must be one of {' | '.join(BROADCAST_RANGES)}", f"{pointer}/range")
    elif kind == "date":
        _date(element, pointer, out)


def _style(style: object, pointer: str, out: Problems) -> None:
    if not isinstance(style, dict):
        out.fail("must be an object", pointer)
        return
    out.only_fields(style, TEXT_STYLES, pointer)
    for key, value in style.items():
        if key in TEXT_STYLES and not isinstance(value, bool):
            out.fail("must be a boolean", f"{pointer}/{key}")


def _date(element: Mapping[str, Any], pointer: str, out: Problems) -> None:
    if not is_int(element.get("timestamp")):
        out.fail("timestamp must be an integer (seconds since the epoch)", f"{pointer}/timestamp")
    out.non_empty_text(element.get("format"), f"{pointer}/format")
    for key in ("fallback", "url"):
        if key in element:
            out.non_empty_text(element[key], f"{pointer}/{key}")


# ---- reading ------------------------------------------------------------------------------------


def rich_text_lines(block: Mapping[str, Any]) -> list[str]:
    """The text of a rich_text block, one line per section or list item, written as the mrkdwn
    that says the same (`*bold*`, `<@U1>`, `<!date^…>`, code between fences), so that one
    notation reads every message, and a mention element is never mistaken for text that only
    looks like one (text is shown as written, so check `mentions` for what really pings)."""
    lines: list[str] = []
    for element in _dicts(block.get("elements")):
        kind = element.get("type")
        inner = inline_text(element.get("elements"))
        if kind == "rich_text_list":
            indent = "    " * _int_or(element.get("indent"), 0)
            first = _int_or(element.get("offset"), 0) + 1
            ordered = element.get("style") == "ordered"
            for number, item in enumerate(_dicts(element.get("elements")), start=first):
                marker = f"{number}." if ordered else "•"
                lines.append(f"{indent}{marker} {inline_text(item.get('elements'))}")
        elif kind == "rich_text_preformatted":
            lines.append(f"```\n{inner}\n```")
        elif kind == "rich_text_quote":
            lines.append(f"> {inner}")
        else:
            lines.extend(inner.split("\n"))
    return [line.rstrip("\n") for line in lines if line.strip()]


def inline_text(elements: object) -> str:
    return "".join(_shown(element) for element in _dicts(elements))


STYLE_MARKS = (("code", "`"), ("strike", "~"), ("italic", "_"), ("bold", "*"))


def _shown(element: Mapping[str, Any]) -> str:
    kind = element.get("type")
    if kind == "text":
        text = str(element.get("text", ""))
        style = element.get("style")
        for flag, mark in STYLE_MARKS:
            if isinstance(style, dict) and style.get(flag) and text.strip():
                text = f"{mark}{text}{mark}"
        return text
    if kind == "link":
        label = element.get("text")
        return f"<{element.get('url', '')}|{label}>" if label else f"<{element.get('url', '')}>"
    if kind == "emoji":
        return f":{element.get('name', '')}:"
    if kind == "user":
        return f"<@{element.get('user_id', '')}>"
    if kind == "usergroup":
        return f"<!subteam^{element.get('usergroup_id', '')}>"
    if kind == "channel":
        return f"<#{element.get('channel_id', '')}>"
    if kind == "broadcast":
        return f"<!{element.get('range', '')}>"
    if kind == "date":
        return (
            f"<!date^{element.get('timestamp')}^{element.get('format', '')}|{_date_text(element)}>"
        )
    return ""


def _date_text(element: Mapping[str, Any]) -> str:
    fallback = element.get("fallback")
    if isinstance(fallback, str) and fallback:
        return fallback
    timestamp = element.get("timestamp")
    if not is_int(timestamp):
        return ""
    assert isinstance(timestamp, int)
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _dicts(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _int_or(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
