"""Event-based waiting on emulator state, without sleep loops."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(AssertionError):
    """Raised when something a test waited for did not happen in time."""


class Pulse:
    """Wakes every waiter whenever the emulator's state changes.

    Mutations call `notify()` (a plain function, so synchronous code can call it);
    waiters re-check their condition after each wake-up.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait_for(
        self,
        check: Callable[[], T | None],
        *,
        seconds: float,
        describe: Callable[[], str],
    ) -> T:
        """Return the first non-None result of `check`, re-checked after every change."""
        try:
            async with asyncio.timeout(seconds):
                while True:
                    result = check()
                    if result is not None:
                        return result
                    await self._event.wait()
        except TimeoutError:
            raise WaitTimeout(f"timed out after {seconds:g} s: {describe()}") from None
