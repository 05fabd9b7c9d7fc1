"""The hub wakes whoever waits on a request: one waiter or many, none missed while it reads,
none left behind when the others go."""

from __future__ import annotations

import asyncio
import copy

from askbridge.core.hub import Hub
from askbridge.core.models import Request, Status, Target
from askbridge.core.questions import parse_questions
from tests.conftest import DEPLOY
from tests.test_stores import NOW


def ended(request_id: str) -> Request:
    return Request(
        request_id=request_id,
        questions=parse_questions([copy.deepcopy(DEPLOY)]),
        targets=(Target(platform="web"),),
        created_at=NOW,
        status=Status.ANSWERED,
    )


async def test_every_waiter_of_a_request_wakes_and_the_others_stay_away() -> None:
    hub = Hub()
    with hub.watch("r1") as first, hub.watch("r1") as second, hub.watch("r2") as other:
        with hub.watch("r1"):
            pass  # one of three leaves: the two others still wake
        answer = ended("r1")
        hub.publish("r1", answer)
        await asyncio.gather(first.changed, second.changed)
        assert (first.take(), second.take()) == (answer, answer)
        assert not other.changed.done()
    assert hub._waiters == {}


async def test_a_change_published_while_the_waiter_reads_is_not_missed() -> None:
    hub = Hub()
    with hub.watch("r1") as watch:
        hub.publish("r1")
        await watch.changed
        assert watch.take() is None  # read it again; meanwhile it changes once more
        hub.publish("r1", ended("r1"))
        await watch.changed
        taken = watch.take()
        assert taken is not None
        assert taken.status is Status.ANSWERED


async def test_closing_and_expiring_wake_for_good() -> None:
    hub = Hub()
    with hub.watch("r1") as closing, hub.watch("r2") as expiring:
        expiring.expire()
        await expiring.changed
        assert expiring.expired
        assert not closing.changed.done()
        hub.close()
        await closing.changed
        assert hub.closed
