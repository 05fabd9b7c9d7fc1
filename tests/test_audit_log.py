"""The audit log is a hash chain per request: every store writes it, an export carries it, and
`askbridge audit --verify` finds the first link a changed or deleted line breaks."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
import rfc8785

from askbridge.bots.service import Service
from askbridge.client import subject_matches
from askbridge.core import audit_log
from askbridge.core.api.status import AuditEvent
from askbridge.core.clock import ManualClock, iso
from askbridge.core.models import Person, Policy, Status
from askbridge.core.store import Store, open_store, postgres_schema
from askbridge.core.store import migrations as sqlite_schema
from askbridge.core.store.base import Ending, Event
from askbridge.core.subject import subject_sha256
from tests.conftest import DEPLOY
from tests.stores import database_url
from tests.test_stores import NOW, person, request
from tests.web_person import answer_on_web


def chain_version(migrations: tuple[tuple[int, tuple[str, ...]], ...]) -> int:
    """The schema version that added the hashes (whatever number it has after a merge)."""
    return next(
        v for v, statements in migrations if any("ADD COLUMN hash" in s for s in statements)
    )


def exported(events: list[Event], since: str | None = None) -> list[str]:
    header = {audit_log.HEADER: {"version": 1, "since": since}}
    lines = [header] + [AuditEvent.of(e).model_dump(mode="json") for e in events]
    lines.append({audit_log.END: {"events": len(events)}})
    return [json.dumps(line) for line in lines]


def assert_chained(events: list[Event]) -> None:
    heads: dict[str, str] = {}
    for event in events:
        assert event.prev_hash == heads.get(event.request_id, audit_log.GENESIS)
        assert event.hash == audit_log.event_hash(AuditEvent.of(event).model_dump(mode="json"))
        heads[event.request_id] = event.hash
    assert isinstance(audit_log.verify(exported(events)), audit_log.Verified)


@pytest.fixture(params=["sqlite", "postgres"])
async def kind_and_url(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, str]]:
    async with database_url(request.param, tmp_path) as found:
        yield request.param, found


@pytest.fixture
async def replicas(kind_and_url: tuple[str, str]) -> AsyncIterator[tuple[Store, Store]]:
    first, second = open_store(kind_and_url[1]), open_store(kind_and_url[1])
    await first.open()
    await second.open()
    yield first, second
    await first.close()
    await second.close()


async def test_every_event_chains_onto_its_requests_previous_one(
    replicas: tuple[Store, Store],
) -> None:
    one, two = replicas
    await one.create(request("r1"))
    await two.create(request("r2"))
    # Many writers at once, on two replicas, one request: the chain stays one line.
    await asyncio.gather(
        *(
            (one, two)[i % 2].add_event(
                Event("r1", NOW + timedelta(seconds=i), "denied", person(i), {"n": i})
            )
            for i in range(20)
        )
    )
    await one.add_event(Event("r2", NOW, "denied", Person(platform="web", id="x", name="“X”")))
    events = await two.events()
    assert len(events) == 23
    assert_chained(events)
    assert next(e.prev_hash for e in events if e.request_id == "r2") == audit_log.GENESIS
    pages = await one.events(limit=5), await one.events(limit=5, after=5)
    assert [e.seq for e in pages[0] + pages[1]] == [e.seq for e in events[:10]]
    assert await one.events(until=NOW + timedelta(seconds=1)) == [
        e for e in events if e.at < NOW + timedelta(seconds=1)
    ]


async def test_events_stored_before_the_hashes_are_chained_by_the_migration(
    kind_and_url: tuple[str, str], tmp_path: Path
) -> None:
    kind, url = kind_and_url
    rows = [("r1", "created", None), ("r2", "created", None), ("r1", "vote", '{"n": 1}')]
    if kind == "sqlite":
        db = sqlite3.connect(tmp_path / "askbridge.db")
        db.execute("CREATE TABLE schema_version (version INTEGER)")
        for version, statements in sqlite_schema.MIGRATIONS:
            if version < chain_version(sqlite_schema.MIGRATIONS):
                for statement in statements:
                    db.execute(statement)
                db.execute("INSERT INTO schema_version VALUES (?)", (version,))
        for i, (request_id, kind_, data) in enumerate(rows):
            db.execute(
                "INSERT INTO events (request_id, at, kind, actor, data) VALUES (?, ?, ?, NULL, ?)",
                (request_id, NOW.timestamp() + i, kind_, data or "{}"),
            )
        db.commit()
        db.close()
    else:
        db_pg = await asyncpg.connect(url)
        try:
            await db_pg.execute("CREATE TABLE schema_version (version INTEGER)")
            for version, statements in postgres_schema.MIGRATIONS:
                if version < chain_version(postgres_schema.MIGRATIONS):
                    for statement in statements:
                        await db_pg.execute(statement)
                    await db_pg.execute("INSERT INTO schema_version VALUES ($1)", version)
            for i, (request_id, kind_, data) in enumerate(rows):
                await db_pg.execute(
                    "INSERT INTO events (request_id, at, kind, actor, data)"
                    " VALUES ($1, $2, $3, NULL, $4)",
                    request_id,
                    NOW.timestamp() + i,
                    kind_,
                    data or "{}",
                )
        finally:
            await db_pg.close()

    store = open_store(url)
    await store.open()
    try:
        await store.add_event(Event("r1", NOW + timedelta(seconds=9), "denied"))
        events = await store.events()
    finally:
        await store.close()
    assert [(e.request_id, e.kind) for e in events] == [
        ("r1", "created"),
        ("r2", "created"),
        ("r1", "vote"),
        ("r1", "denied"),
    ]
    assert_chained(events)


# --- askbridge audit --export / --verify ------------------------------------------------


async def run_audit(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "audit",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.fixture
async def decided(service: Service, clock: ManualClock, http: aiohttp.ClientSession) -> Service:
    """Two requests: one answered, one withdrawn a minute later."""
    for request_id in ("ask_one", "ask_two"):
        body = {"request_id": request_id, "questions": [DEPLOY]}
        async with http.post(f"{service.url}/v1/questions", json=body) as response:
            assert response.status == 201
    await answer_on_web(http, service.url, "ask_one", {"Deploy": ["Approve"]})
    await clock.advance(60)
    async with http.delete(f"{service.url}/v1/questions/ask_two") as response:
        assert response.status == 200
    return service


def lines(file: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in file.read_text().splitlines()]


async def test_an_export_verifies_and_a_changed_or_deleted_line_is_found(
    decided: Service, tmp_path: Path
) -> None:
    file = tmp_path / "audit.jsonl"
    code, _, err = await run_audit("--url", decided.url, "--export", str(file))
    assert code == 0, err
    exported_lines = file.read_text().splitlines()
    found = [json.loads(line) for line in exported_lines]
    assert found[0][audit_log.HEADER]["since"] is None
    assert found[0][audit_log.HEADER]["canonical_json"] == "RFC 8785"
    assert found[-1] == {audit_log.END: {"events": 7}}
    events = found[1:-1]
    assert [(e["request_id"], e["kind"]) for e in events] == [
        ("ask_one", "created"),
        ("ask_one", "posted"),
        ("ask_two", "created"),
        ("ask_two", "posted"),
        ("ask_one", "vote"),
        ("ask_one", "answered"),
        ("ask_two", "withdrawn"),
    ]
    assert f"exported {len(events)} events" in err

    code, out, err = await run_audit("--verify", str(file))
    assert (code, err) == (0, "")
    assert "OK, 7 events of 2 requests" in out

    # One field of one line changed: the answer of the vote on line 6.
    vote = json.loads(exported_lines[5])
    assert vote["kind"] == "vote"
    vote["data"]["answers"]["Deploy"] = "Reject"
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join([*exported_lines[:5], json.dumps(vote), *exported_lines[6:]]))
    code, out, err = await run_audit("--verify", str(tampered))
    assert (code, out) == (1, "")
    assert "line 6 (request ask_one)" in err
    assert "changed" in err

    # A line deleted: the vote; the answer after it no longer chains.
    deleted = tmp_path / "deleted.jsonl"
    deleted.write_text("\n".join([*exported_lines[:5], *exported_lines[6:]]) + "\n")
    code, _, err = await run_audit("--verify", str(deleted))
    assert code == 1
    assert "line 6 (request ask_one)" in err
    assert "deleted" in err

    # A request's first event deleted: its next one does not chain from the genesis hash.
    first_gone = tmp_path / "first_gone.jsonl"
    first_gone.write_text("\n".join([exported_lines[0], *exported_lines[2:]]) + "\n")
    code, _, err = await run_audit("--verify", str(first_gone))
    assert code == 1
    assert "line 2 (request ask_one)" in err

    # The last event of a request, and the last line of the file, deleted: the end line tells.
    last_gone = tmp_path / "last_gone.jsonl"
    last_gone.write_text("\n".join([*exported_lines[:7], exported_lines[8]]) + "\n")
    code, _, err = await run_audit("--verify", str(last_gone))
    assert code == 1
    assert "line 8: the end line counts 7 events, the file has 6" in err
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(exported_lines[:8]) + "\n")
    code, _, err = await run_audit("--verify", str(cut))
    assert code == 1
    assert "line 9: the export is cut short" in err

    # Its hash recomputed to match the change: the next event's prev_hash gives it away.
    vote["hash"] = audit_log.event_hash(vote)
    rehashed = tmp_path / "rehashed.jsonl"
    rehashed.write_text("\n".join([*exported_lines[:5], json.dumps(vote), *exported_lines[6:]]))
    code, _, err = await run_audit("--verify", str(rehashed))
    assert code == 1
    assert "line 7 (request ask_one)" in err


async def test_the_export_filters_by_request_and_time(
    decided: Service, clock: ManualClock, tmp_path: Path
) -> None:
    file = tmp_path / "one.jsonl"
    code, _, err = await run_audit(
        "--url", decided.url, "--export", str(file), "--request", "ask_one"
    )
    assert code == 0, err
    assert {e["request_id"] for e in lines(file)[1:-1]} == {"ask_one"}
    assert (await run_audit("--verify", str(file)))[0] == 0

    start = clock.now() - timedelta(seconds=60)
    code, _, err = await run_audit(
        "--url", decided.url, "--export", str(file), "--until", iso(start + timedelta(seconds=1))
    )
    assert code == 0, err
    assert "withdrawn" not in [e["kind"] for e in lines(file)[1:-1]]
    assert (await run_audit("--verify", str(file)))[0] == 0

    # From the last minute on: only the withdrawal, checked from where the export starts.
    code, _, err = await run_audit(
        "--url", decided.url, "--export", str(file), "--since", iso(clock.now())
    )
    assert code == 0, err
    assert [e["kind"] for e in lines(file)[1:-1]] == ["withdrawn"]
    code, out, _ = await run_audit("--verify", str(file))
    assert code == 0
    assert "1 of them checked from the export's start" in out

    code, _, err = await run_audit("--url", decided.url, "--export", str(file), "--since", "soon")
    assert code == 2
    assert "since must be an ISO 8601 time" in err


async def test_verify_refuses_what_is_not_an_export(tmp_path: Path) -> None:
    file = tmp_path / "x.jsonl"
    for text, why in (
        ("", "empty"),
        ('{"request_id": "r"}\n', "header"),
        ('{"askbridge_audit_export": {}}\nnot json\n', "line 2: not JSON"),
        ('{"askbridge_audit_export": {}}\n', "line 2: the export is cut short"),
    ):
        file.write_text(text)
        code, _, err = await run_audit("--verify", str(file))
        assert code == 1
        assert why in err
    code, _, err = await run_audit("--verify", str(tmp_path / "missing.jsonl"))
    assert code == 1
    assert "cannot read" in err


def jcs_hash(shown: dict[str, Any]) -> str:
    """An exported event's hash as any RFC 8785 library makes it (not askbridge's code)."""
    hashed = {name: shown.get(name) for name in audit_log.HASHED}
    return hashlib.sha256(rfc8785.dumps(hashed)).hexdigest()


async def test_hashes_are_over_rfc_8785_canonical_json(replicas: tuple[Store, Store]) -> None:
    one, two = replicas
    digest = subject_sha256({"command": "deploy", "build": 4711})
    await one.create(request("r1", policy=Policy(subject_sha256=digest)))
    # Where JCS and sorted json.dumps differ: numbers (60.0 is 60, 1e-07 is 1e-7) and the order
    # of keys beyond U+FFFF (UTF-16 code units put U+1F680 before U+FFFF).
    data = {"after_s": 60.0, "tiny": 1e-7, "\uffff": "high", "\U0001f680": "astral"}
    await one.add_event(Event("r1", NOW, "escalated", None, data))
    answers = {"\U0001f680 Ship": "Yes", "\uffff": "No"}
    _, won = await two.finish("r1", Ending(Status.ANSWERED, NOW, answers, person(1)))
    assert won
    events = await one.events("r1")
    assert [e.kind for e in events][-2:] == ["escalated", "answered"]
    assert events[-1].data["subject_sha256"] == digest
    for event in events:
        assert event.hash == jcs_hash(AuditEvent.of(event).model_dump(mode="json"))
    verified = audit_log.verify(exported(events))
    assert isinstance(verified, audit_log.Verified)
    assert verified.earlier == 0


def test_events_hashed_over_the_earlier_canonical_json_still_verify() -> None:
    prev = audit_log.GENESIS
    lines: list[dict[str, Any]] = []
    for kind, data in (("created", {}), ("escalated", {"after_s": 60.0, "step": 1})):
        event: dict[str, Any] = {"request_id": "r1", "at": "2026-11-01T00:00:00.000Z"}
        event["kind"] = kind
        event |= {"actor": None, "data": data, "prev_hash": prev}
        hashed = {name: event[name] for name in audit_log.HASHED}
        encoded = json.dumps(hashed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        prev = event["hash"] = hashlib.sha256(encoded.encode()).hexdigest()
        lines.append(event)
    header = {audit_log.HEADER: {"version": 1, "since": None}}
    end = {audit_log.END: {"events": 2}}
    verified = audit_log.verify(json.dumps(line) for line in [header, *lines, end])
    # The first event is written alike in both forms; the second only in the earlier one.
    assert verified == audit_log.Verified(events=2, requests=1, partial=0, earlier=1)
    lines[1]["data"]["after_s"] = 61.0
    broken = audit_log.verify(json.dumps(line) for line in [header, *lines, end])
    assert isinstance(broken, audit_log.Broken)
    assert "changed" in broken.reason


def test_a_subject_digest_is_over_rfc_8785_and_an_earlier_one_still_matches() -> None:
    subject: dict[str, Any] = {"replicas": 3.0, "\U0001f680": "go", "\uffff": "x"}
    assert subject_sha256(subject) == hashlib.sha256(rfc8785.dumps(subject)).hexdigest()
    earlier = json.dumps(subject, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    earlier_digest = hashlib.sha256(earlier.encode()).hexdigest()
    assert earlier_digest != subject_sha256(subject)
    assert subject_matches({"subject_sha256": earlier_digest}, subject)
    assert not subject_matches({"subject_sha256": earlier_digest}, {**subject, "replicas": 4})
