"""The event loop `askbridge serve` runs on (ASKBRIDGE_EVENT_LOOP): `auto` (the default) takes
uvloop when it is installed, as it is with askbridge on Linux and macOS, `asyncio` keeps
Python's own loop. What uvloop saves a click: docs/explanation/speed.md.
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
