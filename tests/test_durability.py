"""A crash loses nothing: SIGKILL the server with a request waiting, restart, answer."""

from __future__ import annotations

import asyncio
import copy

import aiohttp

from askbridge.bots.client import AskbridgeClient
from tests.conftest import DATABASE, EXPECTED, waiting_ids
from tests.server_process import ServerProcess
from tests.web_person import answer_on_web


async def test_sigkill_with_a_request_waiting_loses_nothing(
    server: ServerProcess, http: aiohttp.ClientSession
) -> None:
    url = await server.start()
    questions = copy.deepcopy(DATABASE["questions"])
    async with AskbridgeClient(url) as client:
        # The agent is waiting through the whole crash and restart.
        agent = asyncio.create_task(client.ask(questions, request_id="ask_crash"))  # type: ignore[arg-type]
        # Wait until the request is stored and visible.
        await waiting_ids(http, url, lambda ids: "ask_crash" in ids)

        await server.kill()
        assert not agent.done()
        await server.start(port=server.port)

        async with http.get(f"{url}/v1/questions/ask_crash") as response:
            assert (await response.json())["status"] == "waiting"
        picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
        status, _ = await answer_on_web(http, url, "ask_crash", picks)
        assert status == 200
        answer = await asyncio.wait_for(agent, 30)
    assert answer.request_id == "ask_crash"
    assert answer.answers == EXPECTED

    # And the answer itself survives the next crash.
    await server.kill()
    url = await server.start(port=server.port)
    async with http.get(f"{url}/v1/questions/ask_crash") as response:
        final = await response.json()
    assert final["status"] == "answered"
    assert final["answers"] == EXPECTED
    assert final["answered_by"]["name"] == "Ada"


async def test_sigkill_right_after_the_agents_got_their_answers_loses_none(
    server: ServerProcess, http: aiohttp.ClientSession
) -> None:
    """The default durability (SQLite WAL, synchronous=NORMAL, checkpoints off the commits):
    an answer an agent has received survives a kill -9 that comes right after it, for every
    answer of a burst, whatever the WAL and the checkpoints were doing at that moment."""
    url = await server.start()
    ids = [f"ask_burst_{index}" for index in range(20)]
    for request_id in ids:
        body = {**copy.deepcopy(DATABASE), "request_id": request_id}
        async with http.post(f"{url}/v1/questions", json=body) as response:
            assert response.status == 201
    polls = [
        asyncio.create_task(http.get(f"{url}/v1/questions/{request_id}?wait=30"))
        for request_id in ids
    ]
    picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
    answered = await asyncio.gather(*(answer_on_web(http, url, r, picks) for r in ids))
    assert [status for status, _ in answered] == [200] * len(ids)
    for poll in polls:
        async with await asyncio.wait_for(poll, 30) as response:
            assert (await response.json())["status"] == "answered"
    # The moment the last agent has its answer: no shutdown, no checkpoint, no flush.
    await server.kill()

    url = await server.start(port=server.port)
    for request_id in ids:
        async with http.get(f"{url}/v1/questions/{request_id}") as response:
            final = await response.json()
        assert final["status"] == "answered", final
        assert final["answers"] == EXPECTED
