"""Signed webhook callbacks: the status object of an ended request, POSTed to its callback_url.

The store writes each delivery (its outbox) in the transaction that ends the request; one loop
per process claims the due ones with a lease, POSTs them signed by the Standard Webhooks
specification, and records every attempt in the audit trail. Where a webhook may go is
`core/callback_guard.py`'s to say. See docs/how-to/webhooks.md and docs/explanation/durability.md.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import random
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from ipaddress import ip_address
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver
from standardwebhooks import Webhook

from askbridge.core.callback_guard import AddressRefused, AllowList, GuardedResolver, literal
from askbridge.core.clock import Clock
from askbridge.core.models import Request
from askbridge.core.retry import Backoff, doubling, is_refusal
from askbridge.core.store.base import Attempt, Delivery, Outbox
from askbridge.core.version import VERSION

log = logging.getLogger("askbridge.webhooks")

ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"
SECRET_BYTES = (24, 64)
"""How long the key in a secret may be (Standard Webhooks: 24 to 64 random bytes)."""
LOOP_RETRY_S = 5.0
RESOLVE_S = 5.0
"""How long an ask waits to learn where its callback_url's host resolves to."""


def secret_problem(secret: str) -> str | None:
    """What is wrong with ASKBRIDGE_WEBHOOK_SECRET as a Standard Webhooks secret, or None. The
    value itself is never in the answer."""
    make = 'make one with: echo "whsec_$(openssl rand -base64 32)"'
    if not secret.startswith(SECRET_PREFIX):
        return (
            f"ASKBRIDGE_WEBHOOK_SECRET must be a Standard Webhooks secret, {SECRET_PREFIX} and "
            f"the base64 of 24 to 64 random bytes ({make}), and receivers verify with the same "
            "value; a secret of another form is not used as it is, so that every receiver's "
            "library reads it as askbridge does"
        )
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        return f"ASKBRIDGE_WEBHOOK_SECRET: what follows {SECRET_PREFIX} is not base64 ({make})"
    low, high = SECRET_BYTES
    if not low <= len(key) <= high:
        return (
            f"ASKBRIDGE_WEBHOOK_SECRET: its key is {len(key)} bytes, not {low} to {high} ({make})"
        )
    return None


@dataclass(frozen=True)
class WebhookOptions:
    """How webhooks are sent: `secret` (`whsec_…`, see `secret_problem`) signs them; `body`
    is the JSON a request is sent as (its status object); `allow` the non-global hosts and
    networks they may go to (core/callback_guard.py); `resolver` where host names are looked
    up (None: aiohttp's default); the rest are the retry schedule, in seconds on the broker's
    clock."""

    secret: str
    body: Callable[[Request], bytes]
    allow: AllowList = field(default_factory=AllowList)
    resolver: AbstractResolver | None = None
    first_delay_s: float = 10.0
    longest_delay_s: float = 3600.0
    give_up_after_s: float = 24 * 3600.0
    lease_s: float = 120.0
    timeout_s: float = 30.0
    sweep_s: float = 60.0
    concurrency: int = 16


def retry_schedule(options: WebhookOptions, rng: random.Random | None = None) -> Backoff:
    """Full jitter: after `attempts` attempts, anywhere from 0 to `first_delay_s` doubled
    `attempts - 1` times, at most `longest_delay_s`. Asked for the stored time of the next
    attempt (`next_at`), never slept on."""
    return Backoff(
        doubling(options.first_delay_s, options.longest_delay_s, jitter=(0.0, 1.0), rng=rng)
    )


