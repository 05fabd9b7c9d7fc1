"""Discord JSON shapes the emulator sends, and builders from the registry."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from .registry import Channel, Guild, Member, Registry, Role, User

JSONObject = dict[str, Any]
Component = dict[str, Any]


class UserPayload(TypedDict):
    id: str
    username: str
    discriminator: str
    global_name: str | None
    avatar: str | None
    public_flags: int
    bot: NotRequired[bool]


class RoleColours(TypedDict):
    primary_color: int
    secondary_color: int | None
    tertiary_color: int | None


class RolePayload(TypedDict):
    id: str
    name: str
    color: int
    colors: RoleColours
    hoist: bool
    icon: str | None
    unicode_emoji: str | None
    position: int
    permissions: str
    managed: bool
    mentionable: bool
    flags: int


class MemberPayload(TypedDict):
    user: UserPayload
    roles: list[str]
    joined_at: str
    nick: str | None
    avatar: str | None
    premium_since: str | None
    deaf: bool
    mute: bool
    pending: bool
    flags: int
    communication_disabled_until: str | None
    permissions: NotRequired[str]


class ThreadMetadata(TypedDict):
    archived: bool
    auto_archive_duration: int
    archive_timestamp: str
    locked: bool
    create_timestamp: str


class ChannelPayload(TypedDict, total=False):
    id: str
    type: int
    flags: int
    name: str
    guild_id: str
    position: int
    parent_id: str | None
    topic: str | None
    nsfw: bool
    last_message_id: str | None
    rate_limit_per_user: int
    permission_overwrites: list[JSONObject]
    recipients: list[UserPayload]
    owner_id: str
    message_count: int
    member_count: int
    total_message_sent: int
    thread_metadata: ThreadMetadata


class UnavailableGuild(TypedDict):
    id: str
    unavailable: bool


class GuildCreatePayload(TypedDict):
    id: str
    name: str
    icon: str | None
    splash: str | None
    banner: str | None
    description: str | None
    owner_id: str
    afk_timeout: int
    verification_level: int
    default_message_notifications: int
    explicit_content_filter: int
    mfa_level: int
    nsfw_level: int
    premium_tier: int
    system_channel_flags: int
    preferred_locale: str
    features: list[str]
    emojis: list[JSONObject]
    stickers: list[JSONObject]
    roles: list[RolePayload]
    unavailable: bool
    large: bool
    joined_at: str
    member_count: int
    members: list[MemberPayload]
    channels: list[ChannelPayload]
    threads: list[ChannelPayload]
    voice_states: list[JSONObject]
    presences: list[JSONObject]
    stage_instances: list[JSONObject]
    guild_scheduled_events: list[JSONObject]
    soundboard_sounds: list[JSONObject]


class MessagePayload(TypedDict):
    id: str
    channel_id: str
    author: UserPayload
    content: str
    timestamp: str
    edited_timestamp: str | None
    tts: bool
    mention_everyone: bool
    mentions: list[JSONObject]
    mention_roles: list[str]
    attachments: list[JSONObject]
    embeds: list[JSONObject]
    components: list[Component]
    pinned: bool
    type: int
    flags: int
    webhook_id: NotRequired[str]
    application_id: NotRequired[str]
    interaction_metadata: NotRequired[JSONObject]
    message_reference: NotRequired[JSONObject]
    nonce: NotRequired[str | int]
    poll: NotRequired[JSONObject]


class InteractionData(TypedDict):
    custom_id: str
    component_type: int
    id: NotRequired[int]
    values: NotRequired[list[str]]


class ModalSubmitData(TypedDict):
    custom_id: str
    components: list[Component]


class InteractionPayload(TypedDict):
    id: str
    application_id: str
    type: int
    token: str
    version: int
    attachment_size_limit: int
    data: InteractionData | ModalSubmitData
    channel: ChannelPayload
    channel_id: str
    message: MessagePayload
    app_permissions: str
    locale: str
    entitlements: list[JSONObject]
    authorizing_integration_owners: dict[str, str]
    context: int
    guild_id: NotRequired[str]
    guild: NotRequired[JSONObject]
    guild_locale: NotRequired[str]
    member: NotRequired[MemberPayload]
    user: NotRequired[UserPayload]


def user_payload(user: User) -> UserPayload:
    payload = UserPayload(
        id=str(user.id),
        username=user.username,
        discriminator="0",
        global_name=user.global_name,
        avatar=None,
        public_flags=0,
    )
    if user.bot:
        payload["bot"] = True
    return payload


def role_payload(role: Role) -> RolePayload:
    return RolePayload(
        id=str(role.id),
        name=role.name,
        color=0,
        colors=RoleColours(primary_color=0, secondary_color=None, tertiary_color=None),
        hoist=False,
        icon=None,
        unicode_emoji=None,
        position=role.position,
        permissions=str(role.permissions),
        managed=False,
        mentionable=False,
        flags=0,
    )


def member_payload(registry: Registry, member: Member) -> MemberPayload:
    return MemberPayload(
        user=user_payload(registry.user(member.user_id)),
        roles=[str(r) for r in member.role_ids],
        joined_at=member.joined_at,
        nick=member.nick,
        avatar=None,
        premium_since=None,
        deaf=False,
        mute=False,
        pending=False,
        flags=0,
        communication_disabled_until=None,
    )


def channel_payload(registry: Registry, channel: Channel) -> ChannelPayload:
    last = str(channel.last_message_id) if channel.last_message_id else None
    if channel.is_dm:
        assert channel.recipient_id is not None
        return ChannelPayload(
            id=str(channel.id),
            type=channel.type,
            flags=0,
            last_message_id=last,
            recipients=[user_payload(registry.user(channel.recipient_id))],
        )
    assert channel.guild_id is not None
    payload = ChannelPayload(
        id=str(channel.id),
        type=channel.type,
        flags=0,
        name=channel.name or "",
        guild_id=str(channel.guild_id),
        parent_id=str(channel.parent_id) if channel.parent_id else None,
        last_message_id=last,
        rate_limit_per_user=0,
    )
    if channel.is_thread:
        payload["owner_id"] = str(channel.owner_id or registry.bot.id)
        payload["message_count"] = channel.message_count
        payload["total_message_sent"] = channel.message_count
        payload["member_count"] = 1
        payload["thread_metadata"] = ThreadMetadata(
            archived=channel.archived,
            auto_archive_duration=1440,
            archive_timestamp=channel.created_at,
            locked=channel.locked,
            create_timestamp=channel.created_at,
        )
    else:
        payload["position"] = channel.position
        payload["topic"] = None
        payload["nsfw"] = False
        payload["permission_overwrites"] = []
    return payload


def guild_create_payload(
    registry: Registry, guild: Guild, *, include_members: bool
) -> GuildCreatePayload:
    members = [
        member_payload(registry, m)
        for m in guild.members.values()
        if include_members or m.user_id == registry.bot.id
    ]
    return GuildCreatePayload(
        id=str(guild.id),
        name=guild.name,
        icon=None,
        splash=None,
        banner=None,
        description=None,
        owner_id=str(guild.owner_id),
        afk_timeout=300,
        verification_level=0,
        default_message_notifications=0,
        explicit_content_filter=0,
        mfa_level=0,
        nsfw_level=0,
        premium_tier=0,
        system_channel_flags=0,
        preferred_locale="en-US",
        features=[],
        emojis=[],
        stickers=[],
        roles=[role_payload(r) for r in guild.roles.values()],
        unavailable=False,
        large=False,
        joined_at=guild.joined_at,
        member_count=len(guild.members),
        members=members,
        channels=[channel_payload(registry, c) for c in registry.guild_channels(guild.id)],
        threads=[
            channel_payload(registry, t) for t in registry.guild_threads(guild.id) if not t.archived
        ],
        voice_states=[],
        presences=[],
        stage_instances=[],
        guild_scheduled_events=[],
        soundboard_sounds=[],
    )
