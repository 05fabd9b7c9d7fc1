"""The Slack workspace the emulator pretends to be: people, groups, channels and what was posted.

Every change wakes the waiters of `wait_until`, so tests wait on events, never on sleeps.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, TypeVar

from .blocks import has_interactive_elements, visible_text
from .mrkdwn import Mentions, mentions
from .types import Block, JSONDict

T = TypeVar("T")


@dataclass(frozen=True)
class Identity:
    """Tokens, secrets and ids of the one app installed in the emulated workspace."""

    bot_token: str = "xoxb-test-bot"
    app_token: str = "xapp-test-app"
    signing_secret: str = "test-signing-secret"
    verification_token: str = "test-verification-token"
    team_id: str = "T0TEST"
    team_domain: str = "askbridge-test"
    team_name: str = "askbridge test"
    app_id: str = "A0TEST"
    bot_user_id: str = "U0BOT"
    bot_id: str = "B0BOT"
    bot_name: str = "askbridge"


@dataclass(frozen=True)
class User:
    id: str
    name: str
    team_id: str
    real_name: str

    def to_slack(self) -> JSONDict:
        """The `user` object of `users.info`."""
        return {
            "id": self.id,
            "team_id": self.team_id,
            "name": self.name,
            "real_name": self.real_name,
            "deleted": False,
            "is_bot": False,
            "is_app_user": False,
            "profile": {"real_name": self.real_name, "display_name": self.name},
        }


@dataclass
class Channel:
    id: str
    name: str
    is_im: bool = False
    im_user: str | None = None
    members: set[str] | None = None
    """None means everyone in the workspace is a member."""

    def has_member(self, user_id: str) -> bool:
        return self.members is None or user_id in self.members


@dataclass(frozen=True)
class Message:
    """One version of a message the app posted; `chat.update` makes a new version."""

    channel: str
    ts: str
    text: str
    blocks: list[Block]
    user: str
    bot_id: str
    app_id: str
    team_id: str
    thread_ts: str | None = None
    version: int = 0
    deleted: bool = False
    """The workspace's names when this version was posted, for `visible_text`."""

    @property
    def visible_text(self) -> str:
        return visible_text(self.text, self.blocks)

    @property
    def mentions(self) -> Mentions:
        """Whom this version notifies and what it links to (`text` and blocks together)."""
        return mentions(self.text, self.blocks)

    @property
    def has_interactive_elements(self) -> bool:
        return has_interactive_elements(self.blocks)

    def to_slack(self) -> JSONDict:
        """The message as Slack shows it to apps (API responses and interaction payloads)."""
        message: JSONDict = {
            "type": "message",
            "text": self.text,
            "user": self.user,
            "bot_id": self.bot_id,
            "app_id": self.app_id,
            "team": self.team_id,
            "ts": self.ts,
            "blocks": copy.deepcopy(self.blocks),
        }
        if self.thread_ts is not None:
            message["thread_ts"] = self.thread_ts
        if self.version > 0:
            message["edited"] = {"user": self.user, "ts": self.ts}
        return message


@dataclass(frozen=True)
class Ephemeral:
    """A note only `user` sees: from `chat.postEphemeral` or an ephemeral `response_url` reply."""

    user: str
    channel: str
    text: str
    blocks: list[Block]
    message_ts: str
    via: Literal["chat.postEphemeral", "response_url"]
    thread_ts: str | None = None

    @property
    def visible_text(self) -> str:
        return visible_text(self.text, self.blocks)

    @property
    def mentions(self) -> Mentions:
        """Whom this note mentions and what it links to; only its recipient sees it, but a
        mention in it still reads as one."""
        return mentions(self.text, self.blocks)


