"""Who and where: users, guilds with roles and members, channels, threads and DMs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .snowflakes import SnowflakeFactory

TEXT_CHANNEL = 0
DM_CHANNEL = 1
PUBLIC_THREAD = 11
PRIVATE_THREAD = 12
THREAD_TYPES = frozenset({PUBLIC_THREAD, PRIVATE_THREAD})

ADMINISTRATOR = 1 << 3
# Every permission bit Discord defines today; what the bot gets in every guild.
ALL_PERMISSIONS = (1 << 51) - 1


@dataclass
class User:
    id: int
    username: str
    global_name: str | None = None
    bot: bool = False
    dms_blocked: bool = False


@dataclass
class Role:
    id: int
    guild_id: int
    name: str
    permissions: int = 0
    position: int = 0


@dataclass
class Member:
    user_id: int
    role_ids: list[int]
    joined_at: str
    nick: str | None = None


@dataclass
class Guild:
    id: int
    name: str
    owner_id: int
    joined_at: str
    roles: dict[int, Role] = field(default_factory=dict)
    members: dict[int, Member] = field(default_factory=dict)


@dataclass
class Channel:
    id: int
    type: int
    name: str | None = None
    guild_id: int | None = None
    parent_id: int | None = None
    recipient_id: int | None = None
    owner_id: int | None = None
    position: int = 0
    archived: bool = False
    locked: bool = False
    created_at: str = ""
    last_message_id: int | None = None
    message_count: int = 0

    @property
    def is_thread(self) -> bool:
        return self.type in THREAD_TYPES

    @property
    def is_dm(self) -> bool:
        return self.type == DM_CHANNEL


class UnknownEntity(LookupError):
    """A test referred to a user, guild or channel the emulator does not know."""


class Registry:
    """The emulated Discord's directory. Plain data; no I/O."""

    def __init__(self, snowflakes: SnowflakeFactory, bot: User) -> None:
        self._snowflakes = snowflakes
        self.bot = bot
        self.users: dict[int, User] = {bot.id: bot}
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, Channel] = {}
        self._dm_by_user: dict[int, int] = {}

    # --- lookups -------------------------------------------------------------------

    def user(self, user_id: int) -> User:
        try:
            return self.users[user_id]
        except KeyError:
            known = ", ".join(f"{u.id} ({u.username})" for u in self.users.values())
            raise UnknownEntity(f"unknown user {user_id}; known users: {known}") from None

    def guild(self, guild_id: int) -> Guild:
        try:
            return self.guilds[guild_id]
        except KeyError:
            known = ", ".join(f"{g.id} ({g.name})" for g in self.guilds.values()) or "none"
            raise UnknownEntity(f"unknown guild {guild_id}; known guilds: {known}") from None

    def channel(self, channel_id: int) -> Channel:
        try:
            return self.channels[channel_id]
        except KeyError:
            raise UnknownEntity(f"unknown channel {channel_id}") from None

    def member(self, guild_id: int, user_id: int) -> Member:
        guild = self.guild(guild_id)
        try:
            return guild.members[user_id]
        except KeyError:
            raise UnknownEntity(
                f"user {user_id} is not a member of guild {guild_id} ({guild.name}); "
                f"members: {sorted(guild.members)}"
            ) from None

    def guild_channels(self, guild_id: int) -> list[Channel]:
        return [c for c in self.channels.values() if c.guild_id == guild_id and not c.is_thread]

    def guild_threads(self, guild_id: int) -> list[Channel]:
        return [c for c in self.channels.values() if c.guild_id == guild_id and c.is_thread]

    def permissions(self, guild_id: int, user_id: int) -> int:
        """Guild-level permissions (channel overwrites are not modelled)."""
        guild = self.guild(guild_id)
        if user_id in (guild.owner_id, self.bot.id):
            return ALL_PERMISSIONS
        member = self.member(guild_id, user_id)
        value = guild.roles[guild_id].permissions
        for role_id in member.role_ids:
            role = guild.roles.get(role_id)
            if role is not None:
                value |= role.permissions
        return ALL_PERMISSIONS if value & ADMINISTRATOR else value

    # --- changes -------------------------------------------------------------------

    def add_user(
        self,
        username: str,
        *,
        global_name: str | None = None,
        user_id: int | None = None,
        dms_blocked: bool = False,
    ) -> User:
        user = User(
            id=user_id or self._snowflakes.next(),
            username=username,
            global_name=global_name,
            dms_blocked=dms_blocked,
        )
        self.users[user.id] = user
        return user

    def add_guild(
        self, name: str, *, guild_id: int | None = None, owner_id: int | None = None
    ) -> Guild:
        gid = guild_id or self._snowflakes.next()
        guild = Guild(
            id=gid,
            name=name,
            owner_id=owner_id or self.bot.id,
            joined_at=self._snowflakes.now_iso(),
        )
        guild.roles[gid] = Role(id=gid, guild_id=gid, name="@everyone", permissions=0)
        guild.members[self.bot.id] = Member(self.bot.id, [], guild.joined_at)
        self.guilds[gid] = guild
        return guild

    def add_role(
        self, guild_id: int, name: str, *, permissions: int = 0, role_id: int | None = None
    ) -> Role:
        guild = self.guild(guild_id)
        role = Role(
            id=role_id or self._snowflakes.next(),
            guild_id=guild_id,
            name=name,
            permissions=permissions,
            position=len(guild.roles),
        )
        guild.roles[role.id] = role
        return role

    def add_member(self, guild_id: int, user_id: int, role_ids: Iterable[int] = ()) -> Member:
        guild = self.guild(guild_id)
        self.user(user_id)
        roles = list(role_ids)
        self._check_roles(guild, roles)
        member = Member(user_id, roles, self._snowflakes.now_iso())
        guild.members[user_id] = member
        return member

    def set_member_roles(self, guild_id: int, user_id: int, role_ids: Iterable[int]) -> Member:
        member = self.member(guild_id, user_id)
        roles = list(role_ids)
        self._check_roles(self.guild(guild_id), roles)
        member.role_ids = roles
        return member

    def add_text_channel(
        self, guild_id: int, name: str, *, channel_id: int | None = None
    ) -> Channel:
        self.guild(guild_id)
        channel = Channel(
            id=channel_id or self._snowflakes.next(),
            type=TEXT_CHANNEL,
            name=name,
            guild_id=guild_id,
            position=len(self.guild_channels(guild_id)),
            created_at=self._snowflakes.now_iso(),
        )
        self.channels[channel.id] = channel
        return channel

    def add_thread(
        self,
        parent_id: int,
        name: str,
        *,
        thread_id: int | None = None,
        private: bool = False,
        archived: bool = False,
        locked: bool = False,
    ) -> Channel:
        parent = self.channel(parent_id)
        if parent.guild_id is None or parent.is_thread:
            raise UnknownEntity(f"channel {parent_id} cannot hold threads (type {parent.type})")
        thread = Channel(
            id=thread_id or self._snowflakes.next(),
            type=PRIVATE_THREAD if private else PUBLIC_THREAD,
            name=name,
            guild_id=parent.guild_id,
            parent_id=parent_id,
            owner_id=self.bot.id,
            archived=archived,
            locked=locked,
            created_at=self._snowflakes.now_iso(),
        )
        self.channels[thread.id] = thread
        return thread

    def dm_channel(self, user_id: int) -> Channel:
        """The bot's DM channel with a user; the same id every time."""
        self.user(user_id)
        existing = self._dm_by_user.get(user_id)
        if existing is not None:
            return self.channels[existing]
        channel = Channel(
            id=self._snowflakes.next(),
            type=DM_CHANNEL,
            recipient_id=user_id,
            created_at=self._snowflakes.now_iso(),
        )
        self.channels[channel.id] = channel
        self._dm_by_user[user_id] = channel.id
        return channel

    @staticmethod
    def _check_roles(guild: Guild, role_ids: list[int]) -> None:
        unknown = [r for r in role_ids if r not in guild.roles]
        if unknown:
            raise UnknownEntity(
                f"roles {unknown} do not exist in guild {guild.id}; roles: "
                + ", ".join(f"{r.id} ({r.name})" for r in guild.roles.values())
            )
