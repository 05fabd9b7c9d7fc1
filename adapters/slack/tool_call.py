"""The tool call a request asks to approve, as Slack rich text: its title, diffs and commands
as preformatted text ("-"/"+" lines under `@@` hunk headers), named values as a list.

Every text is a rich text `text` element (see `text`), so nothing in a diff or a command
can ping or restyle. A long diff or command shows its first lines and says how many are left.
"""

from __future__ import annotations

from askbridge.adapters.slack.blockkit import RichElement
from askbridge.adapters.slack.text import Line, Link, Span, bullets, section, shorten, text
from askbridge.core.tool_view import (
    FULL_VIEW,
    NAME_CHARS,
    TITLE_CHARS,
    Code,
    Diff,
    Fields,
    Fitted,
    Part,
    ToolView,
    fields_cut,
    fitted,
)

MAX_LINES = 40
BLOCK_BUDGET = 2500
"""Characters of one preformatted diff or command."""
FIELD_BUDGET = 300
MAX_FIELDS = 8
MAX_PARTS = 8


def tool_parts(tool: ToolView) -> list[list[RichElement]]:
    """The call's rich text, one list of elements per rich text block (the title with the
    first part): each stays within what one block holds."""
    title: list[RichElement] = [section([Span(shorten(tool.title, TITLE_CHARS), bold=True)])]
    if tool.full_view is not None and len(tool.title) > TITLE_CHARS:
        title.append(section([Link(tool.full_view, FULL_VIEW)]))
    blocks = [_part(part, tool.full_view) for part in tool.parts[:MAX_PARTS]] or [[]]
    blocks[0][:0] = title
    return blocks


def _part(part: Part, full_view: str | None) -> list[RichElement]:
    if isinstance(part, Diff):
        return _preformatted(fitted(part.lines(), MAX_LINES, BLOCK_BUDGET), full_view)
    if isinstance(part, Code):
        label = [section([Span(shorten(part.label, 100), bold=True)])] if part.label else []
        shown = fitted(part.text.split("\n"), MAX_LINES, BLOCK_BUDGET)
        return [*label, *_preformatted(shown, full_view)]
    if isinstance(part, Fields):
        return _fields(part, full_view)
    # A note quotes the call (a lookalike host) and may be as long: cut, it links as a value does.
    note: Line = [Span(shorten(part.text, FIELD_BUDGET), italic=True)]
    if full_view is not None and len(part.text) > FIELD_BUDGET:
        note += [Span(" · "), Link(full_view, FULL_VIEW)]
    return [section(note)]


def _preformatted(shown: Fitted, full_view: str | None) -> list[RichElement]:
    # Slack refuses an empty preformatted element: an empty command shows as a dash.
    body = "\n".join(shown.lines) if any(line.strip() for line in shown.lines) else "–"
    elements: list[RichElement] = [
        {"type": "rich_text_preformatted", "elements": [text(Span(body))]}
    ]
    if shown.hidden_line is not None:
        line: Line = [Span(shown.hidden_line, italic=True)]
        if full_view is not None:
            line += [Span(" · "), Link(full_view, FULL_VIEW)]
        elements.append(section(line))
    return elements


def _fields(part: Fields, full_view: str | None) -> list[RichElement]:
    rows: list[Line] = [
        [Span(shorten(f.name, NAME_CHARS), bold=True), Span(f": {shorten(f.value, FIELD_BUDGET)}")]
        for f in part.fields[:MAX_FIELDS]
    ]
    if len(part.fields) > MAX_FIELDS:
        rows.append([Span(f"and {len(part.fields) - MAX_FIELDS} more", italic=True)])
    if not rows:
        return [section([])]
    if full_view is not None and fields_cut(part, MAX_FIELDS, FIELD_BUDGET):
        return [bullets(rows), section([Link(full_view, FULL_VIEW)])]
    return [bullets(rows)]
