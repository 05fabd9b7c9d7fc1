"""The composition root: store, broker, HTTP server and surfaces, started and stopped together."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractResolver

from askbridge.adapters.web import WebSurface, add_web_routes, form_key
from askbridge.bots.database_place import earlier_database_warning
from askbridge.bots.event_loop import running_loop
from askbridge.bots.settings import Settings, bound, every_interface, local_url
from askbridge.bots.surfaces import SURFACES, SurfaceEntry, Wiring, surface_words
from askbridge.core.api import add_api_routes, add_health_routes, api_middlewares
from askbridge.core.api.auth import is_loopback
from askbridge.core.api.hooks import add_hook_routes
from askbridge.core.api.reading import BODY_DEADLINE, BODY_READ_S
from askbridge.core.api.status import status_json
from askbridge.core.broker import Broker
from askbridge.core.callback_guard import AllowList
from askbridge.core.clock import Clock
from askbridge.core.crash_points import CrashPoint, no_crash
from askbridge.core.errors import AskbridgeError, InvalidQuestion, StartupError
from askbridge.core.metrics import Metrics
from askbridge.core.public_links import PublicLinks
from askbridge.core.store import Store, open_store
from askbridge.core.store.factory import shown_url
from askbridge.core.surface import PlatformRuntime
from askbridge.core.targets import parse_target
from askbridge.core.version import VERSION
from askbridge.core.webhooks import WebhookOptions, secret_problem

log = logging.getLogger("askbridge")

SHUTDOWN_GRACE_S = 5.0
PRUNE_EVERY_S = 3600.0


@dataclass
class Service:
    settings: Settings
    clock: Clock | None = None
    crash_point: CrashPoint = no_crash
    """Only the fault-injection tests pass anything else (`bots/crash_hook.py`)."""
    resolver: AbstractResolver | None = None
    """Where webhooks' host names are looked up (None: aiohttp's default); tests pass a stub."""
    surfaces: Sequence[SurfaceEntry[Any]] = SURFACES
    """The surface registry: what is started when its settings are present, and the words of
    every message and document that names surfaces."""
    store: Store = field(init=False)
    broker: Broker = field(init=False)
    metrics: Metrics = field(init=False, default_factory=Metrics)
    runtimes: list[PlatformRuntime] = field(init=False, default_factory=list)
    _runner: web.AppRunner | None = field(init=False, default=None)
    _retention: asyncio.Task[None] | None = field(init=False, default=None)
    port: int = field(init=False, default=0)

    @property
    def url(self) -> str:
        """Where this machine reaches the server."""
        return local_url(self.settings.host, self.port)

    @property
    def listening_on(self) -> str:
        """What the server binds: its URL, or every interface and where this machine reaches it."""
        host = self.settings.host
        if not every_interface(host):
            return self.url
        which = "every IPv6 interface" if ":" in host else "every interface"
        return f"{bound(host or '*', self.port)} ({which}; on this machine {self.url})"

    @property
    def web_enabled(self) -> bool:
        mode = self.settings.web_ui
        return mode == "on" or (mode == "auto" and is_loopback(self.settings.host))

    async def start(self) -> None:
        settings = self.settings
        token = settings.api_token.get_secret_value() if settings.api_token else None
        loopback = is_loopback(settings.host)
        if settings.public_url and not self.web_enabled:
            raise StartupError(
                f"ASKBRIDGE_PUBLIC_URL={settings.public_url} links to the web page, which this "
                "server does not serve: set ASKBRIDGE_WEB_UI=on, or leave ASKBRIDGE_PUBLIC_URL out"
            )
        if not loopback and not token:
            raise StartupError(
                f"ASKBRIDGE_HOST={settings.host} is not a loopback address and "
                "ASKBRIDGE_API_TOKEN is not set: anyone who can reach this machine could answer "
                "your agent's questions. Set ASKBRIDGE_API_TOKEN, or use ASKBRIDGE_HOST=127.0.0.1."
            )
        try:
            self.store = open_store(settings.database_url, sqlite_sync=settings.sqlite_sync)
        except AskbridgeError as error:
            raise StartupError(str(error)) from error
        # A hint is given only for a surface that is not running.
        hints = {entry.spec.name: entry.spec.hint for entry in self.surfaces}
        self.broker = Broker(
            self.store,
            clock=self.clock,
            default_timeout_s=settings.default_timeout_s,
            default_target=settings.default_target,
            unconfigured=hints,
            metrics=self.metrics,
            crash_point=self.crash_point,
            webhooks=self._webhooks(),
            default_escalation=settings.default_escalation(),
            takeover_s=settings.takeover_s,
        )
        wiring = Wiring(settings, self.broker, self.metrics)
        self.runtimes = [
            runtime
            for entry in self.surfaces
            if (runtime := entry.make_runtime(wiring)) is not None
        ]
        signed = tuple(path for runtime in self.runtimes for path in runtime.signed_paths)
        app = web.Application(
            middlewares=api_middlewares(
                token=token, loopback_only=loopback, signed_paths=signed, metrics=self.metrics
            ),
            client_max_size=settings.max_body_bytes,
        )
        app[BODY_DEADLINE] = min(settings.idle_timeout_s, BODY_READ_S)
        add_api_routes(
            app,
            self.broker,
            words=surface_words(self.surfaces),
            orphan_grace_s=settings.permission_grace_s,
        )
        add_health_routes(app, self.broker, self.runtimes)
        add_hook_routes(app, settings.hook_options())
        for runtime in self.runtimes:
            runtime.mount(app)

        await self.store.open()
        lines = []
        try:
            if self.web_enabled:
                self.broker.add_surface(WebSurface())
                secret = settings.web_secret.get_secret_value() if settings.web_secret else None
                key = await form_key(self.broker, secret)
                add_web_routes(app, self.broker, key=key, password=None if loopback else token)
                if settings.public_url:
                    self.broker.links = PublicLinks(settings.public_url, key)
            for runtime in self.runtimes:
                lines.append(await runtime.start())
                self.broker.add_surface(runtime.surface)
            self._check_escalation()
            await self.broker.start()
            self._runner = web.AppRunner(
                app,
                access_log=log.getChild("access"),
                # A long-poll whose client went away stops waiting at once.
                handler_cancellation=True,
                # Also closes connections that never complete a request (slowloris).
                keepalive_timeout=settings.idle_timeout_s,
                shutdown_timeout=SHUTDOWN_GRACE_S,
            )
            await self._runner.setup()
            site = web.TCPSite(self._runner, settings.host, settings.port)
            await site.start()
        except BaseException:
            await self.stop()
            raise
        self.port = self._runner.addresses[0][1]
        if settings.retention_days is not None:
            keep = timedelta(days=settings.retention_days)
            await self.broker.prune(keep)
            self._retention = asyncio.create_task(self._prune_forever(keep), name="askbridge-prune")
        self._log_ready(lines, token)

    def _check_escalation(self) -> None:
        """The default ladder's answerers and targets must work with the platforms set up,
        or every ask would be refused for it."""
        try:
            self.broker.check_ladder(self.broker.default_escalation)
        except InvalidQuestion as error:
            problems = "; ".join(str(p) for p in error.problems)
            raise StartupError(f"ASKBRIDGE_ESCALATION: {problems}") from error

    def _webhooks(self) -> WebhookOptions | None:
        """Webhooks are sent when ASKBRIDGE_WEBHOOK_SECRET is set, which signs them."""
        secret = self.settings.webhook_secret
        if secret is None or not secret.get_secret_value():
            return None
        problem = secret_problem(secret.get_secret_value())
        if problem is not None:
            raise StartupError(problem)
        return WebhookOptions(
            secret=secret.get_secret_value(),
            body=status_json,
            allow=AllowList.parse(self.settings.webhook_allow),
            resolver=self.resolver,
        )

    def _log_ready(self, lines: list[str], token: str | None) -> None:
        given = "database_url" in self.settings.model_fields_set
        log.info(
            "askbridge %s is listening on %s (store: %s%s; event loop: %s)",
            VERSION,
            self.listening_on,
            shown_url(self.settings.database_url),
            "" if given else ", the default: ASKBRIDGE_DATABASE_URL is unset",
            running_loop(),
        )
        earlier = None if given else earlier_database_warning(Path.cwd())
        if earlier is not None:
            log.warning("%s", earlier)
        auth = "Bearer token required" if token else "no token: loopback only"
        log.info(
            "agent API: %s/v1/questions, WebSocket %s/v1/agent (%s)",
            self.url,
            self.url.replace("http", "ws", 1),
            auth,
        )
        if self.web_enabled:
            log.info("web: answer page at %s/", self.url)
        for line in lines:
            log.info("%s", line)
        default = parse_target(self.settings.default_target)
        if default.platform not in self.broker.platforms:
            log.warning(
                "ASKBRIDGE_DEFAULT_TARGET=%s names a platform that is not running; requests "
                "without a target will be refused",
                self.settings.default_target,
            )

    async def _prune_forever(self, keep: timedelta) -> None:
        while True:
            await asyncio.sleep(PRUNE_EVERY_S)
            try:
                await self.broker.prune(keep)
            except Exception:
                log.exception("pruning old requests failed; trying again in an hour")

    async def stop(self) -> None:
        if self._retention is not None:
            self._retention.cancel()
            await asyncio.gather(self._retention, return_exceptions=True)
            self._retention = None
        if hasattr(self, "broker"):
            # Wakes long-polls first, so that the server does not wait out their timeouts.
            self.broker.close_waiters()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        # No more clicks, but a click already acknowledged still reaches the broker; then the
        # broker finishes the message updates in hand while the platforms' clients are open.
        for runtime in reversed(self.runtimes):
            try:
                await runtime.stop_listening()
            except Exception:
                log.exception("stopping %s's listener failed", runtime.surface.platform)
        if hasattr(self, "broker"):
            await self.broker.stop()
        for runtime in reversed(self.runtimes):
            try:
                await runtime.stop()
            except Exception:
                log.exception("stopping %s failed", runtime.surface.platform)
        if hasattr(self, "store"):
            await self.store.close()


GC_THRESHOLDS = (10_000, 20, 100)
"""The collector's generation thresholds once serving (CPython's are 700, 10, 10). A click
allocates a few thousand short-lived objects: collecting the youngest generation every 700 of
them ran several collections per click, and every tenth of those promoted survivors; full
collections (14-131 ms over a large heap) are ten times rarer."""


def settle_heap() -> None:
    """Once started: collect what start-up left behind, move everything still alive (modules,
    classes, the app) out of the collector's sight for good (`gc.freeze`), so that no later
    collection walks it again, and collect less often (`GC_THRESHOLDS`). A click's latency tail
    was mostly collections; `askbridge serve` calls this, once, after `Service.start`."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
