"""The one line `askbridge ask` keeps on a terminal while it waits: who may answer, the votes
so far when several must agree, and the time left. It is rewritten in place and erased when the
request ends; on anything but a terminal there is no such line."""

from __future__ import annotations

import asyncio
import math
import os
import unicodedata
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

CLEAR = "\r\x1b[K"
"""Back to the start of the line, and erase it (carriage return, ECMA-48 Erase in Line)."""
POLL_S = 2.0
"""How often a command that shows the line reads its request: the votes change without the
request ending, and a long-poll returns only when it ends (an ending still comes at once)."""

Clock = Callable[[], datetime]


def on_terminal(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """A line rewritten in place only makes sense to a person at a terminal that can erase."""
    try:
        return stream.isatty() and environ.get("TERM") != "dumb"
    except ValueError:  # closed
        return False


def status_text(status: Mapping[str, Any], now: datetime) -> str:
    """What the line says of a waiting request's status object at `now`."""
    who = [str(entry) for entry in status.get("answerers") or []]
    parts = [f"waiting for {_either(who)}" if who else "waiting for anyone who sees it"]
    quorum = int(status.get("quorum") or 1)
    if quorum > 1:
        parts.append(f"{len(status.get('votes') or [])} voted, {quorum} must agree")
    expires = status.get("expires_at")
    parts.append(_left(datetime.fromisoformat(expires) - now) if expires else "no deadline")
    return " · ".join(parts)


def _either(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _left(left: timedelta) -> str:
    # Rounded up: "0s left" while the request still waits would be wrong.
    seconds = max(0, math.ceil(left.total_seconds()))
    if seconds < 60:
        return f"{seconds}s left"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s left"
    return f"{seconds // 3600}h {seconds // 60 % 60:02d}m left"


def _inert(text: str) -> str:
    """No control character from a name reaches the terminal: it could move the cursor."""
    return "".join("?" if unicodedata.category(c).startswith("C") else c for c in text)


class StatusLine:
    def __init__(
        self,
        stream: TextIO,
        clock: Clock = lambda: datetime.now(UTC),
        width: Callable[[], int] | None = None,
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.width = width or self._terminal_width
        self.status: Mapping[str, Any] | None = None
        self.shown = False

    def show(self, status: Mapping[str, Any]) -> None:
        """The request as the server last told it."""
        self.status = status
        self._draw()

    def tick(self) -> None:
        """The time left, as the clock says now."""
        self._draw()

    def say(self, line: str) -> None:
        """A line of its own (progress, an outage), above the status line."""
        self._erase()
        self.stream.write(line + "\n")
        self._draw()

    def close(self) -> None:
        """Erase the line for good: the request has ended, or the command is leaving."""
        self._erase()
        self.status = None
        self.stream.flush()

    async def ticking(self) -> None:
        """Redraw at every whole second until cancelled."""
        while True:
            now = self.clock()
            await asyncio.sleep(1 - now.microsecond / 1e6)
            self.tick()

    def _draw(self) -> None:
        if self.status is None:
            return
        text = _inert(f"askbridge: {status_text(self.status, self.clock())}")
        # A line longer than the terminal wraps, and a carriage return then rewrites only its
        # last part: cut it to fit.
        room = max(self.width() - 1, 1)
        if len(text) > room:
            text = text[: room - 1] + "…"
        self.stream.write(CLEAR + text)
        self.stream.flush()
        self.shown = True

    def _erase(self) -> None:
        if self.shown:
            self.stream.write(CLEAR)
            self.shown = False

    def _terminal_width(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (OSError, ValueError):
            return 80
