"""Discord's HTTP interactions mode: askbridge as the application's Interactions Endpoint URL.

With `DISCORD_PUBLIC_KEY` set, Discord POSTs every interaction to `PATH`, signed; a request
unsigned, badly signed or older than `MAX_AGE_S` gets 401. A click or a submission becomes the
same `discord.Interaction` the gateway gives and goes to the same `handlers`; only the first
response differs (`Inline`). Nothing is kept between requests, so any replica can take any.
"""

from __future__ import annotations

import asyncio
import binascii
import contextvars
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

import discord
from aiohttp import web
from discord import ui
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from askbridge.adapters.discord.handlers import MAX_CONTENT, NO_PINGS, First
from askbridge.adapters.discord.ids import BadCustomId, CustomId, unpack
from askbridge.adapters.discord.surface import SNOWFLAKE
from askbridge.adapters.discord.text import shorten
from askbridge.core.api.errors import error_response, parse_json
from askbridge.core.api.reading import read_body
from askbridge.core.intents import Action
from askbridge.core.view import FAILED, FOREIGN_CLICK

log = logging.getLogger("askbridge.discord")

PATH = "/discord/interactions"
MAX_AGE_S = 300.0
"""How far a request's signed timestamp may be from now, either way, before it is a replay."""
SIGNATURE = "X-Signature-Ed25519"
TIMESTAMP = "X-Signature-Timestamp"

PING, COMPONENT, MODAL_SUBMIT = 1, 3, 5
PONG, MESSAGE, DEFERRED_UPDATE, MODAL = 1, 4, 6, 9
NOTE_FLAGS = discord.MessageFlags(ephemeral=True, suppress_embeds=True).value
"""A private note: shown to one person, and with no preview of a link an agent or a person
wrote in it."""
KEY_HELP = (
    "copy it from the Developer Portal: your application → General Information → Public Key "
    "(64 hexadecimal characters)"
)


class Handler(Protocol):
    """What acts on an interaction once it is known to be askbridge's (the runtime's client)."""

    @property
    def state(self) -> Any:
        """discord.py's connection state, which an Interaction is read with."""

    async def on_click(
        self,
        interaction: discord.Interaction[Any],
        first: First,
        custom_id: CustomId,
        values: tuple[str, ...],
    ) -> None: ...

    async def on_form(
        self, interaction: discord.Interaction[Any], first: First, custom_id: CustomId
    ) -> None: ...


def verify_key(public_key: str) -> VerifyKey:
    """The application's public key, or ValueError saying how to find it."""
    try:
        raw = bytes.fromhex(public_key.strip())
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise ValueError(f"DISCORD_PUBLIC_KEY is not an Ed25519 public key; {KEY_HELP}")
    return VerifyKey(raw)


class Signatures:
    """Checks that a request comes from Discord, and recently."""

    def __init__(self, key: VerifyKey, now: Callable[[], float] = time.time) -> None:
        self._key = key
        self._now = now

    def refusal(self, timestamp: str | None, signature: str | None, body: bytes) -> str | None:
        """Why a request is refused, or None when Discord signed it within `MAX_AGE_S`: an
        Ed25519 signature, by the application's key, of the timestamp followed by the body."""
        if not timestamp or not signature:
            return f"unsigned request: {SIGNATURE} and {TIMESTAMP} are required"
        try:
            self._key.verify(timestamp.encode() + body, binascii.unhexlify(signature))
        except (BadSignatureError, binascii.Error, ValueError):
            return "bad signature"
        try:
            age = self._now() - float(timestamp)
        except ValueError:
            return f"{TIMESTAMP} is not a time"
        if age > MAX_AGE_S:
            return f"stale request: signed {age:.0f} s ago (at most {MAX_AGE_S:.0f} s)"
        if age < -MAX_AGE_S:
            return f"request signed {-age:.0f} s in the future; check this machine's clock"
        return None


def unreadable(payload: dict[str, Any]) -> str | None:
    """What discord.py would misread in a click or a submission, or None: it reads any
    `guild_id` it can turn into a number (or none, when it is empty) as the server's, and then
    looks for who clicked as the server's `member`, or else as a `user`, finding no one when
    that is missing."""
    guild_id = payload.get("guild_id")
    if "guild_id" in payload and not (isinstance(guild_id, str) and SNOWFLAKE.fullmatch(guild_id)):
        return "its guild_id is not a Discord id (a string of digits)"
    who = "member" if "guild_id" in payload else "user"
    if not isinstance(payload.get(who), dict):
        where = "in a server" if who == "member" else "outside a server"
        return f"a click {where} names who made it as its {who} (an object)"
    return None


