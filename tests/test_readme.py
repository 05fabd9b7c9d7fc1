"""The README's and the documentation's examples run as written."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.intents import Decided, Fill
from askbridge.core.models import Person
from askbridge.core.store.sqlite import SQLiteStore
from tests.conftest import DEPLOY, settings_for, waiting_ids
from tests.docs.commands import doc_command
from tests.docs.previews import MESSAGES, readme_links
from tests.test_doc_commands import ran
from tests.test_webhooks import SAME_MACHINE, receiver
from tests.web_person import answer_on_web

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PYTHON_CLIENT = [
    (README, "Your agent asks over HTTP"),
    (DOCS / "how-to/python-client.md", "The Python client"),
]
"""Where the Python client's example is shown: each copy must run."""
QUICK_START = [
    (README, "Quick start"),
    (DOCS / "tutorials/web.md", "Your first question on the web page"),
]
WEBHOOKS = [(DOCS / "how-to/webhooks.md", "Webhooks")]


def example(document: Path, heading: str, language: str, holding: str = "") -> str:
    """The first `language` code block holding `holding` in `document`'s section under the
    heading `heading` (of any level), before the next heading of that level or a higher one."""
    text = document.read_text()
    found = re.search(rf"^(#+) {re.escape(heading)}\n", text, re.MULTILINE)
    assert found is not None, f"no heading {heading!r} in {document.name}"
    level = len(found.group(1))
    section = text[found.end() :]
    end = re.search(rf"^#{{1,{level}}} ", section, re.MULTILINE)
    # Headings inside code blocks are comments: stop only outside them.
    while end is not None and section[: end.start()].count("```") % 2:
        end = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(section, end.end())
    section = section[: end.start()] if end else section
    blocks = re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)
    found_blocks = [block for block in blocks if holding in block]
    assert found_blocks, f"no {language} block under {heading!r} in {document.name}"
    return str(found_blocks[0])


@pytest.mark.parametrize(("document", "heading"), PYTHON_CLIENT, ids=["README", "docs"])
async def test_the_python_client_example_runs_as_written(
    service: Service, http: aiohttp.ClientSession, document: Path, heading: str
) -> None:
    code = example(document, heading, "python").replace("http://127.0.0.1:8765", service.url)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    (request_id,) = await waiting_ids(http, service.url)
    await answer_on_web(http, service.url, request_id, {"Database": ["PostgreSQL"]})
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 0, err.decode()
    assert out.decode().strip() == "{'Database': 'PostgreSQL'}"


@pytest.mark.parametrize(("document", "heading"), WEBHOOKS, ids=["docs"])
async def test_the_webhook_verification_example_runs_as_written(
    tmp_path: Path,
    http: aiohttp.ClientSession,
    monkeypatch: pytest.MonkeyPatch,
    document: Path,
    heading: str,
) -> None:
    secret = "whsec_cmVhZG1lLXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1"
    monkeypatch.setenv("ASKBRIDGE_WEBHOOK_SECRET", secret)
    namespace: dict[str, Any] = {}
    exec(example(document, heading, "python"), namespace)
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


@pytest.mark.parametrize(("document", "heading"), QUICK_START, ids=["README", "docs"])
async def test_the_quick_start_asks_and_answers_as_shown(
    service: Service, http: aiohttp.ClientSession, document: Path, heading: str, tmp_path: Path
) -> None:
    name = str(document.relative_to(ROOT))
    if name == "README.md":
        ask = doc_command(
            "README.md",
            "curl -s http://127.0.0.1:8765/v1/questions -H 'Content-Type: application/json' "
            '-d \'{ "request_id": "ask_demo"',
        )
        read = doc_command("README.md", "curl -s 'http://127.0.0.1:8765/v1/questions/ask_demo?")
    else:
        ask = doc_command("docs/tutorials/web.md", "curl -s http://127.0.0.1:8765/v1/questions -H")
        read = doc_command(
            "docs/tutorials/web.md", "curl -s 'http://127.0.0.1:8765/v1/questions/ask_demo?"
        )
    created = json.loads(await ran(ask.replace("http://127.0.0.1:8765", service.url), tmp_path))
    assert created["status"] == "waiting", created
    # The comment under the command shows the answer's first fields: read them as JSON.
    shown_block = example(document, heading, "sh", holding="?wait=")
    comment = " ".join(line.lstrip("# ") for line in shown_block.splitlines()[1:3])
    shown = json.loads(comment.rstrip(",") + "}")
    assert shown["status"] == "answered"
    picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
    await answer_on_web(http, service.url, created["request_id"], picks, name="web user")
    answered = json.loads(await ran(read.replace("http://127.0.0.1:8765", service.url), tmp_path))
    assert {key: answered[key] for key in shown} == shown


