"""The embedded default store: one SQLite file in WAL mode.

All SQL runs on one thread, and each store method does its whole transaction at once.
`BEGIN IMMEDIATE` also serialises writers in other processes using the same file.

Durability (`sync`): "normal" (the default) commits to the WAL without waiting for the disk;
a committed answer survives any crash of the askbridge process (kill -9, out of memory), and
only a power loss or an operating-system crash can lose the last commits. Such a transaction
takes a fraction of a millisecond and never waits for the disk, so it runs on the event loop's
own thread: a hop to a thread of its own and back cost more than the statements, and that
thread took the interpreter lock back from the loop after every statement (twice per
statement, a dozen statements per click). "full" waits for the disk on every commit
(power-loss durable), so it runs on a dedicated thread. Either way, the calls queued together
share one commit (`group_commit`). Checkpoints run off the commits, from a connection and thread
of their own (`checkpoints`).
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import secrets
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import IO, Any, TypeVar

from askbridge.core import audit_log
from askbridge.core.errors import StartupError
from askbridge.core.models import MessageRef, Person, Request, Selections, Status, Vote
from askbridge.core.store import codec
from askbridge.core.store.base import Attempt, Delivery, Ending, Event, Render, VoteOutcome
from askbridge.core.store.checkpoints import Checkpoints
from askbridge.core.store.group_commit import BUSY_TIMEOUT_MS, GroupCommit, Sync, primary_code
from askbridge.core.store.migrations import MIGRATIONS

T = TypeVar("T")
SECRET_BYTES = 32
PRUNE_BATCH = 500
"""Requests deleted a transaction by `prune`."""

PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    # While it opens; then the group commit's own (`busy_timeout_ms`).
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys = ON",
    # Checkpoints run from their own connection and thread (see `checkpoints`), never inside
    # a click's commit.
    "PRAGMA wal_autocheckpoint = 0",
)


class SQLiteStore:
    def __init__(
        self,
        path: str | Path,
        *,
        sync: Sync = "normal",
        checkpoints: Checkpoints | None = None,
        serving: bool = True,
    ) -> None:
        """`serving`: this process serves the file, and no other may (see `_own`); False for
        a one-off command beside a running server, such as `askbridge prune`."""
        self.path = str(path)
        self.serving = serving
        self.sync = sync
        self._db: sqlite3.Connection | None = None
        self._calls = GroupCommit(sync, lambda: self._db, self._committed)
        self.commits = 0
        self._checkpoints = (
            None if self.path == ":memory:" else checkpoints or Checkpoints(self.path)
        )
        # Requests this process is posting. One process owns the file, so that is everyone.
        self._posting: set[str] = set()
        self._lock: IO[bytes] | None = None

    async def _run(self, function: Callable[..., T], *args: Any, alone: bool = False) -> T:
        """`function(*args)` where the store's calls run, with those queued beside it
        (`group_commit`; `alone`: never with others)."""
        return await self._calls.run(partial(function, *args), alone)

    def _committed(self) -> None:
        self.commits += 1
        if self._checkpoints is not None:
            self._checkpoints.committed(self.db)

    # --- lifecycle ----------------------------------------------------------------------

    async def open(self) -> None:
        try:
            await self._run(self._open, alone=True)
        except (OSError, sqlite3.Error) as error:
            raise StartupError(
                f"cannot open the SQLite database {self.path!r} ({error}); check "
                "ASKBRIDGE_DATABASE_URL, and that its directory is writable"
            ) from error

    def _open(self) -> None:
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._lock = _own(self.path) if self.serving else None
        self._db = sqlite3.connect(self.path, isolation_level=None)
        for pragma in PRAGMAS:
            self._db.execute(pragma)
        self._db.execute(f"PRAGMA synchronous = {self.sync.upper()}")
        if self._checkpoints is not None:
            # A WAL that a checkpoint copied back is cut to this size when writing restarts.
            self._db.execute(f"PRAGMA journal_size_limit = {self._checkpoints.soft_bytes}")
        with self._transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
            current = db.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0
            for version, statements in MIGRATIONS:
                if version > current:
                    for statement in statements:
                        db.execute(statement)
                    db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
            _chain_unchained(db)
            if self.serving:
                # This process owns the file: message claims in it are a dead process's.
                db.execute("UPDATE messages SET claimed_by = NULL, claimed_until = NULL")
        self._db.execute(f"PRAGMA busy_timeout = {self._calls.busy_timeout_ms}")
        if self._checkpoints is not None:
            self._checkpoints.start()

    async def listen(self, on_change: Callable[[str], Coroutine[Any, Any, None]]) -> None:
        """One process owns a SQLite file; there is no one else to hear from."""

    async def close(self) -> None:
        if self._checkpoints is not None:
            await asyncio.to_thread(self._checkpoints.stop)
        if self._db is not None:
            await self._run(self._db.close, alone=True)
            self._db = None
        await self._calls.stop()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    async def ping(self) -> None:
        await self._run(_one, self.db, "SELECT max(version) FROM schema_version")

    def unavailable(self, error: BaseException) -> str | None:
        if not isinstance(error, sqlite3.OperationalError):
            return None
        code = primary_code(error)
        if code == sqlite3.SQLITE_BUSY:
            seconds = BUSY_TIMEOUT_MS // 1000
            return f"another process has held the SQLite database for over {seconds} s"
        if code == sqlite3.SQLITE_FULL:
            return "the disk that holds the SQLite database is full"
        if code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
            return f"the SQLite database cannot be written ({error})"
        return None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("SQLiteStore.open() has not been called")
        return self._db

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self.db
        if self._calls.grouped:
            # Inside a group commit: the job's savepoint is the transaction.
            yield db
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        self._committed()

    # --- requests -----------------------------------------------------------------------

    async def create(self, request: Request) -> tuple[Request, bool]:
        return await self._run(self._create, request)

    def _create(self, request: Request) -> tuple[Request, bool]:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO requests (request_id, questions, targets, context, status,"
                " created_at, expires_at, policy, remind_at, escalate_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (request_id) DO NOTHING",
                (
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
                ),
            )
            created = cursor.rowcount == 1
            if created:
                _insert_events(db, Event(request.request_id, request.created_at, "created"))
            stored = _load(db, request.request_id)
        assert stored is not None
        return stored, created

    async def discard(self, request_id: str, at: datetime, reason: str) -> None:
        await self._run(self._discard, request_id, at, reason)

    def _discard(self, request_id: str, at: datetime, reason: str) -> None:
        with self._transaction() as db:
            for table in ("drafts", "votes", "messages", "requests"):
                db.execute(f"DELETE FROM {table} WHERE request_id = ?", (request_id,))
            _insert_events(db, Event(request_id, at, "post_failed", data={"error": reason}))

    async def get(self, request_id: str) -> Request | None:
        return await self._run(_load, self.db, request_id)

    async def status(self, request_id: str) -> Status | None:
        found = await self._run(_status, self.db, request_id)
        return None if found is None else Status(found)

    async def prune(self, ended_before: datetime) -> int:
        before, pruned = codec.epoch(ended_before), 0
        while True:
            # A few hundred requests a transaction: clicks get their turn in between.
            count = await self._run(self._prune, before, PRUNE_BATCH)
            pruned += count
            if count < PRUNE_BATCH:
                return pruned
            await asyncio.sleep(0)

    def _prune(self, before: float, limit: int) -> int:
        with self._transaction() as db:
            db.execute("CREATE TEMP TABLE IF NOT EXISTS pruned (request_id TEXT PRIMARY KEY)")
            db.execute("DELETE FROM pruned")
            db.execute(
                "INSERT INTO pruned SELECT request_id FROM requests"
                " WHERE status <> 'waiting' AND ended_at < ? LIMIT ?",
                (before, limit),
            )
            for table in ("drafts", "votes", "messages", "events", "deliveries", "requests"):
                db.execute(f"DELETE FROM {table} WHERE request_id IN (SELECT * FROM pruned)")
            row = _one(db, "SELECT count(*) FROM pruned")
            count = int(row[0]) if row else 0
            if count < limit:
                # Requests whose posting failed left only their events.
                db.execute(
                    "DELETE FROM events WHERE at < ? AND request_id NOT IN"
                    " (SELECT request_id FROM requests)",
                    (before,),
                )
        return count

    async def get_with_draft(
        self, request_id: str, person: Person
    ) -> tuple[Request | None, Selections]:
        return await self._run(self._get_with_draft, request_id, person)

    def _get_with_draft(self, request_id: str, person: Person) -> tuple[Request | None, Selections]:
        return _load(self.db, request_id), _draft(self.db, request_id, person)

    async def list_requests(
        self, status: Status | None = None, limit: int = 100, older_than: str | None = None
    ) -> list[Request]:
        return await self._run(self._list, status, limit, older_than)

    def _list(self, status: Status | None, limit: int, older_than: str | None) -> list[Request]:
        where, args = _listing(status, older_than)
        rows = self.db.execute(
            f"SELECT {codec.REQUEST_COLUMNS} FROM requests {where}"
            " ORDER BY created_at DESC, request_id DESC LIMIT ?",
            (*args, limit),
        ).fetchall()
        ids = [row[0] for row in rows]
        messages, votes = _messages(self.db, ids), _votes(self.db, ids)
        return [
            codec.load_request(row, messages.get(row[0], []), votes.get(row[0], [])) for row in rows
        ]

    async def count_requests(self, status: Status, older_than: str | None = None) -> int:
        where, args = _listing(status, older_than)
        rows = await self._run(_all, self.db, f"SELECT count(*) FROM requests {where}", args)
        return int(rows[0][0])

    async def add_message(self, request_id: str, message: MessageRef, at: datetime) -> None:
        await self._run(self._add_message, request_id, message, at)

    def _add_message(self, request_id: str, message: MessageRef, at: datetime) -> None:
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO messages (request_id, platform, channel, message_id, data,"
                " posted_at, rendered_status, target) VALUES (?, ?, ?, ?, ?, ?, 'waiting', ?)"
                " ON CONFLICT DO NOTHING",
                (
                    request_id,
                    message.platform,
                    message.channel,
                    message.message_id,
                    json.dumps(message.data),
                    codec.epoch(at),
                    message.target,
                ),
            )
            if cursor.rowcount == 1:
                # A message starts at revision 0: if the request has moved on, it is stale.
                db.execute(
                    "UPDATE requests SET rendered = 0 WHERE request_id = ? AND rendered > 0",
                    (request_id,),
                )
            where = {
                "platform": message.platform,
                "channel": message.channel,
                "message_id": message.message_id,
            }
            _insert_events(db, Event(request_id, at, "posted", data=where))

    async def mark_posted(self, request_id: str, at: datetime) -> None:
        await self._run(self._mark_posted, request_id, at)

    def _mark_posted(self, request_id: str, at: datetime) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE requests SET posted_at = ? WHERE request_id = ? AND posted_at IS NULL",
                (codec.epoch(at), request_id),
            )

    async def unposted(self, limit: int = 100) -> list[Request]:
        return await self._run(self._unposted, limit)

    def _unposted(self, limit: int) -> list[Request]:
        rows = self.db.execute(
            "SELECT request_id FROM requests WHERE posted_at IS NULL ORDER BY created_at LIMIT ?",
            (limit,),
        ).fetchall()
        return [r for row in rows if (r := _load(self.db, row[0])) is not None]

    @asynccontextmanager
    async def posting(self, request_id: str) -> AsyncIterator[bool]:
        if request_id in self._posting:
            yield False
            return
        self._posting.add(request_id)
        try:
            yield True
        finally:
            self._posting.discard(request_id)

    # --- people -------------------------------------------------------------------------

    async def save_draft(
        self, request_id: str, person: Person, selections: Selections, at: datetime
    ) -> Selections:
        return await self._run(self._save_draft, request_id, person, selections, at)

    def _save_draft(
        self, request_id: str, person: Person, selections: Selections, at: datetime
    ) -> Selections:
        with self._transaction() as db:
            draft = _draft(db, request_id, person)
            draft.update(selections)
            db.execute(
                "INSERT INTO drafts (request_id, person, selections, updated_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (request_id, person)"
                " DO UPDATE SET selections = excluded.selections,"
                " updated_at = excluded.updated_at",
                (request_id, person.key, codec.dump_selections(draft), codec.epoch(at)),
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
        return await self._run(
            self._vote, request_id, person, answers, quorum, at, sent_at, dict(notes or {})
        )

    def _vote(
        self,
        request_id: str,
        person: Person,
        answers: dict[str, str],
        quorum: int,
        at: datetime,
        sent_at: datetime | None,
        notes: dict[str, str],
    ) -> tuple[Request, VoteOutcome]:
        encoded = codec.dump_answers(answers)
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO votes (request_id, person, voter, answers, at, sent_at, notes)"
                " SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM requests"
                " WHERE request_id = ? AND status = 'waiting')"
                " ON CONFLICT (request_id, person) DO UPDATE SET voter = excluded.voter,"
                " answers = excluded.answers, at = excluded.at, sent_at = excluded.sent_at,"
                " notes = excluded.notes"
                f" WHERE {codec.NEWER_CLICK}",
                (
                    request_id,
                    person.key,
                    person.model_dump_json(),
                    encoded,
                    codec.epoch(at),
                    None if sent_at is None else codec.epoch(sent_at),
                    json.dumps(notes) if notes else None,
                    request_id,
                ),
            )
            if cursor.rowcount == 0:
                replayed = _status(db, request_id) == Status.WAITING.value
                stored = _load(db, request_id)
                if stored is None:
                    raise KeyError(request_id)
                return stored, VoteOutcome.REPLAYED if replayed else VoteOutcome.CLOSED
            # The request's votes, the new one among them, and the head of its audit chain, in
            # one read: the votes are counted here and are part of the request the waiting
            # agents get; the vote's event (and the ending's) chain from the head.
            found = _all(
                db,
                "SELECT (SELECT hash FROM events WHERE request_id = ?1 ORDER BY seq DESC LIMIT 1),"
                f" {codec.VOTE_COLUMNS} FROM votes WHERE request_id = ?1 ORDER BY at",
                (request_id,),
            )
            head = found[0][0] or audit_log.GENESIS
            votes = [row[1:] for row in found]
            vote = Event(request_id, at, "vote", person, codec.vote_data(answers, notes))
            row: tuple[Any, ...] | None
            if sum(1 for v in votes if v[1] == encoded) >= quorum:
                outcome = VoteOutcome.DECIDED
                ending = Ending(Status.ANSWERED, at, answers=answers, by=person)
                # The ending moves the revision on, and it follows the vote in the chain.
                row = self._end(db, request_id, ending, vote, head)
            else:
                outcome = VoteOutcome.COUNTED
                _insert_events(db, vote, prev=head)
                row = _one(
                    db,
                    "UPDATE requests SET revision = revision + 1 WHERE request_id = ?"
                    f" RETURNING {codec.REQUEST_COLUMNS}",
                    (request_id,),
                )
            if row is None:
                raise KeyError(request_id)
            messages = _messages(db, [request_id]).get(request_id, [])
            stored = codec.load_request(row, messages, [codec.load_vote(v) for v in votes])
        return stored, outcome

    async def finish(self, request_id: str, ending: Ending) -> tuple[Request, bool]:
        return await self._run(self._finish, request_id, ending)

    def _finish(self, request_id: str, ending: Ending) -> tuple[Request, bool]:
        with self._transaction() as db:
            won = self._end(db, request_id, ending) is not None
            stored = _load(db, request_id)
        if stored is None:
            raise KeyError(request_id)
        return stored, won

    def _end(
        self,
        db: sqlite3.Connection,
        request_id: str,
        ending: Ending,
        cause: Event | None = None,
        head: str | None = None,
    ) -> tuple[Any, ...] | None:
        """End a waiting request: the request's row as the ending left it, or None when it was
        not waiting. `cause` (the vote that decided it) is written with the ending's event,
        before it in the chain, whose head is `head` when the caller has read it."""
        rows = db.execute(
            "UPDATE requests SET status = ?, ended_at = ?, answers = ?, ended_by = ?,"
            " revision = revision + 1 WHERE request_id = ? AND status = 'waiting'"
            f" RETURNING {codec.REQUEST_COLUMNS}",
            (
                ending.status.value,
                codec.epoch(ending.at),
                None if ending.answers is None else json.dumps(ending.answers),
                codec.dump_person(ending.by),
                request_id,
            ),
        ).fetchall()
        if len(rows) != 1:
            return None
        row = tuple(rows[0])
        policy = row[codec.REQUEST_COLUMNS_POLICY]
        data = codec.ending_data(ending, policy)
        event = Event(request_id, ending.at, ending.status.value, ending.by, data)
        _insert_events(db, *filter(None, (cause, event)), prev=head)
        db.execute("DELETE FROM drafts WHERE request_id = ?", (request_id,))
        url = codec.callback_url(policy)
        if url is not None:
            db.execute(
                "INSERT INTO deliveries (delivery_id, request_id, url, created_at, next_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (f"dlv_{uuid.uuid4().hex}", request_id, url, *[codec.epoch(ending.at)] * 2),
            )
        return row

    # --- time and rendering -------------------------------------------------------------

    # The deadline queries name their partial indexes: without statistics SQLite's planner
    # takes the status index and reads every waiting request instead.
    async def next_deadline(self) -> datetime | None:
        row = await self._run(
            _one,
            self.db,
            "SELECT min(at) FROM ("
            " SELECT min(expires_at) AS at FROM requests INDEXED BY requests_waiting_expiry"
            " WHERE status = 'waiting' AND expires_at IS NOT NULL"
            " UNION ALL SELECT min(remind_at) FROM requests INDEXED BY requests_waiting_remind"
            " WHERE status = 'waiting' AND reminded_at IS NULL AND remind_at IS NOT NULL"
            " UNION ALL SELECT min(escalate_at) FROM requests"
            " INDEXED BY requests_waiting_escalate"
            " WHERE status = 'waiting' AND escalate_at IS NOT NULL)",
        )
        return codec.from_epoch(row[0] if row else None)

    async def due_reminders(self, now: datetime, limit: int = 100) -> list[str]:
        rows = await self._run(
            _all,
            self.db,
            "SELECT request_id FROM requests INDEXED BY requests_waiting_remind"
            " WHERE status = 'waiting' AND reminded_at IS NULL"
            " AND remind_at <= ? ORDER BY remind_at LIMIT ?",
            (codec.epoch(now), limit),
        )
        return [row[0] for row in rows]

    async def mark_reminded(self, request_id: str, at: datetime) -> bool:
        return await self._run(self._mark_reminded, request_id, at)

    def _mark_reminded(self, request_id: str, at: datetime) -> bool:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE requests SET reminded_at = ?, pings = pings + 1,"
                " revision = revision + 1 WHERE request_id = ?"
                " AND status = 'waiting' AND reminded_at IS NULL",
                (codec.epoch(at), request_id),
            )
            if cursor.rowcount == 1:
                _insert_events(db, Event(request_id, at, "reminder"))
                return True
            return False

    async def due_escalations(self, now: datetime, limit: int = 100) -> list[str]:
        rows = await self._run(
            _all,
            self.db,
            "SELECT request_id FROM requests INDEXED BY requests_waiting_escalate"
            " WHERE status = 'waiting' AND escalate_at <= ? ORDER BY escalate_at LIMIT ?",
            (codec.epoch(now), limit),
        )
        return [row[0] for row in rows]

    async def escalate(
        self, request_id: str, step: int, at: datetime, next_at: datetime | None
    ) -> bool:
        return await self._run(self._escalate, request_id, step, at, next_at)

    def _escalate(self, request_id: str, step: int, at: datetime, next_at: datetime | None) -> bool:
        with self._transaction() as db:
            row = _one(
                db,
                "SELECT policy, targets FROM requests WHERE request_id = ?"
                " AND status = 'waiting' AND escalation_step = ?",
                (request_id, step),
            )
            found = None if row is None else codec.escalated(row[0], row[1], step)
            if found is None:
                return False
            taken, targets = found
            db.execute(
                "UPDATE requests SET escalation_step = ?, escalated_at = ?, escalate_at = ?,"
                " revision = revision + 1, pings = pings + ?,"
                " targets = coalesce(?, targets),"
                " posted_at = CASE WHEN ? IS NULL THEN posted_at END"
                " WHERE request_id = ? AND status = 'waiting' AND escalation_step = ?",
                (
                    step + 1,
                    codec.epoch(at),
                    codec.epoch(next_at),
                    int(taken.mention),
                    targets,
                    targets,
                    request_id,
                    step,
                ),
            )
            data = codec.escalation_data(step, taken)
            _insert_events(db, Event(request_id, at, "escalated", data=data))
            return True

    async def expired(self, now: datetime, limit: int = 100) -> list[str]:
        rows = await self._run(
            _all,
            self.db,
            "SELECT request_id FROM requests INDEXED BY requests_waiting_expiry"
            " WHERE status = 'waiting' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
            (codec.epoch(now), limit),
        )
        return [row[0] for row in rows]

    async def unrendered(self, now: datetime | None = None) -> list[tuple[str, MessageRef]]:
        return await self._run(self._unrendered, now)

    def _unrendered(self, now: datetime | None) -> list[tuple[str, MessageRef]]:
        # Only the requests with a stale message, from their index: a full scan of the
        # messages took 9 ms per 20,000 on the event loop's thread, every sweep.
        with self._transaction() as db:
            # A request that changed without ever being posted has nothing to show it.
            db.execute(
                "UPDATE requests INDEXED BY requests_unrendered SET rendered = revision"
                " WHERE rendered < revision AND NOT EXISTS"
                " (SELECT 1 FROM messages m WHERE m.request_id = requests.request_id)"
            )
            rows = db.execute(
                "SELECT m.request_id, m.platform, m.channel, m.message_id, m.data, m.target"
                " FROM requests r INDEXED BY requests_unrendered"
                " JOIN messages m ON m.request_id = r.request_id"
                " WHERE r.rendered < r.revision AND m.rendered_revision < r.revision"
                " AND (? IS NULL OR m.claimed_until IS NULL OR m.claimed_until <= ?)",
                (codec.epoch(now), codec.epoch(now)),
            ).fetchall()
        return [(row[0], codec.load_message(row[1:])) for row in rows]

    async def claim_message(
        self, request_id: str, message: MessageRef, owner: str, now: datetime, until: datetime
    ) -> Render | None:
        return await self._run(self._claim_message, request_id, message, owner, now, until)

    def _claim_message(
        self, request_id: str, message: MessageRef, owner: str, now: datetime, until: datetime
    ) -> Render | None:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE messages SET claimed_by = ?, claimed_until = ?"
                f" WHERE {_MESSAGE} AND (claimed_by IS NULL OR claimed_by = ?"
                " OR claimed_until <= ?) AND rendered_revision < (SELECT revision"
                " FROM requests WHERE request_id = messages.request_id)",
                (
                    owner,
                    codec.epoch(until),
                    *_message_key(request_id, message),
                    owner,
                    codec.epoch(now),
                ),
            )
            return _render(db, request_id, message) if cursor.rowcount == 1 else None

    async def mark_rendered(
        self, request_id: str, message: MessageRef, owner: str, rendered: Render, until: datetime
    ) -> Render | None:
        return await self._run(self._mark_rendered, request_id, message, owner, rendered, until)

    def _mark_rendered(
        self, request_id: str, message: MessageRef, owner: str, rendered: Render, until: datetime
    ) -> Render | None:
        with self._transaction() as db:
            row = _one(db, "SELECT revision FROM requests WHERE request_id = ?", (request_id,))
            newer = row is not None and row[0] > rendered.revision
            cursor = db.execute(
                "UPDATE messages SET rendered_status = ?,"
                " rendered_revision = max(rendered_revision, ?), pinged = max(pinged, ?),"
                f" claimed_by = ?, claimed_until = ? WHERE {_MESSAGE} AND claimed_by = ?",
                (
                    rendered.request.status.value,
                    rendered.revision,
                    rendered.pings,
                    owner if newer else None,
                    codec.epoch(until) if newer else None,
                    *_message_key(request_id, message),
                    owner,
                ),
            )
            db.execute(
                "UPDATE requests SET rendered = coalesce((SELECT min(rendered_revision)"
                " FROM messages WHERE request_id = ?1), revision)"
                " WHERE request_id = ?1 AND rendered < revision",
                (request_id,),
            )
            return _render(db, request_id, message) if newer and cursor.rowcount == 1 else None

    async def renew_claims(self, owner: str, until: datetime) -> int:
        return await self._run(self._renew_claims, owner, until)

    def _renew_claims(self, owner: str, until: datetime) -> int:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE messages SET claimed_until = ? WHERE claimed_by = ?",
                (codec.epoch(until), owner),
            )
        return cursor.rowcount

    async def release_claims(self, owner: str) -> None:
        await self._run(self._release_claims, owner)

    def _release_claims(self, owner: str) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE messages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = ?",
                (owner,),
            )

    async def secret(self, name: str) -> bytes:
        return bytes.fromhex(await self._run(self._secret, name))

    def _secret(self, name: str) -> str:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (name, secrets.token_hex(SECRET_BYTES)),
            )
            row = _one(db, "SELECT value FROM secrets WHERE name = ?", (name,))
        assert row is not None
        return str(row[0])

    # --- audit --------------------------------------------------------------------------

    async def add_event(self, event: Event) -> None:
        await self._run(self._add_event, event)

    def _add_event(self, event: Event) -> None:
        with self._transaction() as db:
            _insert_events(db, event)

    async def events(
        self,
        request_id: str | None = None,
        since: datetime | None = None,
        limit: int = 1000,
        *,
        until: datetime | None = None,
        after: int = 0,
    ) -> list[Event]:
        conditions = ["at >= ?", "seq > ?"]
        args: list[Any] = [codec.epoch(since) if since else 0.0, after]
        if until is not None:
            conditions.append("at < ?")
            args.append(codec.epoch(until))
        if request_id is not None:
            conditions.append("request_id = ?")
            args.append(request_id)
        rows = await self._run(
            _all,
            self.db,
            f"SELECT {codec.EVENT_COLUMNS} FROM events"
            f" WHERE {' AND '.join(conditions)} ORDER BY seq LIMIT ?",
            (*args, limit),
        )
        return [codec.load_event(row) for row in rows]

    # --- webhooks -----------------------------------------------------------------------

    async def claim_deliveries(
        self, owner: str, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        return await self._run(self._claim_deliveries, owner, now, lease_until, limit)

    def _claim_deliveries(
        self, owner: str, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        with self._transaction() as db:
            rows = _all(
                db,
                f"SELECT {codec.DELIVERY_COLUMNS} FROM deliveries WHERE done_at IS NULL"
                " AND next_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)"
                " ORDER BY next_at LIMIT ?",
                (codec.epoch(now), codec.epoch(now), limit),
            )
            db.executemany(
                "UPDATE deliveries SET claimed_by = ?, claimed_until = ? WHERE delivery_id = ?",
                [(owner, codec.epoch(lease_until), row[0]) for row in rows],
            )
        return [codec.load_delivery(row) for row in rows]

    async def record_attempt(self, delivery: Delivery, owner: str, attempt: Attempt) -> bool:
        return await self._run(self._record_attempt, delivery, owner, attempt)

    def _record_attempt(self, delivery: Delivery, owner: str, attempt: Attempt) -> bool:
        done = None if attempt.next_at is not None else codec.epoch(attempt.at)
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE deliveries SET attempts = attempts + 1, claimed_by = NULL,"
                " claimed_until = NULL, next_at = coalesce(?, next_at), done_at = ?, result = ?"
                " WHERE delivery_id = ? AND claimed_by = ? AND done_at IS NULL",
                (
                    codec.epoch(attempt.next_at),
                    done,
                    attempt.result,
                    delivery.delivery_id,
                    owner,
                ),
            )
            data = codec.attempt_data(delivery, attempt)
            _insert_events(db, Event(delivery.request_id, attempt.at, "webhook", data=data))
        return cursor.rowcount == 1

    async def next_delivery(self) -> datetime | None:
        row = await self._run(
            _one,
            self.db,
            "SELECT min(max(next_at, coalesce(claimed_until, 0))) FROM deliveries"
            " WHERE done_at IS NULL",
        )
        return codec.from_epoch(row[0] if row else None)


def _own(path: str) -> IO[bytes]:
    """Lock `<path>.lock` for this process, or fail: SQLite serves one process, and a second
    one on the same file would neither hear the first's changes nor share its claims.

    A POSIX record lock belongs to the process, so two stores of one process (tests standing
    for replicas) share it, and it goes with the process however that ends."""
    lock = open(f"{path}.lock", "ab")  # noqa: SIM115 - held until close()
    try:
        fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        lock.close()
        raise StartupError(
            f"the SQLite database {path!r} is in use by another askbridge process ({error}); "
            "SQLite serves a single process: stop the other one, or point "
            "ASKBRIDGE_DATABASE_URL at PostgreSQL to run several replicas"
        ) from error
    return lock


def _load(db: sqlite3.Connection, request_id: str) -> Request | None:
    row = _one(
        db, f"SELECT {codec.REQUEST_COLUMNS} FROM requests WHERE request_id = ?", (request_id,)
    )
    if row is None:
        return None
    return codec.load_request(
        row,
        _messages(db, [request_id]).get(request_id, []),
        _votes(db, [request_id]).get(request_id, []),
    )


_MESSAGE = "request_id = ? AND platform = ? AND channel = ? AND message_id = ?"


def _message_key(request_id: str, message: MessageRef) -> tuple[str, str, str, str]:
    return (request_id, message.platform, message.channel, message.message_id)


def _render(db: sqlite3.Connection, request_id: str, message: MessageRef) -> Render | None:
    row = _one(
        db,
        "SELECT r.revision, r.pings, m.pinged FROM messages m JOIN requests r"
        " ON r.request_id = m.request_id WHERE m.request_id = ? AND m.platform = ?"
        " AND m.channel = ? AND m.message_id = ?",
        _message_key(request_id, message),
    )
    request = _load(db, request_id)
    if row is None or request is None:
        return None
    revision, pings, pinged = row
    return Render(request, revision, pings, ping=pinged < pings)


def _votes(db: sqlite3.Connection, request_ids: list[str]) -> dict[str, list[Vote]]:
    if not request_ids:
        return {}
    marks = ", ".join("?" for _ in request_ids)
    rows = db.execute(
        f"SELECT request_id, {codec.VOTE_COLUMNS} FROM votes WHERE request_id IN ({marks})"
        " ORDER BY at",
        tuple(request_ids),
    ).fetchall()
    found: dict[str, list[Vote]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(codec.load_vote(row[1:]))
    return found


def _messages(db: sqlite3.Connection, request_ids: list[str]) -> dict[str, list[MessageRef]]:
    if not request_ids:
        return {}
    marks = ", ".join("?" for _ in request_ids)
    rows = db.execute(
        f"SELECT request_id, {codec.MESSAGE_COLUMNS} FROM messages"
        f" WHERE request_id IN ({marks}) ORDER BY posted_at, rowid",
        tuple(request_ids),
    ).fetchall()
    found: dict[str, list[MessageRef]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(codec.load_message(row[1:]))
    return found


def _draft(db: sqlite3.Connection, request_id: str, person: Person) -> Selections:
    row = _one(
        db,
        "SELECT selections FROM drafts WHERE request_id = ? AND person = ?",
        (request_id, person.key),
    )
    return codec.load_selections(row[0] if row else None)


def _insert_events(db: sqlite3.Connection, *events: Event, prev: str | None = None) -> str:
    """Append `events`, in order, to their request's hash chain in one statement (writers are
    serialised: BEGIN IMMEDIATE) and return the last hash; `prev`: the chain's head, when the
    caller has read it."""
    if prev is None:
        row = _one(
            db,
            "SELECT hash FROM events WHERE request_id = ? ORDER BY seq DESC LIMIT 1",
            (events[0].request_id,),
        )
        prev = row[0] if row and row[0] else audit_log.GENESIS
    values: list[Any] = []
    for event in events:
        at, actor, data, digest = codec.event_row(event, prev)
        values += (event.request_id, at, event.kind, actor, data, prev, digest)
        prev = digest
    rows = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(events))
    db.execute(
        f"INSERT INTO events (request_id, at, kind, actor, data, prev_hash, hash) VALUES {rows}",
        values,
    )
    return prev


def _chain_unchained(db: sqlite3.Connection) -> None:
    """Chain the events stored before the audit log had hashes, in order (once: the version
    that added the hashes is applied in the same transaction)."""
    heads: dict[str, str] = {}
    rows = _all(db, f"SELECT {codec.EVENT_COLUMNS} FROM events WHERE hash IS NULL ORDER BY seq")
    for row in rows:
        event = codec.load_event(row)
        prev = heads.get(event.request_id)
        if prev is None:
            found = _one(
                db,
                "SELECT hash FROM events WHERE request_id = ? AND hash IS NOT NULL AND seq < ?"
                " ORDER BY seq DESC LIMIT 1",
                (event.request_id, event.seq),
            )
            prev = found[0] if found else audit_log.GENESIS
        digest = codec.event_row(event, prev)[3]
        db.execute(
            "UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, digest, event.seq)
        )
        heads[event.request_id] = digest


def _status(db: sqlite3.Connection, request_id: str) -> str | None:
    row = _one(db, "SELECT status FROM requests WHERE request_id = ?", (request_id,))
    return None if row is None else str(row[0])


def _one(db: sqlite3.Connection, sql: str, args: Iterable[Any] = ()) -> tuple[Any, ...] | None:
    row = db.execute(sql, tuple(args)).fetchone()
    return None if row is None else tuple(row)


def _listing(status: Status | None, older_than: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause of a listing: by status, and after request `older_than` in its order."""
    conditions: list[str] = []
    args: list[str] = []
    if status is not None:
        conditions.append("status = ?")
        args.append(status.value)
    if older_than is not None:
        conditions.append(
            "(created_at, request_id) <"
            " (SELECT created_at, request_id FROM requests WHERE request_id = ?)"
        )
        args.append(older_than)
    return ("WHERE " + " AND ".join(conditions) if conditions else ""), tuple(args)


def _all(db: sqlite3.Connection, sql: str, args: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in db.execute(sql, tuple(args)).fetchall()]
