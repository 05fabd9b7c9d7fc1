"""A local Discord (REST + gateway) for end-to-end tests of unmodified discord.py code.

async with DiscordEmulator() as discord_:
    guild = discord_.add_guild("team")
    channel = discord_.add_text_channel(guild.id, "questions")
    alice = discord_.add_user("alice")
    discord_.add_member(guild.id, alice.id)
    with discord_py_pointed_at(discord_):      # from .dpy
        ...start the bot with client.start(discord_.bot_token)...
        await discord_.wait_gateway_ready()
        question = await discord_.wait_for_message(channel.id)
        handle = await discord_.click(question, alice.id, "Yes")
        await handle.response()                # or InteractionFailed after 3 s
        await discord_.wait_for_ephemeral(alice.id, contains="Thanks")
        opened = await discord_.click(question, alice.id, "Other…")
        form = await opened.modal()            # the modal the bot answered with
        sent = await discord_.submit_modal(opened, {"Answer": "my words"})

HTTP interactions mode: give the bot `discord_.public_key`, then
`await discord_.use_interactions_endpoint(url)`; clicks are then POSTed there, signed.
"""

from .components import ComponentNotFound
from .emulator import DiscordEmulator
from .endpoint import EndpointRejected, Forgery
from .gateway import Delivery, GatewayStats
from .interactions import (
    EndpointReply,
    InteractionCallback,
    InteractionFailed,
    InteractionHandle,
)
from .markdown import LiveMarkdown, live_markdown
from .mentions import AllowedMentions, Mentioned, Pings, mentioned_in
from .messages import Rejection
from .modals import CannotSubmit, Choices, Field, Modal, Option, validate_modal
from .people import NothingSent
from .registry import Channel, Guild, Member, Role, UnknownEntity, User
from .rest import RecordedRequest
from .snowflakes import snowflake_from_ms, snowflake_ms
from .store import Message
from .validation import Invalid, validate_message
from .waiting import WaitTimeout

__all__ = [
    "AllowedMentions",
    "CannotSubmit",
    "Channel",
    "Choices",
    "ComponentNotFound",
    "Delivery",
    "DiscordEmulator",
    "EndpointRejected",
    "EndpointReply",
    "Field",
    "Forgery",
    "GatewayStats",
    "Guild",
    "InteractionCallback",
    "InteractionFailed",
    "InteractionHandle",
    "Invalid",
    "LiveMarkdown",
    "Member",
    "Mentioned",
    "Message",
    "Modal",
    "NothingSent",
    "Option",
    "Pings",
    "RecordedRequest",
    "Rejection",
    "Role",
    "UnknownEntity",
    "User",
    "WaitTimeout",
    "live_markdown",
    "mentioned_in",
    "snowflake_from_ms",
    "snowflake_ms",
    "validate_message",
    "validate_modal",
]
