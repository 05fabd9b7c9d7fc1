"""Messages catch up within seconds of their platform answering again after an outage, on a
clock the test moves: the real MessageUpdates (through the broker) and surfaces on the real
seam whose updates fail while their platform is down."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.errors import MessageRefused, RetryLater
from askbridge.core.intents import Cancel
from askbridge.core.message_updates import BACKOFF_S, CALLS_AT_ONCE
from askbridge.core.models import MessageRef, Person, Request, Target
from askbridge.core.outages import PROBE_S
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DEPLOY

ADA = Person(platform="web", id="ada", name="Ada")
START = datetime(2030, 1, 1, tzinfo=UTC)
MESSAGES = 10
TURNS = 20
"""Turns of the event loop that a woken update takes at most to try again or sleep."""


class VirtualClock:
    """A clock that jumps from one sleeper's deadline to the next once everything that is
    not asleep on it has settled; `settled` says when that is."""

    def __init__(self) -> None:
        self._now = START
        self._sleepers: list[tuple[datetime, asyncio.Future[None]]] = []
        self._changed = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    def seconds(self) -> float:
        return (self._now - START).total_seconds()

    async def sleep_until(self, when: datetime) -> None:
        if self._now >= when:
            return
        entry = (when, asyncio.get_running_loop().create_future())
        self._sleepers.append(entry)
        self.poke()
        try:
            await entry[1]
        finally:
            if entry in self._sleepers:
                self._sleepers.remove(entry)
            self.poke()

    def poke(self) -> None:
        self._changed.set()

    @property
    def sleeping(self) -> int:
        """Sleepers still asleep (a cancelled one may not have left the list yet)."""
        return sum(1 for _, woken in self._sleepers if not woken.done())

    async def settled(self, done: Callable[[], bool]) -> None:
        """Return once `done()` holds and still holds after the event loop has run what was
        ready: a platform's return wakes its updates through a few turns of the loop, and the
        clock must not move on before they have tried."""
        async with asyncio.timeout(10):
            while True:
                while not done():
                    self._changed.clear()
                    await self._changed.wait()
                for _ in range(TURNS):
                    await asyncio.sleep(0)
                if done():
                    return

    def next_deadline(self) -> float | None:
        """The soonest sleeper's deadline, in seconds from the start."""
        soonest = min((when for when, _ in self._sleepers), default=None)
        return None if soonest is None else (soonest - START).total_seconds()

    def jump(self, to_s: float) -> None:
        self._now = START + timedelta(seconds=to_s)
        for entry in [e for e in self._sleepers if e[0] <= self._now]:
            self._sleepers.remove(entry)
            entry[1].set_result(None)


class Platform:
    """A surface whose message updates fail while `down` (a 503 storm, or 429s when it says
    `retry_after_s`), and that refuses the `broken` ones while it is up; it notes the time of
    each attempt and of each update shown."""

    answerer_kinds: tuple[str, ...] = ("web",)

    def __init__(
        self,
        platform: str,
        clock: VirtualClock,
        retry_after_s: float | None = None,
        messages: int = MESSAGES,
    ) -> None:
        self.platform = platform
        self.messages = messages
        self.clock = clock
        self.retry_after_s = retry_after_s
        self.down = False
        self.broken: set[str] = set()
        """Messages whose updates the platform refuses whenever it answers (Slack's
        message_not_found)."""
        self.attempts: list[tuple[float, str]] = []
        self.shown: dict[str, float] = {}

    def check_target(self, target: Target) -> None:
        pass

    async def post(self, request: Request, target: Target) -> MessageRef:
        return MessageRef(platform=self.platform, channel="C1", message_id=request.request_id)

    async def update(self, request: Request, message: MessageRef) -> None:
        now = self.clock.seconds()
        self.attempts.append((now, request.request_id))
        if self.down:
            if self.retry_after_s is not None:
                raise RetryLater(self.retry_after_s, self.platform)
            raise ConnectionError(f"{self.platform} answered 503")
        if request.request_id in self.broken:
            raise MessageRefused(f"{self.platform} said message_not_found")
        self.shown[request.request_id] = now
        self.clock.poke()

    def pending(self) -> int:
        return self.messages - len(self.shown)

    def tried_at(self, request_id: str) -> list[float]:
        return [at for at, tried in self.attempts if tried == request_id]


async def run_until(clock: VirtualClock, end_s: float, *platforms: Platform) -> None:
    """Move the clock to `end_s`, stopping at each sleeper's deadline on the way until every
    update it woke is asleep again (or shown)."""

    def settled() -> bool:
        return clock.sleeping == sum(p.pending() for p in platforms)

    while True:
        await clock.settled(settled)
        due = clock.next_deadline()
        if due is None or due > end_s:
            clock.jump(end_s)
            return
        clock.jump(due)


