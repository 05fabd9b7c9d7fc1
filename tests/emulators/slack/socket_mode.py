"""Socket Mode: the WebSocket that `apps.connections.open` hands out.

Slack greets with `hello`, pushes envelopes, waits (3 s) for `{"envelope_id": ...}` acks, and
sometimes asks the client to reconnect with a `disconnect` frame. Ping frames are answered by
aiohttp's autoping. An app may hold up to 10 connections at once (one per replica, say); each
envelope goes to exactly one of them, in turn, and an eleventh connection is told
`too_many_websockets` and closed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from .types import DisconnectFrame, HelloFrame, JSONDict, SocketEnvelope
from .workspace import Workspace

logger = logging.getLogger(__name__)

MAX_CONNECTIONS = 10


@dataclass
class SocketConnection:
    serial: int
    ticket: str
    ws: web.WebSocketResponse
    envelopes: int = 0
    """Envelopes pushed to this connection."""


@dataclass(frozen=True)
class SocketOutcome:
    envelope_id: str
    delivered: bool
    acked: bool
    ack: JSONDict | None
    error: str | None = None


@dataclass
class SocketModeServer:
    workspace: Workspace
    ack_timeout: float = 3.0
    received: list[JSONDict] = field(default_factory=list)
    """Every JSON frame the clients sent (acks included), in arrival order."""
    late_acks: list[JSONDict] = field(default_factory=list)
    """Acks for no pending envelope: too late (after `ack_timeout`) or unknown."""
    _tickets: set[str] = field(default_factory=set)
    _connections: list[SocketConnection] = field(default_factory=list)
    _serial: int = 0
    _turn: int = 0
    refused: int = 0
    """Connections turned away because the app already held MAX_CONNECTIONS."""
    _pending: dict[str, asyncio.Future[JSONDict]] = field(default_factory=dict)

    def issue_ticket(self) -> str:
        ticket = secrets.token_hex(8)
        self._tickets.add(ticket)
        return ticket

    @property
    def connected(self) -> bool:
        return bool(self._connections)

    @property
    def connections_total(self) -> int:
        """How many connections were ever accepted; reconnects make it grow."""
        return self._serial

    def newest_serial(self) -> int | None:
        return self._connections[-1].serial if self._connections else None

    @property
    def connections(self) -> list[SocketConnection]:
        """The open connections, oldest first."""
        return list(self._connections)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        ticket = request.match_info["ticket"]
        if ticket not in self._tickets:
            return web.json_response({"ok": False, "error": "invalid_ticket"}, status=401)
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        if len(self._connections) >= MAX_CONNECTIONS:
            self.refused += 1
            await ws.send_json(self._disconnect("too_many_websockets"))
            await ws.close(code=WSCloseCode.POLICY_VIOLATION, message=b"too many websockets")
            return ws
        self._serial += 1
        connection = SocketConnection(self._serial, ticket, ws)
        self._connections.append(connection)
        await ws.send_json(self._hello())
        await self.workspace.notify()
        try:
            async for frame in ws:
                if frame.type == WSMsgType.TEXT:
                    self._on_text(frame.data)
        finally:
            self._connections.remove(connection)
            await self.workspace.notify()
        return ws

    def _hello(self) -> HelloFrame:
        return {
            "type": "hello",
            "num_connections": len(self._connections),
            "debug_info": {
                "host": "emulator-socket-mode",
                "build_number": 1,
                "approximate_connection_time": 18060,
            },
            "connection_info": {"app_id": self.workspace.identity.app_id},
        }

    def _on_text(self, data: str) -> None:
        try:
            frame = json.loads(data)
        except json.JSONDecodeError:
            logger.warning("Socket Mode client sent a non-JSON frame: %r", data[:200])
            return
        if not isinstance(frame, dict):
            return
        self.received.append(frame)
        envelope_id = frame.get("envelope_id")
        waiter = self._pending.get(envelope_id) if isinstance(envelope_id, str) else None
        if waiter is not None and not waiter.done():
            waiter.set_result(frame)
        elif envelope_id is not None:
            self.late_acks.append(frame)

    async def send(
        self,
        payload: Mapping[str, Any],
        envelope_type: str = "interactive",
        *,
        retry_attempt: int = 0,
        retry_reason: str = "",
    ) -> SocketOutcome:
        """Push one envelope to the next open connection in turn and wait for its ack."""
        envelope: SocketEnvelope = {
            "envelope_id": str(uuid.uuid4()),
            "type": envelope_type,
            "payload": dict(payload),
            "accepts_response_payload": _accepts_response_payload(payload, envelope_type),
            "retry_attempt": retry_attempt,
            "retry_reason": retry_reason,
        }
        return await self.push(envelope)

    async def push(self, envelope: Mapping[str, object]) -> SocketOutcome:
        """Push `envelope` as it is, of whatever shape, to the next open connection in turn
        and wait for the ack of its `envelope_id`."""
        envelope_id = str(envelope["envelope_id"])
        if not self._connections:
            return SocketOutcome(envelope_id, False, False, None, "no Socket Mode connection")
        waiter: asyncio.Future[JSONDict] = asyncio.get_running_loop().create_future()
        self._pending[envelope_id] = waiter
        connection = self._connections[self._turn % len(self._connections)]
        self._turn += 1
        connection.envelopes += 1
        try:
            await connection.ws.send_json(envelope)
            async with asyncio.timeout(self.ack_timeout):
                ack = await waiter
            return SocketOutcome(envelope_id, True, True, ack)
        except TimeoutError:
            return SocketOutcome(envelope_id, True, False, None, "no ack within the timeout")
        except ConnectionError as error:
            return SocketOutcome(envelope_id, False, False, None, f"send failed: {error}")
        finally:
            del self._pending[envelope_id]

    async def disconnect(self, reason: str = "refresh_requested") -> int:
        """Ask every connected client to reconnect; returns how many were asked."""
        frame = self._disconnect(reason)
        targets = list(self._connections)
        for connection in targets:
            await connection.ws.send_json(frame)
        return len(targets)

    def _disconnect(self, reason: str) -> DisconnectFrame:
        return {
            "type": "disconnect",
            "reason": reason,
            "debug_info": {"host": "emulator-socket-mode"},
        }

    async def close_all(self) -> None:
        for connection in list(self._connections):
            await connection.ws.close(code=WSCloseCode.GOING_AWAY, message=b"emulator stopping")


def _accepts_response_payload(payload: Mapping[str, Any], envelope_type: str) -> bool:
    """Slack lets the ack carry a response only where one means something."""
    if envelope_type == "slash_commands":
        return True
    return envelope_type == "interactive" and payload.get("type") in (
        "view_submission",
        "block_suggestion",
    )
