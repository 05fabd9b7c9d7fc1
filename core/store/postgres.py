"""A PostgreSQL store, for several askbridge replicas sharing one database.

What each call does is written once for both stores (`transactions`, `queries`); here is only
how PostgreSQL runs it and what is its own: the vote in one statement, the posting claim (a
session advisory lock), LISTEN/NOTIFY, with a watched listening connection, and the errors that
mean it cannot serve. See ARCHITECTURE.md, "The store's roles".
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from datetime import datetime
from typing import Any, ParamSpec, TypeAlias, TypeVar
from urllib.parse import urlsplit

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from tenacity import AsyncRetrying, RetryCallState

from askbridge.core import audit_log
from askbridge.core.errors import StartupError
from askbridge.core.models import MessageRef, Person, Request, Selections, Status
from askbridge.core.retry import doubling
from askbridge.core.store import codec
from askbridge.core.store import queries as q
from askbridge.core.store import transactions as tx
from askbridge.core.store.base import (
    EVERY_REQUEST,
    Attempt,
    Click,
    Delivery,
    Ending,
    Event,
    Render,
    VoteOutcome,
)
from askbridge.core.store.factory import shown_url
from askbridge.core.store.postgres_schema import MIGRATIONS
from askbridge.core.store.sql import Query, Step
from askbridge.core.store.transactions import Script

log = logging.getLogger("askbridge.store")

CHANNEL = "askbridge_changes"
"""The NOTIFY channel of the tables in `public`; tables in another schema (another
deployment on the same database) get a channel of their own, see `_channel_of`."""
# The seed that hashes request ids into their own advisory lock keys, for posting claims.
POSTING_LOCKS = 0x61736B70
CONNECT_TIMEOUT_S = 10.0
# PostgreSQL cuts identifiers, NOTIFY channels included, to 63 bytes.
MAX_CHANNEL_BYTES = 63
LISTENER_NAME = "askbridge-listener"
UNAVAILABLE = (
    OSError,  # the server refuses or drops the connection
    asyncpg.PostgresConnectionError,  # class 08: the connection failed or went away
    asyncpg.exceptions.OperatorInterventionError,  # class 57: shutting down, starting up
    asyncpg.exceptions.InsufficientResourcesError,  # class 53: disk full, too many connections
)
"""What a store call raises when the database cannot serve for now, not because of the call."""
REQUEST_FIELDS = tuple(codec.REQUEST_COLUMNS.replace(" ", "").split(","))
"""The request's columns in the order `codec.load_request` takes them, by name."""
Connection: TypeAlias = "asyncpg.Connection[Any] | PoolConnectionProxy[Any]"
T = TypeVar("T")
P = ParamSpec("P")
OnChange: TypeAlias = Callable[[str], Coroutine[Any, Any, None]]


