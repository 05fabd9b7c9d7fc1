"""Discord markdown as the client reads it: backslash escapes, code, links and emphasis.

A backslash before any character that is not a letter, digit or whitespace makes that
character literal (`\\*`, `\\<`, `\\@`, `\\[`), as Discord's parser does; code spans and code
blocks are shown raw. So `discord.utils.escape_markdown` output reads as plain text here, and
so does anything inside backticks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = "```"
INERT = "\ue000"
"""Stands in for an escaped character, a code span or a URL: visible, but never markup."""

INLINE_CODE = re.compile(r"(`+)([\s\S]*?[^`])\1(?!`)")
URL = re.compile(r"<[^: >]+:/[^ >]+>|(?:https?|steam)://[^\s<]+[^<.,:;\"'\]\s]")
MASKED_LINK = re.compile(r"\[([^\[\]]*)\]\(\s*<?((?:https?|steam)://[^\s)>]+)>?\s*\)")

EMPHASIS = (
    re.compile(r"\*\*[\s\S]+?\*\*(?!\*)"),
    re.compile(r"(?<!\*)\*(?=[^\s*])(?:[^*]*?[^\s*])?\*(?!\*)"),
    re.compile(r"__[\s\S]+?__(?!_)"),
    re.compile(r"(?<![A-Za-z0-9_])_(?:__|[^_])+?_(?![A-Za-z0-9_])"),
    re.compile(r"~~[\s\S]+?~~"),
    re.compile(r"\|\|[\s\S]+?\|\|"),
)
LINE_MARKUP = re.compile(r"^[ \t]*(?:#{1,3} |-# |>>> |> |[-*] |\d{1,9}\. )\s*\S.*$", re.MULTILINE)


@dataclass(frozen=True)
class Reading:
    """A text split into what renders as markdown and what is shown raw."""

    prose: str
    """The text with escaped characters, code and URLs each replaced by `INERT`; masked links
    keep their label. Mentions and emphasis are looked for here."""
    code: tuple[str, ...]
    masked_links: tuple[str, ...]
    open_fence: bool
    previewed: tuple[str, ...] = ()
    """The bare links (not in `<…>`, not in code): those Discord previews in an embed."""


def read(text: str) -> Reading:
    prose: list[str] = []
    code: list[str] = []
    links: list[str] = []
    previewed: list[str] = []
    open_fence = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and _escapable(text[i + 1]):
            prose.append(INERT)
            i += 2
            continue
        if text.startswith(FENCE, i):
            end = text.find(FENCE, i + len(FENCE))
            if end < 0:
                open_fence = True
                prose.append(INERT)
                i += len(FENCE)
            else:
                code.append(text[i : end + len(FENCE)])
                prose.append(INERT)
                i = end + len(FENCE)
            continue
        if char == "`":
            span = INLINE_CODE.match(text, i)
            if span is not None:
                code.append(span.group(0))
                i = span.end()
            else:
                i += 1
            prose.append(INERT)
            continue
        link = MASKED_LINK.match(text, i) if char == "[" else None
        if link is not None:
            links.append(link.group(0))
            prose.append(link.group(1) + INERT)
            i = link.end()
            continue
        url = URL.match(text, i) if char in "<hs" else None
        if url is not None:
            if char != "<":
                previewed.append(url.group(0))
            prose.append(INERT)
            i = url.end()
            continue
        prose.append(char)
        i += 1
    return Reading("".join(prose), tuple(code), tuple(links), open_fence, tuple(previewed))


def _escapable(char: str) -> bool:
    return not (char.isascii() and char.isalnum()) and not char.isspace()


@dataclass(frozen=True)
class LiveMarkdown:
    """The Discord markdown a text would render."""

    masked_links: tuple[str, ...] = ()
    """`[label](https://…)` links whose target is hidden behind the label."""
    emphasis: tuple[str, ...] = ()
    """Bold, italic, underline, strike-through and spoiler runs, markers included."""
    code: tuple[str, ...] = ()
    """Inline code spans and closed ``` blocks."""
    line_markup: tuple[str, ...] = ()
    """Lines that become headings (`# `), subtext (`-# `), block quotes (`> `) or list items
    (`- `, `* `, `1. `)."""
    open_fence: bool = False
    """A ``` with no partner in this text: next to another text it would open a code block."""

    @property
    def live(self) -> bool:
        return bool(
            self.masked_links or self.emphasis or self.code or self.line_markup or self.open_fence
        )


def live_markdown(text: str) -> LiveMarkdown:
    """What in `text` Discord would render as markdown rather than show as typed."""
    reading = read(text)
    emphasis = [m.group(0) for p in EMPHASIS for m in p.finditer(reading.prose)]
    lines = [m.group(0) for m in LINE_MARKUP.finditer(reading.prose)]
    return LiveMarkdown(
        masked_links=reading.masked_links,
        emphasis=tuple(e.replace(INERT, "…") for e in emphasis),
        code=reading.code,
        line_markup=tuple(line.replace(INERT, "…") for line in lines),
        open_fence=reading.open_fence,
    )