async def test_the_form_is_asked_and_answered_as_shown(
    service: Service, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    ask = doc_command(
        "README.md",
        "curl -s http://127.0.0.1:8765/v1/questions -H 'Content-Type: application/json' "
        '-d \'{ "request_id": "form_demo"',
    )
    read = doc_command("README.md", "curl -s 'http://127.0.0.1:8765/v1/questions/form_demo?")
    created = json.loads(await ran(ask.replace("http://127.0.0.1:8765", service.url), tmp_path))
    assert created["status"] == "waiting", created
    shown_block = example(ROOT / "README.md", "Forms and MCP elicitation", "sh")
    comment = " ".join(line.lstrip("# ") for line in shown_block.splitlines()[-2:])
    shown = json.loads(comment.replace(", ...}", "}"))
    # As the web page's inputs give them: the number typed, the checkbox left ticked.
    person = Person(platform="web", id="local", name="web user")
    filled = await service.broker.act("form_demo", person, Fill({"replicas": "3", "canary": True}))
    assert isinstance(filled, Decided), filled
    answered = json.loads(await ran(read.replace("http://127.0.0.1:8765", service.url), tmp_path))
    assert {key: answered[key] for key in shown} == shown


async def test_the_sqlite_backup_command_copies_a_live_database(
    service: Service, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    command = doc_command("docs/how-to/operating.md", "python3 -c")
    body = {"request_id": "ask_kept", "questions": [DEPLOY]}
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 201
    # While the server runs, from the database's folder, as the page says.
    database = tmp_path / "askbridge.db"
    await ran(command, tmp_path)
    backup = SQLiteStore(tmp_path / "askbridge-backup.db")
    await backup.open()
    try:
        kept = await backup.get("ask_kept")
    finally:
        await backup.close()
    assert database.exists()
    assert kept is not None
    assert kept.questions[0].header == "Deploy"


def test_the_readme_is_a_first_screen_not_a_manual() -> None:
    # What it does, install, the Quick start and the short paths; the rest is the docs site's.
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move detail to docs/"


def test_every_link_of_the_readme_works_on_pypi() -> None:
    # PyPI shows the README as the project's description, where a link relative to the
    # repository leads nowhere: the README links only to absolute addresses and its own
    # headings, and names the documentation's pages by their paths.
    text = README.read_text()
    inline = re.findall(r"\]\(([^)\s]+)\)", text)
    defined = re.findall(r"^\[[^\]]+\]: (\S+)$", text, re.MULTILINE)
    auto = re.findall(r"<([^>\s]+://[^>\s]+)>", text)
    links = inline + defined + auto
    assert links
    relative = [link for link in links if not re.match(r"(https?://|mailto:|#)", link)]
    assert relative == []
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    assert all(image.startswith("https://") for image in images)


def test_the_readme_shows_its_question_as_askbridge_sends_it() -> None:
    captured = json.loads(MESSAGES.read_text())
    text = README.read_text()
    for name, url in readme_links(captured).items():
        assert f"\n[{name}]: {url}\n" in text, f"run make pictures: [{name}] is out of date"


async def test_the_claude_code_hooks_command_installs_hooks_for_the_channel(
    tmp_path: Path,
) -> None:
    command = doc_command("README.md", "askbridge hook claude-code --install")
    assert await ran(command, tmp_path, HOME=str(tmp_path)) == ""
    settings = tmp_path / "app" / ".claude" / "settings.json"
    hooks = json.loads(settings.read_text())["hooks"]
    assert set(hooks) == {"PreToolUse", "PermissionRequest", "Elicitation"}
    target = command.split("--target ")[1].split()[0]
    assert f"--target {target}" in hooks["PreToolUse"][0]["hooks"][0]["command"]
