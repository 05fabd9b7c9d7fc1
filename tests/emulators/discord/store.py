"""Stored messages: every version of every message, and who can see it."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .components import describe_controls, has_interactive_components, visible_text
from .markdown import read
from .mentions import Pings
from .payloads import Component, JSONObject, MessagePayload, UserPayload
from .registry import UnknownEntity
from .validation import EPHEMERAL, IS_COMPONENTS_V2, LOADING
from .waiting import Pulse

SUPPRESS_EMBEDS = 1 << 2
"""Sent on a message, no link in its content gets a preview."""
LINK_PREVIEW = "link"
"""The type of the embed Discord makes of a bare link in a message's content."""
MAX_PREVIEWS = 5
SUPPRESS_NOTIFICATIONS = 1 << 12
SETTABLE_FLAGS = SUPPRESS_EMBEDS | EPHEMERAL | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2
STICKY_FLAGS = EPHEMERAL | IS_COMPONENTS_V2


@dataclass(frozen=True)
class Message:
    """One version of a message, as Discord would return it."""

    payload: MessagePayload
    guild_id: int | None
    ephemeral_for: int | None
    interaction_id: int | None
    version: int
    pings: Pings = field(default_factory=Pings)
    """Who this version notifies: its mentions as far as the request's allowed_mentions (or
    Discord's parse-everything default) let them through."""

    @property
    def id(self) -> int:
        return int(self.payload["id"])

    @property
    def channel_id(self) -> int:
        return int(self.payload["channel_id"])

    @property
    def content(self) -> str:
        return self.payload["content"]

    @property
    def flags(self) -> int:
        return self.payload["flags"]

    @property
    def embeds(self) -> list[JSONObject]:
        return self.payload["embeds"]

    @property
    def components(self) -> list[Component]:
        return self.payload["components"]

    @property
    def link_previews(self) -> list[JSONObject]:
        """The cards Discord made of the bare links in its content."""
        return [e for e in self.embeds if e.get("type") == LINK_PREVIEW]

    @property
    def is_ephemeral(self) -> bool:
        return self.ephemeral_for is not None

    @property
    def is_components_v2(self) -> bool:
        return bool(self.flags & IS_COMPONENTS_V2)

    @property
    def is_loading(self) -> bool:
        return bool(self.flags & LOADING)

    @property
    def text(self) -> str:
        """Everything readable: content, embeds, labels, options, text displays."""
        return visible_text(self.content, self.embeds, self.components)

    @property
    def is_interactive(self) -> bool:
        """Whether any enabled button (not a link) or select is left."""
        return has_interactive_components(self.components)

    def controls(self) -> str:
        return describe_controls(self.components)

    def __str__(self) -> str:
        who = f" ephemeral for {self.ephemeral_for}" if self.is_ephemeral else ""
        return f"message {self.id} v{self.version} in channel {self.channel_id}{who}: {self.text!r}"


def new_message_payload(
    *,
    message_id: int,
    channel_id: int,
    author: UserPayload,
    body: Mapping[str, Any],
    timestamp: str,
) -> MessagePayload:
    """A message as Discord stores it, built from a create request's JSON body."""
    payload = MessagePayload(
        id=str(message_id),
        channel_id=str(channel_id),
        author=author,
        content=_content(body.get("content")),
        timestamp=timestamp,
        edited_timestamp=None,
        tts=bool(body.get("tts")),
        mention_everyone=False,
        mentions=[],
        mention_roles=[],
        attachments=[],
        embeds=_embeds(body.get("embeds")),
        components=copy.deepcopy(list(body.get("components") or [])),
        pinned=False,
        type=0,
        flags=int(body.get("flags") or 0) & SETTABLE_FLAGS,
    )
    for key in ("message_reference", "nonce", "poll"):
        if body.get(key) is not None:
            payload[key] = copy.deepcopy(body[key])
    return _with_previews(payload)