class Inline:
    """The first response as the reply to Discord's request (see `handlers.First`)."""

    def __init__(self) -> None:
        self.body: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.sent = asyncio.Event()
        """Set once the reply carrying `body` has been written (or could not be)."""

    async def delivered(self) -> None:
        await self.sent.wait()

    async def defer(self) -> None:
        self._answer({"type": DEFERRED_UPDATE})

    async def modal(self, modal: ui.Modal) -> None:
        self._answer({"type": MODAL, "data": modal.to_dict()})

    async def note(self, text: str) -> None:
        data = {
            "content": shorten(text, MAX_CONTENT),
            "flags": NOTE_FLAGS,
            "allowed_mentions": NO_PINGS.to_dict(),
        }
        self._answer({"type": MESSAGE, "data": data})

    async def ask(self, text: str, buttons: ui.View) -> None:
        data = {
            "content": shorten(text, MAX_CONTENT),
            "flags": NOTE_FLAGS,
            "components": buttons.to_components(),
            "allowed_mentions": NO_PINGS.to_dict(),
        }
        self._answer({"type": MESSAGE, "data": data})

    def _answer(self, body: dict[str, Any]) -> None:
        if self.body.done():
            raise RuntimeError(f"the interaction was already answered; not sending {body}")
        self.body.set_result(body)


class Endpoint:
    """`POST /discord/interactions`."""

    def __init__(
        self, handler: Handler, signatures: Signatures, context: contextvars.Context
    ) -> None:
        self._handler = handler
        self._signatures = signatures
        self._context = context
        """What discord.py's calls run in (see `pointing`); each interaction gets a copy."""
        self._tasks: set[asyncio.Task[None]] = set()

    async def handle(self, request: web.Request) -> web.Response:
        body = await read_body(request)
        headers = request.headers
        why = self._signatures.refusal(headers.get(TIMESTAMP), headers.get(SIGNATURE), body)
        # Discord itself sends badly signed requests now and then, and drops an endpoint that
        # accepts them: refused before anything else is read.
        if why is not None:
            log.warning("refused a request to %s: %s", PATH, why)
            return error_response(401, f"{why}; this endpoint takes only Discord's interactions")
        try:
            payload = parse_json(body)
        except ValueError as error:
            return error_response(400, f"the body is not JSON: {error}")
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == PING:
            return web.json_response({"type": PONG})
        if kind not in (COMPONENT, MODAL_SUBMIT):
            return error_response(
                400, f"askbridge takes clicks (3) and form submissions (5), not type {kind!r}"
            )
        problem = unreadable(payload)
        if problem is not None:
            log.warning("could not read an interaction: %s", problem)
            return error_response(400, f"not an interaction Discord would send: {problem}")
        try:
            interaction: discord.Interaction[Any] = discord.Interaction(
                data=payload, state=self._handler.state
            )
        except Exception as error:
            # Signed by Discord, so only a change in Discord's format lands here.
            log.warning("could not read an interaction: %r", error)
            return error_response(400, f"not an interaction Discord would send: {error!r}")
        first = Inline()
        task = asyncio.create_task(
            self._route(interaction, first),
            name=f"askbridge-discord-interaction-{interaction.id}",
            context=self._context.copy(),
        )
        # The click goes on after the reply (a note follows a deferral), whatever becomes of
        # this request.
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        either: set[asyncio.Future[Any]] = {first.body, task}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not first.body.done():
            await first.note(FAILED)
        # Written here rather than after returning, so that the click's follow-up (a note
        # after a deferral) waits for it: Discord refuses a follow-up to an unanswered one.
        response = web.json_response(first.body.result())
        try:
            await response.prepare(request)
            await response.write_eof()
        finally:
            first.sent.set()
        return response

    async def _route(self, interaction: discord.Interaction[Any], first: Inline) -> None:
        data: dict[str, Any] = dict(interaction.data or {})
        try:
            custom_id = unpack(str(data.get("custom_id")))
            if interaction.type is discord.InteractionType.modal_submit:
                if custom_id.action not in (Action.FORM, Action.FILL):
                    raise BadCustomId(f"{custom_id.pack()!r} is not a form")
                await self._handler.on_form(interaction, first, custom_id)
            else:
                values = tuple(str(v) for v in data.get("values") or ())
                await self._handler.on_click(interaction, first, custom_id, values)
        except BadCustomId as error:
            log.warning("refused an interaction: %s", error)
            if not first.body.done():
                await first.note(FOREIGN_CLICK)
        except Exception:
            log.exception("handling interaction %s failed", interaction.id)
            if not first.body.done():
                await first.note(FAILED)

    async def drain(self) -> None:
        """Let the interactions already answered finish (their notes, their votes)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
