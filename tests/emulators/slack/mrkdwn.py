"""What a Slack message would set off: whom it mentions, which links are live, and which
mrkdwn formatting a piece of text turns on.

Slack parses as mrkdwn the top-level `text` (it also drives notifications when there are
blocks) and every `mrkdwn` text object; in `rich_text` blocks only `user`, `usergroup`,
`broadcast`, `channel` and `link` elements mention or link; `plain_text` is never parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from .types import Block

BROADCASTS = ("here", "channel", "everyone")
FENCE = "```"

# `<…>` control sequences: <@U1>, <@U1|name>, <!subteam^S1|@team>, <!here>, <#C1|general>,
# <https://example.com|label>, <mailto:a@example.com>, <!date^…|fallback>.
CONTROL = re.compile(r"<([^<>\n]+)>")
SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)

# Slack formats a run when the opening marker starts a word and the closing one ends it, with
# no space just inside either marker, all on one line.
EMPHASIS = {
    marker: re.compile(
        rf"(?<![^\W_]){re.escape(marker)}"
        rf"[^\s{re.escape(marker)}](?:[^\n]*?[^\s])?"
        rf"{re.escape(marker)}(?![^\W_])"
    )
    for marker in ("*", "_", "~")
}
INLINE_CODE = re.compile(r"`[^`\n]+`")


@dataclass(frozen=True)
class Mentions:
    """Who a message notifies and what it links to. Empty sets compare equal to `set()`."""

    users: frozenset[str] = field(default_factory=frozenset)
    usergroups: frozenset[str] = field(default_factory=frozenset)
    broadcasts: frozenset[str] = field(default_factory=frozenset)
    """Any of "here", "channel", "everyone"."""
    channels: frozenset[str] = field(default_factory=frozenset)
    links: frozenset[str] = field(default_factory=frozenset)

    def __or__(self, other: Mentions) -> Mentions:
        return Mentions(
            self.users | other.users,
            self.usergroups | other.usergroups,
            self.broadcasts | other.broadcasts,
            self.channels | other.channels,
            self.links | other.links,
        )

    @property
    def pings(self) -> bool:
        """Whether anyone gets notified (people, groups or a broadcast)."""
        return bool(self.users or self.usergroups or self.broadcasts)

    @property
    def none(self) -> bool:
        return not (self.pings or self.channels or self.links)


def mrkdwn_mentions(text: str) -> Mentions:
    """The mentions and links in one mrkdwn string."""
    users: set[str] = set()
    groups: set[str] = set()
    broadcasts: set[str] = set()
    channels: set[str] = set()
    links: set[str] = set()
    for match in CONTROL.finditer(text):
        target = match.group(1).partition("|")[0]
        if target.startswith("@"):
            users.add(target[1:])
        elif target.startswith("!subteam^"):
            groups.add(target.removeprefix("!subteam^"))
        elif target in ("!here", "!channel", "!everyone", "!group"):
            broadcasts.add("channel" if target == "!group" else target[1:])
        elif target.startswith("#"):
            channels.add(target[1:])
        elif SCHEME.match(target):
            links.add(target)
    return Mentions(*(frozenset(s) for s in (users, groups, broadcasts, channels, links)))


def mentions(text: str | None, blocks: Sequence[Block] = ()) -> Mentions:
    """Everything a message with this `text` and these `blocks` mentions or links."""
    found = mrkdwn_mentions(text or "")
    for part in _walk(list(blocks), in_rich_text=False):
        found = found | part
    return found


def _walk(node: object, *, in_rich_text: bool) -> Iterator[Mentions]:
    if isinstance(node, list):
        for item in node:
            yield from _walk(item, in_rich_text=in_rich_text)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "mrkdwn" and isinstance(node.get("text"), str):
        yield mrkdwn_mentions(node["text"])
        return
    if in_rich_text:
        element = _rich_text_mention(node)
        if element is not None:
            yield element
            return
    for value in node.values():
        yield from _walk(value, in_rich_text=in_rich_text or kind == "rich_text")


def _rich_text_mention(node: dict[str, object]) -> Mentions | None:
    kind = node.get("type")

    def one(key: str) -> frozenset[str]:
        return frozenset({str(node.get(key, ""))})

    if kind == "user":
        return Mentions(users=one("user_id"))
    if kind == "usergroup":
        return Mentions(usergroups=one("usergroup_id"))
    if kind == "broadcast":
        return Mentions(broadcasts=one("range"))
    if kind == "channel":
        return Mentions(channels=one("channel_id"))
    if kind == "link":
        return Mentions(links=one("url"))
    return None


# ---- formatting ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MrkdwnMarkup:
    """The formatting Slack would apply to a mrkdwn string."""

    emphasis: tuple[str, ...] = ()
    """Runs Slack would make bold, italic or struck through, markers included: `*b*`."""
    code: tuple[str, ...] = ()
    """Inline code spans and closed ``` blocks."""
    open_fence: bool = False
    """A ``` with no partner: it would pair with the next ``` anywhere after it."""

    @property
    def live(self) -> bool:
        return bool(self.emphasis or self.code or self.open_fence)


def mrkdwn_markup(text: str) -> MrkdwnMarkup:
    """Which emphasis, code and fences in `text` Slack would render as formatting."""
    parts = text.split(FENCE)
    open_fence = len(parts) % 2 == 0
    emphasis: list[str] = []
    code: list[str] = []
    for index, part in enumerate(parts):
        fenced = index % 2 == 1 and not (open_fence and index == len(parts) - 1)
        if fenced:
            code.append(f"{FENCE}{part}{FENCE}")
            continue
        spans = INLINE_CODE.findall(part)
        code.extend(spans)
        prose = CONTROL.sub("\x00", INLINE_CODE.sub("\x00", part))
        for pattern in EMPHASIS.values():
            emphasis.extend(match.group(0) for match in pattern.finditer(prose))
    return MrkdwnMarkup(tuple(emphasis), tuple(code), open_fence)
