"""The one way text from agents and people reaches a Teams card: as a `TextRun` of a
`RichTextBlock`, which Adaptive Cards never read as Markdown (a `TextBlock` would: `**`, `[a](b)`,
lists) and Teams never reads as a mention. Our own fixed words may go in a `TextBlock`, and so
may a time (`when`), which each reader sees in their own zone and language.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from askbridge.core.graphemes import cut_point

Element = dict[str, Any]
"""An Adaptive Card element, as its JSON."""

MAX_RUN = 2000
"""The longest run of text one field of a card shows; the card as a whole stays within Teams'
size limit (fit.MAX_CARD_BYTES)."""


FUNCTION_START = re.compile(r"\{(?=\{(?:DATE|TIME)\()")
"""Where Adaptive Cards would read a date or time function, `{{DATE(…)}}`, in a run's text as
in a TextBlock's (the renderer formats both)."""
WORD_JOINER = "\u2060"
"""Shows nothing, and keeps the braces either side of it from starting a function."""


def when(at: datetime) -> str:
    """`at` as Adaptive Cards' date and time functions, which Teams shows in each reader's own
    zone and language ("Tue, Jan 1, 2030 9:00 AM"): for a `TextBlock` of askbridge's words."""
    instant = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{{{{DATE({instant}, SHORT)}}}} {{{{TIME({instant})}}}}"


def clip(text: str, limit: int = MAX_RUN) -> str:
    """`text` cut to `limit` characters, between characters as shown, with an ellipsis when
    it was cut."""
    return text if len(text) <= limit else cut(text, limit - 1)


def cut(text: str, end: int) -> str:
    """`text` cut at most at character `end`, between characters as shown, with an
    ellipsis."""
    return text[: cut_point(text, end)].rstrip() + "…"


def run(text: str, *, bold: bool = False, subtle: bool = False, limit: int = MAX_RUN) -> Element:
    """A run of plain text, however it is written: text that would read as a date or time
    function is shown as written."""
    shown = FUNCTION_START.sub("{" + WORD_JOINER, clip(text, limit))
    element: Element = {"type": "TextRun", "text": shown}
    if bold:
        element["weight"] = "Bolder"
    if subtle:
        element["isSubtle"] = True
    return element


def paragraph(*runs: Element, separator: bool = False) -> Element:
    """A block of plain-text runs, wrapped."""
    element: Element = {"type": "RichTextBlock", "inlines": list(runs)}
    if separator:
        element["separator"] = True
    return element


def plain(text: str, **style: Any) -> Element:
    """One paragraph of plain text."""
    return paragraph(run(text, **style))


def words(text: str, *, subtle: bool = False, bold: bool = False) -> Element:
    """A TextBlock of askbridge's own words (never text from an agent or a person)."""
    element: Element = {"type": "TextBlock", "text": text, "wrap": True}
    if subtle:
        element["isSubtle"] = True
    if bold:
        element["weight"] = "Bolder"
    return element
