"""Discord snowflake ids and timestamps."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

DISCORD_EPOCH_MS = 1_420_070_400_000


def snowflake_from_ms(unix_ms: int) -> int:
    """The smallest snowflake for a Unix time in milliseconds."""
    return (unix_ms - DISCORD_EPOCH_MS) << 22


def snowflake_ms(snowflake: int) -> int:
    """The Unix time in milliseconds a snowflake was minted at."""
    return (snowflake >> 22) + DISCORD_EPOCH_MS


def iso_timestamp(unix_ms: int) -> str:
    """An ISO 8601 timestamp the way Discord writes them."""
    return datetime.fromtimestamp(unix_ms / 1000, UTC).isoformat()


class SnowflakeFactory:
    """Mints strictly increasing snowflakes derived from the current time."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._last = 0

    def next(self) -> int:
        candidate = snowflake_from_ms(int(self._clock() * 1000))
        if candidate <= self._last:
            candidate = self._last + 1
        self._last = candidate
        return candidate

    def now_iso(self) -> str:
        return iso_timestamp(int(self._clock() * 1000))
