"""Each statement is written once, with named parameters, and bound per dialect at import: every
statement of `core/store/queries.py` is valid SQL on both databases' schemas as they are after
every migration, and the binder's translations say what each dialect gets."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import asyncpg

from askbridge.core.store import queries
from askbridge.core.store.postgres import PostgresStore
from askbridge.core.store.sql import NOTIFY, Query
from askbridge.core.store.sqlite import SQLiteStore
from tests.stores import postgres_schema

NAME = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def every_query() -> Iterator[tuple[str, Query]]:
    """Each Query of the queries module, by its name (those in tables with their key)."""
    for name, found in vars(queries).items():
        if isinstance(found, Query):
            yield name, found
        elif isinstance(found, dict):
            for key, value in found.items():
                for index, query in enumerate(value if isinstance(value, tuple) else (value,)):
                    if isinstance(query, Query):
                        yield f"{name}[{key!r}][{index}]", query
    yield "NOTIFY", NOTIFY


def test_named_parameters_are_numbered_for_postgresql_and_lined_up_once() -> None:
    query = Query(
        "SELECT a FROM t INDEXED BY t_a WHERE a = :a AND b = CAST(:b AS text)"
        " AND c = greatest(:a, 1) FOR UPDATE"
    )
    assert query.postgres == (
        "SELECT a FROM t WHERE a = $1 AND b = CAST($2 AS text) AND c = greatest($1, 1) FOR UPDATE"
    )
    assert query.sqlite == (
        "SELECT a FROM t INDEXED BY t_a WHERE a = :a AND b = CAST(:b AS text) AND c = max(:a, 1)"
    )
    assert query.args({"b": "two", "a": 1, "unused": 3}) == (1, "two")
    skip_locked = Query("UPDATE t SET a = 1 WHERE a IN (SELECT a FROM t FOR UPDATE SKIP LOCKED)")
    assert skip_locked.sqlite == "UPDATE t SET a = 1 WHERE a IN (SELECT a FROM t)"
    only_postgres = Query(None, postgres="SELECT pg_advisory_xact_lock(:key)")
    assert (only_postgres.sqlite, only_postgres.postgres) == (
        None,
        "SELECT pg_advisory_xact_lock($1)",
    )
    assert only_postgres.args({"key": 7}) == (7,)
    # A migration's statement goes as it is written for its database.
    body = "CREATE FUNCTION f(p TEXT) RETURNS TEXT AS $$ SELECT p || ':x' $$ LANGUAGE sql"
    assert (Query.verbatim(body).sqlite, Query.verbatim(body).postgres) == (body, body)
    # A literal colon is no parameter.
    assert Query("SELECT ':' || :x").postgres == "SELECT ':' || $1"


async def test_every_statement_prepares_on_sqlite(tmp_path: Path) -> None:
    prepared = 0
    store = SQLiteStore(tmp_path / "queries.db")
    await store.open()
    try:
        for name, query in every_query():
            if query.sqlite is None:
                continue
            params = dict.fromkeys(NAME.findall(query.sqlite))
            try:
                store.db.execute(f"EXPLAIN {query.sqlite}", params).fetchall()
            except sqlite3.Error as error:
                raise AssertionError(f"{name} does not prepare on SQLite: {error}") from error
            prepared += 1
    finally:
        await store.close()
    assert prepared > 50


async def test_every_statement_prepares_on_postgresql() -> None:
    prepared = 0
    async with postgres_schema() as url:
        store = PostgresStore(url)
        await store.open()
        await store.close()
        db = await asyncpg.connect(url)
        try:
            for name, query in every_query():
                if query.postgres is None:
                    continue
                try:
                    await db.prepare(query.postgres)
                except asyncpg.PostgresError as error:
                    raise AssertionError(
                        f"{name} does not prepare on PostgreSQL: {error}"
                    ) from error
                prepared += 1
        finally:
            await db.close()
    assert prepared > 50
