"""The embedded default store: one SQLite file in WAL mode.

What each call does is written once for both stores (`transactions`, `queries`); here is only
how SQLite runs it (`group_commit`, `checkpoints`) and what is SQLite's own: the vote's
statements, the posting claim (one process owns the file), the file lock and the errors that
mean the database cannot serve. Durability (`sync`): docs/explanation/durability.md.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import IO, Any, ParamSpec, TypeVar

from askbridge.core import audit_log
from askbridge.core.errors import StartupError
from askbridge.core.models import MessageRef, Person, Request, Selections, Status
from askbridge.core.store import codec
from askbridge.core.store import queries as q
from askbridge.core.store import transactions as tx
from askbridge.core.store.base import (
    Attempt,
    Click,
    Delivery,
    Ending,
    Event,
    Render,
    VoteOutcome,
)
from askbridge.core.store.checkpoints import Checkpoints
from askbridge.core.store.group_commit import BUSY_TIMEOUT_MS, GroupCommit, Sync, primary_code
from askbridge.core.store.migrations import MIGRATIONS
from askbridge.core.store.transactions import Script

T = TypeVar("T")
P = ParamSpec("P")

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
        upgrade: bool = True,
    ) -> None:
        """`serving`: this process serves the file, and no other may (see `_own`); False for
        a one-off command beside a running server, such as `askbridge prune`. `upgrade`: bring
        an older schema up to date (the server); False refuses it (a one-off command)."""
        self.path = str(path)
        self.serving = serving
        self.upgrade = upgrade
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
        except StartupError:
            # A schema this askbridge must not use: the file is left as it was, and free.
            await self.close()
            raise
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
        # "normal": a commit survives any crash of the process, not a power loss; "full"
        # waits for the disk on every commit.
        self._db.execute(f"PRAGMA synchronous = {self.sync.upper()}")
        if self._checkpoints is not None:
            # A WAL that a checkpoint copied back is cut to this size when writing restarts.
            self._db.execute(f"PRAGMA journal_size_limit = {self._checkpoints.soft_bytes}")
        with self._transaction() as db:
            _drive(db, tx.migrate(MIGRATIONS, upgrade=self.upgrade))
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
        await self._read(tx.schema_known, MIGRATIONS[-1][0])

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

    async def _write(self, script: Callable[P, Script[T]], *args: P.args, **kw: P.kwargs) -> T:
        """`script` in a transaction of its own, or in its group's (`group_commit`)."""
        return await self._calls.run(partial(self._write_now, script, *args, **kw), False)

    def _write_now(self, script: Callable[P, Script[T]], *args: P.args, **kw: P.kwargs) -> T:
        # The script is made here, on each try: a call that found the database busy is run again.
        with self._transaction() as db:
            return _drive(db, script(*args, **kw))

    async def _read(self, script: Callable[P, Script[T]], *args: P.args, **kw: P.kwargs) -> T:
        return await self._calls.run(partial(self._read_now, script, *args, **kw), False)

    def _read_now(self, script: Callable[P, Script[T]], *args: P.args, **kw: P.kwargs) -> T:
        return _drive(self.db, script(*args, **kw))

    # --- requests -----------------------------------------------------------------------

    async def create(self, request: Request) -> tuple[Request, bool]:
        return await self._write(tx.create, request)

    async def discard(self, request_id: str, at: datetime, reason: str) -> None:
        await self._write(tx.discard, request_id, at, reason)

    async def get(self, request_id: str) -> Request | None:
        return await self._read(tx.load, request_id)

    async def status(self, request_id: str) -> Status | None:
        return await self._read(tx.status, request_id)

    async def prune(self, ended_before: datetime) -> int:
        before, pruned = codec.epoch(ended_before), 0
        assert before is not None
        while True:
            # A few hundred requests a transaction: clicks get their turn in between.
            count = await self._write(tx.prune, before, tx.PRUNE_BATCH)
            pruned += count
            if count < tx.PRUNE_BATCH:
                return pruned
            await asyncio.sleep(0)

    async def get_with_draft(
        self, request_id: str, person: Person
    ) -> tuple[Request | None, Selections]:
        return await self._read(tx.get_with_draft, request_id, person)

    async def list_requests(
        self, status: Status | None = None, limit: int = 100, older_than: str | None = None
    ) -> list[Request]:
        return await self._read(tx.list_requests, status, limit, older_than)

    async def count_requests(self, status: Status, older_than: str | None = None) -> int:
        return await self._read(tx.count_requests, status, older_than)

    async def waiting_by_surface(self) -> dict[str, int]:
        return await self._read(tx.waiting_by_surface)

    async def add_message(self, request_id: str, message: MessageRef, at: datetime) -> None:
        await self._write(tx.add_message, request_id, message, at)

    async def mark_posted(self, request_id: str, at: datetime) -> None:
        await self._write(tx.mark_posted, request_id, at)

    async def unposted(self, limit: int = 100) -> list[Request]:
        return await self._read(tx.unposted, limit)

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
        return await self._write(
            _vote, request_id, person, answers, quorum, at, sent_at, notes, click_id, changed
        )

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
        return await self._write(tx.unrendered, now)

    async def claim_message(
        self, request_id: str, message: MessageRef, owner: str, now: datetime, until: datetime
    ) -> Render | None:
        return await self._write(tx.claim_message, request_id, message, owner, now, until)

    async def mark_rendered(
        self, request_id: str, message: MessageRef, owner: str, rendered: Render, until: datetime
    ) -> Render | None:
        return await self._write(tx.mark_rendered, request_id, message, owner, rendered, until)

    async def renew_claims(self, owner: str, until: datetime) -> int:
        return await self._write(tx.renew_claims, owner, until)

    async def release_claims(self, owner: str) -> None:
        await self._write(tx.release_claims, owner)

    # --- audit --------------------------------------------------------------------------

    async def secret(self, name: str) -> bytes:
        return await self._write(tx.secret, name)

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


