"""`make pictures`: what people see, made by askbridge itself for the README and the docs.

The web page is photographed in headless Chromium from a running askbridge: a question, a
tool-permission prompt, an Edit approval (its diff), a typed form and an ended request. For
Slack and Discord, the messages askbridge really sends (to the local emulators the tests use)
are written to `docs/images/messages.json`; the docs turn each into a link to the platform's
own message previewer (tests/docs/previews.py), and the README's links to its question in
those previewers are rewritten to match.

Run it from the repository: `python -m tests.docs.pictures` (`... pictures web-form` photographs
only the typed form, `docs/images/web-form.png`). It needs Chromium (/usr/bin/chromium or
ASKBRIDGE_TEST_CHROMIUM) and reaches no network but 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import async_playwright

from askbridge.bots.service import Service
from askbridge.bots.settings import Settings
from askbridge.core.permissions import permission_questions
from tests.conftest import DATABASE, waiting_ids
from tests.docs.previews import with_readme_links
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.web_person import RELEASE_FORM, answer_on_web

ROOT = Path(__file__).resolve().parent.parent.parent
IMAGES = ROOT / "docs" / "images"
MESSAGES = IMAGES / "messages.json"
README = ROOT / "README.md"
CONTEXT = "release-bot: setting up the new billing service"
PROMPT = {
    "tool_name": "Bash",
    "action": "run a command",
    "input": {"command": "make deploy ENV=production"},
    "details": "Claude Code in /work/billing",
}
EDIT_PATH = "/work/billing/settings.py"
EDIT_FILE = (
    '"""Billing service settings."""\n\nimport os\n\nDEBUG = True\n'
    'DATABASE_URL = os.environ["DATABASE_URL"]\nCURRENCY = "EUR"\n'
)
EDIT_NEW = 'DEBUG = False\nSENTRY_DSN = os.environ.get("SENTRY_DSN", "")'
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"]
Captured = dict[str, Any]


def main(argv: list[str]) -> int:
    chromium = os.environ.get("ASKBRIDGE_TEST_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        sys.stderr.write("make pictures needs Chromium: apt-get install chromium\n")
        return 1
    IMAGES.mkdir(parents=True, exist_ok=True)
    if argv == ["web-form"]:
        with tempfile.TemporaryDirectory(prefix="askbridge-pictures-") as folder:
            asyncio.run(_photograph_form(Path(folder), chromium))
        sys.stderr.write(f"wrote {IMAGES.relative_to(ROOT)}/web-form.png\n")
        return 0
    if argv:
        sys.stderr.write("usage: python -m tests.docs.pictures [web-form]\n")
        return 2
    with tempfile.TemporaryDirectory(prefix="askbridge-pictures-") as folder:
        messages = asyncio.run(_make(Path(folder), chromium))
    MESSAGES.write_text(json.dumps(messages, indent=2, ensure_ascii=False) + "\n")
    README.write_text(with_readme_links(README.read_text(), messages))
    sys.stderr.write(
        f"wrote {IMAGES.relative_to(ROOT)}: web-*.png and {MESSAGES.name}; README's previews\n"
    )
    return 0


async def _make(folder: Path, chromium: str) -> Captured:
    for surface in ("web", "form", "slack", "discord"):
        (folder / surface).mkdir()
    async with aiohttp.ClientSession() as http:
        await _photograph_web(folder / "web", http, chromium)
        await _photograph_form(folder / "form", chromium)
        slack = await _capture_slack(folder / "slack", http)
        discord = await _capture_discord(folder / "discord", http)
    return {"slack": slack, "discord": discord}


@asynccontextmanager
async def _serving(folder: Path, **settings: Any) -> AsyncIterator[Service]:
    values = {"host": "127.0.0.1", "port": 0, "database_url": f"sqlite:///{folder / 'a.db'}"}
    service = Service(Settings(_env_file=None, **{**values, **settings}))
    await service.start()
    try:
        yield service
    finally:
        await service.stop()


def _edit(request_id: str, target: str) -> dict[str, Any]:
    """An Edit approval as Claude Code's command hook asks it: the file's text read where the
    agent runs gives the diff its line numbers and context."""
    tool_input = {"file_path": EDIT_PATH, "old_string": "DEBUG = True", "new_string": EDIT_NEW}
    question = permission_questions(
        {"tool_name": "Edit", "action": "edit billing/settings.py"}, always=None, shown=True
    )
    return {
        "request_id": request_id,
        "target": target,
        "context": "Claude Code in /work (session 2de254c5)",
        "questions": question,
        "allow_notes": True,
        "subject": tool_input,
        "tool": {
            "name": "Edit",
            "input": tool_input,
            "cwd": "/work",
            "file": {"path": EDIT_PATH, "text": EDIT_FILE},
        },
    }


def _ask(request_id: str, target: str) -> dict[str, Any]:
    body = copy.deepcopy(DATABASE)
    body.update(request_id=request_id, target=target, context=CONTEXT)
    return body


async def _post(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> dict[str, Any]:
    async with http.post(f"{url}/v1/questions", json=body) as response:
        status: dict[str, Any] = await response.json()
        if response.status != 201:
            raise RuntimeError(f"askbridge refused the ask ({response.status}): {status}")
    return status


async def _ended(http: aiohttp.ClientSession, url: str, request_id: str) -> None:
    async with http.get(f"{url}/v1/questions/{request_id}?wait=10") as response:
        if (await response.json())["status"] == "waiting":
            raise RuntimeError(f"{request_id} did not end")


@asynccontextmanager
async def _permission_prompt(
    http: aiohttp.ClientSession, url: str, target: str
) -> AsyncIterator[str]:
    """A PermissionRequest on the agent WebSocket, waiting while the socket is open; yields its
    request id."""
    before = set(await _waiting(http, url))
    async with http.ws_connect(f"{url}/v1/agent?target={target}") as socket:
        await socket.send_json({"PermissionRequest": PROMPT})
        ids = await waiting_ids(http, url, until=lambda ids: bool(set(ids) - before))
        (request_id,) = set(ids) - before
        yield request_id


async def _waiting(http: aiohttp.ClientSession, url: str) -> list[str]:
    async with http.get(f"{url}/v1/questions?status=waiting") as response:
        return [q["request_id"] for q in (await response.json())["questions"]]


async def _photograph_web(folder: Path, http: aiohttp.ClientSession, chromium: str) -> None:
    async with (
        _serving(folder) as service,
        async_playwright() as playwright,
    ):
        browser = await playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        page = await browser.new_page(viewport={"width": 820, "height": 120})

        async def shoot(path: str, name: str) -> None:
            await page.goto(f"{service.url}{path}")
            await page.screenshot(path=IMAGES / name, full_page=True)

        await _post(http, service.url, _ask("ask_db", "web"))
        await shoot("/q/ask_db", "web-question.png")
        async with _permission_prompt(http, service.url, "web") as request_id:
            await shoot(f"/q/{request_id}", "web-permission.png")
        await _post(http, service.url, _edit("ask_edit", "web"))
        await shoot("/q/ask_edit", "web-edit.png")
        picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
        await answer_on_web(http, service.url, "ask_db", picks, name="Ada")
        await _ended(http, service.url, "ask_db")
        await shoot("/q/ask_db", "web-answered.png")
        await browser.close()


async def _photograph_form(folder: Path, chromium: str) -> None:
    """A typed form as an agent asks it (an MCP elicitation's schema), its defaults filled in."""
    async with (
        aiohttp.ClientSession() as http,
        _serving(folder) as service,
        async_playwright() as playwright,
    ):
        body = {"request_id": "ask_form", "target": "web", "context": CONTEXT, "form": RELEASE_FORM}
        await _post(http, service.url, body)
        browser = await playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        page = await browser.new_page(viewport={"width": 820, "height": 120})
        await page.goto(f"{service.url}/q/ask_form")
        await page.get_by_label("Contact").fill("ops@example.com")
        await page.get_by_label("Smoke tests").check()
        await page.screenshot(path=IMAGES / "web-form.png", full_page=True)
        await browser.close()


async def _capture_slack(folder: Path, http: aiohttp.ClientSession) -> Captured:
    async with SlackEmulator() as slack:
        slack.add_user("U0ADA", "ada")
        slack.add_channel("C0RELEASES", "releases")
        identity = slack.identity
        settings = {
            "SLACK_BOT_TOKEN": identity.bot_token,
            "SLACK_SIGNING_SECRET": identity.signing_secret,
            "SLACK_API_URL": slack.api_url,
        }
        async with _serving(folder, **settings) as service:
            slack.interactions_url = f"{service.url}/slack/events"
            status = await _post(http, service.url, _ask("ask_db", "slack:C0RELEASES"))
            (posted,) = status["messages"]
            question = slack.message(posted["channel"], posted["message_id"])
            captured: Captured = {"question": {"blocks": question.blocks}}
            async with _permission_prompt(http, service.url, "slack:C0RELEASES") as request_id:
                captured["permission"] = {
                    "blocks": await _slack_blocks(http, service, slack, request_id)
                }
            await _post(http, service.url, _edit("ask_edit", "slack:C0RELEASES"))
            captured["edit"] = {"blocks": await _slack_blocks(http, service, slack, "ask_edit")}
            ada = slack.person("U0ADA")
            await ada.choose_radio(question, "PostgreSQL")
            await ada.tick_checkboxes(
                slack.message(question.channel, question.ts), ["Caching", "Metrics"]
            )
            await ada.click_button(slack.message(question.channel, question.ts), "Submit")
            await _ended(http, service.url, "ask_db")
            ended = await slack.wait_for_update(
                question.channel, question.ts, lambda m: not m.has_interactive_elements
            )
            captured["answered"] = {"blocks": ended.blocks}
    return captured


async def _slack_blocks(
    http: aiohttp.ClientSession, service: Service, slack: SlackEmulator, request_id: str
) -> Any:
    async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
        (posted,) = (await response.json())["messages"]
    return slack.message(posted["channel"], posted["message_id"]).blocks


async def _capture_discord(folder: Path, http: aiohttp.ClientSession) -> Captured:
    async with DiscordEmulator(bot_username="askbridge") as emulator:
        guild = emulator.add_guild("team")
        channel = emulator.add_text_channel(guild.id, "releases")
        ada = emulator.add_user("ada", global_name="Ada")
        emulator.add_member(guild.id, ada.id)
        settings = {
            "DISCORD_BOT_TOKEN": emulator.bot_token,
            "DISCORD_API_URL": emulator.api_url,
            "DISCORD_GATEWAY_URL": emulator.gateway_url,
        }
        target = f"discord:{channel.id}"
        async with _serving(folder, **settings) as service:
            status = await _post(http, service.url, _ask("ask_db", target))
            message_id = int(status["messages"][0]["message_id"])
            captured: Captured = {"question": _discord_data(emulator.message(message_id).payload)}
            async with _permission_prompt(http, service.url, target) as request_id:
                async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
                    (posted,) = (await response.json())["messages"]
                prompt = emulator.message(int(posted["message_id"]))
                captured["permission"] = _discord_data(prompt.payload)
            edit = await _post(http, service.url, _edit("ask_edit", target))
            posted_edit = emulator.message(int(edit["messages"][0]["message_id"]))
            captured["edit"] = _discord_data(posted_edit.payload)
            await _acted(emulator.click(message_id, ada.id, "PostgreSQL"))
            await _acted(emulator.choose(message_id, ada.id, ["Caching", "Metrics"]))
            await _acted(emulator.click(message_id, ada.id, "Submit"))
            await _ended(http, service.url, "ask_db")
            ended = await emulator.wait_for_edit(message_id, lambda m: not m.is_interactive)
            captured["answered"] = _discord_data(ended.payload)
    return captured


async def _acted(click: Awaitable[Any]) -> None:
    handle = await click
    await handle.response()


def _discord_data(payload: Any) -> Captured:
    """What a webhook would send to make this message: its content, embeds, components, flags."""
    keys = ("content", "embeds", "components", "flags")
    return {
        key: copy.deepcopy(payload[key]) for key in keys if payload.get(key) not in (None, "", [])
    }


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
