"""A database whose schema is not the one this askbridge uses: a newer one is refused and left
as it was (a rollback to an older askbridge); an older one is upgraded by the server only, never
by a one-off command such as `askbridge prune`."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import asyncpg
import pytest

from askbridge.core.errors import StartupError
from askbridge.core.store import migrations as sqlite_schema
from askbridge.core.store import open_store
from askbridge.core.store import postgres_schema as pg_schema
from tests.stores import database_url, postgres_schema


def _known(url: str) -> int:
    """The last schema version this askbridge knows for `url`'s kind of database."""
    migrations = sqlite_schema.MIGRATIONS if url.startswith("sqlite") else pg_schema.MIGRATIONS
    return migrations[-1][0]


async def _run(url: str, *statements: str) -> None:
    """Each statement, straight on the database, as another askbridge or a person would."""
    if url.startswith("sqlite"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            for statement in statements:
                db.execute(statement)
            db.commit()
        finally:
            db.close()
        return
    pg = await asyncpg.connect(url)
    try:
        for statement in statements:
            await pg.execute(statement)
    finally:
        await pg.close()


async def _contents(url: str) -> list[str]:
    """Every table's definition and rows, to tell whether anything was written."""
    if url.startswith("sqlite"):
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            return list(db.iterdump())
        finally:
            db.close()
    pg = await asyncpg.connect(url)
    try:
        tables = await pg.fetch(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() ORDER BY table_name"
        )
        found = []
        for (table,) in tables:
            columns = await pg.fetch(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = $1 ORDER BY column_name",
                table,
            )
            rows = await pg.fetch(f'SELECT * FROM "{table}"')
            found.append(f"{table} {[tuple(c) for c in columns]} {sorted(map(repr, rows))}")
        return found
    finally:
        await pg.close()


async def _make_newer(url: str) -> int:
    """The database as this askbridge leaves it, then upgraded by a newer one: a version more,
    with a table and a column this one does not know."""
    store = open_store(url)
    await store.open()
    await store.close()
    await _run(
        url,
        "CREATE TABLE replies (request_id TEXT NOT NULL, body TEXT NOT NULL)",
        "ALTER TABLE requests ADD COLUMN reply_to TEXT",
        f"INSERT INTO schema_version (version) VALUES ({_known(url) + 1})",
    )
    return _known(url) + 1


async def test_a_schema_newer_than_this_askbridge_is_refused_and_left_as_it_was(
    store_url: str,
) -> None:
    newer = await _make_newer(store_url)
    before = await _contents(store_url)
    store = open_store(store_url)
    with pytest.raises(StartupError) as refused:
        await store.open()
    message = str(refused.value)
    assert f"schema is version {newer}, newer than this askbridge knows (up to {newer - 1})" in (
        message
    )
    assert "restore the backup taken before the upgrade" in message
    assert await _contents(store_url) == before


async def _make_older(url: str) -> int:
    """The database as the askbridge before this one left it: every version but the last."""
    migrations = sqlite_schema.MIGRATIONS if url.startswith("sqlite") else pg_schema.MIGRATIONS
    older = migrations[-2][0]
    statements = ["CREATE TABLE schema_version (version INTEGER)"]
    for version, steps in migrations[:-1]:
        statements += [*steps, f"INSERT INTO schema_version (version) VALUES ({version})"]
    await _run(url, *statements)
    return older


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_askbridge_prune_leaves_an_older_schema_to_the_server(
    kind: str, tmp_path: Path
) -> None:
    """An older server may still be running on it: a command that upgraded the schema under it
    would leave it running on a schema it does not know."""
    async with database_url(kind, tmp_path) as url:
        older = await _make_older(url)
        before = await _contents(url)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "askbridge.bots.cli",
            "prune",
            "--older-than",
            "90d",
            env={**os.environ, "ASKBRIDGE_DATABASE_URL": url},
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 1, err
        said = err.decode()
        assert said.startswith(
            f"askbridge prune: the database's schema is version {older}, and this askbridge uses "
            f"version {_known(url)}; a command does not upgrade it"
        ), said
        assert "`askbridge serve` upgrades the schema" in said
        assert await _contents(url) == before


async def test_replicas_started_together_on_an_empty_database_migrate_it_once() -> None:
    """They take turns under an advisory lock: the first makes the schema, the others find it
    made."""
    async with postgres_schema() as url:
        replicas = [open_store(url) for _ in range(4)]
        try:
            await asyncio.gather(*(replica.open() for replica in replicas))
            pg = await asyncpg.connect(url)
            try:
                versions = [r[0] for r in await pg.fetch("SELECT version FROM schema_version")]
            finally:
                await pg.close()
            assert sorted(versions) == [version for version, _ in pg_schema.MIGRATIONS]
        finally:
            await asyncio.gather(*(replica.close() for replica in replicas))


async def test_a_replica_does_not_upgrade_the_schema_under_older_replicas() -> None:
    """An older replica would misread what this one writes once the schema changes (a replica
    of schema 15 took a typed form for a request without questions and answered it empty):
    the upgrade waits until they are stopped, and says so."""
    async with postgres_schema() as url:
        older = await _make_older(url)
        before = await _contents(url)
        running = await asyncpg.connect(url)
        try:
            # An older replica's pooled connection, named as it names them.
            await running.execute(
                "SELECT set_config('application_name', $1 || current_schema(), false)",
                f"askbridge schema {older} in ",
            )
            name = await running.fetchval("SELECT current_setting('application_name')")
            store = open_store(url)
            with pytest.raises(StartupError) as refused:
                await store.open()
            message = str(refused.value)
            assert message.startswith(
                f"the database's schema is version {older}, and this askbridge would upgrade it "
                f"to {_known(url)}, but replicas of an older askbridge still use it (connections "
                f"named {name} in pg_stat_activity)"
            ), message
            assert await _contents(url) == before
        finally:
            await running.close()
        store = open_store(url)
        await store.open()
        try:
            pg = await asyncpg.connect(url)
            try:
                assert await pg.fetchval("SELECT max(version) FROM schema_version") == _known(url)
                names = await pg.fetch(
                    "SELECT application_name FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                    " AND application_name = $1 || current_schema()",
                    f"askbridge schema {_known(url)} in ",
                )
                assert names, "this replica's connections are named for the replicas after it"
            finally:
                await pg.close()
        finally:
            await store.close()


async def test_askbridge_prune_makes_no_tables_in_an_empty_database() -> None:
    """An empty PostgreSQL database is a URL that names the wrong one, most likely."""
    async with postgres_schema() as url:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "askbridge.bots.cli",
            "prune",
            "--older-than",
            "90d",
            env={**os.environ, "ASKBRIDGE_DATABASE_URL": url},
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 1, err
        assert err.decode().startswith(
            "askbridge prune: the database holds no askbridge tables, and a command does not "
            "make them: check that ASKBRIDGE_DATABASE_URL names the database the server uses"
        ), err
        assert await _contents(url) == []
