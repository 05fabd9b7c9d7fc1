"""`make pictures`: what people see, made by askbridge itself for the README and the docs.

The web page is photographed in headless Chromium from a running askbridge: a question, a
tool-permission prompt, an Edit approval (its diff), a typed form and an ended request. For
Slack and Discord, the messages askbridge really sends (to the local emulators the tests use)
are written to `docs/images/messages.json`, with the modal Slack opens on a typed form's
"Fill in…"; the docs turn each into a link to the platform's own previewer
(tests/docs/previews.py), and the README's links to its question in those previewers are
rewritten to match. For Teams, the Adaptive Cards askbridge posts (a question, a typed form,
an Edit approval) are written to `docs/images/teams-*.json`, to paste into the Adaptive Cards
Designer. tests/test_pictures.py captures them all again and fails when they differ.

Run it from the repository: `python -m tests.docs.pictures` (`... pictures web-form` photographs
only the typed form, `docs/images/web-form.png`). It needs Chromium (/usr/bin/chromium or
ASKBRIDGE_TEST_CHROMIUM) and reaches no network but 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import async_playwright

from askbridge.bots.service import Service
from askbridge.bots.settings import Settings
from askbridge.core.clock import ManualClock
from askbridge.core.hooks.claude_code import AGENT
from askbridge.core.permissions import permission_questions
from tests.conftest import DATABASE, waiting_ids
from tests.docs.previews import MESSAGES, TEAMS_CARDS, teams_card_path, with_readme_links
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.emulators.teams import TeamsEmulator
from tests.web_person import RELEASE_FORM, answer_on_web

ROOT = Path(__file__).resolve().parent.parent.parent
IMAGES = ROOT / "docs" / "images"
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
ASKED_AT = datetime(2026, 12, 7, 9, 30, tzinfo=UTC)
"""The time on askbridge's clock while the pictures are made: every time they show is this."""
RANDOM_PARTS = [
    # A Slack render's block_ids carry a fresh random revision (adapters/slack/surface.py).
    (re.compile(r'"ab-[0-9a-f]{8}-'), '"ab-0a5b1c2d-'),
    # The agent WebSocket's PermissionRequest is given a random request id.
    (re.compile(r"perm_[0-9a-f-]{36}"), "perm_5f0c6a1e-8d2b-4c1f-9e3a-7b6d5c4e3f21"),
]
"""What differs between two runs though nothing changed, each replaced by a fixed value in
what is written, so that a run changes no file unless what people see changed."""
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
        messages, cards = asyncio.run(_make(Path(folder), chromium))
    MESSAGES.write_text(as_json(messages))
    for name, card in cards.items():
        teams_card_path(name).write_text(as_json(card))
    README.write_text(with_readme_links(README.read_text(), messages))
    sys.stderr.write(
        f"wrote {IMAGES.relative_to(ROOT)}: web-*.png, {MESSAGES.name} and teams-*.json;"
        " README's previews\n"
    )
    return 0


def as_json(captured: Any) -> str:
    """How a capture is written to its file (and compared with it)."""
    return json.dumps(captured, indent=2, ensure_ascii=False) + "\n"


async def _make(folder: Path, chromium: str) -> tuple[Captured, dict[str, Captured]]:
    for surface in ("web", "form"):
        (folder / surface).mkdir()
    async with aiohttp.ClientSession() as http:
        await _photograph_web(folder / "web", http, chromium)
        await _photograph_form(folder / "form", chromium)
    return await capture(folder)


async def capture(folder: Path) -> tuple[Captured, dict[str, Captured]]:
    """What askbridge sends to Slack and Discord (messages.json's content) and the Teams cards
    it posts (teams-*.json's, by name), from a service pointed at each emulator in turn."""
    for surface in ("slack", "discord", "teams"):
        (folder / surface).mkdir()
    async with aiohttp.ClientSession() as http:
        slack = await _capture_slack(folder / "slack", http)
        discord = await _capture_discord(folder / "discord", http)
        cards = await _capture_teams(folder / "teams", http)
    return _steady({"slack": slack, "discord": discord}), _steady(cards)


