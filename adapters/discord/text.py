"""Discord markdown from text that agents and people wrote, kept within Discord's limits.

`escape` is the one escaping function (`line` and `prose` are built on it): text shows as
written, restyles nothing, pings nobody and hides no link. `shorten` never cuts an escape, a
fence or a character as shown (`cut_point`), and closes a code block it cuts open.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

import discord

from askbridge.core.forms import as_uri
from askbridge.core.graphemes import cut_point

ELLIPSIS = "…"
FENCE = "```"
CLOSE_FENCE = "\n" + FENCE

_URL_BEFORE_ESCAPE = re.compile(r"((?:https?|steam)://[^\s<>`\\*|\[\]]+)(?=[<>`\\*|\[\]])")
"""Discord's links run up to a space or a `<`, so one would swallow the escape of a character
right after it, backslash and all: a space ends the link at what was written up to there."""
_MARKUP = re.compile(
    # A bare link stays as written, so it still works; it shows where it goes. It ends before
    # anything that could open or close markup around it.
    r"(?P<url>https?://[^\s<>`\\*|\[\]]+)"
    # Inline markup, mentions and masked links (`<@1>`, `[x](…)`) need one of these.
    r"|(?P<char>[\\*_~|`<>\[\]])"
    # A heading, subtext or list item at the start of a line; a numbered item's dot.
    r"|^(?P<lead>[ \t]*)(?:(?P<start>#|-(?=[ \t#]))|(?P<number>\d{1,9})\.(?=[ \t]))",
    re.MULTILINE,
)


def escape(text: str) -> str:
    """`text` shown as written: no markup, mention, masked link or code of its own."""
    # discord.py's `escape_markdown` alone leaves `<@1>`, `<@&1>`, `<#1>` and every masked
    # link but the first on a line live.
    spaced = _URL_BEFORE_ESCAPE.sub(r"\1 ", text)
    return discord.utils.escape_mentions(_MARKUP.sub(_escaped, spaced))


def _escaped(match: re.Match[str]) -> str:
    if match["url"] is not None:
        return match["url"]
    if match["char"] is not None:
        return "\\" + match["char"]
    if match["number"] is not None:
        return f"{match['lead']}{match['number']}\\."
    return f"{match['lead']}\\{match['start']}"


def line(text: str) -> str:
    """One-line text (a header, a label, an answer, a name), escaped, its lines joined."""
    return escape(" ".join(text.split()))


def prose(text: str) -> str:
    """Longer text (a question, the context), escaped, except its ``` code blocks.

    Each code block starts a line, so nothing before it (a link, say) can swallow its fence,
    and ends with one, so no backtick in it touches the closing fence; an unclosed one is
    closed, an empty one dropped. Callers put prose at the start of a text or after a space.
    """
    out = ""
    for index, part in enumerate(text.split(FENCE)):
        if index % 2 == 0:
            out += escape(part)
        elif part.strip():
            opening = FENCE if out[-1:] in ("", " ", "\n") else "\n" + FENCE
            closing = FENCE if part.endswith("\n") else CLOSE_FENCE
            out += opening + discord.utils.escape_mentions(part) + closing
    return out


def shorten(text: str, limit: int) -> str:
    """`text` (markdown) if it fits in `limit` characters, else its start and an ellipsis."""
    if len(text) <= limit:
        return text
    for end, inside in reversed(_cuts(text, limit)):
        if cut_point(text, end) != end:
            continue
        cut = text[:end].rstrip()
        tail = ELLIPSIS + (CLOSE_FENCE if inside else "")
        if len(cut) + len(tail) <= limit:
            return cut + tail
    return ""


def _cuts(text: str, limit: int) -> list[tuple[int, bool]]:
    """Where `text` may be cut, up to `limit`: between escapes and fences, never inside one;
    and whether the cut is inside a code block."""
    cuts = [(0, False)]
    at, inside = 0, False
    while at < min(limit, len(text)):
        if text.startswith(FENCE, at):
            at, inside = at + len(FENCE), not inside
        else:
            # A backslash escapes the next character, except in a code block.
            at += 2 if text[at] == "\\" and not inside else 1
        cuts.append((at, inside))
    return cuts


def clip(text: str, limit: int) -> str:
    """Plain text (a button label, a select option) cut to `limit` with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: cut_point(text, limit - len(ELLIPSIS))].rstrip() + ELLIPSIS


def join_within(items: Iterable[str], limit: int, separator: str = ", ") -> str:
    """The items joined, as many whole ones as fit in `limit`, then "and N more".

    Items are never cut, so a mention (`<@123>`) is never left half written.
    """
    items = list(items)
    # The length of the first `count` items joined, for every count.
    lengths = [0]
    for index, item in enumerate(items):
        lengths.append(lengths[-1] + len(item) + (len(separator) if index else 0))
    for count in range(len(items), 0, -1):
        rest = len(items) - count
        tail = f" and {rest} more" if rest else ""
        if lengths[count] + len(tail) <= limit:
            return separator.join(items[:count]) + tail
    count = len(items)
    return shorten(f"{count} {'person' if count == 1 else 'people'}", limit) if items else ""


def link(url: str) -> str:
    """A URL-mode form's link, live and whole: in angle brackets Discord links everything up
    to the `>` (a bare link ends at a `<` or a final `.`, and an escape's backslash would be
    part of it), written as a URI (`core.forms.as_uri`), which never holds a `>` or a space.
    An `@` past the host is percent-encoded too, as Discord finds @everyone and @here even in
    a link."""
    parts = urlsplit(as_uri(url))
    path, query, fragment = (p.replace("@", "%40") for p in parts[2:])
    return f"<{urlunsplit((parts.scheme, parts.netloc, path, query, fragment))}>"