class PostgresStore:
    """`reconnect_s` is (first delay, longest delay) between attempts to listen again;
    `check_every_s` how often an idle listening connection must answer a `SELECT 1`;
    `upgrade`: bring an older schema up to date (a server), or refuse it (a one-off command)."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        reconnect_s: tuple[float, float] = (0.5, 30.0),
        check_every_s: float = 30.0,
        upgrade: bool = True,
    ) -> None:
        self.url = url
        self.upgrade = upgrade
        self._sizes = (min_size, max_size)
        self._reconnect_s = reconnect_s
        self._check_every_s = check_every_s
        self._pool: asyncpg.Pool[Any] | None = None
        self._listener: asyncpg.Connection[Any] | None = None
        self._keeper: asyncio.Task[None] | None = None
        # Tells this replica's own NOTIFYs apart from other replicas'.
        self._instance = uuid.uuid4().hex[:12]
        self._channel = CHANNEL
        self._on_change: OnChange | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._giving_back: set[asyncio.Task[None]] = set()
        # Posting claims: session advisory locks held on a connection of their own, so that
        # they end with this process; the set keeps two tasks of this process apart.
        self._claims: asyncpg.Connection[Any] | None = None
        self._claims_lock = asyncio.Lock()
        self._posting: set[str] = set()

    @property
    def pool(self) -> asyncpg.Pool[Any]:
        if self._pool is None:
            raise RuntimeError("PostgresStore.open() has not been called")
        return self._pool

    async def open(self) -> None:
        try:
            self._pool = await asyncpg.create_pool(
                self.url,
                min_size=self._sizes[0],
                max_size=self._sizes[1],
                reset=_kept,
                init=_named,
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise StartupError(
                f"cannot connect to PostgreSQL at ASKBRIDGE_DATABASE_URL={shown_url(self.url)} "
                f"({type(error).__name__}: {error}); check that the server runs, the database "
                "exists and the user may log in"
            ) from error
        try:
            async with self.pool.acquire() as db, db.transaction():
                await self._drive(db, tx.migrate(MIGRATIONS, upgrade=self.upgrade))
                self._channel = _channel_of(await db.fetchval("SELECT current_schema()"))
        except StartupError:
            await self.close()
            raise

    async def close(self) -> None:
        """Stop listening (and reconnecting), then close every connection."""
        tasks = [*self._tasks, *([self._keeper] if self._keeper else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._keeper = None
        if self._listener is not None:
            # A connection that stopped answering cannot close gracefully; asyncpg then aborts it.
            with contextlib.suppress(Exception):
                await self._listener.close(timeout=CONNECT_TIMEOUT_S)
            self._listener = None
        if self._claims is not None:
            with contextlib.suppress(Exception):
                await self._claims.close(timeout=CONNECT_TIMEOUT_S)
            self._claims = None
        await asyncio.gather(*self._giving_back, return_exceptions=True)
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def ping(self) -> None:
        async with self.pool.acquire(timeout=CONNECT_TIMEOUT_S) as db:
            await self._drive(db, tx.schema_known(MIGRATIONS[-1][0]))

    def unavailable(self, error: BaseException) -> str | None:
        if isinstance(error, UNAVAILABLE):
            return f"PostgreSQL cannot serve now ({type(error).__name__}: {error})"
        return None

    async def listen(self, on_change: OnChange) -> None:
        self._on_change = on_change
        lost = await self._connect_listener()
        self._keeper = asyncio.create_task(
            self._keep_listening(on_change, lost), name="askbridge-pg-listen"
        )

    async def _connect_listener(self) -> asyncio.Event:
        """Open the listening connection; return an event set when it closes."""
        listener = await asyncpg.connect(
            self.url,
            timeout=CONNECT_TIMEOUT_S,
            # So that operators (and tests) can tell it apart in pg_stat_activity.
            server_settings={"application_name": LISTENER_NAME},
        )
        self._listener = listener  # from here on, close() closes it
        lost = asyncio.Event()
        listener.add_termination_listener(lambda _connection: lost.set())
        try:
            await listener.add_listener(self._channel, self._heard)
        except Exception:
            listener.terminate()
            raise
        return lost

    async def _keep_listening(self, on_change: OnChange, lost: asyncio.Event) -> None:
        """Replace the listening connection whenever it is lost, until `close()`."""
        where = _where(self.url)
        while True:
            reason = await self._until_lost(lost)
            log.warning(
                "lost the connection listening for changes on PostgreSQL at %s (%s); "
                "other replicas' answers will not wake waiters here until it is back",
                where,
                reason,
            )
            if self._listener is not None:
                self._listener.terminate()
                self._listener = None
            lost, attempts = await self._reconnect(where)
            log.info(
                "listening for changes on PostgreSQL at %s again (after %d attempt(s))",
                where,
                attempts,
            )
            # NOTIFYs sent while it was down are lost: any request may have changed.
            try:
                await on_change(EVERY_REQUEST)
            except Exception:
                log.exception("waking waiters after listening again failed")

    async def _until_lost(self, lost: asyncio.Event) -> str:
        """Return why the listening connection is gone: it closed, or stopped answering."""
        while True:
            try:
                async with asyncio.timeout(self._check_every_s):
                    await lost.wait()
                return "the connection was closed"
            except TimeoutError:
                pass
            assert self._listener is not None
            # A network blip can leave the connection open but dead.
            try:
                async with asyncio.timeout(self._check_every_s):
                    await self._listener.execute("SELECT 1")
            except TimeoutError:
                return f"it did not answer a check within {self._check_every_s:g}s"
            except Exception as error:
                return f"a check failed: {error!r}"

    async def _reconnect(self, where: str) -> tuple[asyncio.Event, int]:
        """Listen again, retrying with capped exponential backoff and jitter."""

        def failed(state: RetryCallState) -> None:
            log.warning(
                "listening on PostgreSQL at %s failed (%r); trying again in %.2gs",
                where,
                state.outcome.exception() if state.outcome else None,
                state.upcoming_sleep,
            )

        first, longest = self._reconnect_s
        # Jitter: replicas that lost the database together do not retry in step.
        wait = doubling(first, longest, jitter=(0.5, 1.0))
        async for attempt in AsyncRetrying(wait=wait, before_sleep=failed, reraise=True):
            with attempt:
                lost = await self._connect_listener()
        return lost, attempt.retry_state.attempt_number

    def _heard(self, _connection: Connection, _pid: int, _channel: str, payload: object) -> None:
        instance, _, request_id = str(payload).partition(":")
        if instance == self._instance or self._on_change is None:
            return
        task = asyncio.create_task(self._on_change(request_id), name="askbridge-pg-change")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _write(self, script: Callable[P, Script[T]], *args: P.args, **kw: P.kwargs) -> T:
        """`script` in a transaction."""
        async with self.pool.acquire() as db, db.transaction():
            return await self._drive(db, script(*args, **kw))

    async def _read(self, script: Callable[P, Script[T]], *args: P.args, **kw: P.kwargs) -> T:
        """`script` with each statement on its own (a read, or a single write)."""
        async with self.pool.acquire() as db:
            return await self._drive(db, script(*args, **kw))

    async def _drive(self, db: Connection, script: Script[T]) -> T:
        """Run `script` on `db`: each statement it yields, its result sent back."""
        result: Any = None
        try:
            while True:
                result = await self._step(db, script.send(result))
        except StopIteration as done:
            value: T = done.value
            return value

    async def _step(self, db: Connection, step: Step) -> Any:
        query, want = step.query, step.want
        sql = query.postgres
        if sql is None:
            return None
        if want == "notify":
            payload = f"{self._instance}:{step.params['request_id']}"
            return await db.execute(
                sql, *query.args({"channel": self._channel, "payload": payload})
            )
        args = query.args(step.params)
        if want == "rows":
            return [tuple(row) for row in await db.fetch(sql, *args)]
        if want == "row":
            row = await db.fetchrow(sql, *args)
            return None if row is None else tuple(row)
        if want == "value":
            return await db.fetchval(sql, *args)
        if want == "run":
            # Without parameters, a statement goes as it is (a migration's function body).
            await db.execute(sql, *args)
            return None
        # The command tag ends with how many rows the statement changed ("INSERT 0 1").
        return int((await db.execute(sql, *args)).rsplit(" ", 1)[1])

    # --- requests -----------------------------------------------------------------------

    async def create(self, request: Request) -> tuple[Request, bool]:
        return await self._write(tx.create, request)

    async def discard(self, request_id: str, at: datetime, reason: str) -> None:
        await self._write(tx.discard, request_id, at, reason)

    async def status(self, request_id: str) -> Status | None:
        return await self._read(tx.status, request_id) if _storable(request_id) else None

    async def get(self, request_id: str) -> Request | None:
        return await self._read(tx.load, request_id) if _storable(request_id) else None

    async def prune(self, ended_before: datetime) -> int:
        before, pruned = codec.epoch(ended_before), 0
        assert before is not None
        while True:
            count = await self._write(tx.prune, before, tx.PRUNE_BATCH)
            pruned += count
            if count < tx.PRUNE_BATCH:
                return pruned

    async def get_with_draft(
        self, request_id: str, person: Person
    ) -> tuple[Request | None, Selections]:
        if not _storable(request_id):
            return None, {}
        return await self._read(tx.get_with_draft, request_id, person)

    async def list_requests(
        self, status: Status | None = None, limit: int = 100, older_than: str | None = None
    ) -> list[Request]:
        if not _storable(older_than):
            return []
        return await self._read(tx.list_requests, status, limit, older_than)

    async def count_requests(self, status: Status, older_than: str | None = None) -> int:
        if not _storable(older_than):
            return 0
        return await self._read(tx.count_requests, status, older_than)

    async def waiting_by_surface(self) -> dict[str, int]:
        return await self._read(tx.waiting_by_surface)

    async def add_message(self, request_id: str, message: MessageRef, at: datetime) -> None:
        await self._write(tx.add_message, request_id, message, at)

    async def mark_posted(self, request_id: str, at: datetime) -> None:
        await self._read(tx.mark_posted, request_id, at)

    async def unposted(self, limit: int = 100) -> list[Request]:
        return await self._read(tx.unposted, limit)

    @contextlib.asynccontextmanager
    async def posting(self, request_id: str) -> AsyncIterator[bool]:
        """A session advisory lock per request (per schema: deployments sharing a database
        do not meet). PostgreSQL lets it go when the connection ends, so a replica that dies
        while posting holds nothing; if the connection is lost while this one posts, another
        replica may post the same request meanwhile, which is logged."""
        if request_id in self._posting:
            yield False
            return
        self._posting.add(request_id)
        try:
            held = await self._claim("pg_try_advisory_lock", request_id)
            try:
                yield held
            finally:
                if held:
                    await self._let_go(request_id)
        finally:
            self._posting.discard(request_id)

    async def _claim(self, function: str, request_id: str) -> bool:
        async with self._claims_lock:
            if self._claims is None or self._claims.is_closed():
                self._claims = await asyncpg.connect(self.url, timeout=CONNECT_TIMEOUT_S)
            held = await self._claims.fetchval(
                f"SELECT {function}(hashtextextended(current_schema() || ':' || $1, $2))",
                request_id,
                POSTING_LOCKS,
            )
        return bool(held)

    async def _let_go(self, request_id: str) -> None:
        try:
            if not await self._claim("pg_advisory_unlock", request_id):
                raise RuntimeError("the lock was not held")
        except Exception as error:
            log.warning(
                "posting %s was not protected to the end (%r); if another replica posted it "
                "meanwhile, it has two messages",
                request_id,
                error,
            )

    # --- people -------------------------------------------------------------------------

    async def save_draft(
        self, request_id: str, person: Person, selections: Selections, at: datetime
    ) -> Selections:
        return await self._write(tx.save_draft, request_id, person, selections, at)

    async def first_delivery(self, request_id: str, click: Click) -> bool:
        return await self._write(tx.first_delivery, request_id, click)

    async def vote(
        self,
        request_id: str,
        person: Person,
        answers: dict[str, str],
        quorum: int,
        at: datetime,
        sent_at: datetime | None = None,
        notes: Mapping[str, str] | None = None,
        click_id: str | None = None,
        changed: Mapping[str, Any] | None = None,
    ) -> tuple[Request, VoteOutcome]:
        """One statement, `askbridge_vote` (schema version 9): one round trip, prepared once
        per connection, and no transaction around it to begin or commit apart; only a click
        known by its delivery's id is recorded first, in a transaction with its vote."""
        voter = person.model_dump_json()
        data = codec.vote_data(answers, notes, changed)
        vote_event = Event(request_id, at, "vote", person, data)
        decided = Ending(Status.ANSWERED, at, answers=answers, by=person)
        # Without the subject digest, which the function adds from the policy it reads.
        end_data = codec.ending_data(decided, None)
        end_event = Event(request_id, at, decided.status.value, person, end_data)
        vote_head, vote_tail = codec.event_parts(vote_event)[3:]
        end_head, end_tail = codec.event_parts(end_event)[3:]
        end_before, end_after = _digest_slot(end_head)
        args = (
            request_id,
            person.key,
            voter,
            codec.dump_answers(answers, changed),
            codec.epoch(at),
            None if sent_at is None else codec.epoch(sent_at),
            json.dumps(dict(notes)) if notes else None,
            quorum,
            q.EVENT_LOCKS,
            audit_log.GENESIS,
            json.dumps(vote_event.data),
            vote_head,
            vote_tail,
            codec.dump_answers(answers, changed, sort=False),
            json.dumps(end_data),
            end_before,
            end_after,
            end_tail,
            f"dlv_{uuid.uuid4().hex}",
            self._channel,
            f"{self._instance}:{request_id}",
        )
        db = await self.pool.acquire()
        try:
            if click_id is None:
                row = await db.fetchrow(_VOTE, *args)
            else:
                # The click's record and its vote commit together, or neither does.
                async with db.transaction():
                    click = Click(person, at, click_id=click_id)
                    if not await self._drive(db, tx.first_delivery(request_id, click)):
                        stored_request = await self._drive(db, tx.load(request_id))
                        if stored_request is None:
                            raise KeyError(request_id)
                        return stored_request, VoteOutcome.REPLAYED
                    row = await db.fetchrow(_VOTE, *args)
        finally:
            self._give_back(db)
        assert row is not None
        outcome, stored, messages, votes = row
        if stored is None:
            raise KeyError(request_id)
        found = json.loads(stored)
        return codec.load_request(
            tuple(found[name] for name in REQUEST_FIELDS),
            [codec.load_message(fields) for fields in json.loads(messages or "[]")],
            [codec.load_vote(fields) for fields in json.loads(votes or "[]")],
        ), VoteOutcome(outcome)

    def _give_back(self, db: PoolConnectionProxy[Any]) -> None:
        """Return `db` to the pool off the click's path: the pool's release is a task of its
        own (shielded from cancellation), which the click would wait a turn of the loop for."""
        task = asyncio.create_task(self.pool.release(db), name="askbridge-pg-release")
        self._giving_back.add(task)
        task.add_done_callback(self._giving_back.discard)

    async def finish(self, request_id: str, ending: Ending) -> tuple[Request, bool]:
        return await self._write(tx.finish, request_id, ending)

    async def finish_click(
        self, request_id: str, ending: Ending, click: Click
    ) -> tuple[Request, bool] | None:
        return await self._write(tx.finish_click, request_id, ending, click)

    async def deny(self, event: Event, click: Click | None) -> bool:
        return await self._write(tx.deny, event, click)

    # --- time and rendering -------------------------------------------------------------

    async def next_deadline(self) -> datetime | None:
        return codec.from_epoch(await self._read(tx.value, q.NEXT_DEADLINE.value()))

    async def expired(self, now: datetime, limit: int = 100) -> list[str]:
        return await self._read(tx.ids, q.EXPIRED.rows(now=codec.epoch(now), limit=limit))

    async def due_reminders(self, now: datetime, limit: int = 100) -> list[str]:
        return await self._read(tx.ids, q.DUE_REMINDERS.rows(now=codec.epoch(now), limit=limit))

    async def mark_reminded(self, request_id: str, at: datetime) -> bool:
        return await self._write(tx.mark_reminded, request_id, at)

    async def due_escalations(self, now: datetime, limit: int = 100) -> list[str]:
        found = q.DUE_ESCALATIONS.rows(now=codec.epoch(now), limit=limit)
        return await self._read(tx.ids, found)

    async def escalate(
        self, request_id: str, step: int, at: datetime, next_at: datetime | None
    ) -> bool:
        return await self._write(tx.escalate, request_id, step, at, next_at)

    async def unrendered(self, now: datetime | None = None) -> list[tuple[str, MessageRef]]:
        return await self._read(tx.unrendered, now)

    async def claim_message(
        self, request_id: str, message: MessageRef, owner: str, now: datetime, until: datetime
    ) -> Render | None:
        return await self._write(tx.claim_message, request_id, message, owner, now, until)

    async def mark_rendered(
        self, request_id: str, message: MessageRef, owner: str, rendered: Render, until: datetime
    ) -> Render | None:
        return await self._write(tx.mark_rendered, request_id, message, owner, rendered, until)

    async def renew_claims(self, owner: str, until: datetime) -> int:
        return await self._read(tx.renew_claims, owner, until)

    async def release_claims(self, owner: str) -> None:
        await self._read(tx.release_claims, owner)

    # --- audit --------------------------------------------------------------------------

    async def secret(self, name: str) -> bytes:
        return await self._read(tx.secret, name)

    async def add_event(self, event: Event) -> None:
        await self._write(tx.add_events, event)

    async def events(
        self,
        request_id: str | None = None,
        since: datetime | None = None,
        limit: int = 1000,
        *,
        until: datetime | None = None,
        after: int = 0,
    ) -> list[Event]:
        if not _storable(request_id):
            return []
        return await self._read(tx.events, request_id, since, limit, until, after)

    # --- webhooks -----------------------------------------------------------------------

    async def claim_deliveries(
        self, owner: str, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        return await self._write(tx.claim_deliveries, owner, now, lease_until, limit)

    async def record_attempt(self, delivery: Delivery, owner: str, attempt: Attempt) -> bool:
        return await self._write(tx.record_attempt, delivery, owner, attempt)

    async def next_delivery(self) -> datetime | None:
        return await self._read(tx.next_delivery)


NAME = "askbridge schema {version} in "
"""The pooled connections' application_name, followed by the schema they use: what a replica
about to upgrade the schema looks for (`queries.OLDER_REPLICAS`)."""


async def _named(connection: Connection) -> None:
    await connection.execute(
        "SELECT set_config('application_name', $1 || current_schema(), false)",
        NAME.format(version=MIGRATIONS[-1][0]),
    )


async def _kept(_connection: Connection) -> None:
    """A pooled connection is given back as it is, without a reset query (a round trip on
    every release): no pooled use leaves anything behind. Session locks and LISTEN have
    connections of their own, settings are never changed, and an open transaction is rolled
    back by the pool before this is called."""


def _storable(key: str | None) -> bool:
    """Whether a row may have this key: a text column cannot hold NUL, and a query for a
    text with NUL in it fails instead of finding nothing."""
    return key is None or "\x00" not in key


def _postgres(query: Query) -> str:
    """`query` as PostgreSQL runs it, for a call this store makes itself."""
    assert query.postgres is not None
    return query.postgres


_VOTE = _postgres(q.VOTE)


def _digest_slot(head: bytes) -> tuple[bytes, bytes]:
    """An answered event's hash head (`audit_log.link_parts`) with data {"answers": …}, cut
    where a subject digest goes: right after the answers, at the end of the data object (its
    last key sorts after "answers", and the data is followed by the "kind" key)."""
    cut = head.rindex(b'},"kind":')
    return head[:cut], head[cut:]


def _where(url: str) -> str:
    """Host, port and database of `url`, without its user, password or parameters."""
    parts = urlsplit(url)
    return parts.netloc.rpartition("@")[2] + parts.path


def _channel_of(schema: str | None) -> str:
    """NOTIFY channels are per database, not per schema: deployments in two schemas of one
    database would otherwise wake each other's waiters."""
    if schema in (None, "public"):
        return CHANNEL
    name = f"{CHANNEL}.{schema}"
    if len(name.encode()) > MAX_CHANNEL_BYTES:
        name = f"{CHANNEL}.{hashlib.sha256(schema.encode()).hexdigest()[:32]}"
    return name
