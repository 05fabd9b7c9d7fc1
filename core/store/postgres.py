"""A PostgreSQL store, for several askbridge replicas sharing one database.

Every write is one transaction. Transitions are compare-and-sets on `status = 'waiting'`, and
a vote locks its request row first, so concurrent votes on different replicas are counted
one after the other and a quorum is never missed. Each change is announced with NOTIFY, and
every replica wakes its own waiters on it: an agent long-polling one replica hears an answer
given through another.

The listening connection is watched: when it closes, or stops answering a periodic `SELECT 1`
(a network blip can leave it open but dead), it is replaced, with capped exponential backoff and
jitter between failed attempts. NOTIFYs sent while it was down are lost, so once it is back
`on_change(EVERY_REQUEST)` tells the broker that any request may have changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeAlias
from urllib.parse import urlsplit

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from tenacity import AsyncRetrying, RetryCallState

from askbridge.core import audit_log
from askbridge.core.errors import StartupError
from askbridge.core.models import MessageRef, Person, Request, Selections, Status, Vote
from askbridge.core.retry import doubling
from askbridge.core.store import codec
from askbridge.core.store.base import (
    EVERY_REQUEST,
    Attempt,
    Delivery,
    Ending,
    Event,
    Render,
    VoteOutcome,
)
from askbridge.core.store.factory import shown_url
from askbridge.core.store.postgres_schema import MIGRATIONS

log = logging.getLogger("askbridge.store")

CHANNEL = "askbridge_changes"
"""The NOTIFY channel of the tables in `public`; tables in another schema (another
deployment on the same database) get a channel of their own, see `_channel_of`."""
# Any constant: replicas starting together take turns migrating under this advisory lock.
MIGRATION_LOCK = 0x61736B62
# The seed that hashes request ids into their own advisory lock keys, for posting claims.
POSTING_LOCKS = 0x61736B70
# The seed for the per-request transaction locks that order each request's audit chain.
EVENT_LOCKS = 0x61736B65
CONNECT_TIMEOUT_S = 10.0
# PostgreSQL cuts identifiers, NOTIFY channels included, to 63 bytes.
MAX_CHANNEL_BYTES = 63
SECRET_BYTES = 32
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
OnChange: TypeAlias = Callable[[str], Coroutine[Any, Any, None]]


class PostgresStore:
    """`reconnect_s` is (first delay, longest delay) between attempts to listen again;
    `check_every_s` how often an idle listening connection must answer a `SELECT 1`."""

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        reconnect_s: tuple[float, float] = (0.5, 30.0),
        check_every_s: float = 30.0,
    ) -> None:
        self.url = url
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
                self.url, min_size=self._sizes[0], max_size=self._sizes[1], reset=_kept
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
            raise StartupError(
                f"cannot connect to PostgreSQL at ASKBRIDGE_DATABASE_URL={shown_url(self.url)} "
                f"({type(error).__name__}: {error}); check that the server runs, the database "
                "exists and the user may log in"
            ) from error
        async with self.pool.acquire() as db, db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
            current = await db.fetchval("SELECT max(version) FROM schema_version") or 0
            for version, statements in MIGRATIONS:
                if version > current:
                    for statement in statements:
                        await db.execute(statement)
                    await db.execute("INSERT INTO schema_version (version) VALUES ($1)", version)
            await _chain_unchained(db)
            self._channel = _channel_of(await db.fetchval("SELECT current_schema()"))

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
            await db.fetchval("SELECT max(version) FROM schema_version")

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

    async def _notify(self, db: Connection, request_id: str) -> None:
        await db.execute(
            "SELECT pg_notify($1, $2)", self._channel, f"{self._instance}:{request_id}"
        )

    # --- requests -----------------------------------------------------------------------

    async def create(self, request: Request) -> tuple[Request, bool]:
        async with self.pool.acquire() as db, db.transaction():
            created = await db.fetchval(
                "INSERT INTO requests (request_id, questions, targets, context, status,"
                " created_at, expires_at, policy, remind_at, escalate_at)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
                " ON CONFLICT (request_id) DO NOTHING RETURNING true",
                request.request_id,
                codec.dump_questions(request.questions),
                codec.dump_targets(request.targets),
                request.context,
                request.status.value,
                codec.epoch(request.created_at),
                codec.epoch(request.expires_at),
                request.policy.model_dump_json(),
                codec.epoch(request.remind_at),
                codec.epoch(request.escalate_at),
            )
            if created:
                await _insert_event(db, Event(request.request_id, request.created_at, "created"))
                await self._notify(db, request.request_id)
            stored = await _load(db, request.request_id)
        assert stored is not None
        return stored, bool(created)

    async def discard(self, request_id: str, at: datetime, reason: str) -> None:
        async with self.pool.acquire() as db, db.transaction():
            for table in ("drafts", "votes", "messages", "requests"):
                await db.execute(f"DELETE FROM {table} WHERE request_id = $1", request_id)
            await _insert_event(db, Event(request_id, at, "post_failed", data={"error": reason}))

    async def status(self, request_id: str) -> Status | None:
        if not _storable(request_id):
            return None
        async with self.pool.acquire() as db:
            found = await db.fetchval(
                "SELECT status FROM requests WHERE request_id = $1", request_id
            )
        return None if found is None else Status(found)

    async def get(self, request_id: str) -> Request | None:
        if not _storable(request_id):
            return None
        async with self.pool.acquire() as db:
            return await _load(db, request_id)

    async def prune(self, ended_before: datetime) -> int:
        before = codec.epoch(ended_before)
        async with self.pool.acquire() as db, db.transaction():
            ids = [
                row[0]
                for row in await db.fetch(
                    "SELECT request_id FROM requests"
                    " WHERE status <> 'waiting' AND ended_at < $1 FOR UPDATE",
                    before,
                )
            ]
            for table in ("drafts", "votes", "messages", "events", "deliveries", "requests"):
                await db.execute(f"DELETE FROM {table} WHERE request_id = ANY($1::text[])", ids)
            # Requests whose posting failed left only their events.
            await db.execute(
                "DELETE FROM events e WHERE at < $1"
                " AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.request_id = e.request_id)",
                before,
            )
        return len(ids)

    async def get_with_draft(
        self, request_id: str, person: Person
    ) -> tuple[Request | None, Selections]:
        if not _storable(request_id):
            return None, {}
        async with self.pool.acquire() as db:
            return await _load(db, request_id), await _draft(db, request_id, person)

    async def list_requests(
        self, status: Status | None = None, limit: int = 100, older_than: str | None = None
    ) -> list[Request]:
        if not _storable(older_than):
            return []
        where, args = _listing(status, older_than, first=2)
        async with self.pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT {codec.REQUEST_COLUMNS} FROM requests {where}"
                " ORDER BY created_at DESC, request_id DESC LIMIT $1",
                limit,
                *args,
            )
            ids = [row[0] for row in rows]
            messages, votes = await _messages(db, ids), await _votes(db, ids)
        return [
            codec.load_request(tuple(row), messages.get(row[0], []), votes.get(row[0], []))
            for row in rows
        ]

    async def count_requests(self, status: Status, older_than: str | None = None) -> int:
        if not _storable(older_than):
            return 0
        where, args = _listing(status, older_than, first=1)
        async with self.pool.acquire() as db:
            found = await db.fetchval(f"SELECT count(*) FROM requests {where}", *args)
        return int(found)

    async def add_message(self, request_id: str, message: MessageRef, at: datetime) -> None:
        async with self.pool.acquire() as db, db.transaction():
            inserted = await db.execute(
                "INSERT INTO messages (request_id, platform, channel, message_id, data,"
                " posted_at, rendered_status, target)"
                " VALUES ($1, $2, $3, $4, $5, $6, 'waiting', $7) ON CONFLICT DO NOTHING",
                request_id,
                message.platform,
                message.channel,
                message.message_id,
                json.dumps(message.data),
                codec.epoch(at),
                message.target,
            )
            if inserted.endswith(" 1"):
                # A message starts at revision 0: if the request has moved on, it is stale.
                await db.execute(
                    "UPDATE requests SET rendered = 0 WHERE request_id = $1 AND rendered > 0",
                    request_id,
                )
            where = {
                "platform": message.platform,
                "channel": message.channel,
                "message_id": message.message_id,
            }
            await _insert_event(db, Event(request_id, at, "posted", data=where))

    async def mark_posted(self, request_id: str, at: datetime) -> None:
        async with self.pool.acquire() as db:
            await db.execute(
                "UPDATE requests SET posted_at = $2 WHERE request_id = $1 AND posted_at IS NULL",
                request_id,
                codec.epoch(at),
            )

    async def unposted(self, limit: int = 100) -> list[Request]:
        async with self.pool.acquire() as db:
            rows = await db.fetch(
                "SELECT request_id FROM requests WHERE posted_at IS NULL"
                " ORDER BY created_at LIMIT $1",
                limit,
            )
            found = [await _load(db, row[0]) for row in rows]
        return [request for request in found if request is not None]

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
        async with self.pool.acquire() as db, db.transaction():
            # The row lock keeps two quick clicks of one person from losing either choice.
            await db.execute("SELECT 1 FROM requests WHERE request_id = $1 FOR UPDATE", request_id)
            draft = await _draft(db, request_id, person)
            draft.update(selections)
            await db.execute(
                "INSERT INTO drafts (request_id, person, selections, updated_at)"
                " VALUES ($1, $2, $3, $4) ON CONFLICT (request_id, person)"
                " DO UPDATE SET selections = excluded.selections,"
                " updated_at = excluded.updated_at",
                request_id,
                person.key,
                codec.dump_selections(draft),
                codec.epoch(at),
            )
        return draft

    async def vote(
        self,
        request_id: str,
        person: Person,
        answers: dict[str, str],
        quorum: int,
        at: datetime,
        sent_at: datetime | None = None,
        notes: Mapping[str, str] | None = None,
    ) -> tuple[Request, VoteOutcome]:
        """One statement, `askbridge_vote` (schema version 9): one round trip, prepared once
        per connection, and no transaction around it to begin or commit apart."""
        voter = person.model_dump_json()
        vote_event = Event(request_id, at, "vote", person, codec.vote_data(answers, notes))
        decided = Ending(Status.ANSWERED, at, answers=answers, by=person)
        # Without the subject digest, which the function adds from the policy it reads.
        end_data = codec.ending_data(decided, None)
        end_event = Event(request_id, at, decided.status.value, person, end_data)
        vote_head, vote_tail = codec.event_parts(vote_event)[3:]
        end_head, end_tail = codec.event_parts(end_event)[3:]
        end_before, end_after = _digest_slot(end_head)
        db = await self.pool.acquire()
        try:
            row = await db.fetchrow(
                "SELECT o_outcome, o_request, o_messages, o_votes FROM askbridge_vote("
                "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10,"
                " $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
                request_id,
                person.key,
                voter,
                codec.dump_answers(answers),
                codec.epoch(at),
                None if sent_at is None else codec.epoch(sent_at),
                json.dumps(dict(notes)) if notes else None,
                quorum,
                EVENT_LOCKS,
                audit_log.GENESIS,
                json.dumps(vote_event.data),
                vote_head,
                vote_tail,
                json.dumps(answers),
                json.dumps(end_data),
                end_before,
                end_after,
                end_tail,
                f"dlv_{uuid.uuid4().hex}",
                self._channel,
                f"{self._instance}:{request_id}",
            )
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
        async with self.pool.acquire() as db, db.transaction():
            won = await _end(db, request_id, ending)
            if won:
                await self._notify(db, request_id)
            stored = await _load(db, request_id)
        if stored is None:
            raise KeyError(request_id)
        return stored, won

    # --- time and rendering -------------------------------------------------------------

    async def next_deadline(self) -> datetime | None:
        async with self.pool.acquire() as db:
            at = await db.fetchval(
                "SELECT least("
                " (SELECT min(expires_at) FROM requests WHERE status = 'waiting'),"
                " (SELECT min(remind_at) FROM requests"
                "  WHERE status = 'waiting' AND reminded_at IS NULL),"
                " (SELECT min(escalate_at) FROM requests WHERE status = 'waiting'))"
            )
        return codec.from_epoch(at)

    async def expired(self, now: datetime, limit: int = 100) -> list[str]:
        return await self._ids(
            "SELECT request_id FROM requests WHERE status = 'waiting'"
            " AND expires_at <= $1 ORDER BY expires_at LIMIT $2",
            now,
            limit,
        )

    async def due_escalations(self, now: datetime, limit: int = 100) -> list[str]:
        return await self._ids(
            "SELECT request_id FROM requests WHERE status = 'waiting'"
            " AND escalate_at <= $1 ORDER BY escalate_at LIMIT $2",
            now,
            limit,
        )

    async def escalate(
        self, request_id: str, step: int, at: datetime, next_at: datetime | None
    ) -> bool:
        async with self.pool.acquire() as db, db.transaction():
            row = await db.fetchrow(
                "SELECT policy, targets FROM requests WHERE request_id = $1"
                " AND status = 'waiting' AND escalation_step = $2 FOR UPDATE",
                request_id,
                step,
            )
            found = None if row is None else codec.escalated(row[0], row[1], step)
            if found is None:
                return False
            taken, targets = found
            await db.execute(
                "UPDATE requests SET escalation_step = $3, escalated_at = $4, escalate_at = $5,"
                " revision = revision + 1, pings = pings + $7,"
                " targets = coalesce($6, targets),"
                " posted_at = CASE WHEN $6::text IS NULL THEN posted_at END"
                " WHERE request_id = $1 AND escalation_step = $2",
                request_id,
                step,
                step + 1,
                codec.epoch(at),
                codec.epoch(next_at),
                targets,
                int(taken.mention),
            )
            data = codec.escalation_data(step, taken)
            await _insert_event(db, Event(request_id, at, "escalated", data=data))
            await self._notify(db, request_id)
        return True

    async def due_reminders(self, now: datetime, limit: int = 100) -> list[str]:
        return await self._ids(
            "SELECT request_id FROM requests WHERE status = 'waiting' AND reminded_at IS NULL"
            " AND remind_at <= $1 ORDER BY remind_at LIMIT $2",
            now,
            limit,
        )

    async def _ids(self, sql: str, now: datetime, limit: int) -> list[str]:
        async with self.pool.acquire() as db:
            rows = await db.fetch(sql, codec.epoch(now), limit)
        return [row[0] for row in rows]

    async def mark_reminded(self, request_id: str, at: datetime) -> bool:
        async with self.pool.acquire() as db, db.transaction():
            claimed = await db.fetchval(
                "UPDATE requests SET reminded_at = $2, pings = pings + 1,"
                " revision = revision + 1 WHERE request_id = $1"
                " AND status = 'waiting' AND reminded_at IS NULL RETURNING true",
                request_id,
                codec.epoch(at),
            )
            if claimed:
                await _insert_event(db, Event(request_id, at, "reminder"))
        return bool(claimed)

    async def unrendered(self, now: datetime | None = None) -> list[tuple[str, MessageRef]]:
        async with self.pool.acquire() as db:
            # Only the requests with a stale message (`requests_unrendered`), not every message
            # ever posted.
            rows = await db.fetch(
                "SELECT m.request_id, m.platform, m.channel, m.message_id, m.data, m.target"
                " FROM requests r JOIN messages m ON m.request_id = r.request_id"
                " WHERE r.rendered < r.revision AND m.rendered_revision < r.revision"
                " AND ($1::double precision IS NULL"
                " OR m.claimed_until IS NULL OR m.claimed_until <= $1)",
                codec.epoch(now),
            )
        return [(row[0], codec.load_message(tuple(row)[1:])) for row in rows]

    async def claim_message(
        self, request_id: str, message: MessageRef, owner: str, now: datetime, until: datetime
    ) -> Render | None:
        async with self.pool.acquire() as db, db.transaction():
            # The share lock holds back votes until the request is read with its revision.
            revision = await db.fetchval(
                "SELECT revision FROM requests WHERE request_id = $1 FOR SHARE", request_id
            )
            claimed = await db.fetchval(
                "UPDATE messages SET claimed_by = $5, claimed_until = $6"
                f" WHERE {_MESSAGE} AND (claimed_by IS NULL OR claimed_by = $5"
                " OR claimed_until <= $7) AND rendered_revision < $8 RETURNING true",
                *_message_key(request_id, message),
                owner,
                codec.epoch(until),
                codec.epoch(now),
                revision,
            )
            return await _render(db, request_id, message, revision) if claimed else None

    async def mark_rendered(
        self, request_id: str, message: MessageRef, owner: str, rendered: Render, until: datetime
    ) -> Render | None:
        async with self.pool.acquire() as db, db.transaction():
            # Not a share lock: the request's `rendered` may be written below, and two renders
            # of its messages that both held a share lock would deadlock on that.
            revision = await db.fetchval(
                "SELECT revision FROM requests WHERE request_id = $1 FOR NO KEY UPDATE", request_id
            )
            newer = revision is not None and revision > rendered.revision
            held = await db.fetchval(
                "UPDATE messages SET rendered_status = $7,"
                " rendered_revision = greatest(rendered_revision, $8),"
                " pinged = greatest(pinged, $10), claimed_by = $6, claimed_until = $9"
                f" WHERE {_MESSAGE} AND claimed_by = $5 RETURNING true",
                *_message_key(request_id, message),
                owner,
                owner if newer else None,
                rendered.request.status.value,
                rendered.revision,
                codec.epoch(until) if newer else None,
                rendered.pings,
            )
            await db.execute(
                "UPDATE requests SET rendered = coalesce((SELECT min(rendered_revision)"
                " FROM messages WHERE request_id = $1), revision)"
                " WHERE request_id = $1 AND rendered < revision",
                request_id,
            )
            if not (newer and held):
                return None
            return await _render(db, request_id, message, revision)

    async def renew_claims(self, owner: str, until: datetime) -> int:
        async with self.pool.acquire() as db:
            done = await db.execute(
                "UPDATE messages SET claimed_until = $2 WHERE claimed_by = $1",
                owner,
                codec.epoch(until),
            )
        return int(done.rsplit(" ", 1)[1])

    async def release_claims(self, owner: str) -> None:
        async with self.pool.acquire() as db:
            await db.execute(
                "UPDATE messages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1",
                owner,
            )

    # --- audit --------------------------------------------------------------------------

    async def secret(self, name: str) -> bytes:
        async with self.pool.acquire() as db:
            await db.execute(
                "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                name,
                secrets.token_hex(SECRET_BYTES),
            )
            value = await db.fetchval("SELECT value FROM secrets WHERE name = $1", name)
        return bytes.fromhex(str(value))

    async def add_event(self, event: Event) -> None:
        async with self.pool.acquire() as db, db.transaction():
            await _insert_event(db, event)

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
        async with self.pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT {codec.EVENT_COLUMNS} FROM events"
                " WHERE at >= $1 AND ($2::text IS NULL OR request_id = $2) AND seq > $4"
                " AND ($5::double precision IS NULL OR at < $5)"
                " ORDER BY seq LIMIT $3",
                codec.epoch(since) if since else 0.0,
                request_id,
                limit,
                after,
                codec.epoch(until),
            )
        return [codec.load_event(tuple(row)) for row in rows]

    # --- webhooks -----------------------------------------------------------------------

    async def claim_deliveries(
        self, owner: str, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        async with self.pool.acquire() as db, db.transaction():
            rows = await db.fetch(
                "UPDATE deliveries SET claimed_by = $1, claimed_until = $2"
                " WHERE delivery_id IN (SELECT delivery_id FROM deliveries"
                "  WHERE done_at IS NULL AND next_at <= $3"
                "  AND (claimed_until IS NULL OR claimed_until <= $3)"
                "  ORDER BY next_at LIMIT $4 FOR UPDATE SKIP LOCKED)"
                f" RETURNING {codec.DELIVERY_COLUMNS}",
                owner,
                codec.epoch(lease_until),
                codec.epoch(now),
                limit,
            )
        return [codec.load_delivery(tuple(row)) for row in rows]

    async def record_attempt(self, delivery: Delivery, owner: str, attempt: Attempt) -> bool:
        done = None if attempt.next_at is not None else codec.epoch(attempt.at)
        async with self.pool.acquire() as db, db.transaction():
            held = await db.fetchval(
                "UPDATE deliveries SET attempts = attempts + 1, claimed_by = NULL,"
                " claimed_until = NULL, next_at = coalesce($1, next_at), done_at = $2,"
                " result = $3 WHERE delivery_id = $4 AND claimed_by = $5 AND done_at IS NULL"
                " RETURNING true",
                codec.epoch(attempt.next_at),
                done,
                attempt.result,
                delivery.delivery_id,
                owner,
            )
            data = codec.attempt_data(delivery, attempt)
            await _insert_event(db, Event(delivery.request_id, attempt.at, "webhook", data=data))
            await self._notify(db, delivery.request_id)
        return bool(held)

    async def next_delivery(self) -> datetime | None:
        async with self.pool.acquire() as db:
            at = await db.fetchval(
                "SELECT min(greatest(next_at, coalesce(claimed_until, 0))) FROM deliveries"
                " WHERE done_at IS NULL"
            )
        return codec.from_epoch(at)


async def _kept(_connection: Connection) -> None:
    """A pooled connection is given back as it is, without a reset query (a round trip on
    every release): no pooled use leaves anything behind. Session locks and LISTEN have
    connections of their own, settings are never changed, and an open transaction is rolled
    back by the pool before this is called."""


def _storable(key: str | None) -> bool:
    """Whether a row may have this key: a text column cannot hold NUL, and a query for a
    text with NUL in it fails instead of finding nothing."""
    return key is None or "\x00" not in key


async def _end(db: Connection, request_id: str, ending: Ending) -> bool:
    won = await db.fetchval(
        "UPDATE requests SET status = $1, ended_at = $2, answers = $3, ended_by = $4,"
        " revision = revision + 1 WHERE request_id = $5 AND status = 'waiting' RETURNING true",
        ending.status.value,
        codec.epoch(ending.at),
        None if ending.answers is None else json.dumps(ending.answers),
        codec.dump_person(ending.by),
        request_id,
    )
    if not won:
        return False
    policy = await db.fetchval("SELECT policy FROM requests WHERE request_id = $1", request_id)
    data = codec.ending_data(ending, policy)
    await _insert_event(db, Event(request_id, ending.at, ending.status.value, ending.by, data))
    await db.execute("DELETE FROM drafts WHERE request_id = $1", request_id)
    url = codec.callback_url(policy)
    if url is not None:
        await db.execute(
            "INSERT INTO deliveries (delivery_id, request_id, url, created_at, next_at)"
            " VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING",
            f"dlv_{uuid.uuid4().hex}",
            request_id,
            url,
            codec.epoch(ending.at),
        )
    return True


_MESSAGE = "request_id = $1 AND platform = $2 AND channel = $3 AND message_id = $4"


def _message_key(request_id: str, message: MessageRef) -> tuple[str, str, str, str]:
    return (request_id, message.platform, message.channel, message.message_id)


async def _render(
    db: Connection, request_id: str, message: MessageRef, revision: int
) -> Render | None:
    counts = await db.fetchrow(
        "SELECT r.pings, m.pinged FROM messages m JOIN requests r"
        " ON r.request_id = m.request_id WHERE m.request_id = $1 AND m.platform = $2"
        " AND m.channel = $3 AND m.message_id = $4",
        *_message_key(request_id, message),
    )
    request = await _load(db, request_id)
    if counts is None or request is None:
        return None
    pings, pinged = counts
    return Render(request, revision, pings, ping=pinged < pings)


def _digest_slot(head: bytes) -> tuple[bytes, bytes]:
    """An answered event's hash head (`audit_log.link_parts`) with data {"answers": …}, cut
    where a subject digest goes: right after the answers, at the end of the data object (its
    last key sorts after "answers", and the data is followed by the "kind" key)."""
    cut = head.rindex(b'},"kind":')
    return head[:cut], head[cut:]


async def _load(db: Connection, request_id: str) -> Request | None:
    row = await db.fetchrow(
        f"SELECT {codec.REQUEST_COLUMNS} FROM requests WHERE request_id = $1", request_id
    )
    if row is None:
        return None
    return codec.load_request(
        tuple(row),
        (await _messages(db, [request_id])).get(request_id, []),
        (await _votes(db, [request_id])).get(request_id, []),
    )


def _listing(status: Status | None, older_than: str | None, *, first: int) -> tuple[str, list[str]]:
    """The WHERE clause of a listing: by status, and after request `older_than` in its order;
    its parameters are numbered from `first`."""
    conditions: list[str] = []
    args: list[str] = []
    if status is not None:
        conditions.append(f"status = ${first + len(args)}")
        args.append(status.value)
    if older_than is not None:
        conditions.append(
            "(created_at, request_id) < (SELECT created_at, request_id FROM requests"
            f" WHERE request_id = ${first + len(args)})"
        )
        args.append(older_than)
    return ("WHERE " + " AND ".join(conditions) if conditions else ""), args


async def _messages(db: Connection, request_ids: Sequence[str]) -> dict[str, list[MessageRef]]:
    found: dict[str, list[MessageRef]] = {}
    if request_ids:
        rows = await db.fetch(
            f"SELECT request_id, {codec.MESSAGE_COLUMNS} FROM messages"
            " WHERE request_id = ANY($1::text[]) ORDER BY posted_at, seq",
            list(request_ids),
        )
        for row in rows:
            found.setdefault(row[0], []).append(codec.load_message(tuple(row)[1:]))
    return found


async def _votes(db: Connection, request_ids: Sequence[str]) -> dict[str, list[Vote]]:
    found: dict[str, list[Vote]] = {}
    if request_ids:
        rows = await db.fetch(
            f"SELECT request_id, {codec.VOTE_COLUMNS} FROM votes"
            " WHERE request_id = ANY($1::text[]) ORDER BY at",
            list(request_ids),
        )
        for row in rows:
            found.setdefault(row[0], []).append(codec.load_vote(tuple(row)[1:]))
    return found


async def _draft(db: Connection, request_id: str, person: Person) -> Selections:
    text = await db.fetchval(
        "SELECT selections FROM drafts WHERE request_id = $1 AND person = $2",
        request_id,
        person.key,
    )
    return codec.load_selections(text)


async def _insert_event(db: Connection, event: Event) -> None:
    """Append `event` to its request's hash chain, in the caller's transaction. A lock per
    request (taken last, after any row lock) keeps two transactions from both chaining onto
    the same previous event."""
    await db.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':' || $1, $2))",
        event.request_id,
        EVENT_LOCKS,
    )
    prev = await db.fetchval(
        "SELECT hash FROM events WHERE request_id = $1 ORDER BY seq DESC LIMIT 1",
        event.request_id,
    )
    prev = prev or audit_log.GENESIS
    at, actor, data, digest = codec.event_row(event, prev)
    await db.execute(
        "INSERT INTO events (request_id, at, kind, actor, data, prev_hash, hash)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7)",
        event.request_id,
        at,
        event.kind,
        actor,
        data,
        prev,
        digest,
    )


async def _chain_unchained(db: Connection) -> None:
    """Chain the events stored before the audit log had hashes, in order (once: the version
    that added the hashes is applied in the same transaction, under the migration lock)."""
    heads: dict[str, str] = {}
    rows = await db.fetch(
        f"SELECT {codec.EVENT_COLUMNS} FROM events WHERE hash IS NULL ORDER BY seq"
    )
    for row in rows:
        event = codec.load_event(tuple(row))
        prev = heads.get(event.request_id)
        if prev is None:
            found = await db.fetchval(
                "SELECT hash FROM events WHERE request_id = $1 AND hash IS NOT NULL"
                " AND seq < $2 ORDER BY seq DESC LIMIT 1",
                event.request_id,
                event.seq,
            )
            prev = found or audit_log.GENESIS
        digest = codec.event_row(event, prev)[3]
        await db.execute(
            "UPDATE events SET prev_hash = $1, hash = $2 WHERE seq = $3", prev, digest, event.seq
        )
        heads[event.request_id] = digest


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
