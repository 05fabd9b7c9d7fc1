"""The key that signs the answer page's forms: the same after a restart and on every replica.

Each form carries HMAC(key, request id), so a page on another site cannot post an answer. The
key is, first that applies:
1. derived from ASKBRIDGE_WEB_SECRET;
2. derived from ASKBRIDGE_API_TOKEN (replicas beyond loopback all have it);
3. random, kept in a file beside the SQLite database (`askbridge.db.web-key`), made once,
   readable by its owner only;
4. random for this process: with PostgreSQL (replicas share no directory; a warning names the
   settings), or an in-memory database, where nothing survives anyway.
The key is never logged; only where it is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import tempfile
from pathlib import Path

from core.errors import StartupError
from core.store.factory import SQLITE_PREFIX

log = logging.getLogger("askbridge.web")

KEY_BYTES = 32
LABEL = b"askbridge web form key v1"
KEY_FILE_SUFFIX = ".web-key"


def form_key(*, configured: str | None, api_token: str | None, database_url: str) -> bytes:
    for secret in (configured, api_token):
        if secret:
            return hmac.new(secret.encode(), LABEL, hashlib.sha256).digest()
    path = key_file(database_url)
    if path is not None:
        return _kept(path)
    if not database_url.startswith(SQLITE_PREFIX):
        log.warning(
            "web: open answer pages will not survive a restart nor work on another replica; "
            "set ASKBRIDGE_WEB_SECRET (or ASKBRIDGE_API_TOKEN) to the same value on every replica"
        )
    return secrets.token_bytes(KEY_BYTES)


def key_file(database_url: str) -> Path | None:
    """Where a random key is kept for this database: beside a SQLite file, else nowhere."""
    database = database_url.removeprefix(SQLITE_PREFIX)
    if database == database_url or database == ":memory:":
        return None
    return Path((database or "askbridge.db") + KEY_FILE_SUFFIX)


def _kept(path: Path) -> bytes:
    try:
        if not path.exists():
            _create(path)
        text = path.read_text().strip()
    except OSError as error:
        raise StartupError(
            f"cannot keep the web page's form key in {path}: {error.strerror or error}; "
            "make its directory writable, or set ASKBRIDGE_WEB_SECRET"
        ) from error
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise StartupError(
            f"{path} does not hold a web page form key ({KEY_BYTES * 2} hex digits); delete it "
            "and start again (open answer pages then need a reload), or set ASKBRIDGE_WEB_SECRET"
        )
    return key


def _create(path: Path) -> None:
    """Write a new key atomically; when another replica wins the race, its key stands."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as file:
            file.write(secrets.token_hex(KEY_BYTES) + "\n")
        os.link(draft, path)
        log.info("web: made a new key for the page's forms in %s", path)
    except FileExistsError:
        pass
    finally:
        os.unlink(draft)
