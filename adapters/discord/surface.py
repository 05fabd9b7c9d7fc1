"""Discord as a surface: post a request's message, edit it as the request changes, and
remind its answerers with a reply that pings exactly them."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta

import discord

from askbridge.adapters.discord.ids import BadCustomId, unpack
from askbridge.adapters.discord.lines import DISCORD_ANSWERER, reminder
from askbridge.adapters.discord.render import render
from askbridge.adapters.discord.text import shorten
from askbridge.core.errors import MessageRefused, SurfaceUnavailable, UnknownTarget
from askbridge.core.forms import FEW_FIELDS
from askbridge.core.models import MessageRef, Request, Target
from askbridge.core.retry import is_refusal
from askbridge.core.view import RequestView

log = logging.getLogger("askbridge.discord")

SNOWFLAKE = re.compile(r"[0-9]{1,20}")
TARGET_HELP = (
    "use 'discord:<channel id>' for a channel or thread, or 'discord:@<user id>' for a direct "
    "message. Ids are numbers: turn on Developer Mode (User Settings → Advanced), then "
    "right-click a channel or a user → Copy ID"
)
NO_PINGS = discord.AllowedMentions.none()
MAX_CONTENT = 2000
THREAD_ARCHIVED = 50083
MAX_PINGS = 100
"""Discord's limit on the users (and on the roles) one message may ping."""
FIND_SINCE = timedelta(minutes=5)
"""Looking for a message posted but not recorded: from how long before the request was created
(clocks differ), and through at most how many messages."""
FIND_LIMIT = 1000


@dataclass(frozen=True)
class Destination:
    """Where a target points: a channel or thread id, or the id of a user to DM."""

    id: int
    dm: bool


def destination(target: Target) -> Destination:
    """Read a Discord target, or raise UnknownTarget saying how to write one."""
    channel, thread = target.channel, target.thread
    if not channel:
        raise UnknownTarget(f"target {str(target)!r} names no channel; {TARGET_HELP}")
    dm = channel.startswith("@")
    ids = [channel.removeprefix("@"), *([thread] if thread else [])]
    if dm and thread:
        raise UnknownTarget(
            f"target {str(target)!r}: a direct message has no threads; {TARGET_HELP}"
        )
    bad = [i for i in ids if not SNOWFLAKE.fullmatch(i)]
    if bad:
        raise UnknownTarget(
            f"target {str(target)!r}: {bad[0]!r} is not a Discord id (channels and users are "
            f"named by number, not by name); {TARGET_HELP}"
        )
    # A thread is a channel of its own: `discord:<channel>/<thread>` posts in the thread.
    return Destination(id=int(ids[-1]), dm=dm)


