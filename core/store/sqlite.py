"""The embedded default store: one SQLite file in WAL mode.

Every write is `BEGIN IMMEDIATE … COMMIT` under one asyncio lock, because coroutines share
the single connection and must not interleave inside each other's transactions; the
IMMEDIATE lock also serialises writers in other processes using the same file.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import aiosqlite

from core.models import MessageRef, Person, Request, Selections, Status
from core.store import codec
from core.store.base import Ending, Event
from core.store.migrations import MIGRATIONS


class SQLiteStore:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path, isolation_level=None)
        for pragma in (
            "PRAGMA journal_mode = WAL",
            # NORMAL in WAL mode survives a killed process; only an OS crash can lose
            # the last commits, which is the usual trade for a local service.
            "PRAGMA synchronous = NORMAL",
            "PRAGMA busy_timeout = 5000",
            "PRAGMA foreign_keys = ON",
        ):
            await self._db.execute(pragma)
        await self._migrate()

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("SQLiteStore.open() has not been called")
        return self._db

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                await self.db.execute("ROLLBACK")
                raise
            await self.db.execute("COMMIT")

    async def _migrate(self) -> None:
        async with self._transaction() as db:
            await db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
            row = await _one(db, "SELECT max(version) FROM schema_version")
            current = row[0] if row and row[0] is not None else 0
            for version, statements in MIGRATIONS:
                if version <= current:
                    continue
                for statement in statements:
                    await db.execute(statement)
                await db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))

    async def create(self, request: Request) -> tuple[Request, bool]:
        async with self._transaction() as db:
            cursor = await db.execute(
                "INSERT INTO requests (request_id, questions, targets, context, status,"
                " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (request_id) DO NOTHING",
                (
                    request.request_id,
                    codec.dump_questions(request.questions),
                    codec.dump_targets(request.targets),
                    request.context,
                    request.status.value,
                    codec.epoch(request.created_at),
                    codec.epoch(request.expires_at),
                ),
            )
            created = cursor.rowcount == 1
            if created:
                await _insert_event(db, Event(request.request_id, request.created_at, "created"))
            stored = await self._load(db, request.request_id)
        assert stored is not None
        return stored, created

    async def discard(self, request_id: str, at: datetime, reason: str) -> None:
        async with self._transaction() as db:
            await db.execute("DELETE FROM drafts WHERE request_id = ?", (request_id,))
            await db.execute("DELETE FROM messages WHERE request_id = ?", (request_id,))
            await db.execute("DELETE FROM requests WHERE request_id = ?", (request_id,))
            await _insert_event(db, Event(request_id, at, "post_failed", data={"error": reason}))

    async def get(self, request_id: str) -> Request | None:
        async with self._lock:
            return await self._load(self.db, request_id)

    async def list_requests(self, status: Status | None = None, limit: int = 100) -> list[Request]:
        where, args = ("WHERE status = ?", (status.value,)) if status else ("", ())
        async with self._lock:
            rows = await _all(
                self.db,
                f"SELECT {codec.REQUEST_COLUMNS} FROM requests {where}"
                " ORDER BY created_at DESC LIMIT ?",
                (*args, limit),
            )
            messages = await self._messages(self.db, [row[0] for row in rows])
        return [codec.load_request(row, messages.get(row[0], [])) for row in rows]

    async def add_message(self, request_id: str, message: MessageRef, at: datetime) -> None:
        async with self._transaction() as db:
            await db.execute(
                "INSERT INTO messages (request_id, platform, channel, message_id, data,"
                " posted_at, rendered_status) VALUES (?, ?, ?, ?, ?, ?, 'waiting')"
                " ON CONFLICT DO NOTHING",
                (
                    request_id,
                    message.platform,
                    message.channel,
                    message.message_id,
                    json.dumps(message.data),
                    codec.epoch(at),
                ),
            )
            await _insert_event(
                db,
                Event(
                    request_id,
                    at,
                    "posted",
                    data={
                        "platform": message.platform,
                        "channel": message.channel,
                        "message_id": message.message_id,
                    },
                ),
            )

    async def save_draft(
        self, request_id: str, person: Person, selections: Selections, at: datetime
    ) -> Selections:
        async with self._transaction() as db:
            row = await _one(
                db,
                "SELECT selections FROM drafts WHERE request_id = ? AND person = ?",
                (request_id, person.key),
            )
            draft = codec.load_selections(row[0] if row else None)
            draft.update(selections)
            await db.execute(
                "INSERT INTO drafts (request_id, person, selections, updated_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (request_id, person)"
                " DO UPDATE SET selections = excluded.selections,"
                " updated_at = excluded.updated_at",
                (request_id, person.key, codec.dump_selections(draft), codec.epoch(at)),
            )
        return draft

    async def draft(self, request_id: str, person: Person) -> Selections:
        async with self._lock:
            row = await _one(
                self.db,
                "SELECT selections FROM drafts WHERE request_id = ? AND person = ?",
                (request_id, person.key),
            )
        return codec.load_selections(row[0] if row else None)

    async def finish(self, request_id: str, ending: Ending) -> tuple[Request, bool]:
        async with self._transaction() as db:
            cursor = await db.execute(
                "UPDATE requests SET status = ?, ended_at = ?, answers = ?, ended_by = ?"
                " WHERE request_id = ? AND status = 'waiting'",
                (
                    ending.status.value,
                    codec.epoch(ending.at),
                    None if ending.answers is None else json.dumps(ending.answers),
                    codec.dump_person(ending.by),
                    request_id,
                ),
            )
            won = cursor.rowcount == 1
            if won:
                data = dict(ending.event_data)
                if ending.answers is not None:
                    data["answers"] = ending.answers
                await _insert_event(
                    db, Event(request_id, ending.at, ending.status.value, ending.by, data)
                )
                await db.execute("DELETE FROM drafts WHERE request_id = ?", (request_id,))
            stored = await self._load(db, request_id)
        if stored is None:
            raise KeyError(request_id)
        return stored, won

    async def next_expiry(self) -> datetime | None:
        async with self._lock:
            row = await _one(
                self.db, "SELECT min(expires_at) FROM requests WHERE status = 'waiting'"
            )
        return codec.from_epoch(row[0] if row else None)

    async def expired(self, now: datetime, limit: int = 100) -> list[str]:
        async with self._lock:
            rows = await _all(
                self.db,
                "SELECT request_id FROM requests WHERE status = 'waiting'"
                " AND expires_at <= ? ORDER BY expires_at LIMIT ?",
                (codec.epoch(now), limit),
            )
        return [row[0] for row in rows]

    async def unrendered(self) -> list[tuple[Request, MessageRef]]:
        async with self._lock:
            rows = await _all(
                self.db,
                "SELECT DISTINCT m.request_id FROM messages m JOIN requests r"
                " ON r.request_id = m.request_id"
                " WHERE m.rendered_status = 'waiting' AND r.status <> 'waiting'",
            )
            ids = [row[0] for row in rows]
            stale = await _all(
                self.db,
                "SELECT request_id, platform, channel, message_id, data FROM messages"
                f" WHERE rendered_status = 'waiting' AND request_id IN ({_marks(ids)})",
                tuple(ids),
            )
            loaded = {request_id: await self._load(self.db, request_id) for request_id in ids}
        pairs = []
        for row in stale:
            request = loaded[row[0]]
            if request is not None:
                pairs.append((request, codec.load_message(row[1:])))
        return pairs

    async def mark_rendered(self, request_id: str, message: MessageRef, status: Status) -> None:
        async with self._transaction() as db:
            await db.execute(
                "UPDATE messages SET rendered_status = ? WHERE request_id = ? AND platform = ?"
                " AND channel = ? AND message_id = ?",
                (status.value, request_id, message.platform, message.channel, message.message_id),
            )

    async def add_event(self, event: Event) -> None:
        async with self._transaction() as db:
            await _insert_event(db, event)

    async def events(self, request_id: str) -> list[Event]:
        async with self._lock:
            rows = await _all(
                self.db,
                "SELECT seq, request_id, at, kind, actor, data FROM events"
                " WHERE request_id = ? ORDER BY seq",
                (request_id,),
            )
        return [
            Event(
                request_id=row[1],
                at=_at(row[2]),
                kind=row[3],
                actor=codec.load_person(row[4]),
                data=json.loads(row[5]),
                seq=row[0],
            )
            for row in rows
        ]

    async def _load(self, db: aiosqlite.Connection, request_id: str) -> Request | None:
        row = await _one(
            db,
            f"SELECT {codec.REQUEST_COLUMNS} FROM requests WHERE request_id = ?",
            (request_id,),
        )
        if row is None:
            return None
        messages = await self._messages(db, [request_id])
        return codec.load_request(row, messages.get(request_id, []))

    async def _messages(
        self, db: aiosqlite.Connection, request_ids: list[str]
    ) -> dict[str, list[MessageRef]]:
        if not request_ids:
            return {}
        rows = await _all(
            db,
            "SELECT request_id, platform, channel, message_id, data FROM messages"
            f" WHERE request_id IN ({_marks(request_ids)}) ORDER BY posted_at",
            tuple(request_ids),
        )
        found: dict[str, list[MessageRef]] = {}
        for row in rows:
            found.setdefault(row[0], []).append(codec.load_message(row[1:]))
        return found


async def _insert_event(db: aiosqlite.Connection, event: Event) -> None:
    await db.execute(
        "INSERT INTO events (request_id, at, kind, actor, data) VALUES (?, ?, ?, ?, ?)",
        (
            event.request_id,
            codec.epoch(event.at),
            event.kind,
            codec.dump_person(event.actor),
            json.dumps(event.data),
        ),
    )


async def _one(
    db: aiosqlite.Connection, sql: str, args: Iterable[Any] = ()
) -> tuple[Any, ...] | None:
    async with db.execute(sql, tuple(args)) as cursor:
        row = await cursor.fetchone()
    return None if row is None else tuple(row)


async def _all(
    db: aiosqlite.Connection, sql: str, args: Iterable[Any] = ()
) -> list[tuple[Any, ...]]:
    async with db.execute(sql, tuple(args)) as cursor:
        return [tuple(row) for row in await cursor.fetchall()]


def _marks(items: list[str]) -> str:
    return ", ".join("?" for _ in items) or "NULL"


def _at(value: float) -> datetime:
    at = codec.from_epoch(value)
    assert at is not None
    return at
