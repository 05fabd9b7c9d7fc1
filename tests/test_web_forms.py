"""The answer page's forms: signed with a key that survives restarts and is shared by replicas,
refused safely when forged or malformed, and answered with one page per outcome."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from yarl import URL

from askbridge.adapters.web import form_key
from askbridge.adapters.web.handlers import KEY_NAME, WebPage
from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from tests.conftest import DATABASE, DEPLOY, settings_for
from tests.server_process import ServerProcess
from tests.stores import postgres_schema
from tests.web_person import answer_on_web, read_form

StartReplica = Callable[..., Coroutine[Any, Any, Service]]
TOKEN = "s3cret-api-token"
WEB_SECRET = "s3cret-web-key-1"


@pytest.fixture
async def replica(tmp_path: Path, clock: ManualClock) -> AsyncIterator[StartReplica]:
    """Services on the database in tmp_path, each stopped at most once (a test may restart)."""
    running: list[Service] = []

    async def start(**overrides: Any) -> Service:
        service = Service(settings_for(tmp_path, **overrides), clock=clock)
        await service.start()
        running.append(service)
        return service

    yield start
    for service in reversed(running):
        await service.stop()


async def ask(
    http: aiohttp.ClientSession, url: str, token: str | None = None, **extra: Any
) -> None:
    body = {"request_id": "ask_deploy", "questions": [DEPLOY], **extra}
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http.post(f"{url}/v1/questions", json=body, headers=headers) as response:
        assert response.status == 201, await response.text()


async def submit(
    http: aiohttp.ClientSession, url: str, csrf: str, option: str = "0", name: str = "Ada"
) -> tuple[int, str]:
    data = {"csrf": csrf, "name": name, "action": "submit", "q0": option}
    async with http.post(f"{url}/q/ask_deploy", data=data, allow_redirects=False) as response:
        return response.status, await response.text()


# --- the form key ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [{}, {"api_token": TOKEN}, {"web_secret": WEB_SECRET}],
    ids=["kept in the store", "with an API token", "ASKBRIDGE_WEB_SECRET"],
)
async def test_a_form_survives_a_restart_and_works_on_another_replica(
    replica: StartReplica, http: aiohttp.ClientSession, settings: dict[str, Any]
) -> None:
    first = await replica(**settings)
    await ask(http, first.url, settings.get("api_token"), quorum=2)
    csrf = (await read_form(http, first.url, "ask_deploy")).csrf

    second = await replica(**settings)
    status, page = await submit(http, second.url, csrf, name="Ada")
    assert status == 200
    assert "Your vote is counted: 1 of 2 matching votes so far, for Deploy: Approve." in page

    await first.stop()
    restarted = await replica(**settings)
    status, _ = await submit(http, restarted.url, csrf, name="Lin")
    assert status == 303


async def test_replicas_on_one_postgresql_database_share_the_form_key(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    async with postgres_schema() as url:
        services = [Service(settings_for(tmp_path, database_url=url)) for _ in range(2)]
        for service in services:
            await service.start()
        try:
            await ask(http, services[0].url)
            csrf = (await read_form(http, services[0].url, "ask_deploy")).csrf
            assert (await submit(http, services[1].url, csrf))[0] == 303
        finally:
            for service in services:
                await service.stop()


async def test_replicas_with_different_secrets_refuse_each_others_forms(
    replica: StartReplica, http: aiohttp.ClientSession
) -> None:
    first = await replica(web_secret="one-secret")
    await ask(http, first.url)
    csrf = (await read_form(http, first.url, "ask_deploy")).csrf
    second = await replica(web_secret="another-secret")
    status, page = await submit(http, second.url, csrf)
    assert status == 403
    assert "This form is out of date" in page


async def test_the_key_is_never_logged(
    replica: StartReplica, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    service = await replica()
    kept = await service.broker.secret(KEY_NAME)
    assert len(kept) == 32
    await replica(web_secret=WEB_SECRET)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert kept.hex() not in logged
    assert WEB_SECRET not in logged


async def test_a_form_outlives_a_crash(server: ServerProcess, http: aiohttp.ClientSession) -> None:
    url = await server.start()
    await ask(http, url)
    csrf = (await read_form(http, url, "ask_deploy")).csrf
    await server.kill()
    url = await server.start(port=server.port)
    assert (await submit(http, url, csrf))[0] == 303
    with sqlite3.connect(server.database) as db:
        (key,) = db.execute("SELECT value FROM secrets").fetchone()
    assert not any(key in line for line in server.log)


# --- forged and malformed forms ------------------------------------------------------------------


class Markup(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


async def test_a_forged_form_cannot_run_script_on_the_page(
    replica: StartReplica, http: aiohttp.ClientSession
) -> None:
    service = await replica()
    hostile = "x'><img src=x onerror=alert(1)>"
    url = URL(service.url).with_path(f"/q/{hostile}")
    async with http.post(url, data={"csrf": "forged"}) as response:
        assert response.status == 403
        page = await response.text()
        policy = response.headers["Content-Security-Policy"]
    assert "<img" not in page
    assert [tag for tag, _ in Markup(page).tags if tag in ("img", "svg", "iframe")] == []
    assert "/q/x%27%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E" in page
    script_src = next(d for d in policy.split(";") if d.strip().startswith("script-src"))
    assert script_src.split() == ["script-src", "'self'"]
    assert "unsafe-inline" not in policy


async def test_the_page_runs_only_its_own_script(
    replica: StartReplica, http: aiohttp.ClientSession
) -> None:
    service = await replica()
    await ask(http, service.url)
    async with http.get(f"{service.url}/q/ask_deploy") as response:
        tags = Markup(await response.text()).tags
    scripts = [attrs for tag, attrs in tags if tag == "script"]
    assert scripts == [{"src": "/web/live.js", "defer": None}]
    assert not [name for _, attrs in tags for name in attrs if name.startswith("on")]
    assert [a["href"] for t, a in tags if t == "link"] == ["/web/style.css"]
    for path, kind in (("/web/live.js", "text/javascript"), ("/web/style.css", "text/css")):
        async with http.get(f"{service.url}{path}") as response:
            assert response.status == 200
            assert response.content_type == kind
            assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        ("csrf=%C3%A9t%C3%A9&q0=0", "application/x-www-form-urlencoded", 403),
        ("csrf=\u00e9t\u00e9\u2603&q0=0", "application/x-www-form-urlencoded; charset=utf-8", 403),
        (b"csrf=\xff\xfe&q0=0", "application/x-www-form-urlencoded", 400),
        ("--x\r\n", "multipart/form-data", 400),
    ],
    ids=["non-ASCII csrf", "non-ASCII csrf, raw", "not UTF-8", "multipart without boundary"],
)
async def test_malformed_forms_are_refused_not_crashed_on(
    replica: StartReplica,
    http: aiohttp.ClientSession,
    body: str | bytes,
    content_type: str,
    status: int,
) -> None:
    service = await replica()
    await ask(http, service.url)
    data = body.encode() if isinstance(body, str) else body
    headers = {"Content-Type": content_type}
    async with http.post(f"{service.url}/q/ask_deploy", data=data, headers=headers) as response:
        assert response.status == status, await response.text()
    async with http.get(f"{service.url}/v1/questions/ask_deploy") as response:
        assert (await response.json())["votes"] == []


async def test_options_the_question_does_not_have_are_not_counted(
    replica: StartReplica, http: aiohttp.ClientSession
) -> None:
    service = await replica()
    await ask(http, service.url)
    csrf = (await read_form(http, service.url, "ask_deploy")).csrf
    for option in ("7", "9" * 5000):
        status, _ = await submit(http, service.url, csrf, option=option)
        assert status in (400, 422)
    async with http.get(f"{service.url}/v1/questions/ask_deploy") as response:
        assert (await response.json())["status"] == "waiting"


async def test_two_options_of_a_single_select_question_are_refused_not_one_taken(
    replica: StartReplica, http: aiohttp.ClientSession
) -> None:
    service = await replica()
    async with http.post(f"{service.url}/v1/questions", json=DATABASE) as response:
        assert response.status == 201
    both = {"Database": ["PostgreSQL", "SQLite"], "Features": ["Caching"]}
    status, page = await answer_on_web(http, service.url, "ask_db", both)
    assert status == 422
    assert "Please choose one option; this question takes one answer." in page
    async with http.get(f"{service.url}/v1/questions/ask_db") as response:
        assert (await response.json())["status"] == "waiting"


# --- one page per outcome --------------------------------------------------------------------


async def test_answered_by_names_those_who_agreed_and_the_tally_the_rest(
    replica: StartReplica, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    service = await replica()
    await ask(http, service.url, quorum=2)
    for name, label in (("Ada", "Reject"), ("Lin", "Approve"), ("Grace", "Approve")):
        await clock.advance(60)
        await answer_on_web(http, service.url, "ask_deploy", {"Deploy": [label]}, name=name)
    async with http.get(f"{service.url}/q/ask_deploy") as response:
        page = await response.text()
    assert (
        "Answered by Lin, Grace (2 matching votes) · "
        "<time datetime='2030-01-01T00:03:00Z'>2030-01-01 00:03 UTC</time>"
    ) in page
    assert "Approve — 2/2 (Lin, Grace)" in page
    assert "Reject — 1/2 (Ada)" in page


async def test_late_and_unknown_answers(replica: StartReplica, http: aiohttp.ClientSession) -> None:
    service = await replica(web_secret=WEB_SECRET)
    await ask(http, service.url)
    csrf = (await read_form(http, service.url, "ask_deploy")).csrf
    assert (await submit(http, service.url, csrf, name="Ada"))[0] == 303
    status, page = await submit(http, service.url, csrf, name="Lin")
    assert status == 409
    assert "This question was already answered by Ada." in page

    key = await form_key(service.broker, WEB_SECRET)
    signed = {"csrf": WebPage(service.broker, key).form_token("ask_nope"), "q0": "0"}
    async with http.post(f"{service.url}/q/ask_nope", data=signed) as response:
        assert response.status == 404
        assert "There is no question ask_nope." in await response.text()
