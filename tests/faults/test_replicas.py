"""Three `askbridge serve` processes on one PostgreSQL schema against the Slack emulator, with
no stickiness anywhere: in Socket Mode each replica holds a connection and Slack hands each
envelope to one of them in turn; in HTTP mode the emulator, as a load balancer would, posts
each click to the next replica. Every click is answered once, every person who must be told
is told once, every message is updated once per change; and a replica killed while Slack is
down leaves its updates to the others."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.emulators.slack import Delivery, Message, SlackEmulator
from tests.server_process import ServerProcess
from tests.slack.conftest import CHANNEL, Mode, slack_settings
from tests.stores import postgres_schema

from .conftest import ask, outcome
from .test_slack_crashes import deploy

REPLICAS = 3
REQUESTS = 100
"""200 clicks: on each request, one person approves and another rejects at the same moment;
each person clicks once, so each is told (or not) exactly once."""
OUTAGE_REQUESTS = 12
"""Each is tried three times per call (the Slack client's own retries, after Retry-After),
four calls at a time: a few are enough to see every one of them taken over."""


class Replicas:
    """Three `askbridge serve` on one database, and the URLs an agent and Slack reach them at."""

    def __init__(self, folder: Path, slack: SlackEmulator, mode: Mode, env: dict[str, str]):
        self.slack, self.mode = slack, mode
        self.servers: list[ServerProcess] = []
        for i in range(REPLICAS):
            (folder / f"replica{i}").mkdir()
            self.servers.append(ServerProcess(folder / f"replica{i}" / "unused.db", env=env))
        self.urls: list[str] = []

    async def start(self) -> None:
        # The first creates the schema; the others start together.
        self.urls = [await self.servers[0].start()]
        self.urls += await asyncio.gather(*(s.start() for s in self.servers[1:]))
        if self.mode == "http":
            self.slack.interactions_urls = [f"{url}/slack/events" for url in self.urls]
        else:
            await self.slack.workspace.wait_until(
                lambda: len(self.slack.socket.connections) == REPLICAS or None,
                10,
                lambda: f"{len(self.slack.socket.connections)} Socket Mode connections",
            )

    async def stop(self) -> list[int]:
        """SIGTERM: each replica lets what it acknowledged finish (notes, updates)."""
        running = [s for s in self.servers if s.process and s.process.returncode is None]
        return await asyncio.gather(*(server.stop() for server in running))


@contextlib.asynccontextmanager
async def replicas(
    folder: Path, slack: SlackEmulator, mode: Mode, **env: str
) -> AsyncIterator[Replicas]:
    async with postgres_schema() as database_url:
        settings = {
            **slack_settings(slack, mode),
            "ASKBRIDGE_DATABASE_URL": database_url,
            # This emulator sets no rate limit and 100 messages are updated here at once;
            # keeping under Slack's has tests of its own (tests/slack/test_rate_limits.py).
            "ASKBRIDGE_SLACK_UPDATES_PER_MINUTE": "0",
            **env,
        }
        running = Replicas(folder, slack, mode, settings)
        try:
            await running.start()
            yield running
        finally:
            for server in running.servers:
                if server.process and server.process.returncode is None:
                    await server.kill()


def posted(slack: SlackEmulator, created: dict[str, Any]) -> Message:
    [message] = created["messages"]
    return slack.message(message["channel"], message["message_id"])


def ended(message: Message) -> bool:
    return not message.has_interactive_elements


def updates_of(slack: SlackEmulator, message: Message, *, ok: bool = True) -> int:
    """How many `chat.update` calls Slack took for `message` (or failed, with `ok=False`)."""
    calls = slack.api_log.of("chat.update")
    return sum(1 for c in calls if c.params.get("ts") == message.ts and c.ok is ok)


async def tried_each(slack: SlackEmulator, messages: list[Message], after: int = 0) -> None:
    """Wait until `chat.update` has been called for each of `messages` since call `after`."""
    wanted = {message.ts for message in messages}

    def check() -> bool | None:
        tried = {call.params.get("ts") for call in slack.api_log.of("chat.update")[after:]}
        return True if wanted <= tried else None

    await slack.workspace.wait_until(check, 15, lambda: "messages were left untried")


@pytest.mark.parametrize("mode", ["socket", "http"])
async def test_two_hundred_clicks_on_three_replicas_each_handled_once(
    tmp_path: Path, slack: SlackEmulator, http: aiohttp.ClientSession, mode: Mode
) -> None:
    pairs = [(f"UA{n:03}", f"UB{n:03}") for n in range(REQUESTS)]
    for approver, rejecter in pairs:
        slack.add_user(approver, f"approver{approver[2:]}")
        slack.add_user(rejecter, f"rejecter{rejecter[2:]}")
    async with replicas(tmp_path, slack, mode) as running:
        urls = running.urls
        # The agent asks on every replica in turn; Alice and Bob race on every question.
        messages = [
            posted(slack, await ask(http, urls[n % REPLICAS], deploy(f"ask_race_{n}")))
            for n in range(REQUESTS)
        ]
        clicks: list[tuple[Delivery, Delivery]] = []
        for message, (approver, rejecter) in zip(messages, pairs, strict=True):
            approving, rejecting = await asyncio.gather(
                slack.person(approver).click_button(message, "Approve"),
                slack.person(rejecter).click_button(message, "Reject"),
            )
            clicks.append((approving, rejecting))
        finals = await asyncio.gather(
            *(outcome(http, urls[(n + 1) % REPLICAS], f"ask_race_{n}") for n in range(REQUESTS))
        )
        for message in messages:
            await slack.wait_for_update(CHANNEL, message.ts, ended, timeout=10)
        shares = sorted(connection.envelopes for connection in slack.socket.connections)
        codes = await running.stop()
    assert codes == [0] * REPLICAS

    # Every click reached one replica and was acknowledged once.
    assert all(click.acked for pair in clicks for click in pair), slack.unacked
    if mode == "socket":
        acks = Counter(frame.get("envelope_id") for frame in slack.socket.received)
        assert sorted(acks.values()) == [1] * 2 * REQUESTS
        assert slack.socket.late_acks == []
        assert shares == [66, 67, 67]  # in turn: 200 envelopes over three connections
    for final, message, (approver, rejecter) in zip(finals, messages, pairs, strict=True):
        assert final["status"] == "answered"
        winner = final["answered_by"]["id"]
        loser = rejecter if winner == approver else approver
        assert final["answers"] == {"Deploy": "Approve" if winner == approver else "Reject"}
        name = final["answered_by"]["name"]
        assert [note.visible_text for note in slack.ephemerals(loser)] == [
            f"This question was already answered by {name}."
        ]
        assert slack.ephemerals(winner) == []
        # One change (the answer), one update, showing it.
        assert updates_of(slack, message) == 1
        [shown] = [m for m in slack.versions(CHANNEL, message.ts) if ended(m)]
        assert f"Answered by <@{winner}>" in shown.visible_text


async def test_updates_left_by_a_replica_killed_in_a_slack_outage_are_made_by_another(
    tmp_path: Path, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    async with replicas(tmp_path, slack, "http", ASKBRIDGE_TAKEOVER_S="1") as running:
        victim, urls = running.servers[0], running.urls
        messages = [
            posted(slack, await ask(http, urls[0], deploy(f"ask_outage_{n}")))
            for n in range(OUTAGE_REQUESTS)
        ]
        # Slack stops taking message updates; every click reaches the replica about to die.
        slack.outage("chat.update", status=429, retry_after=1)
        slack.interactions_urls = [f"{urls[0]}/slack/events"]
        for message in messages:
            (await slack.person("U1").click_button(message, "Approve")).assert_acked()
        await tried_each(slack, messages)
        await victim.kill()

        # The others take the updates over once the dead replica's claims have run out; they
        # too meet the outage, then Slack comes back.
        await tried_each(slack, messages, after=len(slack.api_log.of("chat.update")))
        slack.recover("chat.update")
        for message in messages:
            await slack.wait_for_update(CHANNEL, message.ts, ended, timeout=15)
        for n in range(len(messages)):
            assert (await outcome(http, urls[1 + n % 2], f"ask_outage_{n}"))["status"] == (
                "answered"
            )
        codes = await running.stop()
    assert codes == [0, 0]
    for message in messages:
        assert updates_of(slack, message) == 1
        assert updates_of(slack, message, ok=False) >= 2
        assert len([m for m in slack.versions(CHANNEL, message.ts) if ended(m)]) == 1


async def test_a_losing_click_delivered_to_two_replicas_is_told_once(
    tmp_path: Path, slack: SlackEmulator, http: aiohttp.ClientSession
) -> None:
    slack.add_user("UWIN", "winner")
    slack.add_user("ULOSE", "loser")
    async with replicas(tmp_path, slack, "http") as running:
        urls = running.urls
        message = posted(slack, await ask(http, urls[0], deploy("ask_lost")))
        (await slack.person("UWIN").click_button(message, "Approve")).assert_acked()
        await outcome(http, urls[1], "ask_lost")
        # The loser's screen still shows the buttons; Slack delivers the click to one replica
        # and, again, to the next.
        losing = await slack.person("ULOSE").click_button(message, "Reject", stale=True)
        losing.assert_acked()
        (await slack.replay(losing)).assert_acked()
        # SIGTERM: each replica lets the clicks it acknowledged finish (their notes).
        assert await running.stop() == [0] * REPLICAS
    [note] = slack.ephemerals("ULOSE")
    assert "already answered by" in note.visible_text