async def outage(store: SQLiteStore, *platforms: Platform) -> Broker:
    """A broker with requests on each platform, all cancelled while it is down."""
    clock = platforms[0].clock
    broker = Broker(store, default_target="web", render_clock=clock)
    for platform in platforms:
        broker.add_surface(platform)
    await broker.start()
    for platform in platforms:
        for n in range(platform.messages):
            request_id = f"ask_{platform.platform}_{n}"
            body = {
                "request_id": request_id,
                "questions": [DEPLOY],
                "target": f"{platform.platform}:C1",
            }
            await broker.ask(Ask.parse(body))
        platform.down = True
        for n in range(platform.messages):
            await broker.act(f"ask_{platform.platform}_{n}", ADA, Cancel())
    return broker


async def test_messages_catch_up_within_10_s_of_their_platform_answering_again(
    store: SQLiteStore,
) -> None:
    clock = VirtualClock()
    slack, discord = Platform("slack", clock), Platform("discord", clock)
    broker = await outage(store, slack, discord)
    try:
        # A 120 s storm of 503s on Slack; Discord stays down until 300 s.
        await run_until(clock, 120, slack, discord)
        assert slack.shown == {}
        assert discord.shown == {}
        # Each message backed off along its schedule, within ±20 %, though a wait may have
        # been cut to the probe interval when no other update was to try the platform sooner.
        for n in range(MESSAGES):
            tried = slack.tried_at(f"ask_slack_{n}")
            steps = [*BACKOFF_S, *[BACKOFF_S[-1]] * len(tried)]
            for gap, step in zip(itertools.pairwise(tried), steps, strict=False):
                wait = gap[1] - gap[0]
                assert min(step * 0.8, PROBE_S) - 1e-3 <= wait <= step * 1.2 + 1e-3, (n, tried)
        slack.down = False
        await run_until(clock, 300, slack, discord)
        assert discord.shown == {}
        late = {request_id: at - 120 for request_id, at in slack.shown.items() if at > 130}
        assert len(slack.shown) == MESSAGES
        assert late == {}
        # Slack's return woke none of Discord's updates: none was tried at that moment.
        back = min(slack.shown.values())
        assert [at for at, _ in discord.attempts if at == back] == []
        # Discord, still failing, kept its backoff: each of its messages waited 60 s ± 20 %
        # between tries, but for one at a time that tries it every 5 s.
        during = [at for at, _ in discord.attempts if 120 <= at < 300]
        kept = MESSAGES * (180 / (BACKOFF_S[-1] * 0.8) + 1) + 180 / 5 + 1
        assert len(during) <= kept, (len(during), kept)
        discord.down = False
        await run_until(clock, 320, slack, discord)
        assert len(discord.shown) == MESSAGES
        assert max(discord.shown.values()) <= 310, discord.shown
    finally:
        await broker.stop()
    assert await store.unrendered() == []


async def test_retry_after_is_honoured_when_the_platform_comes_back(store: SQLiteStore) -> None:
    clock = VirtualClock()
    slack = Platform("slack", clock, retry_after_s=30)
    broker = await outage(store, slack)
    try:
        await run_until(clock, 100, slack)
        slack.down = False
        await run_until(clock, 200, slack)
    finally:
        await broker.stop()
    assert len(slack.shown) == MESSAGES
    for request_id in slack.shown:
        tried = slack.tried_at(request_id)
        gaps = [later - earlier for earlier, later in itertools.pairwise(tried)]
        assert all(gap >= 30 for gap in gaps), (request_id, gaps)
    # Each waited out its last Retry-After, and no longer than that and the probe interval.
    assert max(slack.shown.values()) <= 100 + 30 + 5


async def test_a_lone_message_catches_up_though_its_backoff_is_a_minute(
    store: SQLiteStore,
) -> None:
    clock = VirtualClock()
    slack = Platform("slack", clock, messages=1)
    broker = await outage(store, slack)
    try:
        await run_until(clock, 120, slack)
        # Slack answers again just after a try, when the update's backoff is at its longest.
        tries = len(slack.attempts)
        while len(slack.attempts) == tries:
            deadline = clock.next_deadline()
            assert deadline is not None
            await run_until(clock, deadline, slack)
        back = clock.seconds()
        slack.down = False
        await run_until(clock, back + 60, slack)
    finally:
        await broker.stop()
    assert slack.shown["ask_slack_0"] <= back + 10, (back, slack.attempts)


