"""What the app asked the Web API for, and the failures a test asked the emulator to inject."""

from __future__ import annotations

import copy
import math
import secrets
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .blocks import placed_elements
from .types import Block
from .validation import validate_blocks, validate_view


@dataclass(frozen=True)
class ApiCall:
    method: str
    params: dict[str, Any]
    """Query, form and JSON arguments merged; `blocks` given as a JSON string are decoded."""
    token: str | None
    status: int
    response: dict[str, Any]
    at: float = field(default_factory=time.monotonic)
    """When the emulator answered (`time.monotonic()`)."""

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response.get("ok"))


@dataclass(frozen=True)
class Fault:
    status: int
    retry_after: int | None
    error: str

    def body(self) -> dict[str, Any]:
        return {"ok": False, "error": self.error}

    def headers(self) -> dict[str, str]:
        return {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}


DEFAULT_ERRORS: Mapping[int, str] = MappingProxyType(
    {429: "ratelimited", 500: "internal_error", 503: "service_unavailable"}
)


@dataclass
class RateLimit:
    """Slack's per-method limit: `burst` calls at once, then `per_minute` on average; a call
    over it is refused with 429 and the whole seconds until it would be taken."""

    per_minute: float
    burst: int
    _due: float = float("-inf")

    def refuse(self, now: float) -> Fault | None:
        interval = 60.0 / self.per_minute
        due = max(self._due, now)
        early = due - (self.burst - 1) * interval - now
        if early > 0:
            return Fault(status=429, retry_after=max(1, math.ceil(early)), error="ratelimited")
        self._due = due + interval
        return None


@dataclass
class ApiLog:
    calls: list[ApiCall] = field(default_factory=list)
    _faults: dict[str, deque[Fault]] = field(default_factory=dict)
    _outages: dict[str, Fault] = field(default_factory=dict)
    _limits: dict[str, RateLimit] = field(default_factory=dict)

    def fail_next(
        self,
        method: str,
        *,
        status: int = 429,
        retry_after: int | None = 1,
        times: int = 1,
        error: str | None = None,
    ) -> None:
        if times < 1:
            raise ValueError(f"times must be at least 1, got {times}")
        self._faults.setdefault(method, deque()).extend(
            [_fault(status, retry_after, error)] * times
        )

    def outage(self, method: str, *, status: int = 503, retry_after: int | None = 1) -> None:
        """Fail every call of `method` (after the queued `fail_next` ones) until `recover`."""
        self._outages[method] = _fault(status, retry_after, None)

    def recover(self, method: str) -> None:
        self._outages.pop(method, None)

    def limit_rate(self, method: str, per_minute: float, burst: int) -> None:
        self._limits[method] = RateLimit(per_minute, burst)

    def take_fault(self, method: str) -> Fault | None:
        pending = self._faults.get(method)
        if pending:
            return pending.popleft()
        limit = self._limits.get(method)
        refused = None if limit is None else limit.refuse(time.monotonic())
        return refused or self._outages.get(method)

    def pending_faults(self, method: str) -> int:
        return len(self._faults.get(method, ()))

    def record(self, call: ApiCall) -> None:
        self.calls.append(call)

    def of(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method]


def _fault(status: int, retry_after: int | None, error: str | None) -> Fault:
    if error is None and status not in DEFAULT_ERRORS:
        raise ValueError(
            f"status {status} has no default Slack error; pass error=... "
            f"(known defaults: {dict(DEFAULT_ERRORS)})"
        )
    return Fault(
        status=status,
        retry_after=retry_after if status == 429 else None,
        error=error or DEFAULT_ERRORS[status],
    )


@dataclass(frozen=True)
class BlockRejection:
    """One `invalid_blocks` answer (or, for a view, `invalid_arguments`): which call sent the
    blocks and what Slack objected to."""

    source: str
    errors: list[str]
    blocks: Any


@dataclass
class BlockGate:
    """Checks blocks on the way in, remembers every rejection, and fills in what Slack fills in."""

    require_block_ids: bool = True
    rejections: list[BlockRejection] = field(default_factory=list)

    def check(self, source: str, blocks: object) -> list[str]:
        errors = validate_blocks(blocks, require_block_ids=self.require_block_ids)
        if errors:
            self.rejections.append(BlockRejection(source, errors, copy.deepcopy(blocks)))
        return errors

    def check_view(self, source: str, view: object) -> list[str]:
        errors = validate_view(view, require_block_ids=self.require_block_ids)
        if errors:
            self.rejections.append(BlockRejection(source, errors, copy.deepcopy(view)))
        return errors

    @staticmethod
    def normalize(blocks: list[Block]) -> list[Block]:
        """A copy in which every block and element has an id, as Slack invents missing ones."""
        stored = copy.deepcopy(blocks)
        for block in stored:
            block.setdefault("block_id", secrets.token_urlsafe(4))
        for placed in placed_elements(stored):
            placed.element.setdefault("action_id", secrets.token_urlsafe(4))
        return stored
