"""What a web page on another site, or a rebinding DNS name, can make a browser send: nothing
that askbridge acts on. And the database password never reaches a log line."""

from __future__ import annotations

import logging
from pathlib import Path

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.bots.settings import Settings
from askbridge.core.store.factory import shown_url
from tests.conftest import DEPLOY, StartService, settings_for
from tests.stores import postgres_schema

ASK = {"questions": [DEPLOY], "request_id": "ask_xsite", "target": "web"}


async def test_a_token_on_loopback_keeps_the_rebinding_guard(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(api_token="s3cret-token")
    rebound = {"Host": "rebind.attacker.example"}
    async with http.get(f"{service.url}/", headers=rebound) as response:
        assert response.status == 403
    async with http.post(f"{service.url}/q/ask_x", headers=rebound, data={"a": "b"}) as response:
        assert response.status == 403
    async with http.get(f"{service.url}/") as response:
        assert response.status == 200


async def test_a_foreign_page_cannot_create_or_answer(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service()
    url = f"{service.url}/v1/questions"
    # A `no-cors` form or fetch can only send text/plain, urlencoded or multipart.
    plain = {"Content-Type": "text/plain"}
    async with http.post(url, data=str(ASK).encode(), headers=plain) as response:
        assert response.status == 415
        assert "application/json" in (await response.json())["error"]
    foreign = {"Origin": "https://evil.example"}
    async with http.post(url, json=ASK, headers=foreign) as response:
        assert response.status == 403
    async with http.post(url, json=ASK, headers={"Sec-Fetch-Site": "cross-site"}) as response:
        assert response.status == 403
    async with http.get(f"{url}/ask_xsite") as response:
        assert response.status == 404, "nothing was created"

    # The page's own origin, as the answer page itself sends it, is fine.
    own = {"Origin": service.url}
    async with http.post(url, json=ASK, headers=own) as response:
        assert response.status == 201


async def test_a_foreign_page_cannot_open_the_agent_socket(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service()
    socket_url = service.url.replace("http", "ws", 1) + "/v1/agent"
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await http.ws_connect(socket_url, headers={"Origin": "https://evil.example"})
    assert refused.value.status == 403
    async with http.ws_connect(socket_url) as socket:
        assert not socket.closed


def test_database_urls_are_shown_without_their_password() -> None:
    url = "postgresql://askbridge:hunter2-secret@db.example:5432/askbridge"
    assert shown_url(url) == "postgresql://askbridge:***@db.example:5432/askbridge"
    assert shown_url("sqlite:///askbridge.db") == "sqlite:///askbridge.db"
    settings = Settings(_env_file=None, database_url=url)
    assert "hunter2-secret" in settings.secrets()


def test_a_password_given_as_a_query_parameter_is_masked_and_scrubbed() -> None:
    # libpq takes the password from the query string too.
    url = "postgresql://askbridge@db.example:5432/askbridge?sslmode=require&password=hunter%232"
    assert shown_url(url) == (
        "postgresql://askbridge@db.example:5432/askbridge?sslmode=require&password=***"
    )
    secrets = Settings(_env_file=None, database_url=url).secrets()
    # As written in the URL, and as the driver reads it (its errors may quote either).
    assert {"hunter%232", "hunter#2"} <= set(secrets)


async def test_the_database_password_is_never_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with postgres_schema() as url:
        with_password = url.replace("postgres@", "postgres:hunter2-secret@", 1)
        assert "hunter2-secret" in with_password
        service = Service(settings_for(tmp_path, database_url=with_password))
        with caplog.at_level(logging.DEBUG):
            await service.start()
            await service.stop()
        logged = "\n".join(record.getMessage() for record in caplog.records)
        assert "hunter2-secret" not in logged
        assert "postgres:***@" in logged


async def test_a_database_password_in_the_query_string_is_never_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with postgres_schema() as url:
        separator = "&" if "?" in url else "?"
        with_password = f"{url}{separator}password=hunter2-secret"
        service = Service(settings_for(tmp_path, database_url=with_password))
        with caplog.at_level(logging.DEBUG):
            await service.start()
            await service.stop()
        logged = "\n".join(record.getMessage() for record in caplog.records)
        assert "hunter2-secret" not in logged
        assert "password=***" in logged