def _steady(captured: Any) -> Any:
    text = json.dumps(captured)
    for pattern, fixed in RANDOM_PARTS:
        text = pattern.sub(fixed, text)
    return json.loads(text)


@asynccontextmanager
async def _serving(folder: Path, **settings: Any) -> AsyncIterator[Service]:
    values = {"host": "127.0.0.1", "port": 0, "database_url": f"sqlite:///{folder / 'a.db'}"}
    clock = ManualClock(ASKED_AT)
    service = Service(Settings(_env_file=None, **{**values, **settings}), clock=clock)
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
        {"tool_name": "Edit", "action": "edit billing/settings.py"},
        always=None,
        shown=True,
        agent=AGENT,
    )
    return {
        "request_id": request_id,
        "target": target,
        "context": "Claude Code in /work (session 2de254c5)",
        "questions": question,
        "allow_notes": True,
        "allow_changes": True,
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


def _form(request_id: str, target: str) -> dict[str, Any]:
    """The typed form of web-form.png: an email, a whole number with bounds, a boolean, a
    single choice and a multi-choice."""
    form = copy.deepcopy(RELEASE_FORM)
    return {"request_id": request_id, "target": target, "context": CONTEXT, "form": form}


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
        await _post(http, service.url, _form("ask_form", "web"))
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
            await _post(http, service.url, _form("ask_form", "slack:C0RELEASES"))
            form = await _slack_message(http, service, slack, "ask_form")
            captured["form"] = {"blocks": form.blocks}
            await slack.person("U0ADA").click_button(form, "Fill in…")
            view = dict((await slack.wait_for_view("U0ADA")).view)
            # It names the message's ts, a time that differs every run; the previewer shows
            # nothing of it.
            del view["private_metadata"]
            captured["form-modal"] = view
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
    return (await _slack_message(http, service, slack, request_id)).blocks


async def _slack_message(
    http: aiohttp.ClientSession, service: Service, slack: SlackEmulator, request_id: str
) -> Any:
    async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
        (posted,) = (await response.json())["messages"]
    return slack.message(posted["channel"], posted["message_id"])


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
            form = await _post(http, service.url, _form("ask_form", target))
            posted_form = emulator.message(int(form["messages"][0]["message_id"]))
            captured["form"] = _discord_data(posted_form.payload)
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


async def _capture_teams(folder: Path, http: aiohttp.ClientSession) -> dict[str, Captured]:
    """The Adaptive Card of each of TEAMS_CARDS, as askbridge posts it in a Teams channel."""
    asks = {"question": ("ask_db", _ask), "form": ("ask_form", _form), "edit": ("ask_edit", _edit)}
    cards: dict[str, Captured] = {}
    async with TeamsEmulator(folder) as teams:
        with _trusting(teams.cert):
            async with _serving(folder, **teams.settings()) as service:
                for name in TEAMS_CARDS:
                    conversation = teams.add_conversation()
                    request_id, body = asks[name]
                    await _post(http, service.url, body(request_id, f"teams:{conversation}"))
                    cards[name] = copy.deepcopy((await teams.wait_for_message(conversation)).card)
    return cards


@contextmanager
def _trusting(cert: Path) -> Iterator[None]:
    """MSAL (through requests) trusts the emulated token authority's certificate, as it would
    a real authority's through the system's."""
    before = os.environ.get("REQUESTS_CA_BUNDLE")
    os.environ["REQUESTS_CA_BUNDLE"] = str(cert)
    try:
        yield
    finally:
        if before is None:
            del os.environ["REQUESTS_CA_BUNDLE"]
        else:
            os.environ["REQUESTS_CA_BUNDLE"] = before


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