def merge_edit(
    current: MessagePayload, changes: Mapping[str, Any], *, edited_at: str
) -> MessagePayload:
    """The message after an edit request; fields absent from the request stay as they were."""
    merged = copy.deepcopy(current)
    if "content" in changes:
        merged["content"] = _content(changes["content"])
    if "embeds" in changes:
        merged["embeds"] = _embeds(changes["embeds"])
    if "components" in changes:
        merged["components"] = copy.deepcopy(list(changes["components"] or []))
    if "attachments" in changes:
        merged["attachments"] = []
    flags = current["flags"]
    if changes.get("flags") is not None:
        flags = (int(changes["flags"]) & SETTABLE_FLAGS) | (current["flags"] & STICKY_FLAGS)
    merged["flags"] = flags & ~LOADING
    merged["edited_timestamp"] = edited_at
    return _with_previews(merged)


def _with_previews(payload: MessagePayload) -> MessagePayload:
    """The message with a preview embed for each bare link in its content (a card of the
    linked site's choosing: its title, description and image), unless it was sent with
    SUPPRESS_EMBEDS; an edit makes them again from the new content."""
    embeds = [e for e in payload["embeds"] if e.get("type") != LINK_PREVIEW]
    if not payload["flags"] & SUPPRESS_EMBEDS:
        links = read(payload["content"]).previewed
        embeds += [{"type": LINK_PREVIEW, "url": url} for url in links[:MAX_PREVIEWS]]
    payload["embeds"] = embeds
    return payload


def _content(value: object) -> str:
    return value if isinstance(value, str) else ""


def _embeds(value: object) -> list[JSONObject]:
    embeds = copy.deepcopy(list(value)) if isinstance(value, list) else []
    for embed in embeds:
        if isinstance(embed, dict):
            embed.setdefault("type", "rich")
    return embeds


class MessageStore:
    def __init__(self, pulse: Pulse) -> None:
        self._pulse = pulse
        self._versions: dict[int, list[Message]] = {}
        self._order: list[int] = []
        self.deleted: set[int] = set()

    def add(
        self,
        payload: MessagePayload,
        *,
        guild_id: int | None,
        ephemeral_for: int | None = None,
        interaction_id: int | None = None,
        pings: Pings | None = None,
    ) -> Message:
        message = Message(
            copy.deepcopy(payload), guild_id, ephemeral_for, interaction_id, 0, pings or Pings()
        )
        self._versions[message.id] = [message]
        self._order.append(message.id)
        self._pulse.notify()
        return message

    def replace(
        self, message_id: int, payload: MessagePayload, pings: Pings | None = None
    ) -> Message:
        """A new version; without `pings` it notifies whom the previous one did."""
        versions = self._versions[message_id]
        last = versions[-1]
        message = Message(
            copy.deepcopy(payload),
            last.guild_id,
            last.ephemeral_for,
            last.interaction_id,
            len(versions),
            last.pings if pings is None else pings,
        )
        versions.append(message)
        self._pulse.notify()
        return message

    def delete(self, message_id: int) -> None:
        self.deleted.add(message_id)
        self._pulse.notify()

    def get(self, message_id: int) -> Message | None:
        if message_id in self.deleted:
            return None
        versions = self._versions.get(message_id)
        return versions[-1] if versions else None

    def require(self, message_id: int) -> Message:
        message = self.get(message_id)
        if message is None:
            raise UnknownEntity(f"no message {message_id} (never posted or deleted)")
        return message

    def history(self, message_id: int) -> list[Message]:
        return list(self._versions.get(message_id, []))

    def every_version(self) -> list[Message]:
        """Every version of every message ever stored, deleted and ephemeral ones included."""
        return [version for message_id in self._order for version in self._versions[message_id]]

    def current(self) -> list[Message]:
        """Every live message, oldest first."""
        return [m for m in (self.get(i) for i in self._order) if m is not None]

    def in_channel(self, channel_id: int) -> list[Message]:
        return [m for m in self.current() if m.channel_id == channel_id and not m.is_ephemeral]

    def ephemeral_for(self, user_id: int) -> list[Message]:
        return [m for m in self.current() if m.ephemeral_for == user_id]
