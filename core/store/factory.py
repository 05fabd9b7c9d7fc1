"""Choosing a store from ASKBRIDGE_DATABASE_URL."""

from __future__ import annotations

import contextlib
import re
from urllib.parse import unquote, urlsplit

from askbridge.core.errors import AskbridgeError
from askbridge.core.store.base import Store
from askbridge.core.store.group_commit import Sync
from askbridge.core.store.sqlite import SQLiteStore

SQLITE_PREFIX = "sqlite:///"
POSTGRES_PREFIXES = ("postgresql://", "postgres://")


def open_store(
    url: str, *, sqlite_sync: Sync = "normal", serving: bool = True, upgrade: bool = True
) -> Store:
    """A store for `url` (not yet opened): `sqlite:///relative.db`, `sqlite:////abs.db`,
    `postgresql://user@host:5432/database`; `sqlite_sync`, `serving`, `upgrade`: see
    `SQLiteStore`."""
    if url.startswith(SQLITE_PREFIX):
        path = url[len(SQLITE_PREFIX) :] or "askbridge.db"
        return SQLiteStore(path, sync=sqlite_sync, serving=serving, upgrade=upgrade)
    if url.startswith(POSTGRES_PREFIXES):
        from askbridge.core.store.postgres import PostgresStore  # asyncpg loads only when asked for

        return PostgresStore(url, upgrade=upgrade)
    scheme = url.split(":", 1)[0] if ":" in url else url
    raise AskbridgeError(
        f"ASKBRIDGE_DATABASE_URL={shown_url(url)!r} is not supported (scheme {scheme!r}); "
        "use sqlite:///askbridge.db, sqlite:////absolute/path.db or "
        "postgresql://user:password@host:5432/database"
    )


_QUERY_PASSWORD = re.compile(r"(?<![^&])password=([^&]*)")
"""libpq's `password` parameter in a URL's query string (`?sslmode=require&password=…`)."""


def shown_url(url: str) -> str:
    """`url` fit for a log line: its passwords, in its user info or its query, masked."""
    password = _userinfo_password(url)
    masked = url if password is None else url.replace(f":{password}@", ":***@", 1)
    head, mark, query = masked.partition("?")
    return head + mark + _QUERY_PASSWORD.sub("password=***", query)


def url_passwords(url: str) -> list[str]:
    """The passwords written in a database URL, so they can be kept out of logs: in its user
    info and in its query, each as written and as the driver reads it (percent-decoded)."""
    written = [_userinfo_password(url)]
    with contextlib.suppress(ValueError):
        written += [m[1] for m in _QUERY_PASSWORD.finditer(urlsplit(url).query)]
    found = [p for p in written if p]
    return list(dict.fromkeys([*found, *(unquote(p) for p in found)]))


def _userinfo_password(url: str) -> str | None:
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return None
    userinfo, at, _ = netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return None
    return userinfo.split(":", 1)[1] or None