class DiscordSurface:
    platform = "discord"
    answerer_kinds: tuple[str, ...] = ("discord", "discord-role")
    form_fields = FEW_FIELDS
    """A modal holds five inputs."""

    def __init__(self, client: discord.Client) -> None:
        self._client = client

    def check_target(self, target: Target) -> None:
        destination(target)

    async def post(self, request: Request, target: Target) -> MessageRef:
        where = destination(target)
        try:
            channel = await self._channel(where)
            view = render(RequestView.of(request))
            sent = await channel.send(view=view, allowed_mentions=NO_PINGS)
        except discord.HTTPException as error:
            raise SurfaceUnavailable(_refusal(target, where, error)) from error
        return MessageRef(
            platform=self.platform, channel=str(sent.channel.id), message_id=str(sent.id)
        )

    async def find(self, request: Request, target: Target) -> MessageRef | None:
        """The bot's waiting message of `request` in `target`, posted from a little before
        the request was created on, by the custom_ids that name it (needs Read Message
        History, which the invite asks for)."""
        where = destination(target)
        me = self._client.user
        try:
            channel = await self._channel(where)
            since = request.created_at - FIND_SINCE
            async for message in channel.history(after=since, limit=FIND_LIMIT):
                if me is not None and message.author.id != me.id:
                    continue
                if request.request_id in _request_ids(message.components):
                    return MessageRef(
                        platform=self.platform,
                        channel=str(message.channel.id),
                        message_id=str(message.id),
                    )
        except (discord.Forbidden, discord.NotFound) as error:
            # Discord will not let the bot look: posting again beats never posting.
            log.warning(
                "cannot look in %s for a message of %s that askbridge may have posted without "
                "recording it (Discord said %s %s); posting it again. With Read Message History "
                "in the channel, it can look.",
                target,
                request.request_id,
                error.status,
                error.text,
            )
        except discord.HTTPException as error:
            raise SurfaceUnavailable(
                f"could not list the messages of {str(target)!r}: Discord said {error.status} "
                f"{error.text}"
            ) from error
        return None

    async def update(self, request: Request, message: MessageRef) -> None:
        """Edit the message to the request's state; raise on failure, so the broker retries."""
        partial = self._client.get_partial_messageable(int(message.channel)).get_partial_message(
            int(message.message_id)
        )
        view = render(RequestView.of(request))
        try:
            try:
                await partial.edit(view=view, allowed_mentions=NO_PINGS)
            except discord.HTTPException as error:
                if error.code != THREAD_ARCHIVED:
                    raise
                await self._unarchive(message)
                await partial.edit(view=view, allowed_mentions=NO_PINGS)
        except discord.NotFound:
            # Deleted by someone: there is nothing left to keep up to date.
            log.info("the Discord message of %s is gone; not updating it", request.request_id)
        except discord.HTTPException as error:
            # A 429 here is one discord.py gave up waiting out: Discord is busy.
            if not is_refusal(error.status):
                raise
            raise MessageRefused(
                f"Discord refused to edit message {message.message_id} in channel "
                f"{message.channel}: {error.status} {error.text}"
            ) from error

    async def _unarchive(self, message: MessageRef) -> None:
        """Reopen the archived thread `message` is in, so that it can be edited: a thread
        archives itself once quiet, and sending reopens it but editing does not. Reopening
        one that is not locked needs only Send Messages, as a reply in it would."""
        try:
            await self._client.http.edit_channel(int(message.channel), archived=False)
        except discord.Forbidden as error:
            raise MessageRefused(
                f"cannot edit message {message.message_id}: its thread {message.channel} is "
                f"archived and locked, and only a moderator may reopen it; Discord said "
                f"{error.status} {error.text}"
            ) from error

    async def remind(self, request: Request, message: MessageRef) -> None:
        """A reply to the question that mentions its answerers, pinging them and nobody else.

        The broker calls this once per message of a request (the store records the
        reminder first), so a reminder is never repeated.
        """
        view = RequestView.of(request)
        channel = self._client.get_partial_messageable(int(message.channel))
        # If the question was deleted, the reminder still goes out, as a plain message.
        reference = discord.MessageReference(
            message_id=int(message.message_id),
            channel_id=int(message.channel),
            fail_if_not_exists=False,
        )
        try:
            await channel.send(
                shorten(reminder(view), MAX_CONTENT),
                reference=reference,
                allowed_mentions=pings(view.answerers),
                # A link the agent wrote (a label, a default answer) gets no card of the
                # linked site's choosing under askbridge's reminder.
                suppress_embeds=True,
            )
        except discord.HTTPException as error:
            failure = MessageRefused if is_refusal(error.status) else SurfaceUnavailable
            raise failure(
                f"could not remind the answerers of {request.request_id} in channel "
                f"{message.channel}: Discord said {error.status} {error.text}"
            ) from error

    async def _channel(self, where: Destination) -> discord.abc.Messageable:
        if where.dm:
            return await self._client.create_dm(discord.Object(id=where.id))
        # Sending needs no cache: a thread is a channel of its own.
        return self._client.get_partial_messageable(where.id)


def _request_ids(components: Sequence[object]) -> Iterator[str]:
    """The request ids that the custom_ids of these components (and all they hold) name."""
    for component in components:
        custom_id = getattr(component, "custom_id", None)
        if isinstance(custom_id, str) and (request_id := _named(custom_id)) is not None:
            yield request_id
        yield from _request_ids(getattr(component, "children", None) or ())
        accessory = getattr(component, "accessory", None)
        if accessory is not None:
            yield from _request_ids([accessory])


def _named(custom_id: str) -> str | None:
    try:
        return unpack(custom_id).request_id
    except BadCustomId:
        return None


def pings(answerers: Sequence[str]) -> discord.AllowedMentions:
    """Exactly the Discord users and roles among the answerers may be pinged; nobody else."""
    found = [m for a in answerers if (m := DISCORD_ANSWERER.fullmatch(a)) is not None]
    users = [discord.Object(id=int(m["id"])) for m in found if not m["role"]]
    roles = [discord.Object(id=int(m["id"])) for m in found if m["role"]]
    return discord.AllowedMentions(
        everyone=False,
        users=users[:MAX_PINGS] or False,
        roles=roles[:MAX_PINGS] or False,
        replied_user=False,
    )


def _refusal(target: Target, where: Destination, error: discord.HTTPException) -> str:
    """Why Discord refused to post, and what to do about it."""
    said = f"Discord said {error.status} {error.text or error}".rstrip()
    if where.dm and error.code == 50007:
        return (
            f"user {where.id} does not accept direct messages from the bot (they share no "
            f"server with it, or have DMs from server members turned off); {said}"
        )
    if error.code in (10003, 50001, 50013) or error.status in (403, 404):
        return (
            f"the bot cannot post in {str(target)!r}: check the id, and that the bot is in the "
            "server and may View Channel, Send Messages (and Send Messages in Threads) there; "
            f"{said}"
        )
    return f"posting to {str(target)!r} failed; {said}"
