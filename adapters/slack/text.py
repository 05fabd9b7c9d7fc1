"""The one place Slack text is made: lines of parts, written out as rich text or as mrkdwn.

Text from agents and people only ever becomes a `text` element of a `rich_text` block, which
Slack shows exactly as written; mentions and dates are parts of their own, written by askbridge.
As mrkdwn (a notification's `text`), `&`, `<`, `>` are escaped and emphasis characters swapped
for look-alikes, since mrkdwn cannot escape them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from askbridge.adapters.slack.blockkit import (
    RichDate,
    RichElement,
    RichInline,
    RichSection,
    RichText,
    RichTextBlock,
    TextStyle,
)
from askbridge.core.graphemes import cut_point
from askbridge.core.models import Person

ELLIPSIS = "…"
FENCE = "```"
DATE_FORMAT = "{date_short_pretty} at {time}"
SLACK_USER_ID = re.compile(r"[UW][A-Z0-9]+")
SLACK_GROUP_ID = re.compile(r"S[A-Z0-9]+")
SLOT = re.compile(r"\{(\w+)\}")
"""A slot in one of core's sentences, split out with its name."""
# mrkdwn's emphasis and code characters, and what user text shows instead in mrkdwn.
_LOOKALIKES = str.maketrans({"*": "∗", "_": "ˍ", "~": "∼", "`": "ˋ"})


@dataclass(frozen=True)
class Span:
    """Text as written; `bold` and friends are styles askbridge chooses, never parsed."""

    text: str
    bold: bool = False
    italic: bool = False


@dataclass(frozen=True)
class Mention:
    kind: str  # "user" or "usergroup"
    id: str


@dataclass(frozen=True)
class When:
    at: datetime


@dataclass(frozen=True)
class Emoji:
    name: str


@dataclass(frozen=True)
class Link:
    """A link askbridge makes (to its own web page): its text and its address are askbridge's,
    never an agent's or a person's."""

    url: str
    text: str


