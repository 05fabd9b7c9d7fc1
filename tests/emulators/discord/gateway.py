"""The gateway: HELLO, heartbeats, IDENTIFY → READY + GUILD_CREATE, RESUME with replay."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from aiohttp import WSMsgType, web

from .payloads import JSONObject, guild_create_payload, member_payload, user_payload
from .registry import Guild, Registry
from .waiting import Pulse

logger = logging.getLogger(__name__)

GUILDS = 1 << 0
GUILD_MEMBERS = 1 << 1
GUILD_PRESENCES = 1 << 8
GUILD_MESSAGES = 1 << 9
DIRECT_MESSAGES = 1 << 12
MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = GUILD_MEMBERS | GUILD_PRESENCES | MESSAGE_CONTENT


class Op(IntEnum):
    DISPATCH = 0
    HEARTBEAT = 1
    IDENTIFY = 2
    PRESENCE_UPDATE = 3
    VOICE_STATE_UPDATE = 4
    RESUME = 6
    RECONNECT = 7
    REQUEST_GUILD_MEMBERS = 8
    INVALID_SESSION = 9
    HELLO = 10
    HEARTBEAT_ACK = 11


class Close(IntEnum):
    UNKNOWN_OPCODE = 4001
    DECODE_ERROR = 4002
    NOT_AUTHENTICATED = 4003
    AUTHENTICATION_FAILED = 4004
    ALREADY_AUTHENTICATED = 4005
    INVALID_INTENTS = 4013
    DISALLOWED_INTENTS = 4014


@dataclass
class GatewayStats:
    """Counters tests can assert on."""

    connections: int = 0
    identifies: int = 0
    resumes: int = 0
    failed_resumes: int = 0
    heartbeats: int = 0


@dataclass(frozen=True)
class Delivery:
    """Where a dispatched event went: live connections now, or only session backlogs."""

    live: int
    queued: int


@dataclass(frozen=True)
class _CloseRequest:
    code: int


class _Connection:
    """One websocket; frames go out in order through a single writer task."""

    def __init__(self, ws: web.WebSocketResponse, request: web.Request, number: int) -> None:
        self.ws = ws
        self.request = request
        self.number = number
        self.session: GatewaySession | None = None
        self.ready = False
        self.closed_by_server = False
        self.finished = asyncio.Event()
        self._queue: asyncio.Queue[JSONObject | _CloseRequest] = asyncio.Queue()
        self._writer = asyncio.create_task(
            self._write(), name=f"discord-emulator-gateway-writer-{number}"
        )

    def send(self, frame: JSONObject) -> None:
        self._queue.put_nowait(frame)

    def close(self, code: int) -> None:
        """Close after the frames already queued have been sent."""
        self.ready = False
        self.closed_by_server = True
        self._queue.put_nowait(_CloseRequest(code))

    def abort(self) -> None:
        """Cut the TCP connection with no close frame, like a network failure."""
        self.ready = False
        self.closed_by_server = True
        transport = self.request.transport
        if transport is not None:
            transport.abort()
        else:
            self.close(4000)

    async def stop(self) -> None:
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer

    async def _write(self) -> None:
        while True:
            item = await self._queue.get()
            try:
                if isinstance(item, _CloseRequest):
                    await self.ws.close(code=item.code)
                    return
                await self.ws.send_str(json.dumps(item))
            except (ConnectionResetError, RuntimeError) as exc:
                logger.debug("gateway connection %s could not send: %s", self.number, exc)
                return


class GatewaySession:
    """A session survives its socket: events dispatched while disconnected wait for RESUME."""

    def __init__(
        self, session_id: str, intents: int, shard: list[int] | None, log: list[str]
    ) -> None:
        self.id = session_id
        self._log = log
        self.intents = intents
        self.shard = shard
        self.seq = 0
        self.backlog: list[JSONObject] = []
        self.connection: _Connection | None = None
        self.valid = True

    def dispatch(self, event: str, data: Any) -> None:
        self.seq += 1
        frame: JSONObject = {"op": Op.DISPATCH, "t": event, "s": self.seq, "d": data}
        self.backlog.append(frame)
        self._log.append(event)
        if self.connection is not None:
            self.connection.send(frame)


class Gateway:
    def __init__(
        self,
        *,
        registry: Registry,
        bot_token: str,
        application_id: int,
        resume_url: Callable[[], str],
        pulse: Pulse,
        heartbeat_interval_ms: int,
        allowed_privileged_intents: int,
    ) -> None:
        self._registry = registry
        self._token = bot_token
        self._application_id = application_id
        self._resume_url = resume_url
        self._pulse = pulse
        self._heartbeat_ms = heartbeat_interval_ms
        self._allowed_privileged = allowed_privileged_intents
        self._connections: set[_Connection] = set()
        self._sessions: dict[str, GatewaySession] = {}
        self.events: list[str] = []
        self.stats = GatewayStats()

    # --- state for tests -----------------------------------------------------------

    def is_ready(self) -> bool:
        return any(c.ready for c in self._connections)

    def open_sessions(self) -> int:
        """Sessions connected now (past READY or RESUMED): each gets every event."""
        return sum(1 for c in self._connections if c.ready)

    def announce_guild(self, guild: Guild) -> None:
        """GUILD_CREATE for a guild the bot joined while connected."""
        for session in self.sessions():
            if session.intents & GUILDS:
                include_members = bool(session.intents & GUILD_MEMBERS)
                session.dispatch(
                    "GUILD_CREATE",
                    guild_create_payload(self._registry, guild, include_members=include_members),
                )

    def sessions(self) -> list[GatewaySession]:
        return [s for s in self._sessions.values() if s.valid]

    def dispatch(self, event: str, data: Any, *, intent: int | None = None) -> Delivery:
        """Send an event to every session that asked for it.

        Sessions whose socket is gone keep the event for a RESUME.
        """
        live = queued = 0
        for session in self.sessions():
            if intent is None or session.intents & intent:
                session.dispatch(event, copy.deepcopy(data))
                if session.connection is not None:
                    live += 1
                else:
                    queued += 1
        return Delivery(live, queued)

    async def drop(self, *, code: int | None, invalidate_session: bool) -> None:
        connections = list(self._connections)
        for conn in connections:
            if invalidate_session and conn.session is not None:
                self._invalidate(conn.session)
            if code is None:
                conn.abort()
            else:
                conn.close(code)
        self._pulse.notify()
        for conn in connections:
            await conn.finished.wait()

    async def shutdown(self) -> None:
        connections = list(self._connections)
        for conn in connections:
            conn.close(1001)
        for conn in connections:
            try:
                async with asyncio.timeout(2):
                    await conn.finished.wait()
            except TimeoutError:
                conn.abort()
        for session in list(self._sessions.values()):
            self._invalidate(session)

    # --- the websocket -------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        self.stats.connections += 1
        conn = _Connection(ws, request, self.stats.connections)
        self._connections.add(conn)
        conn.send(
            {"op": Op.HELLO, "d": {"heartbeat_interval": self._heartbeat_ms}, "s": None, "t": None}
        )
        try:
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    self._on_frame(conn, json.loads(msg.data))
                elif msg.type is WSMsgType.BINARY:
                    conn.close(Close.DECODE_ERROR)
        finally:
            self._connections.discard(conn)
            await conn.stop()
            session = conn.session
            if session is not None:
                if session.connection is conn:
                    session.connection = None
                if ws.close_code in (1000, 1001) and not conn.closed_by_server:
                    # A client closing cleanly ends its session, as on Discord.
                    self._invalidate(session)
            conn.finished.set()
            self._pulse.notify()
        return ws

    def _on_frame(self, conn: _Connection, frame: Any) -> None:
        if not isinstance(frame, dict):
            conn.close(Close.DECODE_ERROR)
            return
        op = frame.get("op")
        data = frame.get("d")
        if op == Op.HEARTBEAT:
            self.stats.heartbeats += 1
            conn.send({"op": Op.HEARTBEAT_ACK, "d": None, "s": None, "t": None})
        elif op == Op.IDENTIFY:
            self._identify(conn, data if isinstance(data, dict) else {})
        elif op == Op.RESUME:
            self._resume(conn, data if isinstance(data, dict) else {})
        elif conn.session is None:
            conn.close(Close.NOT_AUTHENTICATED)
        elif op == Op.REQUEST_GUILD_MEMBERS:
            self._request_members(conn.session, data if isinstance(data, dict) else {})
        elif op in (Op.PRESENCE_UPDATE, Op.VOICE_STATE_UPDATE):
            return
        else:
            conn.close(Close.UNKNOWN_OPCODE)

    def _identify(self, conn: _Connection, data: JSONObject) -> None:
        if conn.session is not None:
            conn.close(Close.ALREADY_AUTHENTICATED)
            return
        if data.get("token") != self._token:
            conn.close(Close.AUTHENTICATION_FAILED)
            return
        intents = data.get("intents")
        if not isinstance(intents, int):
            conn.close(Close.INVALID_INTENTS)
            return
        if intents & PRIVILEGED_INTENTS & ~self._allowed_privileged:
            conn.close(Close.DISALLOWED_INTENTS)
            return
        shard = data.get("shard")
        session = GatewaySession(
            secrets.token_hex(16),
            intents,
            shard if isinstance(shard, list) else None,
            self.events,
        )
        self._sessions[session.id] = session
        session.connection = conn
        conn.session = session
        self.stats.identifies += 1
        session.dispatch("READY", self._ready_payload(session))
        if intents & GUILDS:
            for guild in self._registry.guilds.values():
                payload = guild_create_payload(
                    self._registry, guild, include_members=bool(intents & GUILD_MEMBERS)
                )
                session.dispatch("GUILD_CREATE", payload)
        conn.ready = True
        self._pulse.notify()

    def _resume(self, conn: _Connection, data: JSONObject) -> None:
        if data.get("token") != self._token:
            conn.close(Close.AUTHENTICATION_FAILED)
            return
        session = self._sessions.get(str(data.get("session_id")))
        if session is None or not session.valid:
            self.stats.failed_resumes += 1
            conn.send({"op": Op.INVALID_SESSION, "d": False, "s": None, "t": None})
            self._pulse.notify()
            return
        previous = session.connection
        if previous is not None and previous is not conn:
            previous.abort()
        session.connection = conn
        conn.session = session
        seen = data.get("seq") if isinstance(data.get("seq"), int) else 0
        for frame in session.backlog:
            if frame["s"] > seen:
                conn.send(frame)
        self.stats.resumes += 1
        session.dispatch("RESUMED", {})
        conn.ready = True
        self._pulse.notify()

    def _request_members(self, session: GatewaySession, data: JSONObject) -> None:
        guild = self._registry.guilds.get(int(data.get("guild_id") or 0))
        if guild is None:
            return
        wanted = {int(u) for u in data.get("user_ids") or []}
        query = str(data.get("query") or "")
        members = [
            member_payload(self._registry, m)
            for m in guild.members.values()
            if (not wanted or m.user_id in wanted)
            and self._registry.user(m.user_id).username.startswith(query)
        ]
        chunk: JSONObject = {
            "guild_id": str(guild.id),
            "members": members,
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": [],
        }
        if data.get("nonce") is not None:
            chunk["nonce"] = data["nonce"]
        session.dispatch("GUILD_MEMBERS_CHUNK", chunk)

    def _ready_payload(self, session: GatewaySession) -> JSONObject:
        ready: JSONObject = {
            "v": 10,
            "user": {**user_payload(self._registry.bot), "verified": True, "mfa_enabled": False},
            "guilds": [{"id": str(g), "unavailable": True} for g in self._registry.guilds],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self._resume_url(),
            "application": {"id": str(self._application_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
            "auth": {},
        }
        if session.shard is not None:
            ready["shard"] = session.shard
        return ready

    def _invalidate(self, session: GatewaySession) -> None:
        session.valid = False
        self._sessions.pop(session.id, None)
