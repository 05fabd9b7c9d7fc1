"""The tool call a request asks to approve, as Discord markdown: its title, diffs in a ```diff
block (Discord colours the "-" and "+" lines), commands in a code block, named values as a list.

Code blocks hold the text as written, with any ``` in it broken so that it cannot close the
block, and mentions broken as everywhere else; the title, labels and values go through
`text.escape`. A long diff or command shows its first lines and says how many are left.
Under a tight share the title and notes are cut first: what runs (commands, diffs, values)
keeps its room, and is cut itself only when it cannot be whole even then; a call cut in any way
keeps its link to all of it.
"""

from __future__ import annotations

import discord

from askbridge.adapters.discord.text import FENCE, escape, line, shorten
from askbridge.core.tool_view import (
    FULL_VIEW,
    NAME_CHARS,
    TITLE_CHARS,
    Code,
    Diff,
    Fields,
    Fitted,
    Note,
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
    """The call as one markdown text of at most `limit` characters (MAX_TOOL_TEXT at most),
    save its link: its start, when it must be cut, and the link to all of it. The title and
    notes are cut before what runs, down to nothing when it needs all of it. Whatever is cut
    of a call (its title too), it keeps its link, past `limit` where the link alone is longer
    or what runs has room to be whole only without it: the message then cuts its other texts
    further (`render._fitted`), for an approver is never shown part of a call without it."""
    limit = min(limit, MAX_TOOL_TEXT)
    title = line(tool.title)
    # Cut past TITLE_CHARS as written, as `is_cut` counts it; then only to make room.
    title = title if len(tool.title) <= TITLE_CHARS else shorten(title, TITLE_CHARS)
    parts = tool.parts[:MAX_PARTS]
    # A note is cut as a value is (`_value`), past FIELD_BUDGET as written, as `is_cut` counts
    # it; its escapes may make it longer, and `top` shows all of that.
    notes = [_value(part.text) for part in parts if isinstance(part, Note)]
    top = max(len(title), FIELD_BUDGET, *map(len, notes))
    shown = {index: _part(part) for index, part in enumerate(parts) if not isinstance(part, Note)}

    def text(share: int) -> str:
        """The call with its title and notes cut to `share` (each to its own budget at most)."""
        pieces = [_bold(title, share)]
        for index, part in enumerate(parts):
            if isinstance(part, Note):
                pieces.append(_bold(_value(part.text), share))
            else:
                pieces.append(shown[index])
        return "\n".join(p for p in pieces if p)

    whole, runs = text(top), text(0)
    link = "" if tool.full_view is None else f"\n-# [{FULL_VIEW}](<{tool.full_view}>)"
    hidden = is_cut(
        tool, MAX_LINES, BLOCK_BUDGET, MAX_PARTS, max_fields=MAX_FIELDS, value_chars=FIELD_BUDGET
    )
    if not (len(whole) > limit or hidden):
        link = ""
    if not hidden and len(runs) <= limit < len(runs) + len(link):
        # Room for all of what runs or for the link, not both: what runs comes first, the
        # title (an Edit's path) and notes give way, and the link goes past `limit`.
        room = limit
    else:
        room = max(limit - len(link), 0)
    # The largest share of the title and notes with which the call fits whole, else none.
    low, high = 0, top
    while low < high:
        share = (low + high + 1) // 2
        if len(text(share)) <= room:
            low = share
        else:
            high = share - 1
    # The link goes after the cut, so that no cut can take it.
    return (shorten(text(low), room) + link).removeprefix("\n")


def _bold(escaped: str, limit: int) -> str:
    """`escaped` cut to `limit` and in bold; nothing when nothing of it fits."""
    short = shorten(escaped, limit)
    return f"**{short}**" if short else ""


def _part(part: Part) -> str:
    if isinstance(part, Diff):
        return _block("diff", fitted(part.lines(), MAX_LINES, BLOCK_BUDGET))
    if isinstance(part, Code):
        block = _block("", fitted(part.text.split("\n"), MAX_LINES, BLOCK_BUDGET))
        return f"**{shorten(line(part.label), 100)}**\n{block}" if part.label else block
    if isinstance(part, Fields):
        rows = [f"- **{_name(f.name)}**: {_value(f.value)}" for f in part.fields[:MAX_FIELDS]]
        if len(part.fields) > MAX_FIELDS:
            rows.append(f"- and {len(part.fields) - MAX_FIELDS} more")
        return "\n".join(rows)
    return _bold(_value(part.text), FIELD_BUDGET)


def _name(name: str) -> str:
    """`name` on one line, escaped; cut only when it is longer than NAME_CHARS as written, as
    `is_cut` counts it, so its escapes never cut it without a link to all of it."""
    escaped = line(name)
    return escaped if len(name) <= NAME_CHARS else shorten(escaped, NAME_CHARS)


def _value(value: str) -> str:
    """`value` (a named value, a note) escaped; cut only when it is longer than FIELD_BUDGET as
    written, as `is_cut` counts it, so its escapes never cut it without a link to all of it."""
    escaped = escape(value)
    return escaped if len(value) <= FIELD_BUDGET else shorten(escaped, FIELD_BUDGET)


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
