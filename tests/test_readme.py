"""The README's examples run as written."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from tests.conftest import DEPLOY, settings_for, waiting_ids
from tests.test_webhooks import SAME_MACHINE, receiver
from tests.web_person import answer_on_web

README = Path(__file__).resolve().parent.parent / "README.md"


def example(section: str, language: str) -> str:
    """The first `language` code block under the README heading `section`."""
    text = README.read_text()
    start = text.index(f"\n## {section}\n")
    found = re.search(rf"```{language}\n(.*?)```", text[start:], re.DOTALL)
    assert found is not None, f"no {language} block under {section!r}"
    return found.group(1)


async def test_the_python_client_example_runs_as_written(
    service: Service, http: aiohttp.ClientSession
) -> None:
    code = example("The Python client", "python").replace("http://127.0.0.1:8765", service.url)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    (request_id,) = await waiting_ids(http, service.url)
    await answer_on_web(http, service.url, request_id, {"Database": ["PostgreSQL"]})
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, err.decode()
    assert out.decode().strip() == "{'Database': 'PostgreSQL'}"


async def test_the_webhook_verification_example_runs_as_written(
    tmp_path: Path, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "whsec_cmVhZG1lLXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1"
    monkeypatch.setenv("ASKBRIDGE_WEBHOOK_SECRET", secret)
    namespace: dict[str, Any] = {}
    exec(example("Webhooks", "python"), namespace)
    is_from_askbridge = namespace["is_from_askbridge"]
    # The system clock: the example checks the timestamp against the time.
    service = Service(settings_for(tmp_path, webhook_secret=secret, webhook_allow=SAME_MACHINE))
    await service.start()
    try:
        async with receiver([200]) as hook:
            body = {"request_id": "ask_hook", "questions": [DEPLOY], "callback_url": hook.url}
            async with http.post(f"{service.url}/v1/questions", json=body) as response:
                assert response.status == 201
            async with http.delete(f"{service.url}/v1/questions/ask_hook") as response:
                assert response.status == 200
            hit = await hook.next()
    finally:
        await service.stop()
    assert is_from_askbridge(hit.headers, hit.body) is True
    assert is_from_askbridge(hit.headers, hit.body.replace(b"withdrawn", b"answered")) is False
    monkeypatch.setenv(
        "ASKBRIDGE_WEBHOOK_SECRET", "whsec_" + "YW5vdGhlciBzZWNyZXQgb2YgMjQgYnl0ZXMh"
    )
    assert is_from_askbridge(hit.headers, hit.body) is False
