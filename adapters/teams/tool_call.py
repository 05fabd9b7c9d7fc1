"""The tool call a request asks to approve, on a Teams card: its title, diffs and commands line
by line in a monospace font (removed lines red, added lines green), named values as text.

Every text is a `TextRun` (see `text`), which Teams shows as written. A long diff or command
shows its first lines and says how many are left; a call cut, by these limits or by the card's
size (`fit`), links to all of it on the web page (`ToolView.full_view`).
"""

from __future__ import annotations

from askbridge.adapters.teams.text import Element, paragraph, plain, run, words
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
    fitted,
    is_cut,
)

MAX_LINES = 40
BLOCK_BUDGET = 3000
"""Characters of one diff or command, within the card's size."""
MAX_VALUE = 500
MAX_FIELDS = 8
MAX_PARTS = 8
COLOURS = {"-": "Attention", "+": "Good"}
"""How a diff line is coloured, by its sign."""


def tool_elements(tool: ToolView, *, cut_to_fit: bool = False) -> list[Element]:
    """The call's card elements, in the order of its parts, and the link to all of it when
    they leave some of it out, or when the card's size cut some of it (`cut_to_fit`)."""
    elements = [plain(tool.title, bold=True, limit=TITLE_CHARS)]
    for part in tool.parts[:MAX_PARTS]:
        elements += _part(part)
    cut = is_cut(
        tool, MAX_LINES, BLOCK_BUDGET, MAX_PARTS, max_fields=MAX_FIELDS, value_chars=MAX_VALUE
    )
    if tool.full_view is not None and (cut or cut_to_fit):
        see: Element = {"type": "Action.OpenUrl", "title": FULL_VIEW, "url": tool.full_view}
        elements.append({"type": "ActionSet", "actions": [see]})
    return elements


def linked_when_cut(tool: ToolView, fitted: list[Element]) -> list[Element] | None:
    """The call's elements again, now with the link to all of it, when the card's size cut
    some of what its elements showed (`fitted`: `tool_elements` as `fit` left them) and they
    had no link; else None. A person is told of every cut of what they approve, and can see
    all of it."""
    if tool.full_view is None or fitted == (whole := tool_elements(tool)):
        return None
    with_link = tool_elements(tool, cut_to_fit=True)
    return None if with_link == whole else with_link


def _part(part: Part) -> list[Element]:
    if isinstance(part, Diff):
        return _lines(fitted(part.lines(), MAX_LINES, BLOCK_BUDGET), coloured=True)
    if isinstance(part, Code):
        label = [plain(part.label, bold=True, limit=100)] if part.label else []
        return [*label, *_lines(fitted(part.text.split("\n"), MAX_LINES, BLOCK_BUDGET))]
    if isinstance(part, Fields):
        rows = [
            paragraph(
                run(f.name, bold=True, limit=NAME_CHARS), run(": "), run(f.value, limit=MAX_VALUE)
            )
            for f in part.fields[:MAX_FIELDS]
        ]
        if len(part.fields) > MAX_FIELDS:
            rows.append(words(f"and {len(part.fields) - MAX_FIELDS} more", subtle=True))
        return rows
    return [plain(part.text, bold=True, limit=MAX_VALUE)]


def _lines(shown: Fitted, coloured: bool = False) -> list[Element]:
    """One monospace paragraph per line, so each keeps its own colour and white space."""
    elements = []
    for text in shown.lines:
        line = {**run(text or " "), "fontType": "Monospace"}
        if coloured and text[:1] in COLOURS:
            line["color"] = COLOURS[text[:1]]
        elements.append(paragraph(line))
    if shown.hidden_line is not None:
        elements.append(words(shown.hidden_line, subtle=True))
    return elements