def _vote(
    request_id: str,
    person: Person,
    answers: dict[str, str],
    quorum: int,
    at: datetime,
    sent_at: datetime | None,
    notes: Mapping[str, str] | None,
    click_id: str | None = None,
    changed: Mapping[str, Any] | None = None,
) -> Script[tuple[Request, VoteOutcome]]:
    """A vote in four statements: recorded (unless the request ended or a newer click's vote
    is), counted, and the request either ended or moved on, then its messages read; a click
    known by its delivery's id is recorded first, and seen before, it ends there."""
    if click_id is not None:
        click = Click(person, at, click_id=click_id)
        if not (yield from tx.first_delivery(request_id, click)):
            return (yield from _unrecorded(request_id, VoteOutcome.REPLAYED))
    encoded = codec.dump_answers(answers, changed)
    recorded = yield q.VOTE.count(
        request_id=request_id,
        person=person.key,
        voter=person.model_dump_json(),
        answers=encoded,
        at=codec.epoch(at),
        sent_at=codec.epoch(sent_at),
        notes=json.dumps(dict(notes)) if notes else None,
    )
    if recorded == 0:
        replayed = (yield from tx.status(request_id)) is Status.WAITING
        outcome = VoteOutcome.REPLAYED if replayed else VoteOutcome.CLOSED
        return (yield from _unrecorded(request_id, outcome))
    # The request's votes, the new one among them, and the head of its audit chain, in one
    # read: the votes are counted here and are part of the request the waiting agents get;
    # the vote's event (and the ending's) chain from the head.
    found = yield q.COUNT_VOTES.rows(request_id=request_id)
    head = found[0][0] or audit_log.GENESIS
    votes = [row[1:] for row in found]
    vote = Event(request_id, at, "vote", person, codec.vote_data(answers, notes, changed))
    if sum(1 for v in votes if v[1] == encoded) >= quorum:
        outcome = VoteOutcome.DECIDED
        allowed = None if changed is None else dict(changed)
        ending = Ending(Status.ANSWERED, at, answers=answers, by=person, changed=allowed)
        # The ending moves the revision on, and it follows the vote in the chain.
        row = yield from tx.end(request_id, ending, vote, head)
    else:
        outcome = VoteOutcome.COUNTED
        yield from tx.add_events(vote, prev=head)
        row = yield q.COUNTED.row(request_id=request_id)
    if row is None:
        raise KeyError(request_id)
    messages = tx.messages((yield q.MESSAGES.rows(request_id=request_id)))
    return codec.load_request(row, messages, [codec.load_vote(v) for v in votes]), outcome


def _unrecorded(request_id: str, outcome: VoteOutcome) -> Script[tuple[Request, VoteOutcome]]:
    """The request as it is, for a vote that was not recorded (`outcome`)."""
    stored = yield from tx.load(request_id)
    if stored is None:
        raise KeyError(request_id)
    return stored, outcome


def _drive(db: sqlite3.Connection, script: Script[T]) -> T:
    """Run `script` on `db`: each statement it yields, its result sent back."""
    result: Any = None
    try:
        while True:
            step = script.send(result)
            sql = step.query.sqlite
            if sql is None:
                result = None
                continue
            cursor = db.execute(sql, step.params)
            if step.want == "count":
                result = cursor.rowcount
            elif step.want == "run":
                result = None
            elif step.want == "rows":
                result = cursor.fetchall()
            else:
                result = cursor.fetchone()
                if step.want == "value" and result is not None:
                    result = result[0]
    except StopIteration as done:
        value: T = done.value
        return value


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
