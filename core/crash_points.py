"""Named moments in the broker's work where a crash would hurt most, for fault-injection tests.

The broker calls `crash_point(name)` at each of them. In production that is `no_crash`, which
does nothing; the test suite starts `askbridge serve` with `ASKBRIDGE_TEST_CRASH_AT=<name>`
(read once in `bots/`) so that the process SIGKILLs itself there, and then proves that a
restart loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

CrashPoint = Callable[[str], None]

POINTS: Mapping[str, str] = MappingProxyType(
    {
        "ask.stored": "the request is stored; nothing is posted yet",
        "ask.posted": "a platform has created a message; askbridge has not recorded it yet",
        "ask.recorded": "a message is recorded; the request is not marked as posted yet",
        "vote.recorded": "a vote is stored; nobody is woken and the click is not acknowledged",
        "cancel.checked": "a Cancel is checked; neither its click nor the ending is stored yet",
        "finish.recorded": "the request has ended in the store; no message shows it yet",
        "render.updated": "a message shows its request's newest state; the store does not know yet",
    }
)
"""Every point, with what has and has not happened when the process dies there."""


def no_crash(point: str) -> None:
    """What the broker is given in production: nothing happens at any point."""
