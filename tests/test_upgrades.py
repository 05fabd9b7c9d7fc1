"""A database an earlier askbridge left is upgraded without losing anything, on both stores:
ended requests read back as they were, a waiting one (votes cast, a tool approval, a webhook to
send) can still be answered and its agent gets the answer, the webhook the earlier version left
in the outbox is delivered, and the audit chain holds across the versions.

Each `tests/upgrades/schema-N.json` holds every row of a SQLite database that the askbridge of
one commit wrote through its own broker, and how each request read back then; see
`tests/upgrades/README.md` for how they were made. The database is made again here from the
migrations up to that version (they are never edited once shipped, so that is the schema the
earlier askbridge made) and those rows, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from aiohttp import web

from askbridge.core import audit_log
from askbridge.core.api.status import AuditEvent
from askbridge.core.broker import Broker
from askbridge.core.callback_guard import AllowList
from askbridge.core.clock import ManualClock
from askbridge.core.intents import Decided, Submit
from askbridge.core.models import Person, Request
from askbridge.core.store import migrations as sqlite_schema
from askbridge.core.store import open_store
from askbridge.core.store import postgres_schema as pg_schema
from askbridge.core.webhooks import WebhookOptions
from tests.chat import Chat
from tests.stores import database_url

FIXTURES = Path(__file__).parent / "upgrades"
RECORDED_HOOK = "http://127.0.0.1:18999/hook"
"""The callback URL the fixtures were written with; the receiver here listens elsewhere."""
POSTGRES_VERSION = {1: 1, 7: 6, 12: 11, 15: 15}
"""The PostgreSQL schema version that holds what a SQLite one does (PostgreSQL's first version
had the approval policy that SQLite's second added, so their numbers differ until 15)."""
AGREEING = (Person(platform="chat", id="U2", name="Bob"), Person(platform="chat", id="U3"))
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def fixture(version: int) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / f"schema-{version}.json").read_text())
    return loaded


def read_back(request: Request) -> dict[str, Any]:
    """What the fixtures recorded of each request when the earlier askbridge read it."""
    seen = {
        "status": request.status.value,
        "answers": request.answers,
        "ended_at": request.ended_at.isoformat() if request.ended_at else None,
        "votes": [(v.person.id, v.person.name, v.answers, v.at.isoformat()) for v in request.votes],
        "context": request.context,
        "quorum": request.policy.quorum,
        "by": [p.id if p else None for p in (request.answered_by, request.cancelled_by)],
        "messages": [(m.platform, m.channel, m.message_id) for m in request.messages],
    }
    found: dict[str, Any] = json.loads(json.dumps(seen))
    return found


async def make_earlier(url: str, version: int, hook: str) -> dict[str, Any]:
    """The database the earlier askbridge left, its callback URLs pointing at `hook`."""
    recorded: dict[str, Any] = json.loads(json.dumps(fixture(version)).replace(RECORDED_HOOK, hook))
    tables: dict[str, dict[str, Any]] = recorded["tables"]
    if url.startswith("sqlite"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        db.execute("CREATE TABLE schema_version (version INTEGER)")
        for number, statements in sqlite_schema.MIGRATIONS:
            if number <= version:
                for statement in statements:
                    db.execute(statement)
                db.execute("INSERT INTO schema_version VALUES (?)", (number,))
        for name, table in tables.items():
            marks = ", ".join("?" * len(table["columns"]))
            columns = ", ".join(table["columns"])
            db.executemany(f"INSERT INTO {name} ({columns}) VALUES ({marks})", table["rows"])
        db.commit()
        db.close()
        return recorded
    pg = await asyncpg.connect(url)
    try:
        await pg.execute("CREATE TABLE schema_version (version INTEGER)")
        for number, statements in pg_schema.MIGRATIONS:
            if number <= POSTGRES_VERSION[version]:
                for statement in statements:
                    await pg.execute(statement)
                await pg.execute("INSERT INTO schema_version VALUES ($1)", number)
        for name, table in tables.items():
            marks = ", ".join(f"${i}" for i in range(1, len(table["columns"]) + 1))
            columns = ", ".join(table["columns"])
            # The events' order is their seq, kept as it was written.
            overriding = " OVERRIDING SYSTEM VALUE" if name == "events" else ""
            await pg.executemany(
                f"INSERT INTO {name} ({columns}){overriding} VALUES ({marks})", table["rows"]
            )
        await pg.execute(
            "SELECT setval(pg_get_serial_sequence('events', 'seq'), max(seq)) FROM events"
        )
    finally:
        await pg.close()
    return recorded


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[str, asyncio.Queue[str]]]:
    """A webhook receiver: its URL, and the request ids it was sent, in order."""
    received: asyncio.Queue[str] = asyncio.Queue()

    async def hook(request: web.Request) -> web.Response:
        await received.put(json.loads(await request.read())["request_id"])
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}/hook", received
    await runner.cleanup()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
