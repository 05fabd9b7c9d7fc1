"""Every retry loop keeps its caps and jitter: the schedules of core/retry.py, as each loop
builds them."""

from __future__ import annotations

import random

import pytest

from askbridge.bots.client import RECONNECT_WAIT
from askbridge.core.errors import RetryLater
from askbridge.core.message_updates import BACKOFF_S
from askbridge.core.retry import Backoff, HonouringRetryAfter, doubling, stepped
from askbridge.core.webhooks import WebhookOptions, retry_schedule

ATTEMPTS = range(1, 16)
SECRET = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
SAMPLES = 200


def test_message_updates_step_along_their_schedule_within_20_percent() -> None:
    schedule = Backoff(HonouringRetryAfter(stepped(BACKOFF_S, random.Random(1))))
    for attempt in ATTEMPTS:
        step = BACKOFF_S[min(attempt, len(BACKOFF_S)) - 1]
        delays = [schedule.after(attempt) for _ in range(SAMPLES)]
        assert step * 0.8 <= min(delays)
        assert max(delays) <= step * 1.2
        # Jittered: not all the same.
        assert max(delays) - min(delays) > step * 0.2


def test_a_retry_after_longer_than_the_step_is_waited_out_in_full() -> None:
    schedule = Backoff(HonouringRetryAfter(stepped(BACKOFF_S)))
    assert schedule.after(1, RetryLater(30.0, "Slack")) == 30.0
    assert 48.0 <= schedule.after(9, RetryLater(1.0, "Slack")) <= 72.0
    assert schedule.after(1, ConnectionError("down")) <= 1.2


def test_webhook_retries_are_full_jitter_doubling_up_to_an_hour() -> None:
    options = WebhookOptions(secret=SECRET, body=lambda _request: b"{}")
    schedule = retry_schedule(options, random.Random(2))
    for attempt in ATTEMPTS:
        ceiling = min(3600.0, 10.0 * 2 ** (attempt - 1))
        delays = [schedule.after(attempt) for _ in range(SAMPLES)]
        assert 0 <= min(delays) < ceiling * 0.1
        assert ceiling * 0.9 < max(delays) <= ceiling


def test_a_seeded_webhook_schedule_repeats_itself() -> None:
    options = WebhookOptions(secret=SECRET, body=lambda _request: b"{}")
    first, second = (retry_schedule(options, random.Random(3)) for _ in range(2))
    assert [first.after(n) for n in ATTEMPTS] == [second.after(n) for n in ATTEMPTS]


@pytest.mark.parametrize(("first", "longest"), [(0.5, 30.0), (0.05, 0.2)])
def test_the_postgres_listener_doubles_with_half_jitter(first: float, longest: float) -> None:
    # As PostgresStore._reconnect builds it from `reconnect_s`.
    schedule = Backoff(doubling(first, longest, jitter=(0.5, 1.0), rng=random.Random(4)))
    for attempt in ATTEMPTS:
        ceiling = min(longest, first * 2 ** (attempt - 1))
        delays = [schedule.after(attempt) for _ in range(SAMPLES)]
        assert ceiling / 2 <= min(delays) < ceiling * 0.55
        assert ceiling * 0.95 < max(delays) <= ceiling


def test_the_client_reconnects_after_a_quarter_second_doubling_up_to_5_s() -> None:
    schedule = Backoff(RECONNECT_WAIT)
    assert [schedule.after(n) for n in range(1, 9)] == [0.25, 0.5, 1, 2, 4, 5, 5, 5]