Part = Span | Mention | When | Emoji | Link
Line = list[Part]


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and an ellipsis, cut between
    characters as shown (never between an emoji and its skin tone, say)."""
    if len(text) <= limit:
        return text
    return text[: cut_point(text, limit - len(ELLIPSIS))].rstrip() + ELLIPSIS


def shorten_mrkdwn(text: str, limit: int) -> str:
    """mrkdwn `text` (as `mrkdwn` writes it) if it fits in `limit` characters, else its start
    and an ellipsis, cut where `shorten` would and never inside an escape (`&amp;`) or a
    control sequence (`<@U1>`, `<!date^…>`), which Slack would show half written."""
    if len(text) <= limit:
        return text
    end = max(limit - len(ELLIPSIS), 0)
    escape = text.rfind("&", max(end - len("&amp"), 0), end)
    if escape >= 0 and ";" not in text[escape:end]:
        end = escape
    # `mrkdwn` escapes every `<` and `>` of text as written: any here open askbridge's own.
    control = text.rfind("<", 0, end)
    if control >= 0 and ">" not in text[control:end]:
        end = control
    return text[: cut_point(text, end)].rstrip() + ELLIPSIS


def person(who: Person | None, limit: int = 100) -> Line:
    """A Slack member as a mention; anyone else by name, with the platform they answered on."""
    if who is None:
        return [Span("someone")]
    if who.platform == "slack" and SLACK_USER_ID.fullmatch(who.id):
        return [Mention("user", who.id)]
    return [Span(f"{shorten(who.name or who.id, limit)} ({shorten(who.platform, 20)})")]


def answerer(entry: str) -> Line:
    """An answerers entry: a mention for a Slack member or user group, else the entry."""
    kind, _, value = entry.partition(":")
    member = value.removeprefix("@")
    if kind == "slack" and SLACK_USER_ID.fullmatch(member):
        return [Mention("user", member)]
    if kind == "slack-group" and SLACK_GROUP_ID.fullmatch(value):
        return [Mention("usergroup", value)]
    return [Span(entry)]


def filled(template: str, **slots: Line) -> Line:
    """`template` (one of core's sentences) with each of its `{slots}` made of parts, so that
    mentions and times stay parts, not text; a slot not given stays as written."""
    line: Line = []
    for index, piece in enumerate(SLOT.split(template)):
        if index % 2 == 0:
            line += [Span(piece)] if piece else []
        else:
            line += slots.get(piece, [Span(f"{{{piece}}}")])
    return line


def joined(lines: Iterable[Line], limit: int, sep: str = ", ") -> Line:
    """Lines one after another within about `limit` characters; those that do not fit are
    counted ("and 3 more"), so a mention is never cut in half."""
    items = list(lines)
    out: Line = []
    used = 0
    for index, item in enumerate(items):
        size = sum(_size(p) for p in item) + len(sep)
        if out and used + size > limit:
            out.append(Span(f" and {len(items) - index} more"))
            break
        if out:
            out.append(Span(sep))
        out.extend(item)
        used += size
    return out


def _size(part: Part) -> int:
    return len(part.text) if isinstance(part, Span) else 24


# ---- rich text ----------------------------------------------------------------------------------


def inline(part: Part) -> RichInline:
    if isinstance(part, Span):
        return text(part)
    if isinstance(part, Mention):
        if part.kind == "usergroup":
            return {"type": "usergroup", "usergroup_id": part.id}
        return {"type": "user", "user_id": part.id}
    if isinstance(part, When):
        return date(part.at)
    if isinstance(part, Link):
        return {"type": "link", "url": part.url, "text": part.text}
    return {"type": "emoji", "name": part.name}


def text(span: Span) -> RichText:
    element: RichText = {"type": "text", "text": span.text}
    style: TextStyle = {}
    if span.bold:
        style["bold"] = True
    if span.italic:
        style["italic"] = True
    if style:
        element["style"] = style
    return element


def date(at: datetime) -> RichDate:
    """A time every reader sees in their own time zone; the fallback is UTC."""
    utc = at.astimezone(UTC)
    return {
        "type": "date",
        "timestamp": int(utc.timestamp()),
        "format": DATE_FORMAT,
        "fallback": utc.strftime("%Y-%m-%d %H:%M UTC"),
    }


def section(line: Line) -> RichSection:
    """One paragraph; whitespace-only text is not sent on its own (Slack refuses it) but goes
    with the plain text after it, so that a space between an emoji or a mention and the words
    that follow still shows; an empty line shows a dash."""
    parts: list[RichInline] = []
    pending = ""
    for part in line:
        if isinstance(part, Span) and not part.text.strip():
            pending += part.text
            continue
        if pending and isinstance(part, Span):
            part = Span(pending + part.text, part.bold, part.italic)
        pending = ""
        parts.append(inline(part))
    return {"type": "rich_text_section", "elements": parts or [text(Span("–"))]}


def bullets(lines: Sequence[Line]) -> RichElement:
    return {"type": "rich_text_list", "style": "bullet", "elements": [section(x) for x in lines]}


def prose(lead: Line, content: str) -> list[RichElement]:
    """`lead`, then `content` after two spaces, its ``` fences made preformatted blocks: a code
    block the agent wrote (a permission prompt's tool input) stays one, and can never swallow
    what follows."""
    elements: list[RichElement] = []
    for index, piece in enumerate(content.split(FENCE)):
        piece = piece.strip("\n")
        if index % 2 == 1:
            if piece.strip():
                elements.append({"type": "rich_text_preformatted", "elements": [text(Span(piece))]})
        elif index == 0 and lead:
            elements.append(section([*lead, Span(f"  {piece}" if piece.strip() else "")]))
        elif piece.strip():
            elements.append(section([Span(piece)]))
    return elements or [section(lead)]


def block(block_id: str, elements: list[RichElement]) -> RichTextBlock:
    return {"type": "rich_text", "block_id": block_id, "elements": elements}


# ---- mrkdwn -------------------------------------------------------------------------------------


def inert(text: str) -> str:
    """User text inside mrkdwn: control characters escaped, emphasis characters swapped."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.translate(_LOOKALIKES)


def mrkdwn(line: Line) -> str:
    out = []
    for part in line:
        if isinstance(part, Span):
            written = inert(part.text)
            out.append(f"*{written}*" if part.bold and written.strip() else written)
        elif isinstance(part, Mention):
            out.append(f"<!subteam^{part.id}>" if part.kind == "usergroup" else f"<@{part.id}>")
        elif isinstance(part, When):
            shown = date(part.at)
            out.append(f"<!date^{shown['timestamp']}^{DATE_FORMAT}|{shown['fallback']}>")
        elif isinstance(part, Link):
            out.append(f"<{part.url}|{inert(part.text)}>")
        else:
            out.append(f":{part.name}:")
    return "".join(out)