@pytest.mark.parametrize("version", sorted(POSTGRES_VERSION))
async def test_an_earlier_askbridges_database_is_upgraded_without_losing_anything(
    kind: str, version: int, tmp_path: Path, receiver: tuple[str, asyncio.Queue[str]]
) -> None:
    hook, received = receiver
    async with database_url(kind, tmp_path) as url:
        recorded = await make_earlier(url, version, hook)
        earlier_events = recorded["tables"]["events"]["rows"]
        store = open_store(url)
        await store.open()
        options = WebhookOptions(
            secret=SECRET,
            body=lambda r: json.dumps({"request_id": r.request_id}).encode(),
            allow=AllowList.parse("127.0.0.1"),
        )
        broker = Broker(store, clock=ManualClock(), default_target="chat:C1", webhooks=options)
        broker.add_surface(Chat())
        await broker.start()
        try:
            reads: dict[str, dict[str, Any]] = recorded["reads_back"]
            for request_id, then in reads.items():
                assert read_back(await broker.get(request_id)) == then, request_id
            # The outbox as the earlier askbridge left it: each delivery is sent.
            outbox = recorded["tables"].get("deliveries", {"columns": ["request_id"], "rows": []})
            at = outbox["columns"].index("request_id")
            pending = [row[at] for row in outbox["rows"]]
            for request_id in pending:
                assert await asyncio.wait_for(received.get(), 10) == request_id

            waiting = [i for i, r in reads.items() if r["status"] == "waiting"]
            assert waiting
            for request_id in waiting:
                agent = asyncio.create_task(broker.wait(request_id, 10))
                for person in AGREEING:
                    outcome = await broker.act(request_id, person, Submit(selections={0: (0,)}))
                    if isinstance(outcome, Decided):
                        break
                assert isinstance(outcome, Decided), (request_id, outcome)
                answered = await asyncio.wait_for(agent, 10)
                assert (answered.status.value, answered.answers) == (
                    "answered",
                    {"Deploy": "Approve"},
                )
                if answered.policy.callback_url is not None:
                    assert await asyncio.wait_for(received.get(), 10) == request_id

            events = await store.events()
            assert len(events) > len(earlier_events)
            columns = recorded["tables"]["events"]["columns"]
            if "hash" in columns:
                # Hashes written by the earlier askbridge are kept, not made again.
                assert [e.hash for e in events[: len(earlier_events)]] == [
                    row[columns.index("hash")] for row in earlier_events
                ]
            lines = [json.dumps({audit_log.HEADER: {"version": 1, "since": None}})]
            lines += [json.dumps(AuditEvent.of(e).model_dump(mode="json")) for e in events]
            lines.append(json.dumps({audit_log.END: {"events": len(events)}}))
            verified = audit_log.verify(lines)
            assert isinstance(verified, audit_log.Verified), verified
            assert verified.events == len(events)
        finally:
            await broker.stop()
            await store.close()
