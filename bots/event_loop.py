"""The event loop `askbridge serve` runs on (ASKBRIDGE_EVENT_LOOP).

uvloop runs the same asyncio code on libuv: each turn of the loop and each socket read and
write cost less, and a click touches several of both on its way to the agent (the platform's
request or Socket Mode frame in, the agent's long-poll answer out). In `make bench`, run
alternately with and without it, it took the p99 ratio to the bare slack-bolt floor from
1.58-1.80 to 1.22-1.44 in HTTP mode and from 1.68-1.77 to 1.44-1.63 in Socket Mode (README,
"Development"). `auto` (the default) takes uvloop when it is installed, as it is with askbridge
on Linux and macOS; `asyncio` keeps Python's own loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

from askbridge.core.errors import StartupError

EventLoop = Literal["auto", "uvloop", "asyncio"]
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory(choice: EventLoop) -> LoopFactory | None:
    """What makes the loop `choice` names; None: asyncio's own."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError as missing:
        if choice == "auto":
            return None
        raise StartupError(
            "ASKBRIDGE_EVENT_LOOP=uvloop, but uvloop is not installed: install it "
            "(pip install uvloop) or set ASKBRIDGE_EVENT_LOOP=asyncio"
        ) from missing
    return uvloop.new_event_loop


def running_loop() -> str:
    """The loop this runs on, as the start-up log names it."""
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.split(".")[0] == "uvloop" else "asyncio"
