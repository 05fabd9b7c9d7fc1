"""Turns under a platform's rate limit: a burst at once, then an even pace; and message
updates that wait for their turn without holding up the agent, a stop, or the next replica."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.intents import Decided, Pick
from askbridge.core.models import MessageRef, Person, Request, Target
from askbridge.core.pace import Pace
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DEPLOY

ADA = Person(platform="chat", id="U1", name="Ada")


def test_a_burst_goes_at_once_then_one_call_each_interval() -> None:
    pace = Pace(per_minute=60, burst=3)
    assert [pace.reserve(100.0) for _ in range(6)] == [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]
    # Turns handed out are kept: a call a little later waits for the one after them.
    assert pace.reserve(101.5) == pytest.approx(2.5)


def test_a_quiet_spell_earns_a_whole_burst_again_and_no_more() -> None:
    pace = Pace(per_minute=60, burst=3)
    for _ in range(3):
        pace.reserve(100.0)
    assert [pace.reserve(200.0) for _ in range(4)] == [0.0, 0.0, 0.0, 1.0]


def test_a_turn_is_free_while_the_burst_lasts_and_again_once_its_time_has_come() -> None:
    pace = Pace(per_minute=60, burst=2)
    assert pace.free(100.0)
    pace.reserve(100.0)
    assert pace.free(100.0)
    pace.reserve(100.0)
    # Asking takes nothing: the next turn is a second away, however often it is asked.
    assert not pace.free(100.0)
    assert not pace.free(100.9)
    assert pace.free(101.0)
    assert pace.reserve(101.0) == 0.0


@pytest.mark.parametrize(("per_minute", "burst"), [(0, 1), (-5, 1), (60, 0)])
def test_a_pace_that_lets_nothing_through_is_refused(per_minute: float, burst: int) -> None:
    with pytest.raises(ValueError, match="per_minute > 0 and burst >= 1"):
        Pace(per_minute, burst)


class PacedChat:
    """A surface on the real seam whose platform takes one edit a second after a burst of 2."""

    platform = "chat"
    answerer_kinds: tuple[str, ...] = ("chat",)

    def __init__(self, pace: Pace) -> None:
        self.update_pace: Pace | None = pace
        self.updated: asyncio.Queue[tuple[float, Request]] = asyncio.Queue()

    def check_target(self, target: Target) -> None:
        pass

    async def post(self, request: Request, target: Target) -> MessageRef:
        return MessageRef(platform="chat", channel="C1", message_id=request.request_id)

    async def update(self, request: Request, message: MessageRef) -> None:
        await self.updated.put((time.monotonic(), request))


def ask(request_id: str) -> Ask:
    return Ask.parse({"request_id": request_id, "questions": [DEPLOY], "target": "chat:C1"})


async def answered(broker: Broker, count: int) -> list[str]:
    ids = [f"ask_paced_{number}" for number in range(count)]
    for request_id in ids:
        await broker.ask(ask(request_id))
    waiters = [asyncio.create_task(broker.wait(request_id, 10)) for request_id in ids]
    for request_id in ids:
        assert isinstance(await broker.act(request_id, ADA, Pick(0, 0)), Decided)
    # Every agent has its answer, whatever the platform's pace.
    assert all(r.status.value == "answered" for r in await asyncio.gather(*waiters))
    return ids


@asynccontextmanager
async def paced_broker(
    tmp_path: Path, pace: Pace
) -> AsyncIterator[tuple[Broker, PacedChat, SQLiteStore]]:
    """A started broker on SQLite with one paced surface; stopped and closed on leaving."""
    store = SQLiteStore(tmp_path / "paced.db")
    await store.open()
    surface = PacedChat(pace)
    broker = Broker(store)
    broker.add_surface(surface)
    await broker.start()
    try:
        yield broker, surface, store
    finally:
        await broker.stop()
        await store.close()


async def test_updates_over_the_burst_wait_their_turn(tmp_path: Path) -> None:
    async with paced_broker(tmp_path, Pace(per_minute=600, burst=2)) as (broker, surface, _):
        await answered(broker, 4)
        times = sorted([(await asyncio.wait_for(surface.updated.get(), 10))[0] for _ in range(4)])
    # Two at once, then one every tenth of a second.
    assert times[1] - times[0] < 0.09
    assert times[2] - times[0] >= 0.09
    assert times[3] - times[2] >= 0.09


async def test_a_stop_does_not_wait_for_a_far_turn_and_leaves_it_to_the_sweep(
    tmp_path: Path,
) -> None:
    async with paced_broker(tmp_path, Pace(per_minute=1, burst=1)) as (broker, surface, store):
        ids = await answered(broker, 2)
        await asyncio.wait_for(surface.updated.get(), 10)
        stopping = time.monotonic()
        await broker.stop(grace_s=30)
        assert time.monotonic() - stopping < 5
        # The second update never went out, and nothing holds a claim on it: the next
        # process (or another replica) sweeps it up.
        assert surface.updated.empty()
        left = await store.unrendered(datetime.now(UTC))
        assert [request_id for request_id, _ in left] == [ids[1]]


async def test_a_stop_right_after_a_click_sends_the_update_whose_turn_is_there(
    tmp_path: Path,
) -> None:
    """Stopped while the update has yet to reach the pace (it starts a few milliseconds after
    the click), with turns to spare: it is in hand, and goes out within the stop's grace."""
    async with paced_broker(tmp_path, Pace(per_minute=1, burst=2)) as (broker, surface, store):
        await answered(broker, 1)
        await broker.stop(grace_s=30)
        assert surface.updated.qsize() == 1
        assert await store.unrendered(datetime.now(UTC)) == []


async def test_a_stop_also_leaves_an_update_that_had_not_yet_come_to_wait_for_its_turn(
    tmp_path: Path,
) -> None:
    """Stopped right after a click, while its update has yet to reach the pace at all."""
    async with paced_broker(tmp_path, Pace(per_minute=1, burst=1)) as (broker, surface, store):
        await answered(broker, 1)
        await asyncio.wait_for(surface.updated.get(), 10)
        await broker.ask(ask("ask_paced_late"))
        assert isinstance(await broker.act("ask_paced_late", ADA, Pick(0, 0)), Decided)
        stopping = time.monotonic()
        await broker.stop(grace_s=30)
        assert time.monotonic() - stopping < 5
        assert surface.updated.empty()
        left = await store.unrendered(datetime.now(UTC))
        assert [request_id for request_id, _ in left] == ["ask_paced_late"]
