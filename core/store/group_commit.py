"""Where the SQLite store's calls run, and which of them share a commit.

With sync="normal" a call runs on the event loop's own thread; with "full", on a database thread
of its own. Either way the calls queued together commit together, each in a savepoint of its
own, and none is answered before the commit. Why: docs/explanation/speed.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import queue
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

T = TypeVar("T")
Sync = Literal["normal", "full"]
BUSY_TIMEOUT_MS = 5000
"""How long a call waits for a lock another process holds before it fails "database is
locked": in SQLite's busy handler on the database thread (sync="full"), in waits between tries
on the loop's thread (sync="normal")."""
BUSY_WAITS_S = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05)
"""The waits between tries on the loop's thread; the last one repeats (SQLite's own busy
handler waits much the same)."""
GROUP_MAX = 64
"""At most this many transactions share one commit on the database thread (sync="full")."""
Outcome = tuple[Any, BaseException | None]
QUIET_S = 0.002
"""On the loop's thread (sync="normal"), a call with none before it for this long, and none
queued, runs without waiting a turn of the loop for others to join its commit."""


@dataclass(frozen=True)
class _Job:
    """A call for the database thread (sync="full")."""

    call: Callable[[], Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    alone: bool = False


@dataclass(eq=False)
class _Turn:
    """A call waiting for its turn on the loop's thread (sync="normal")."""

    call: Callable[[], Any]
    task: asyncio.Task[Any] | None
    result: Any = None
    error: BaseException | None = None
    done: bool = False
    dropped: bool = False
    """Its task was cancelled before it ran: it never runs."""

    @property
    def wanted(self) -> bool:
        """Not dropped, and its task not being cancelled either: a task cancelled while it
        waits hears of it only when it resumes, perhaps after another has taken the turn."""
        return not (self.dropped or (self.task is not None and self.task.cancelling()))


class GroupCommit:
    def __init__(
        self,
        sync: Sync,
        connection: Callable[[], sqlite3.Connection | None],
        committed: Callable[[], None],
    ) -> None:
        """`connection`: the store's, None until it is open; `committed`: called after each
        commit of a group (a call that runs alone commits by itself)."""
        self.sync = sync
        self._connection = connection
        self._committed = committed
        self.grouped = False
        """A group's transaction is open: each call's savepoint is its transaction."""
        self._turns: list[_Turn] = []
        self._busy = False
        """A call ran less than QUIET_S ago (reset by a timer, so that calls made in one turn
        of the loop all see it)."""
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None

    @property
    def busy_timeout_ms(self) -> int:
        """The connection's own busy timeout once open: none on the loop's thread, which must
        not sleep (`run` waits between tries instead): SQLite's busy handler would hold up
        every click, long-poll and page while `askbridge prune` holds the write lock."""
        return 0 if self.sync == "normal" else BUSY_TIMEOUT_MS

    async def run(self, call: Callable[[], T], alone: bool = False) -> T:
        """`call()`, with the calls queued beside it (`alone`: never with others, and never
        tried twice: opening and closing, which may wait in SQLite's busy handler)."""
        if self.sync == "normal":
            try:
                return await self._in_turn(call, alone)
            except sqlite3.OperationalError as error:
                if alone or not _busy(error):
                    raise
                return await self._busy_retries(call)
        if self._worker is None:
            self._worker = threading.Thread(target=self._work, name="askbridge-sqlite", daemon=True)
            self._worker.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put(_Job(call, future, loop, alone))
        return await future

    async def stop(self) -> None:
        """End the database thread, if there is one, once the calls queued for it are done."""
        if self._worker is not None:
            self._jobs.put(None)
            await asyncio.to_thread(self._worker.join)
            self._worker = None

    # --- the loop's thread (sync="normal") ------------------------------------------------

    async def _busy_retries(self, call: Callable[[], T]) -> T:
        """`call()` again, after its first try found a lock that another process holds taken,
        until it gets through or SQLite's busy timeout has passed. Trying again is safe: a
        write finds the lock taken at its first statement (`BEGIN IMMEDIATE`), before it has
        changed anything, and a read changes nothing."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + BUSY_TIMEOUT_MS / 1000
        waits = itertools.chain(BUSY_WAITS_S, itertools.repeat(BUSY_WAITS_S[-1]))
        while True:
            await asyncio.sleep(min(next(waits), max(0.0, give_up - loop.time())))
            try:
                return await self._in_turn(call, False)
            except sqlite3.OperationalError as error:
                if not _busy(error) or loop.time() >= give_up:
                    raise

    async def _in_turn(self, call: Callable[[], T], alone: bool) -> T:
        if not (self._busy or self._turns):
            self._busy = True
            asyncio.get_running_loop().call_later(QUIET_S, self._quiet)
            return call()
        if alone:
            await asyncio.sleep(0)
            return call()
        turn = _Turn(call, asyncio.current_task())
        self._turns.append(turn)
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            turn.dropped = True
            raise
        if not turn.done:
            self._run_turns(turn)
        if turn.error is not None:
            raise turn.error
        return turn.result  # type: ignore[no-any-return]

    def _quiet(self) -> None:
        self._busy = False

    def _run_turns(self, mine: _Turn) -> None:
        """Run the queued turns, `mine` (the running task's, so wanted whatever its
        cancellation count says) among them."""
        turns = [turn for turn in self._turns if turn is mine or turn.wanted]
        self._turns = []
        outcomes = self._together([turn.call for turn in turns])
        for turn, (result, error) in zip(turns, outcomes, strict=True):
            turn.result, turn.error, turn.done = result, error, True

    # --- the database thread (sync="full") ------------------------------------------------

    def _work(self) -> None:
        waiting: deque[_Job | None] = deque()
        while True:
            job = waiting.popleft() if waiting else self._jobs.get()
            if job is None:
                return
            batch = [job]
            while not job.alone and len(batch) < GROUP_MAX:
                try:
                    following = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if following is None or following.alone:
                    waiting.append(following)
                    break
                batch.append(following)
            outcomes = self._together([one.call for one in batch])
            for one, (result, error) in zip(batch, outcomes, strict=True):
                # A closed loop: nobody waits for the answer any more.
                with contextlib.suppress(RuntimeError):
                    one.loop.call_soon_threadsafe(_resolve, one.future, result, error)

    # --- either -------------------------------------------------------------------------

    def _together(self, calls: list[Callable[[], Any]]) -> list[Outcome]:
        """What each call returned or raised: one call as it is; several in one transaction,
        each in a savepoint of its own, none of it before the commit (a failed commit fails
        them all)."""
        db = self._connection()
        if len(calls) == 1 or db is None:
            return [_attempt(call) for call in calls]
        results: list[Outcome] = []
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as busy:
            return [(None, busy)] * len(calls)
        self.grouped = True
        try:
            for call in calls:
                db.execute("SAVEPOINT job")
                outcome = _attempt(call)
                if outcome[1] is not None:
                    db.execute("ROLLBACK TO job")
                db.execute("RELEASE job")
                results.append(outcome)
        except BaseException as failed:
            db.execute("ROLLBACK")
            return [(None, failed)] * len(calls)
        finally:
            self.grouped = False
        try:
            db.execute("COMMIT")
        except sqlite3.Error as lost:
            db.execute("ROLLBACK")
            return [(None, lost)] * len(calls)
        self._committed()
        return results


def primary_code(error: sqlite3.Error) -> int:
    """SQLite's result code for `error`, without the extended part (SQLITE_BUSY for any of
    SQLITE_BUSY_RECOVERY, _SNAPSHOT, _TIMEOUT)."""
    return error.sqlite_errorcode & 0xFF


def _busy(error: sqlite3.Error) -> bool:
    """Another connection holds a lock this one needs."""
    return primary_code(error) == sqlite3.SQLITE_BUSY


def _attempt(call: Callable[[], Any]) -> Outcome:
    try:
        return call(), None
    except Exception as error:
        return None, error


def _resolve(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
