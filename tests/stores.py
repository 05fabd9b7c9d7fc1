"""Stores to run the same tests against: SQLite files, and PostgreSQL schemas of their own."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest

POSTGRES_URL = os.environ.get(
    "ASKBRIDGE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)


@asynccontextmanager
async def postgres_schema() -> AsyncIterator[str]:
    """A database URL whose tables live in a fresh schema, dropped afterwards."""
    try:
        admin = await asyncpg.connect(POSTGRES_URL)
    except (OSError, asyncpg.PostgresError) as error:
        message = f"PostgreSQL at {POSTGRES_URL} is not reachable ({error})"
        if os.environ.get("CI"):
            pytest.fail(message + "; CI machines run it on 127.0.0.1:5432")
        pytest.skip(message + "; set ASKBRIDGE_TEST_POSTGRES_URL")
    try:
        async with schema_in(admin, POSTGRES_URL, "askbridge_test") as url:
            yield url
    finally:
        await admin.close()


@asynccontextmanager
async def schema_in(admin: asyncpg.Connection[Any], url: str, prefix: str) -> AsyncIterator[str]:
    """`url` with its tables in a fresh schema (`prefix_` and a random name), which `admin`
    makes and drops afterwards."""
    schema = f"{prefix}_{uuid.uuid4().hex[:10]}"
    try:
        await admin.execute(f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in url else "?"
        yield f"{url}{separator}search_path={schema}"
    finally:
        await admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@asynccontextmanager
async def database_url(kind: str, folder: Path) -> AsyncIterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'askbridge.db'}"
    else:
        async with postgres_schema() as url:
            yield url