def shown_url(url: str) -> str:
    """The URL without its credentials, query or fragment, for logs."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}"


class Webhooks:
    def __init__(
        self,
        store: Outbox,
        clock: Clock,
        options: WebhookOptions,
        *,
        changed: Callable[[str], None],
        rng: random.Random | None = None,
    ) -> None:
        """`changed(request_id)` is told after each attempt is recorded."""
        self._store = store
        self._clock = clock
        self._options = options
        self._signer = Webhook(options.secret)
        self._changed = changed
        self._schedule = retry_schedule(options, rng)
        # Who holds a claim in the store: this process, until it stops.
        self._owner = f"{uuid.uuid4().hex[:12]}"
        self._poked = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self._attempts: set[asyncio.Task[None]] = set()
        self._session: aiohttp.ClientSession | None = None
        self._resolver = options.resolver

    def start(self) -> None:
        self._loop = asyncio.create_task(self._deliver_forever(), name="askbridge-webhooks")

    @property
    def running(self) -> bool:
        return self._loop is not None and not self._loop.done()

    async def refusal(self, url: str) -> str | None:
        """Why webhooks may not go to `url`, or None. A host that cannot be resolved now is
        let through: delivery checks every address it connects to anyway."""
        host = urlsplit(url).hostname or ""
        address = literal(host)
        if address is not None:
            return self._options.allow.problem(host, [address])
        if self._options.allow.allows_host(host):
            return None
        try:
            async with asyncio.timeout(RESOLVE_S):
                found = await self.resolver.resolve(host, 0, socket.AF_UNSPEC)
        except (OSError, TimeoutError, ValueError):
            return None
        return self._options.allow.problem(host, [ip_address(entry["host"]) for entry in found])

    def poke(self) -> None:
        """A delivery may have become due (a request ended, here or on another replica)."""
        self._poked.set()

    async def stop(self, grace_s: float) -> None:
        """Stop claiming; give attempts in flight `grace_s` to finish and be recorded, then
        cancel the rest (their claims run out and another process, or the next start,
        attempts them again)."""
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
        if self._attempts:
            await asyncio.wait(list(self._attempts), timeout=grace_s)
        attempts = list(self._attempts)
        for task in attempts:
            task.cancel()
        await asyncio.gather(*attempts, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._resolver is not None and self._options.resolver is None:
            # The connector leaves a resolver it was given open; this one is ours.
            await self._resolver.close()
            self._resolver = None

    async def _deliver_forever(self) -> None:
        while True:
            self._poked.clear()
            try:
                wake = await self._claim_due()
            except Exception:
                log.exception("looking for webhooks to send failed")
                wake = self._clock.now() + timedelta(seconds=LOOP_RETRY_S)
            sleeper = asyncio.ensure_future(self._clock.sleep_until(wake))
            poked = asyncio.ensure_future(self._poked.wait())
            try:
                await asyncio.wait((sleeper, poked), return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                poked.cancel()

    async def _claim_due(self) -> datetime:
        """Start an attempt for each due delivery there is room for; when to look again."""
        now = self._clock.now()
        room = self._options.concurrency - len(self._attempts)
        if room > 0:
            lease = now + timedelta(seconds=self._options.lease_s)
            for delivery in await self._store.claim_deliveries(self._owner, now, lease, room):
                task = asyncio.create_task(
                    self._attempt(delivery), name=f"askbridge-webhook-{delivery.request_id}"
                )
                self._attempts.add(task)
                task.add_done_callback(self._attempts.discard)
        sweep = now + timedelta(seconds=self._options.sweep_s)
        due = await self._store.next_delivery()
        if due is None:
            return sweep
        if due <= now:
            # More are due than there was room for: finished attempts poke the loop.
            return now + timedelta(seconds=LOOP_RETRY_S)
        return min(due, sweep)

    async def _attempt(self, delivery: Delivery) -> None:
        try:
            attempt = await self._send(delivery)
            held = await self._store.record_attempt(delivery, self._owner, attempt)
        except Exception:
            log.exception(
                "a webhook attempt for %s failed unexpectedly; its claim runs out and it is "
                "tried again",
                delivery.request_id,
                extra={"request_id": delivery.request_id},
            )
            return
        if not held:
            log.warning(
                "the webhook claim on %s ran out during an attempt; another process may have "
                "sent it too (receivers drop repeats by %s)",
                delivery.request_id,
                ID_HEADER,
                extra={"request_id": delivery.request_id},
            )
        self._log(delivery, attempt)
        self._changed(delivery.request_id)
        self.poke()

    async def _send(self, delivery: Delivery) -> Attempt:
        request = await self._store.get(delivery.request_id)
        if request is None:
            return Attempt(self._clock.now(), "failed", error="the request no longer exists")
        host = urlsplit(delivery.url).hostname or ""
        address = literal(host)
        # aiohttp connects to an address in the URL without asking the resolver.
        if address is not None and (refused := self._options.allow.problem(host, [address])):
            return self._refused(refused)
        body = self._options.body(request)
        now = self._clock.now()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"askbridge/{VERSION}",
            ID_HEADER: delivery.delivery_id,
            TIMESTAMP_HEADER: str(int(now.timestamp())),
            SIGNATURE_HEADER: self._signer.sign(delivery.delivery_id, now, body),
        }
        status: int | None = None
        error: str | None = None
        try:
            async with self.session.post(
                delivery.url,
                data=body,
                headers=headers,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=self._options.timeout_s),
            ) as response:
                status = response.status
        except aiohttp.ClientConnectorError as failure:
            if isinstance(failure.os_error, AddressRefused):
                return self._refused(str(failure.os_error))
            error = _described(failure, delivery.url)
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as failure:
            error = _described(failure, delivery.url)
        return self._next(delivery, status, error)

    def _refused(self, problem: str) -> Attempt:
        """Final: the address guard refused where the webhook would go (nothing was sent)."""
        return Attempt(self._clock.now(), "failed", error=f"refused: {problem}"[:300])

    def _next(self, delivery: Delivery, status: int | None, error: str | None) -> Attempt:
        now = self._clock.now()
        if status is not None and 200 <= status < 300:
            return Attempt(now, "delivered", status=status)
        if status is not None and (status < 400 or is_refusal(status)):
            return Attempt(now, "failed", status=status)
        last = delivery.created_at + timedelta(seconds=self._options.give_up_after_s)
        if now >= last:
            return Attempt(now, "gave_up", status=status, error=error)
        delay = self._schedule.after(delivery.attempts + 1)
        later = min(now + timedelta(seconds=delay), last)
        return Attempt(now, "retrying", status=status, error=error, next_at=later)

    def _log(self, delivery: Delivery, attempt: Attempt) -> None:
        what = attempt.status if attempt.status is not None else attempt.error
        where = shown_url(delivery.url)
        extra = {"request_id": delivery.request_id}
        if attempt.result == "delivered":
            log.info("webhook for %s delivered to %s", delivery.request_id, where, extra=extra)
        elif attempt.result == "retrying":
            log.warning(
                "webhook for %s to %s failed (%s); trying again at %s",
                delivery.request_id,
                where,
                what,
                attempt.next_at,
                extra=extra,
            )
        else:
            log.warning(
                "webhook for %s to %s %s (%s); not trying again",
                delivery.request_id,
                where,
                "was refused" if attempt.result == "failed" else "failed for a day",
                what,
                extra=extra,
            )

    @property
    def resolver(self) -> AbstractResolver:
        if self._resolver is None:
            self._resolver = aiohttp.DefaultResolver()
        return self._resolver

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            guarded = GuardedResolver(self.resolver, self._options.allow)
            connector = aiohttp.TCPConnector(resolver=guarded)
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session


def _described(error: BaseException, url: str) -> str:
    """An attempt's failure, for the audit trail: never the URL's credentials or query."""
    text = str(error).replace(url, shown_url(url)) or "no details"
    return f"{type(error).__name__}: {text}"[:300]
