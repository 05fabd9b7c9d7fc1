"""`SlackEmulator`: one aiohttp server on 127.0.0.1 that the unmodified slack_sdk / slack_bolt
clients talk to, plus the handles a test needs to drive and inspect it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Self

import aiohttp
from aiohttp import web

from .api_log import ApiCall, ApiLog, BlockGate, BlockRejection
from .delivery import Delivery, HttpDeliverer, Tamper, Via, encode_body, signed_headers
from .interaction import ClientStates
from .person import Person
from .response_url import ResponseUrlCall, ResponseUrls
from .socket_mode import SocketModeServer
from .types import JSONDict
from .views import OpenView, Views
from .web_api import WebApi
from .workspace import (
    Channel,
    Ephemeral,
    Identity,
    Message,
    User,
    Workspace,
    describe_messages,
)

logger = logging.getLogger(__name__)

MessagePredicate = Callable[[Message], bool]


class SlackEmulator:
    """A local Slack: Web API at `api_url`, Socket Mode, response_urls, and simulated people.

    Use as `async with SlackEmulator() as slack:` or call `start()` / `stop()`.
    """

    def __init__(
        self,
        *,
        bot_token: str = "xoxb-test-bot",
        app_token: str = "xapp-test-app",
        signing_secret: str = "test-signing-secret",
        team_id: str = "T0TEST",
        app_id: str = "A0TEST",
        bot_user_id: str = "U0BOT",
        bot_id: str = "B0BOT",
        team_domain: str = "askbridge-test",
        clock: Callable[[], float] = time.time,
        ack_timeout: float = 3.0,
        require_block_ids: bool = True,
        port: int = 0,
    ) -> None:
        self.identity = Identity(
            bot_token=bot_token,
            app_token=app_token,
            signing_secret=signing_secret,
            team_id=team_id,
            team_domain=team_domain,
            app_id=app_id,
            bot_user_id=bot_user_id,
            bot_id=bot_id,
        )
        self.clock = clock
        self.ack_timeout = ack_timeout
        self.interactions_url: str | None = None
        """Where HTTP-mode interactions are POSTed, e.g. "http://127.0.0.1:8765/slack/events"."""
        self.interactions_urls: list[str] = []
        """Several replicas behind a load balancer without stickiness: each HTTP delivery goes
        to the next of these in turn (instead of `interactions_url`)."""
        self._turn = 0
        self.default_via: Via | None = None
        """How clicks travel; None: HTTP if `interactions_url` is set, else Socket Mode."""
        self.deliveries: list[Delivery] = []
        self.workspace = Workspace(self.identity, clock)
        self.api_log = ApiLog()
        self.gate = BlockGate(require_block_ids=require_block_ids)
        self.socket = SocketModeServer(self.workspace, ack_timeout)
        self.response_urls = ResponseUrls(self.workspace, self.gate, clock, lambda: self.base_url)
        self.client_states = ClientStates()
        self.views = Views(self.workspace, clock)
        self._requested_port = port
        self._port: int | None = None
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        api = WebApi(self.workspace, self.api_log, self.gate, self.views, self._socket_url)
        app = web.Application()
        app.router.add_route("*", "/api/{method}", api.handle)
        app.router.add_get("/socket-mode/{ticket}", self.socket.handle)
        app.router.add_post("/response/{id}", self.response_urls.handle)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self._requested_port)
        await site.start()
        address = self._runner.addresses[0]
        self._port = int(address[1])
        self._http = aiohttp.ClientSession()
        logger.info("Slack emulator listening on %s", self.base_url)

    async def stop(self) -> None:
        await self.socket.close_all()
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    # ---- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("SlackEmulator is not started; call `await emulator.start()` first")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def api_url(self) -> str:
        """What SLACK_API_URL / `AsyncWebClient(base_url=...)` should be."""
        return f"{self.base_url}api/"

    def _socket_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/socket-mode/{self.socket.issue_ticket()}"

    # ---- directory ---------------------------------------------------------------------------

    def add_user(
        self, user_id: str, name: str, *, team_id: str | None = None, real_name: str | None = None
    ) -> User:
        user = User(user_id, name, team_id or self.identity.team_id, real_name or name.title())
        self.workspace.users[user_id] = user
        return user

    def add_usergroup(
        self, usergroup_id: str, user_ids: list[str], *, handle: str | None = None
    ) -> None:
        """A user group; `handle` is what a mention of it shows (its id without one)."""
        self.workspace.usergroups[usergroup_id] = list(user_ids)
        if handle is not None:
            self.workspace.usergroup_handles[usergroup_id] = handle

    def add_channel(
        self, channel_id: str, name: str, *, members: list[str] | None = None
    ) -> Channel:
        """A public channel; `members=None` means everyone is in it."""
        channel = Channel(channel_id, name, members=None if members is None else set(members))
        self.workspace.channels[channel_id] = channel
        return channel

    def dm_channel(self, user_id: str) -> str | None:
        """The `D…` id of the bot's DM with `user_id`, once `conversations.open` created it."""
        return self.workspace.dm_channel_id(user_id)

    def person(self, user_id: str) -> Person:
        user = self.workspace.users.get(user_id)
        if user is None:
            known = sorted(self.workspace.users)
            raise AssertionError(f"No user {user_id!r}; add_user() it first (known: {known})")
        return Person(self, user)

    # ---- Web API inspection and faults -------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int | None = 1,
        times: int = 1,
        error: str | None = None,
    ) -> None:
        """Make the next `times` calls of `method` fail: 429 (+Retry-After), 500, 503, or
        `status=200, error="..."` for a Slack-level error."""
        self.api_log.fail_next(
            method, status=status, retry_after=retry_after, times=times, error=error
        )

    def outage(self, method: str, *, status: int = 503, retry_after: int | None = 1) -> None:
        """Fail every call of `method` with `status` (429: with Retry-After) until
        `recover(method)`: Slack down for that method for as long as the test says."""
        self.api_log.outage(method, status=status, retry_after=retry_after)

    def recover(self, method: str) -> None:
        self.api_log.recover(method)

    def limit_rate(self, method: str, *, per_minute: float, burst: int) -> None:
        """Refuse calls of `method` over Slack's kind of limit (Tier 3, `chat.update`: about
        50 a minute, with short bursts) with 429 `ratelimited` and Retry-After."""
        self.api_log.limit_rate(method, per_minute, burst)

    async def wait_for_calls(
        self,
        method: str,
        count: int,
        timeout: float = 10.0,  # noqa: ASYNC109 -- the test-facing API; asyncio.timeout is inside
    ) -> list[ApiCall]:
        """Every call of `method` (failed ones too) once there are at least `count`."""

        def check() -> list[ApiCall] | None:
            calls = self.api_log.of(method)
            return calls if len(calls) >= count else None

        return await self.workspace.wait_until(
            check, timeout, lambda: f"{self.call_count(method)} of {count} {method} calls"
        )

    def calls(self, method: str) -> list[dict[str, Any]]:
        """The arguments of every call of `method`, failed ones included, oldest first."""
        return [call.params for call in self.api_log.of(method)]

    def call_count(self, method: str) -> int:
        return len(self.api_log.of(method))

    @property
    def api_calls(self) -> list[ApiCall]:
        return list(self.api_log.calls)

    @property
    def invalid_blocks_count(self) -> int:
        return len(self.gate.rejections)

    @property
    def block_rejections(self) -> list[BlockRejection]:
        return list(self.gate.rejections)

    @property
    def response_url_calls(self) -> list[ResponseUrlCall]:
        return list(self.response_urls.calls)

    # ---- what was posted ---------------------------------------------------------------------

    def messages(
        self, channel: str | None = None, *, include_deleted: bool = False
    ) -> list[Message]:
        """Newest version of each message, oldest first; `channel` may be a user id (their DM)."""
        channel_id = self._channel_id(channel) if channel is not None else None
        if channel is not None and channel_id is None:
            return []
        return self.workspace.messages(channel_id, include_deleted=include_deleted)

    def message(self, channel: str, ts: str) -> Message:
        channel_id = self._channel_id(channel)
        found = self.workspace.latest(channel_id, ts) if channel_id else None
        if found is None:
            raise AssertionError(f"No message {channel}/{ts}")
        return found

    def versions(self, channel: str, ts: str) -> list[Message]:
        channel_id = self._channel_id(channel)
        return self.workspace.versions(channel_id, ts) if channel_id else []

    def ephemerals(self, user_id: str) -> list[Ephemeral]:
        return self.workspace.ephemerals(user_id)

    def sent(self) -> list[Message | Ephemeral]:
        """Everything the app ever showed: every version of every message (deleted ones too)
        and every ephemeral note. For assertions over all of it, e.g. that nothing the app
        sent mentions anyone: `all(m.mentions.none for m in slack.sent())`."""
        return [*self.workspace.every_version(), *self.workspace.every_ephemeral()]

    def _channel_id(self, ref: str) -> str | None:
        if ref in self.workspace.users:
            return self.workspace.dm_channel_id(ref)
        channel = self.workspace.resolve_channel(ref)
        return channel.id if channel else None

    # ---- waiting -----------------------------------------------------------------------------

    async def wait_for_message(
        self,
        channel: str,
        predicate: MessagePredicate | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109 -- the test-facing API; asyncio.timeout is inside
        *,
        after_ts: str | None = None,
    ) -> Message:
        """The first message in `channel` (an id, `#name`, or a user id for their DM) matching
        `predicate`, already there or yet to come; `after_ts` skips older ones."""

        def check() -> Message | None:
            for message in self.messages(channel):
                newer = after_ts is None or float(message.ts) > float(after_ts)
                if newer and (predicate is None or predicate(message)):
                    return message
            return None

        return await self.workspace.wait_until(
            check,
            timeout,
            lambda: (
                f"no matching message in {channel}. Messages there:\n"
                + describe_messages(self.messages(channel))
            ),
        )

    async def wait_for_update(
        self,
        channel: str,
        ts: str,
        predicate: MessagePredicate | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109 -- the test-facing API; asyncio.timeout is inside
        *,
        after_version: int = 0,
    ) -> Message:
        """The message once it has been changed past `after_version` and matches `predicate`."""

        def check() -> Message | None:
            channel_id = self._channel_id(channel)
            latest = self.workspace.latest(channel_id, ts) if channel_id else None
            if latest is None or latest.version <= after_version:
                return None
            return latest if predicate is None or predicate(latest) else None

        return await self.workspace.wait_until(
            check,
            timeout,
            lambda: (
                f"message {channel}/{ts} not updated as expected. Versions:\n"
                + describe_messages(self.versions(channel, ts))
            ),
        )

    async def wait_for_ephemeral(
        self,
        user_id: str,
        contains: str | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109 -- the test-facing API; asyncio.timeout is inside
        *,
        after: int = 0,
    ) -> Ephemeral:
        """An ephemeral note for `user_id` whose visible text contains `contains`; `after`
        skips that many earlier notes."""

        def check() -> Ephemeral | None:
            for note in self.workspace.ephemerals(user_id)[after:]:
                if contains is None or contains in note.visible_text:
                    return note
            return None

        return await self.workspace.wait_until(
            check,
            timeout,
            lambda: (
                f"no ephemeral for {user_id} containing {contains!r}. Seen: "
                + repr([n.visible_text for n in self.workspace.ephemerals(user_id)])
            ),
        )

    def open_views(self, user_id: str) -> list[OpenView]:
        """Every modal opened for `user_id`, oldest first, closed ones included."""
        return self.views.of(user_id)

    async def wait_for_view(
        self,
        user_id: str,
        timeout: float = 5.0,  # noqa: ASYNC109 -- the test-facing API; asyncio.timeout is inside
        *,
        after: int = 0,
    ) -> OpenView:
        """The first modal opened for `user_id` after the first `after` ones."""

        def check() -> OpenView | None:
            opened = self.views.of(user_id)[after:]
            return opened[0] if opened else None

        return await self.workspace.wait_until(
            check,
            timeout,
            lambda: (
                f"no modal opened for {user_id} after the first {after}; views.open calls: "
                + repr([c.response.get("error", "ok") for c in self.api_log.of("views.open")])
            ),
        )

    # ---- Socket Mode -------------------------------------------------------------------------

    @property
    def socket_connected(self) -> bool:
        return self.socket.connected

    async def wait_socket_connected(
        self,
        timeout: float = 5.0,  # noqa: ASYNC109 -- the test-facing API; asyncio.timeout is inside
        *,
        after: int = 0,
    ) -> int:
        """Wait for a live Socket Mode connection numbered above `after`; returns its number.

        Numbers grow with every connection, so after `disconnect_socket()` pass the number you
        had to wait for the reconnect.
        """

        def check() -> int | None:
            serial = self.socket.newest_serial()
            return serial if serial is not None and serial > after else None

        return await self.workspace.wait_until(
            check,
            timeout,
            lambda: (
                f"no Socket Mode connection after #{after} "
                f"({self.socket.connections_total} ever, "
                f"{self.call_count('apps.connections.open')} apps.connections.open calls)"
            ),
        )

    async def disconnect_socket(self, reason: str = "refresh_requested") -> int:
        """Send a `disconnect` frame; the SDK then reconnects through apps.connections.open."""
        return await self.socket.disconnect(reason)

    # ---- delivering interactions -------------------------------------------------------------

    def action_ts(self) -> str:
        return f"{self.clock():.6f}"

    @property
    def unacked(self) -> list[Delivery]:
        """Deliveries the app did not acknowledge in time (a person would see a warning)."""
        return [delivery for delivery in self.deliveries if not delivery.acked]

    async def deliver(
        self,
        payload: Mapping[str, Any],
        *,
        via: Via | None = None,
        tamper: Tamper = "none",
        envelope_type: str = "interactive",
    ) -> Delivery:
        """Send a payload to the app the way Slack would, over Socket Mode or signed HTTP."""
        http = self.interactions_url or self.interactions_urls
        mode = via or self.default_via or ("http" if http else "socket")
        body = dict(payload)
        if mode == "socket":
            if tamper != "none":
                raise ValueError("Socket Mode payloads are not signed; tamper needs via='http'")
            delivery = await self._deliver_socket(body, envelope_type)
        else:
            encoded, content_type = encode_body(body, envelope_type)
            secret = self.identity.signing_secret
            headers = signed_headers(secret, encoded, content_type, self.clock(), tamper)
            delivery = await self._http_deliverer().post(
                self._interactions_url(), body, encoded, headers, envelope_type
            )
        self.deliveries.append(delivery)
        return delivery

    async def replay(self, delivery: Delivery) -> Delivery:
        """Deliver the same thing again: HTTP byte-for-byte with the original headers (a replay
        attack or a duplicate); Socket Mode as a new envelope with the same payload."""
        if delivery.via == "socket":
            again = await self._deliver_socket(delivery.payload, delivery.envelope_type)
        else:
            assert delivery.request_body is not None
            assert delivery.request_headers is not None
            again = await self._http_deliverer().post(
                self._interactions_url(),
                delivery.payload,
                delivery.request_body,
                delivery.request_headers,
                delivery.envelope_type,
            )
        self.deliveries.append(again)
        return again

    async def _deliver_socket(self, payload: JSONDict, envelope_type: str) -> Delivery:
        started = time.monotonic()
        outcome = await self.socket.send(payload, envelope_type)
        return Delivery(
            via="socket",
            payload=payload,
            acked=outcome.acked,
            elapsed=time.monotonic() - started,
            ack=outcome.ack,
            envelope_id=outcome.envelope_id,
            error=outcome.error,
            envelope_type=envelope_type,
        )

    def _http_deliverer(self) -> HttpDeliverer:
        if self._http is None:
            raise RuntimeError("SlackEmulator is not started")
        return HttpDeliverer(self._http, self.ack_timeout)

    def _interactions_url(self) -> str:
        if self.interactions_urls:
            self._turn += 1
            return self.interactions_urls[(self._turn - 1) % len(self.interactions_urls)]
        if not self.interactions_url:
            raise AssertionError(
                "HTTP delivery needs emulator.interactions_url "
                '(e.g. "http://127.0.0.1:8765/slack/events")'
            )
        return self.interactions_url