@dataclass
class Workspace:
    identity: Identity
    clock: Callable[[], float]
    users: dict[str, User] = field(default_factory=dict)
    usergroups: dict[str, list[str]] = field(default_factory=dict)
    usergroup_handles: dict[str, str] = field(default_factory=dict)
    channels: dict[str, Channel] = field(default_factory=dict)
    _dms: dict[str, str] = field(init=False, default_factory=dict)
    _history: dict[tuple[str, str], list[Message]] = field(init=False, default_factory=dict)
    _order: list[tuple[str, str]] = field(init=False, default_factory=list)
    _ephemeral: dict[str, list[Ephemeral]] = field(init=False, default_factory=dict)
    _last_ts_us: int = field(init=False, default=0)
    _changed: asyncio.Condition = field(init=False, default_factory=asyncio.Condition)

    # ---- time stamps -------------------------------------------------------------------------

    def next_ts(self) -> str:
        """A Slack `ts` ("1700000000.000100"), strictly increasing across the whole workspace."""
        now_us = int(self.clock() * 1_000_000)
        self._last_ts_us = max(self._last_ts_us + 1, now_us)
        seconds, micros = divmod(self._last_ts_us, 1_000_000)
        return f"{seconds}.{micros:06d}"

    # ---- directory ---------------------------------------------------------------------------

    def resolve_channel(self, ref: str) -> Channel | None:
        """A channel by id, by name (with or without `#`), or a person's DM by their user id."""
        if ref in self.channels:
            return self.channels[ref]
        if ref in self.users:
            return self.open_dm(ref)
        name = ref.removeprefix("#")
        return next((c for c in self.channels.values() if c.name == name and not c.is_im), None)

    def open_dm(self, user_id: str) -> Channel:
        """The bot's DM with `user_id`; the same `D…` id every time."""
        if user_id not in self._dms:
            channel_id = f"D0{user_id.removeprefix('U')}"
            self.channels[channel_id] = Channel(
                channel_id,
                "directmessage",
                is_im=True,
                im_user=user_id,
                members={user_id, self.identity.bot_user_id},
            )
            self._dms[user_id] = channel_id
        return self.channels[self._dms[user_id]]

    def dm_channel_id(self, user_id: str) -> str | None:
        return self._dms.get(user_id)

    # ---- messages ----------------------------------------------------------------------------

    async def post(
        self, channel: str, text: str, blocks: list[Block], thread_ts: str | None = None
    ) -> Message:
        message = Message(
            channel=channel,
            ts=self.next_ts(),
            text=text,
            blocks=copy.deepcopy(blocks),
            user=self.identity.bot_user_id,
            bot_id=self.identity.bot_id,
            app_id=self.identity.app_id,
            team_id=self.identity.team_id,
            thread_ts=thread_ts,
        )
        self._history[(channel, message.ts)] = [message]
        self._order.append((channel, message.ts))
        await self.notify()
        return message

    async def update(
        self, channel: str, ts: str, text: str | None, blocks: list[Block] | None
    ) -> Message | None:
        """Apply `chat.update`: without `blocks`, giving `text` drops the old blocks."""
        current = self.latest(channel, ts)
        if current is None or current.deleted:
            return None
        if blocks is None:
            blocks = [] if text is not None else current.blocks
        updated = replace(
            current,
            text=current.text if text is None else text,
            blocks=copy.deepcopy(blocks),
            version=current.version + 1,
        )
        self._history[(channel, ts)].append(updated)
        await self.notify()
        return updated

    async def delete(self, channel: str, ts: str) -> Message | None:
        current = self.latest(channel, ts)
        if current is None or current.deleted:
            return None
        gone = replace(current, deleted=True, version=current.version + 1)
        self._history[(channel, ts)].append(gone)
        await self.notify()
        return gone

    def latest(self, channel: str, ts: str) -> Message | None:
        versions = self._history.get((channel, ts))
        return versions[-1] if versions else None

    def versions(self, channel: str, ts: str) -> list[Message]:
        return list(self._history.get((channel, ts), []))

    def messages(
        self, channel: str | None = None, *, include_deleted: bool = False
    ) -> list[Message]:
        """Latest version of every message, oldest first, optionally in one channel."""
        found = [self._history[key][-1] for key in self._order]
        return [
            m
            for m in found
            if (channel is None or m.channel == channel) and (include_deleted or not m.deleted)
        ]

    def thread(self, channel: str, ts: str) -> list[Message]:
        return [m for m in self.messages(channel) if m.ts == ts or m.thread_ts == ts]

    # ---- ephemeral notes ---------------------------------------------------------------------

    async def add_ephemeral(self, note: Ephemeral) -> None:
        self._ephemeral.setdefault(note.user, []).append(note)
        await self.notify()

    def ephemerals(self, user_id: str) -> list[Ephemeral]:
        return list(self._ephemeral.get(user_id, []))

    def every_version(self) -> list[Message]:
        """Every version of every message, deleted ones included, message by message."""
        return [version for key in self._order for version in self._history[key]]

    def every_ephemeral(self) -> list[Ephemeral]:
        return [note for notes in self._ephemeral.values() for note in notes]

    # ---- waiting -----------------------------------------------------------------------------

    async def notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(
        self,
        check: Callable[[], T | None],
        timeout: float,  # noqa: ASYNC109 -- callers pass a budget; asyncio.timeout applies it
        describe: Callable[[], str],
    ) -> T:
        """Return the first non-None `check()`, re-checked after every change; fail loudly."""
        try:
            async with asyncio.timeout(timeout):
                async with self._changed:
                    while True:
                        found = check()
                        if found is not None:
                            return found
                        await self._changed.wait()
        except TimeoutError:
            raise AssertionError(f"Timed out after {timeout}s: {describe()}") from None


def describe_messages(messages: Sequence[Message]) -> str:
    if not messages:
        return "  (none)"
    return "\n".join(
        f"  ts={m.ts} v{m.version}: {m.visible_text[:300]!r}" + (" [deleted]" if m.deleted else "")
        for m in messages
    )
