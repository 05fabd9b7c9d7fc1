"""Who a Discord message pings: the mentions in its text, as far as `allowed_mentions` lets them.

Mentions count in `content` and in Components V2 text displays, never in embeds, labels or
code. Without `allowed_mentions` Discord parses everything (the bot has every permission,
@everyone included); with it, only what `parse` names or the `users`/`roles` lists hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .components import TEXT_DISPLAY, walk
from .markdown import read
from .payloads import Component

MENTION_TYPES = ("roles", "users", "everyone")
MAX_IDS = 100

USER_MENTION = re.compile(r"<@!?(\d+)>")
ROLE_MENTION = re.compile(r"<@&(\d+)>")

Problem = tuple[tuple[str | int, ...], str, str]
"""(path under allowed_mentions, Discord error code, message)."""


@dataclass(frozen=True)
class Mentioned:
    """What a text mentions, before `allowed_mentions` has its say."""

    users: frozenset[int] = field(default_factory=frozenset)
    roles: frozenset[int] = field(default_factory=frozenset)
    everyone: bool = False
    here: bool = False

    def __or__(self, other: Mentioned) -> Mentioned:
        return Mentioned(
            self.users | other.users,
            self.roles | other.roles,
            self.everyone or other.everyone,
            self.here or other.here,
        )


def mentioned_in(text: str) -> Mentioned:
    """The mentions Discord finds in one text: escaped ones and those in code do not count."""
    prose = read(text).prose
    return Mentioned(
        users=frozenset(int(m) for m in USER_MENTION.findall(prose)),
        roles=frozenset(int(m) for m in ROLE_MENTION.findall(prose)),
        everyone="@everyone" in prose,
        here="@here" in prose,
    )


@dataclass(frozen=True)
class Pings:
    """Who a message version notifies. Empty sets compare equal to `set()`."""

    users: frozenset[int] = field(default_factory=frozenset)
    roles: frozenset[int] = field(default_factory=frozenset)
    everyone: bool = False
    """`@everyone` pinged."""
    here: bool = False
    """`@here` pinged."""

    @property
    def mention_everyone(self) -> bool:
        """The message's `mention_everyone` flag: set by @everyone and by @here."""
        return self.everyone or self.here

    @property
    def nobody(self) -> bool:
        return not (self.users or self.roles or self.mention_everyone)


@dataclass(frozen=True)
class AllowedMentions:
    parse: frozenset[str]
    users: frozenset[int] = field(default_factory=frozenset)
    roles: frozenset[int] = field(default_factory=frozenset)
    replied_user: bool = False

    @classmethod
    def parse_everything(cls) -> AllowedMentions:
        """Discord's behaviour when a request carries no `allowed_mentions`."""
        return cls(frozenset(MENTION_TYPES), replied_user=True)

    @classmethod
    def of_request(cls, body: Mapping[str, Any]) -> AllowedMentions:
        """The rules a (validated) create or edit request asks for."""
        value = body.get("allowed_mentions")
        if not isinstance(value, dict):
            return cls.parse_everything()
        return cls(
            parse=frozenset(value.get("parse") or ()),
            users=frozenset(int(i) for i in value.get("users") or ()),
            roles=frozenset(int(i) for i in value.get("roles") or ()),
            replied_user=value.get("replied_user") is True,
        )

    def permit(self, mentioned: Mentioned, replied_author: int | None = None) -> Pings:
        users = mentioned.users if "users" in self.parse else mentioned.users & self.users
        if replied_author is not None and self.replied_user:
            users = users | {replied_author}
        roles = mentioned.roles if "roles" in self.parse else mentioned.roles & self.roles
        allowed_everyone = "everyone" in self.parse
        return Pings(
            users=users,
            roles=roles,
            everyone=mentioned.everyone and allowed_everyone,
            here=mentioned.here and allowed_everyone,
        )


def message_texts(content: str, components: Iterable[Component]) -> list[str]:
    """The texts of a message that can mention: its content and its text displays."""
    texts = [content] if content else []
    for placed in walk(list(components)):
        if placed.component.get("type") == TEXT_DISPLAY:
            texts.append(str(placed.component.get("content") or ""))
    return texts


def pings(
    content: str,
    components: Iterable[Component],
    allowed: AllowedMentions,
    *,
    replied_author: int | None = None,
) -> Pings:
    mentioned = Mentioned()
    for text in message_texts(content, components):
        mentioned = mentioned | mentioned_in(text)
    return allowed.permit(mentioned, replied_author)


# ---- validation ---------------------------------------------------------------------------------


def allowed_mentions_problems(value: object) -> list[Problem]:
    """What Discord would refuse in an `allowed_mentions` object (null means absent)."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [((), "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")]
    problems: list[Problem] = []
    parse = value.get("parse")
    if parse is not None:
        if not isinstance(parse, list):
            problems.append(
                (("parse",), "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType")
            )
            parse = []
        for index, kind in enumerate(parse):
            if kind not in MENTION_TYPES:
                problems.append(
                    (
                        ("parse", index),
                        "BASE_TYPE_CHOICES",
                        f"Value must be one of {MENTION_TYPES}.",
                    )
                )
    for key in ("users", "roles"):
        ids = value.get(key)
        if ids is None:
            continue
        problems.extend(_id_list_problems(key, ids))
        if ids and isinstance(parse, list) and key in parse:
            problems.append(
                (
                    (),
                    "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                    f'parse:["{key}"] and {key}: [ids...] are mutually exclusive.',
                )
            )
    if "replied_user" in value and not isinstance(value["replied_user"], bool | None):
        problems.append((("replied_user",), "BASE_TYPE_BOOLEAN", "Must be either true or false."))
    return problems


def _id_list_problems(key: str, ids: object) -> list[Problem]:
    if not isinstance(ids, list):
        return [((key,), "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType")]
    problems: list[Problem] = []
    if len(ids) > MAX_IDS:
        problems.append(((key,), "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_IDS} or fewer in length."))
    for index, item in enumerate(ids):
        if not _is_snowflake(item):
            problems.append(
                ((key, index), "NUMBER_TYPE_COERCE", f'Value "{item}" is not snowflake.')
            )
    return problems


def _is_snowflake(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0 <= value < 2**64
    return isinstance(value, str) and value.isdigit() and int(value) < 2**64
