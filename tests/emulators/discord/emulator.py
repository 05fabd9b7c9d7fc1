"""DiscordEmulator: a local Discord that an unmodified discord.py client talks to."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Self

from aiohttp import web

from .endpoint import Forgery, InteractionsEndpoint
from .gateway import GUILD_MEMBERS, GUILDS, Gateway, GatewayStats
from .httpkit import ApiError
from .interactions import EndpointReply, InteractionHandle
from .messages import Messenger, Rejection
from .modals import Given
from .payloads import channel_payload, member_payload, role_payload
from .people import People
from .ratelimits import RateLimits, route_regex
from .registry import Channel, Guild, Member, Registry, Role, UnknownEntity, User
from .responses import InteractionResponder
from .rest import API_PREFIX, RecordedRequest, RestApi
from .snowflakes import SnowflakeFactory
from .store import Message, MessageStore
from .waiting import Pulse

MessagePredicate = Callable[[Message], bool]


class DiscordEmulator:
    """Discord's REST API and gateway on 127.0.0.1, plus simulated people who click.

    Point discord.py at `api_url` (``discord.http.Route.BASE``) and `gateway_url`
    (``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY``) before ``client.start(token)``.
    Read `registry` freely, but change the world through the ``add_*`` methods so that
    connected clients get the matching gateway events.
    """

    def __init__(
        self,
        *,
        bot_token: str = "test-bot-token",
        application_id: int | None = None,
        bot_username: str = "askbridge",
        host: str = "127.0.0.1",
        response_window: float = 3.0,
        token_lifetime: float = 15 * 60.0,
        heartbeat_interval_ms: int = 41_250,
        allowed_privileged_intents: int = 0,
    ) -> None:
        self.bot_token = bot_token
        self._host = host
        self._clock: Callable[[], float] = time.monotonic
        self._snowflakes = SnowflakeFactory()
        self.application_id = application_id or self._snowflakes.next()
        self.bot = User(id=self.application_id, username=bot_username, bot=True)
        app_owner = User(id=self._snowflakes.next(), username="app-owner")
        self.registry = Registry(self._snowflakes, self.bot)
        self._pulse = Pulse()
        self._store = MessageStore(self._pulse)
        self._rate_limits = RateLimits()
        self._port: int | None = None
        self._runner: web.AppRunner | None = None
        self._gateway = Gateway(
            registry=self.registry,
            bot_token=bot_token,
            application_id=self.application_id,
            resume_url=lambda: self.gateway_url + "/resume",
            pulse=self._pulse,
            heartbeat_interval_ms=heartbeat_interval_ms,
            allowed_privileged_intents=allowed_privileged_intents,
        )
        self._messenger = Messenger(
            registry=self.registry,
            store=self._store,
            snowflakes=self._snowflakes,
            dispatch=lambda event, data, intent: self._gateway.dispatch(event, data, intent=intent),
        )
        self._responder = InteractionResponder(
            registry=self.registry,
            store=self._store,
            messenger=self._messenger,
            pulse=self._pulse,
            application_id=self.application_id,
            clock=self._clock,
        )
        self._endpoint = InteractionsEndpoint(
            application_id=self.application_id,
            responder=self._responder,
            pulse=self._pulse,
            response_window=response_window,
        )
        self._rest = RestApi(
            registry=self.registry,
            store=self._store,
            messenger=self._messenger,
            responder=self._responder,
            rate_limits=self._rate_limits,
            bot_token=bot_token,
            application_id=self.application_id,
            app_owner=app_owner,
            gateway_url=lambda: self.gateway_url,
            public_key=self._endpoint.public_key,
            endpoint_urls=lambda: self._endpoint.urls,
            on_thread_update=self._announce_thread,
        )
        self._people = People(
            registry=self.registry,
            store=self._store,
            snowflakes=self._snowflakes,
            gateway=self._gateway,
            responder=self._responder,
            endpoint=self._endpoint,
            pulse=self._pulse,
            clock=self._clock,
            application_id=self.application_id,
            response_window=response_window,
            token_lifetime=token_lifetime,
        )

    # --- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        if self._runner is not None:
            raise RuntimeError("the Discord emulator is already running")
        app = web.Application()
        app.add_subapp(API_PREFIX, self._rest.app())
        app.router.add_get("/gateway", self._gateway.handle)
        app.router.add_get("/gateway/resume", self._gateway.handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1)
        await runner.setup()
        site = web.TCPSite(runner, self._host, 0)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is None:
            return
        await self._gateway.shutdown()
        await self._endpoint.close()
        await self._runner.cleanup()
        self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("start() the Discord emulator before asking for its URLs")
        return f"http://{self._host}:{self._port}"

    @property
    def api_url(self) -> str:
        """For ``discord.http.Route.BASE``."""
        return self.base_url + API_PREFIX

    @property
    def gateway_url(self) -> str:
        """For ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (as a ``yarl.URL``)."""
        return self.base_url.replace("http://", "ws://", 1) + "/gateway"

    # --- HTTP interactions mode --------------------------------------------------------

    @property
    def public_key(self) -> str:
        """The application's Public Key (hex), which signs every delivery to the endpoint."""
        return self._endpoint.public_key

    async def use_interactions_endpoint(self, url: str, *replicas: str) -> None:
        """Set the Interactions Endpoint URL, as in the Developer Portal: only after a signed
        PING got a PONG and a badly signed one got 401 (else EndpointRejected). From then on,
        interactions are POSTed there, not sent over the gateway. With `replicas`, the URLs
        stand for replicas behind a load balancer without sticky routing: each is checked,
        and each delivery goes to the next in turn."""
        await self._endpoint.register(url, *replicas)

    async def ping(self, forgery: Forgery | None = None) -> EndpointReply:
        """POST a PING to the endpoint (made to fail verification by `forgery`)."""
        return await self._endpoint.ping(forgery)

    async def redeliver(self, handle: InteractionHandle) -> EndpointReply:
        """POST an interaction that was delivered already to the endpoint again, signed anew
        (a replay by someone who saw the request); what the endpoint answered, not applied."""
        return await self._endpoint.redeliver(self._people.state(handle))

    async def post_to_endpoint(
        self, payload: object, *, headers: Mapping[str, str] | None = None
    ) -> EndpointReply:
        """POST any body to the endpoint, signed by the application's key: the JSON of
        `payload`, or `payload` itself if it is bytes (`headers` added, such as the `Host` a
        tunnel would forward). Discord sends only well-formed interactions; this is for proving
        that anything else is refused cleanly."""
        return await self._endpoint.post_signed(payload, headers)

    def forge_next_delivery(self, forgery: Forgery, times: int = 1) -> None:
        """Make the next `times` interaction deliveries fail verification this way."""
        self._endpoint.forge_next(forgery, times)

    @property
    def endpoint_replies(self) -> list[EndpointReply]:
        """Every reply of the Interactions Endpoint URL, PINGs included, oldest first."""
        return list(self._endpoint.replies)

    # --- the world -----------------------------------------------------------------

    def add_user(
        self,
        username: str,
        *,
        global_name: str | None = None,
        user_id: int | None = None,
        dms_blocked: bool = False,
    ) -> User:
        return self.registry.add_user(
            username, global_name=global_name, user_id=user_id, dms_blocked=dms_blocked
        )

    def add_guild(
        self, name: str, *, guild_id: int | None = None, owner_id: int | None = None
    ) -> Guild:
        guild = self.registry.add_guild(name, guild_id=guild_id, owner_id=owner_id)
        self._gateway.announce_guild(guild)
        return guild

    def add_role(
        self, guild_id: int, name: str, *, permissions: int = 0, role_id: int | None = None
    ) -> Role:
        role = self.registry.add_role(guild_id, name, permissions=permissions, role_id=role_id)
        data = {"guild_id": str(guild_id), "role": role_payload(role)}
        self._gateway.dispatch("GUILD_ROLE_CREATE", data, intent=GUILDS)
        return role

    def add_member(self, guild_id: int, user_id: int, role_ids: Iterable[int] = ()) -> Member:
        member = self.registry.add_member(guild_id, user_id, role_ids)
        data = {**member_payload(self.registry, member), "guild_id": str(guild_id)}
        self._gateway.dispatch("GUILD_MEMBER_ADD", data, intent=GUILD_MEMBERS)
        return member

    def set_member_roles(self, guild_id: int, user_id: int, role_ids: Iterable[int]) -> Member:
        member = self.registry.set_member_roles(guild_id, user_id, role_ids)
        data = {**member_payload(self.registry, member), "guild_id": str(guild_id)}
        self._gateway.dispatch("GUILD_MEMBER_UPDATE", data, intent=GUILD_MEMBERS)
        return member

    def add_text_channel(
        self, guild_id: int, name: str, *, channel_id: int | None = None
    ) -> Channel:
        channel = self.registry.add_text_channel(guild_id, name, channel_id=channel_id)
        payload = channel_payload(self.registry, channel)
        self._gateway.dispatch("CHANNEL_CREATE", payload, intent=GUILDS)
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
        thread = self.registry.add_thread(
            parent_id, name, thread_id=thread_id, private=private, archived=archived, locked=locked
        )
        payload = {**channel_payload(self.registry, thread), "newly_created": True}
        self._gateway.dispatch("THREAD_CREATE", payload, intent=GUILDS)
        return thread

    def archive_thread(self, thread_id: int, *, locked: bool = False) -> Channel:
        """Archive a thread as Discord does after it has been quiet for its auto-archive
        duration (or as a moderator does, `locked` so that only they may reopen it)."""
        thread = self.registry.channel(thread_id)
        if not thread.is_thread:
            raise UnknownEntity(f"channel {thread_id} is not a thread")
        thread.archived, thread.locked = True, locked
        self._announce_thread(thread)
        return thread

    def _announce_thread(self, thread: Channel) -> None:
        self._gateway.dispatch(
            "THREAD_UPDATE", channel_payload(self.registry, thread), intent=GUILDS
        )

    def dm_channel(self, user_id: int) -> Channel:
        """The bot's DM channel with a user (what ``POST /users/@me/channels`` returns)."""
        return self.registry.dm_channel(user_id)

    # --- messages ------------------------------------------------------------------

    def message(self, message_id: int) -> Message:
        """The current version of a message (ephemeral ones included)."""
        return self._store.require(message_id)

    def history(self, message_id: int) -> list[Message]:
        """Every version of a message, as posted first, then after each edit."""
        return self._store.history(message_id)

    def messages(self, channel_id: int) -> list[Message]:
        """The channel's visible (non-ephemeral) messages, oldest first."""
        return self._store.in_channel(channel_id)

    def ephemerals(self, user_id: int) -> list[Message]:
        """Ephemeral messages shown to one user, oldest first."""
        return self._store.ephemeral_for(user_id)

    def sent(self) -> list[Message]:
        """Every version of every message the bot ever sent, ephemeral and deleted ones
        included. For assertions over all of it, e.g. that the bot pinged nobody:
        `all(m.pings.nobody for m in discord_.sent())`."""
        return self._store.every_version()

    async def wait_for_message(
        self,
        channel_id: int,
        predicate: MessagePredicate | None = None,
        *,
        timeout: float = 5.0,  # noqa: ASYNC109 -- test-facing; asyncio.timeout inside
    ) -> Message:
        """The first message in the channel (already there or still to come) matching."""

        def check() -> Message | None:
            return next((m for m in self.messages(channel_id) if _ok(predicate, m)), None)

        return await self._pulse.wait_for(
            check,
            seconds=timeout,
            describe=lambda: (
                f"no matching message in channel {channel_id}; "
                f"messages: {[m.text for m in self.messages(channel_id)]}"
            ),
        )

    async def wait_for_edit(
        self,
        message_id: int,
        predicate: MessagePredicate | None = None,
        *,
        timeout: float = 5.0,  # noqa: ASYNC109 -- test-facing; asyncio.timeout inside
    ) -> Message:
        """The first edited version of a message (already made or still to come) matching."""

        def check() -> Message | None:
            edits = self._store.history(message_id)[1:]
            return next((m for m in edits if _ok(predicate, m)), None)

        return await self._pulse.wait_for(
            check,
            seconds=timeout,
            describe=lambda: (
                f"no matching edit of message {message_id}; versions: "
                f"{[m.text for m in self._store.history(message_id)]}"
            ),
        )

    async def wait_for_ephemeral(
        self,
        user_id: int,
        contains: str | None = None,
        *,
        predicate: MessagePredicate | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109 -- test-facing; asyncio.timeout inside
    ) -> Message:
        """An ephemeral message shown to the user whose visible text contains `contains`."""

        def check() -> Message | None:
            for message in self.ephemerals(user_id):
                if message.is_loading or (contains is not None and contains not in message.text):
                    continue
                if _ok(predicate, message):
                    return message
            return None

        return await self._pulse.wait_for(
            check,
            seconds=timeout,
            describe=lambda: (
                f"no ephemeral for user {user_id} containing {contains!r}; "
                f"ephemerals: {[m.text for m in self.ephemerals(user_id)]}"
            ),
        )

    # --- simulated people ------------------------------------------------------------

    async def click(
        self,
        message: Message | int,
        user_id: int,
        label: str,
        *,
        row: int | None = None,
        nth: int | None = None,
    ) -> InteractionHandle:
        """Press the button with this visible label (`row`/`nth` pick among equal labels)."""
        return self._people.click(message, user_id, label, row=row, nth=nth)

    async def choose(
        self,
        message: Message | int,
        user_id: int,
        labels: Sequence[str],
        *,
        placeholder: str | None = None,
        select_index: int | None = None,
    ) -> InteractionHandle:
        """Pick these options (by label) in a string select, found by placeholder or index."""
        return self._people.choose(
            message, user_id, labels, placeholder=placeholder, select_index=select_index
        )

    async def use_custom_id(
        self,
        message: Message | int,
        user_id: int,
        custom_id: str,
        *,
        values: Sequence[str] | None = None,
    ) -> InteractionHandle:
        """Use a component by custom_id, for tests that are about ids rather than labels."""
        return self._people.use_custom_id(message, user_id, custom_id, values=values)

    async def submit_modal(
        self,
        opened: InteractionHandle,
        values: Mapping[str, Given] | None = None,
        *,
        user_id: int | None = None,
    ) -> InteractionHandle:
        """Fill in the modal the bot answered `opened` with (`values` by input label: a text
        for a text input, a list of option labels for a select; other inputs keep what they
        were prefilled with) and submit it: a MODAL_SUBMIT interaction
        carrying the message the modal was opened from. `await opened.modal()` first: only a
        modal shown can be submitted, only by the person it was shown to, once, and only with
        what Discord's client lets through (else CannotSubmit)."""
        return self._people.submit_modal(opened, values or {}, user_id)

    @property
    def interactions(self) -> list[InteractionHandle]:
        """Every simulated use (and modal submission) so far, oldest first."""
        return list(self._people.handles)

    # --- faults ----------------------------------------------------------------------

    def rate_limit_next(
        self,
        method: str,
        route_pattern: str,
        times: int = 1,
        retry_after: float = 0.5,
        *,
        is_global: bool = False,
    ) -> None:
        """Answer the next `times` matching requests with HTTP 429.

        `route_pattern` is a path below /api/v10 where each `{...}` matches one segment,
        e.g. ``/channels/{channel_id}/messages/{message_id}``; `method` may be ``*``.
        """
        self._rate_limits.add(
            method, route_pattern, times=times, retry_after=retry_after, is_global=is_global
        )

    def fail_next(self, method: str, route_pattern: str, status: int = 503, times: int = 1) -> None:
        """Answer the next `times` matching requests with a server error (`status` 5xx):
        discord.py retries 500, 502 and 504 itself, and raises on 503.

        `route_pattern` and `method` are as for `rate_limit_next`.
        """
        self._rate_limits.add(method, route_pattern, times=times, status=status)

    def refuse_next(
        self,
        method: str,
        route_pattern: str,
        status: int = 403,
        code: int = 50001,
        message: str = "Missing Access",
        times: int = 1,
    ) -> None:
        """Answer the next `times` matching requests with Discord's refusal `status`/`code`
        (by default 403 Missing Access: the bot lost sight of the channel), which discord.py
        raises at once.

        `route_pattern` and `method` are as for `rate_limit_next`.
        """
        refusal = ApiError(status, code, message)
        self._rate_limits.refuse(method, route_pattern, refusal, times=times)

    async def drop_gateway(
        self, *, code: int | None = None, invalidate_session: bool = False
    ) -> None:
        """Cut every gateway connection (abruptly, or with a close `code`).

        The session stays resumable unless `invalidate_session`, in which case the client's
        RESUME gets op 9 and it must IDENTIFY again.
        """
        await self._gateway.drop(code=code, invalidate_session=invalidate_session)

    async def wait_gateway_ready(
        self,
        *,
        timeout: float = 5.0,  # noqa: ASYNC109 -- test-facing; asyncio.timeout inside
        identifies: int | None = None,
        resumes: int | None = None,
    ) -> None:
        """Until a connection got READY or RESUMED (and the counters reached these values)."""
        stats = self._gateway.stats

        def check() -> bool | None:
            enough = (identifies is None or stats.identifies >= identifies) and (
                resumes is None or stats.resumes >= resumes
            )
            return True if enough and self._gateway.is_ready() else None

        await self._pulse.wait_for(
            check, seconds=timeout, describe=lambda: f"gateway not ready; {stats}"
        )

    @property
    def gateway_stats(self) -> GatewayStats:
        return self._gateway.stats

    @property
    def open_gateway_sessions(self) -> int:
        """Gateway sessions connected now; as on Discord, every session opened with the bot's
        token receives every event, each click included."""
        return self._gateway.open_sessions()

    def gateway_events(self) -> list[str]:
        """Names of every dispatch sent (READY, GUILD_CREATE, INTERACTION_CREATE, ...), in order."""
        return list(self._gateway.events)

    # --- logs ------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        return list(self._rest.log)

    def requests_to(self, method: str, route_pattern: str) -> list[RecordedRequest]:
        """Logged requests whose method and path match (same pattern syntax as rate limits)."""
        regex = route_regex(route_pattern)
        return [
            r
            for r in self._rest.log
            if method.upper() in ("*", r.method) and regex.fullmatch(r.path) is not None
        ]

    @property
    def rejections(self) -> list[Rejection]:
        """Requests refused as Discord would (400 Invalid Form Body or empty message)."""
        return list(self._messenger.rejections)


def _ok(predicate: MessagePredicate | None, message: Message) -> bool:
    return predicate is None or predicate(message)