async def test_a_message_failing_for_its_own_reason_keeps_its_backoff(store: SQLiteStore) -> None:
    clock = VirtualClock()
    slack = Platform("slack", clock)
    slack.broken = {"ask_slack_0"}
    broker = await outage(store, slack)
    try:
        await run_until(clock, 120, slack)
        slack.down = False
        await run_until(clock, 600, slack)
    finally:
        await broker.stop(grace_s=0)  # its update is still being retried
    assert len(slack.shown) == MESSAGES - 1
    assert max(slack.shown.values()) <= 130
    # Woken with the others when Slack came back, it failed again: from then on it waits its
    # minute each time, neither probing nor woken by the others' updates.
    tried = slack.tried_at("ask_slack_0")
    woken = next(at for at in tried if at >= min(slack.shown.values()))
    later = [at for at in tried if at > woken]
    gaps = [b - a for a, b in itertools.pairwise([woken, *later])]
    assert len(gaps) >= 6
    assert min(gaps) >= BACKOFF_S[-1] * 0.8 - 1e-3, gaps


class BackForOneFirst(Platform):
    """A platform that is back from `back_s` on, first for the next try of `first`: that try
    is the first to find it up."""

    def __init__(self, platform: str, clock: VirtualClock, first: str, back_s: float) -> None:
        super().__init__(platform, clock)
        self.first = first
        self.back_s = back_s

    async def update(self, request: Request, message: MessageRef) -> None:
        if request.request_id == self.first and self.clock.seconds() >= self.back_s:
            self.down = False
        await super().update(request, message)


@pytest.mark.parametrize("retry_after_s", [None, 30.0])
async def test_a_refusal_that_is_the_first_answer_after_an_outage_wakes_the_others(
    store: SQLiteStore, retry_after_s: float | None
) -> None:
    clock = VirtualClock()
    slack = BackForOneFirst("slack", clock, first="ask_slack_0", back_s=120)
    slack.retry_after_s = retry_after_s
    slack.broken = {"ask_slack_0"}
    discord = Platform("discord", clock)
    broker = await outage(store, slack, discord)
    try:
        await run_until(clock, 600, slack, discord)
    finally:
        await broker.stop(grace_s=0)  # its update is still being retried, Discord's too
    refused = next(at for at in slack.tried_at("ask_slack_0") if at >= 120)
    assert len(slack.shown) == MESSAGES - 1
    # Slack refusing that one message was Slack answering: every other message was updated
    # at once, not at the next probe, though each only after its last Retry-After.
    for request_id, shown in slack.shown.items():
        before = [at for at in slack.tried_at(request_id) if at < shown]
        due = max(refused, before[-1] + (retry_after_s or 0))
        assert shown == pytest.approx(due, abs=1e-6), (request_id, refused, before, shown)
    # The refused message keeps its minute's backoff from then on.
    later = [at for at in slack.tried_at("ask_slack_0") if at >= refused]
    gaps = [b - a for a, b in itertools.pairwise(later)]
    assert gaps
    assert min(gaps) >= BACKOFF_S[-1] * 0.8 - 1e-3, gaps
    # Slack's answer woke none of Discord's updates.
    assert [at for at, _ in discord.attempts if at == refused] == []


class Hanging(Platform):
    """A platform down in the worst way: its calls neither succeed nor fail until `released`."""

    def __init__(self, platform: str, clock: VirtualClock) -> None:
        super().__init__(platform, clock)
        self.released = asyncio.Event()
        self.hanging = 0
        self.all_hang = asyncio.Event()
        """As many calls hang as may be in flight on one platform."""

    async def update(self, request: Request, message: MessageRef) -> None:
        if self.down:
            self.hanging += 1
            if self.hanging == CALLS_AT_ONCE:
                self.all_hang.set()
            await self.released.wait()
        await super().update(request, message)


async def test_calls_hanging_on_one_platform_never_hold_up_another(store: SQLiteStore) -> None:
    clock = VirtualClock()
    discord, slack = Hanging("discord", clock), Platform("slack", clock)
    broker = await outage(store, discord)
    try:
        await asyncio.wait_for(discord.all_hang.wait(), 10)
        broker.add_surface(slack)
        for n in range(MESSAGES):
            request_id = f"ask_slack_{n}"
            body = {"request_id": request_id, "questions": [DEPLOY], "target": "slack:C1"}
            await broker.ask(Ask.parse(body))
            await broker.act(request_id, ADA, Cancel())
        # Slack's updates go out while every Discord call still hangs, the clock standing.
        await clock.settled(lambda: slack.pending() == 0)
        assert clock.seconds() == 0
        discord.released.set()
    finally:
        await broker.stop(grace_s=0)  # Discord is still down
