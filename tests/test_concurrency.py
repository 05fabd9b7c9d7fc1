"""When several people submit at the same moment, exactly one wins and the others are told."""

from __future__ import annotations

import asyncio
import copy
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.adapters.web import WebSurface
from askbridge.bots.service import Service
from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.intents import Cancel, Decided, Outcome, Refusal, Refused, Submit
from askbridge.core.models import Person, Status
from askbridge.core.store.base import Ending
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DATABASE
from tests.web_person import read_form


async def test_two_web_submissions_racing_give_one_answer(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.post(f"{service.url}/v1/questions", json=DATABASE) as response:
        assert response.status == 201
    form = await read_form(http, service.url, "ask_db")

    async def submit(name: str, database: str) -> tuple[int, str]:
        data = [
            ("csrf", form.csrf),
            ("name", name),
            ("action", "submit"),
            form.options["Database"][database],
            form.options["Features"]["Logging"],
        ]
        async with http.post(f"{service.url}/q/ask_db", data=data) as response:
            return response.status, await response.text()

    results = await asyncio.gather(submit("Ada", "PostgreSQL"), submit("Grace", "SQLite"))
    statuses = sorted(status for status, _ in results)
    assert statuses == [200, 409]
    async with http.get(f"{service.url}/v1/questions/ask_db") as response:
        final = await response.json()
    winner = final["answered_by"]["name"]
    loser_page = next(text for status, text in results if status == 409)
    assert f"already answered by {winner}" in loser_page
    expected = "PostgreSQL" if winner == "Ada" else "SQLite"
    assert final["answers"]["Database"] == expected


async def test_many_submissions_at_once_on_the_broker(service: Service) -> None:
    broker = service.broker
    await broker.ask(Ask.parse({**copy.deepcopy(DATABASE), "request_id": "ask_many"}))
    people = [Person(platform="web", id=f"p{i}", name=f"P{i}") for i in range(20)]
    results = await asyncio.gather(
        *(broker.act("ask_many", p, Submit({0: (i % 2,), 1: (0,)})) for i, p in enumerate(people))
    )
    winners = [r for r in results if isinstance(r, Decided)]
    losers = [r for r in results if isinstance(r, Refused) and r.reason is Refusal.ALREADY_ENDED]
    assert len(winners) == 1
    assert len(losers) == 19
    winner = winners[0].view.request.answered_by
    assert all(loser.view and loser.view.request.answered_by == winner for loser in losers)
    events = await broker.store.events("ask_many")
    assert [e.kind for e in events].count("answered") == 1


@pytest.mark.parametrize("known_by", ["click_id", "sent_at"])
async def test_clicks_that_lose_the_race_are_told_and_known_again(
    service: Service, known_by: str
) -> None:
    """A click known again by its delivery's id (a Teams press, a form) or by when the
    platform says it was made (a Slack or Discord Cancel) is recorded with the vote or the
    ending it tries: one that loses the race is told who won, not taken for a delivery of
    itself again; delivered again, it is."""
    broker = service.broker
    request_id = f"ask_{known_by}"
    await broker.ask(Ask.parse({**copy.deepcopy(DATABASE), "request_id": request_id}))
    people = [Person(platform="web", id=f"p{i}", name=f"P{i}") for i in range(20)]
    intents: list[Submit | Cancel] = [Submit({0: (i % 2,), 1: (0,)}) for i in range(19)]
    intents.append(Cancel())
    made = broker.clock.now()

    def click(i: int) -> dict[str, Any]:
        if known_by == "click_id":
            return {"click_id": f"click-{i}"}
        return {"sent_at": made - timedelta(seconds=i)}

    async def everyone() -> list[Outcome]:
        return await asyncio.gather(
            *(
                broker.act(request_id, p, intent, **click(i))
                for i, (p, intent) in enumerate(zip(people, intents, strict=True))
            )
        )

    results = await everyone()
    winners = [r for r in results if isinstance(r, Decided)]
    losers = [r for r in results if isinstance(r, Refused) and r.reason is Refusal.ALREADY_ENDED]
    assert (len(winners), len(losers)) == (1, 19), [type(r).__name__ for r in results]
    again = await everyone()
    assert all(isinstance(r, Refused) and r.reason is Refusal.REPLAYED for r in again), again


@pytest.mark.parametrize("rounds", [5])
async def test_two_processes_sharing_one_database_agree_on_one_winner(
    tmp_path: Path, rounds: int
) -> None:
    """Two stores on one file stand for two replicas: the compare-and-set holds across them."""
    path = tmp_path / "shared.db"
    first, second = SQLiteStore(path), SQLiteStore(path)
    await first.open()
    await second.open()
    try:
        broker = Broker(first)
        broker.add_surface(WebSurface())
        for round_ in range(rounds):
            request_id = f"ask_shared_{round_}"
            await broker.ask(Ask.parse({**copy.deepcopy(DATABASE), "request_id": request_id}))
            endings = [
                Ending(
                    Status.ANSWERED,
                    broker.clock.now(),
                    {"Database": name},
                    Person(platform="web", id=name),
                )
                for name in ("one", "two")
            ]
            results = await asyncio.gather(
                first.finish(request_id, endings[0]), second.finish(request_id, endings[1])
            )
            assert sorted(won for _, won in results) == [False, True]
            assert results[0][0].answers == results[1][0].answers
    finally:
        await first.close()
        await second.close()
