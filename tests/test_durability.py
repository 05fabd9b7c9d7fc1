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
