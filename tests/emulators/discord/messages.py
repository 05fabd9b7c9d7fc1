"""Posting, editing and deleting messages: validation, storage, gateway events."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .components import assign_ids
from .gateway import DIRECT_MESSAGES, GUILD_MESSAGES, Delivery
from .httpkit import ApiError
from .mentions import AllowedMentions, Pings, pings
from .payloads import JSONObject, MessagePayload, user_payload
from .registry import Channel, Registry
from .snowflakes import SnowflakeFactory
from .store import Message, MessageStore, merge_edit, new_message_payload
from .validation import Invalid, validate_message

Dispatch = Callable[[str, Any, int | None], Delivery]


@dataclass(frozen=True)
class Rejection:
    """A request Discord would have refused with HTTP 400."""

    where: str
    invalid: Invalid
    body: Any

    def __str__(self) -> str:
        return f"{self.where}: {self.invalid.message}: {'; '.join(self.invalid.problems)}"


class Messenger:
    def __init__(
        self,
        *,
        registry: Registry,
        store: MessageStore,
        snowflakes: SnowflakeFactory,
        dispatch: Dispatch,
    ) -> None:
        self._registry = registry
        self._store = store
        self._snowflakes = snowflakes
        self._dispatch = dispatch
        self.rejections: list[Rejection] = []

    def post(
        self,
        channel: Channel,
        body: Mapping[str, Any],
        *,
        where: str,
        ephemeral_for: int | None = None,
        interaction_id: int | None = None,
        extra: Mapping[str, Any] | None = None,
        validate: bool = True,
    ) -> Message:
        payload = new_message_payload(
            message_id=self._snowflakes.next(),
            channel_id=channel.id,
            author=user_payload(self._registry.bot),
            body=body,
            timestamp=self._snowflakes.now_iso(),
        )
        for key, value in (extra or {}).items():
            payload[key] = value  # type: ignore[literal-required]
        found = Pings()
        if validate:
            self._check(payload, where, body)
            found = self._pings(payload, body, channel.guild_id)
        assign_ids(payload["components"])
        message = self._store.add(
            payload,
            guild_id=channel.guild_id,
            ephemeral_for=ephemeral_for,
            interaction_id=interaction_id,
            pings=found,
        )
        if ephemeral_for is None:
            channel.last_message_id = message.id
            channel.message_count += 1
            self._announce("MESSAGE_CREATE", message)
        return message

    def edit(self, message: Message, changes: Mapping[str, Any], *, where: str) -> Message:
        merged = merge_edit(message.payload, changes, edited_at=self._snowflakes.now_iso())
        self._check(merged, where, changes)
        found = None
        if "content" in changes or "components" in changes:
            # Discord rebuilds the mentions of edited text from scratch, with the edit's own
            # allowed_mentions or, without one, its parse-everything default.
            found = self._pings(merged, changes, message.guild_id)
        assign_ids(merged["components"])
        edited = self._store.replace(message.id, merged, found)
        if not edited.is_ephemeral:
            self._announce("MESSAGE_UPDATE", edited)
        return edited

    def delete(self, message: Message) -> None:
        self._store.delete(message.id)
        if not message.is_ephemeral:
            data: JSONObject = {"id": str(message.id), "channel_id": str(message.channel_id)}
            if message.guild_id is not None:
                data["guild_id"] = str(message.guild_id)
            self._dispatch("MESSAGE_DELETE", data, self._intent(message))

    def _pings(
        self, payload: MessagePayload, request: Mapping[str, Any], guild_id: int | None
    ) -> Pings:
        """Who the message pings; written into its `mention_everyone`, `mentions` and
        `mention_roles` as Discord reports them (known users, roles of this guild)."""
        found = pings(
            payload["content"],
            payload["components"],
            AllowedMentions.of_request(request),
            replied_author=self._replied_author(payload),
        )
        users = self._registry.users
        roles = self._registry.guilds[guild_id].roles if guild_id in self._registry.guilds else {}
        payload["mention_everyone"] = found.mention_everyone
        payload["mentions"] = [
            dict(user_payload(users[u])) for u in sorted(found.users & users.keys())
        ]
        payload["mention_roles"] = [str(r) for r in sorted(found.roles & roles.keys())]
        return found

    def _replied_author(self, payload: MessagePayload) -> int | None:
        reference = payload.get("message_reference") or {}
        referenced = str(reference.get("message_id") or "")
        original = self._store.get(int(referenced)) if referenced.isdigit() else None
        if original is None:
            return None
        author = int(original.payload["author"]["id"])
        return None if author == self._registry.bot.id else author

    def _check(self, payload: MessagePayload, where: str, body: Any) -> None:
        checked: Mapping[str, Any] = payload
        if isinstance(body, Mapping) and "allowed_mentions" in body:
            checked = {**payload, "allowed_mentions": body["allowed_mentions"]}
        invalid = validate_message(checked)
        if invalid is not None:
            self.rejections.append(Rejection(where, invalid, body))
            raise ApiError(400, invalid.code, invalid.message, invalid.errors or None)

    def _announce(self, event: str, message: Message) -> None:
        data: JSONObject = dict(message.payload)
        if message.guild_id is not None:
            data["guild_id"] = str(message.guild_id)
        self._dispatch(event, data, self._intent(message))

    @staticmethod
    def _intent(message: Message) -> int:
        return GUILD_MESSAGES if message.guild_id is not None else DIRECT_MESSAGES
