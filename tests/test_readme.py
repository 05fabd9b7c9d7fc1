"""The README's examples run as written."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import aiohttp

from askbridge.bots.service import Service
from tests.conftest import waiting_ids
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
