"""WAL checkpoints for the SQLite store, off the clicks' commits.

The store turns SQLite's automatic checkpoint off (it ran inside whichever commit crossed its
threshold); this runs PASSIVE checkpoints from a connection and thread of its own, and the
commit that finds the WAL past `limit_bytes` truncates it, which bounds the file. Why and how:
docs/explanation/speed.md.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading

from askbridge.core.store.group_commit import BUSY_TIMEOUT_MS

log = logging.getLogger("askbridge.store")

CHECKPOINT_S = 1.0
WAL_SOFT_BYTES = 4 * 1024 * 1024
"""A passive checkpoint is asked for once the WAL is this big (SQLite's own default is ~4 MB)."""
WAL_LIMIT_BYTES = 64 * 1024 * 1024
"""Past this, the WAL is checkpointed and truncated even if that makes a writer wait."""


class Checkpoints:
    def __init__(
        self,
        path: str,
        *,
        every_s: float = CHECKPOINT_S,
        soft_bytes: int = WAL_SOFT_BYTES,
        limit_bytes: int = WAL_LIMIT_BYTES,
    ) -> None:
        self.path = path
        self.wal = f"{path}-wal"
        self.every_s = every_s
        self.soft_bytes = soft_bytes
        self.limit_bytes = limit_bytes
        self.runs = 0
        # One checkpoint at a time: SQLite answers a second one "busy" at once, without waiting.
        self._checkpointing = threading.Lock()
        self._due = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run_forever, name="askbridge-sqlite-checkpoint", daemon=True
        )
        self._thread.start()

    def wal_size(self) -> int:
        try:
            return os.stat(self.wal).st_size
        except FileNotFoundError:
            return 0

    def committed(self, db: sqlite3.Connection) -> None:
        """Called by the writer after each commit, with its connection: asks for a checkpoint
        when the WAL is big, and truncates it there and then when it is past the limit."""
        size = self.wal_size()
        if size > self.limit_bytes:
            # This thread may fall behind a steady stream of writes (it shares the interpreter
            # lock and waits for the disk): the writer empties the file itself, on its own
            # connection, after the checkpoint in progress, if any. That is the bound.
            self.checkpoint(db, "TRUNCATE")
        elif size > self.soft_bytes:
            self._due.set()

    def stop(self) -> None:
        self._stopping = True
        self._due.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run_forever(self) -> None:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            while True:
                self._due.wait(self.every_s)
                self._due.clear()
                if self._stopping:
                    return
                self.checkpoint(db)
        finally:
            db.close()

    def checkpoint(self, db: sqlite3.Connection, mode: str = "PASSIVE") -> None:
        try:
            with self._checkpointing:
                busy, frames, copied = db.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()[0]
                self.runs += 1
        except sqlite3.Error as error:
            log.warning("a %s checkpoint of %s failed: %s", mode, self.path, error)
            return
        if busy:
            # Another checkpoint was running; the next commit tries again.
            log.debug("a %s checkpoint of %s was busy (%d of %d)", mode, self.path, copied, frames)
