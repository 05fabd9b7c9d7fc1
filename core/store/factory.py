"""Choosing a store from ASKBRIDGE_DATABASE_URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from askbridge.core.errors import AskbridgeError
from askbridge.core.store.base import Store
from askbridge.core.store.group_commit import Sync
from askbridge.core.store.sqlite import SQLiteStore

SQLITE_PREFIX = "sqlite:///"
POSTGRES_PREFIXES = ("postgresql://", "postgres://")


def open_store(url: str, *, sqlite_sync: Sync = "normal", serving: bool = True) -> Store:
    """A store for `url` (not yet opened): `sqlite:///relative.db`, `sqlite:////abs.db`,
    `postgresql://user@host:5432/database`; `sqlite_sync`, `serving`: see `SQLiteStore`."""
    if url.startswith(SQLITE_PREFIX):
        path = url[len(SQLITE_PREFIX) :] or "askbridge.db"
        return SQLiteStore(path, sync=sqlite_sync, serving=serving)
    if url.startswith(POSTGRES_PREFIXES):
        from askbridge.core.store.postgres import PostgresStore  # asyncpg loads only when asked for

        return PostgresStore(url)
    scheme = url.split(":", 1)[0] if ":" in url else url
    raise AskbridgeError(
        f"ASKBRIDGE_DATABASE_URL={shown_url(url)!r} is not supported (scheme {scheme!r}); "
        "use sqlite:///askbridge.db, sqlite:////absolute/path.db or "
        "postgresql://user:password@host:5432/database"
    )


def shown_url(url: str) -> str:
    """`url` fit for a log line: its password, if any, masked."""
    password = url_password(url)
    if password is None:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc.replace(f":{password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def url_password(url: str) -> str | None:
    """The password written in a database URL, so it can be kept out of logs."""
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return None
    userinfo, at, _ = netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return None
    return userinfo.split(":", 1)[1] or None
