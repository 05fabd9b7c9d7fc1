"""While the database cannot serve, the agent API says so with a 503 the agent can act on, and
the same call goes through once the database is back."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

import aiohttp

from tests.conftest import DATABASE, StartService
from tests.pg_relay import Relay
from tests.server_process import ServerProcess
from tests.stores import postgres_schema
from tests.test_agent_socket import receive


def ask(request_id: str) -> dict[str, Any]:
    return {**copy.deepcopy(DATABASE), "request_id": request_id}


async def test_a_sqlite_file_held_by_another_process_answers_503_then_asks(
    tmp_path: Path,
) -> None:
    database = tmp_path / "askbridge.db"
    server = ServerProcess(database)
    url = await server.start()
    elsewhere = sqlite3.connect(database, isolation_level=None)
    try:
        async with aiohttp.ClientSession() as http:
            elsewhere.execute("BEGIN IMMEDIATE")
            async with http.post(f"{url}/v1/questions", json=ask("ask_held")) as response:
                body = await response.json()
                assert response.status == 503, body
                assert response.headers["Retry-After"] == "5"
            assert "another process has held the SQLite database" in body["error"]
            elsewhere.execute("COMMIT")
            async with http.post(f"{url}/v1/questions", json=ask("ask_held")) as response:
                assert response.status == 201, await response.text()
            async with http.get(f"{url}/v1/questions/ask_held") as response:
                assert (await response.json())["status"] == "waiting"
    finally:
        elsewhere.close()
        await server.stop()


async def test_the_agent_socket_says_the_database_is_held_and_interrupts(
    tmp_path: Path,
) -> None:
    database = tmp_path / "askbridge.db"
    server = ServerProcess(database)
    url = await server.start()
    elsewhere = sqlite3.connect(database, isolation_level=None)
    try:
        async with aiohttp.ClientSession() as http, http.ws_connect(f"{url}/v1/agent") as socket:
            elsewhere.execute("BEGIN IMMEDIATE")
            await socket.send_json({"AskUserQuestion": ask("ask_held_ws")})
            error = await receive(socket)
            assert await receive(socket) == "Interrupt"
        assert error["request_id"] == "ask_held_ws"
        assert "the database is unavailable" in error["error"]
        assert "try again" in error["error"]
    finally:
        elsewhere.close()
        await server.stop()


async def test_postgresql_gone_answers_503_and_no_traceback(
    start_service: StartService, caplog: Any
) -> None:
    async with postgres_schema() as direct:
        relay = Relay(direct)
        relayed = await relay.start()
        try:
            service = await start_service(database_url=relayed)
            async with aiohttp.ClientSession() as http:
                async with http.post(
                    f"{service.url}/v1/questions", json=ask("ask_before")
                ) as response:
                    assert response.status == 201, await response.text()
                # The server stops listening and every connection to it ends.
                await relay.close()
                async with http.post(
                    f"{service.url}/v1/questions", json=ask("ask_after")
                ) as response:
                    body = await response.json()
                    assert response.status == 503, body
                    assert response.headers["Retry-After"] == "5"
                assert body["error"].startswith("the database is unavailable: PostgreSQL")
                async with http.get(f"{service.url}/v1/questions") as response:
                    assert response.status == 503, await response.text()
        finally:
            await relay.close()
    unexpected = [r for r in caplog.records if r.getMessage().startswith("unexpected error")]
    assert unexpected == []
