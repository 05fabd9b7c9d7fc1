"""How long to wait between tries, for every loop that retries: one policy, built on tenacity.

Each loop keeps its own caps and jitter, written once here as tenacity wait strategies. A loop
that waits in the process hands one to `AsyncRetrying` with its clock's `sleep` (tests move the
clock); a loop whose next try is stored (the webhook outbox) asks `Backoff.after` for the delay.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from tenacity import AsyncRetrying, RetryCallState
from tenacity.wait import wait_base, wait_chain, wait_exponential, wait_fixed

from askbridge.core.errors import RetryLater

RETRIED_STATUSES = frozenset({408, 429})
"""The HTTP 4xx statuses that say "not now" (a timeout, a rate limit) rather than "no"."""


def is_refusal(status: int) -> bool:
    """Whether an HTTP status refuses the call itself: the server answered, and trying the same
    call again gets the same answer. A 5xx or one of `RETRIED_STATUSES` says it may not."""
    return 400 <= status < 500 and status not in RETRIED_STATUSES


class Jittered(wait_base):
    """`inner`'s wait times a random factor between `low` and `high`: replicas, messages or
    clients that failed together do not all try again at the same moment."""

    def __init__(
        self, inner: wait_base, low: float, high: float, rng: random.Random | None = None
    ) -> None:
        self.inner = inner
        self.low = low
        self.high = high
        self.rng = rng or random.Random()

    def __call__(self, retry_state: RetryCallState) -> float:
        return self.inner(retry_state) * self.rng.uniform(self.low, self.high)


class HonouringRetryAfter(wait_base):
    """`inner`'s wait, never shorter than the Retry-After of the failure it follows."""

    def __init__(self, inner: wait_base) -> None:
        self.inner = inner

    def __call__(self, retry_state: RetryCallState) -> float:
        delay = self.inner(retry_state)
        error = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(error, RetryLater):
            delay = max(delay, error.after_s)
        return delay


def stepped(steps: Sequence[float], rng: random.Random | None = None) -> wait_base:
    """Along `steps`, whose last one repeats, each within ±20 %."""
    chain = wait_chain(*(wait_fixed(step) for step in steps or (0.0,)))
    return Jittered(chain, 0.8, 1.2, rng)


def doubling(
    first: float, longest: float, *, jitter: tuple[float, float], rng: random.Random | None = None
) -> wait_base:
    """`first`, doubling after each failure up to `longest`, times a random factor in `jitter`
    ((0, 1) is full jitter, (1, 1) none)."""
    ceiling = wait_exponential(multiplier=first, min=0, max=longest, exp_base=2)
    if jitter == (1.0, 1.0):
        return ceiling
    return Jittered(ceiling, *jitter, rng=rng)


class Backoff:
    """A wait strategy asked directly: how long after failed attempt number `attempt` (from 1)
    to try again, for loops that store that time or sleep in a way of their own."""

    def __init__(self, wait: wait_base) -> None:
        self.wait = wait
        self._retrying = AsyncRetrying(wait=wait)

    def after(self, attempt: int, error: BaseException | None = None) -> float:
        state = RetryCallState(self._retrying, None, (), {})
        state.attempt_number = attempt
        if error is not None:
            state.set_exception((type(error), error, error.__traceback__))
        return self.wait(state)
