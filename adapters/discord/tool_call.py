"""The tool call a request asks to approve, as Discord markdown: its title, diffs in a ```diff
block (Discord colours the "-" and "+" lines), commands in a code block, named values as a list.

Code blocks hold the text as written, with any ``` in it broken so that it cannot close the
block, and mentions broken as everywhere else; the title, labels and values go through
`text.escape`. A long diff or command shows its first lines and says how many are left.
"""

from __future__ import annotations

import discord

from askbridge.adapters.discord.text import FENCE, escape, line, shorten
from askbridge.core.tool_view import (
    FULL_VIEW,
    Code,
    Diff,
    Fields,
    Fitted,
    Part,
    ToolView,
    fitted,
    is_cut,
)

MAX_TOOL_TEXT = 1600
"""The whole call at most, within the message's 4000 characters; less when the message is long
(the renderer gives it a share)."""
MAX_LINES = 30
BLOCK_BUDGET = 900
FIELD_BUDGET = 200
MAX_FIELDS = 8
MAX_PARTS = 8


def tool_text(tool: ToolView, limit: int = MAX_TOOL_TEXT) -> str:
    """The call as one markdown text of at most `limit` characters (MAX_TOOL_TEXT at most):
    its start, when it must be cut, and the link to all of it while that takes at most half."""
    limit = min(limit, MAX_TOOL_TEXT)
    pieces = [f"**{shorten(line(tool.title), 300)}**"]
    pieces += [_part(part) for part in tool.parts[:MAX_PARTS]]
    text = "\n".join(p for p in pieces if p)
    link = "" if tool.full_view is None else f"\n-# [{FULL_VIEW}](<{tool.full_view}>)"
    cut = len(text) > limit or is_cut(tool, MAX_LINES, BLOCK_BUDGET, MAX_PARTS)
    if not link or not cut or 2 * len(link) > limit:
        return shorten(text, limit)
    # The link goes after the cut, so that no cut can take it.
    return shorten(text, limit - len(link)) + link


def _part(part: Part) -> str:
    if isinstance(part, Diff):
        return _block("diff", fitted(part.lines(), MAX_LINES, BLOCK_BUDGET))
    if isinstance(part, Code):
        block = _block("", fitted(part.text.split("\n"), MAX_LINES, BLOCK_BUDGET))
        return f"**{shorten(line(part.label), 100)}**\n{block}" if part.label else block
    if isinstance(part, Fields):
        rows = [
            f"- **{shorten(line(f.name), 100)}**: {shorten(escape(f.value), FIELD_BUDGET)}"
            for f in part.fields[:MAX_FIELDS]
        ]
        if len(part.fields) > MAX_FIELDS:
            rows.append(f"- and {len(part.fields) - MAX_FIELDS} more")
        return "\n".join(rows)
    return f"**{shorten(escape(part.text), FIELD_BUDGET)}**"


def _block(language: str, shown: Fitted) -> str:
    """A code block of `shown` lines; nothing in them can close it or ping."""
    body = "\n".join(_inert(text) for text in shown.lines) or " "
    block = f"{FENCE}{language}\n{body}\n{FENCE}"
    return block if shown.hidden_line is None else f"{block}\n-# {shown.hidden_line}"


def _inert(text: str) -> str:
    # A zero-width space breaks every run of three backticks, which would end the block.
    while FENCE in text:
        text = text.replace(FENCE, "`\u200b``")
    return discord.utils.escape_mentions(text)
