"""A real headless Chromium answers on the page while the agent long-polls."""

from __future__ import annotations

import asyncio
import copy
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from playwright.async_api import Browser, Dialog, Page, async_playwright, expect

from bots.service import Service
from tests.conftest import DATABASE, EXPECTED

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = os.environ.get("ASKBRIDGE_TEST_CHROMIUM") or shutil.which("chromium")
    if not path:
        pytest.fail(
            "Chromium not found: install Debian's 'chromium' package (.ci/run does) or set "
            "ASKBRIDGE_TEST_CHROMIUM to a Chromium binary"
        )
    return path


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context()
    opened = await context.new_page()
    yield opened
    await context.close()


async def create(http: aiohttp.ClientSession, service: Service, request_id: str) -> None:
    body = copy.deepcopy(DATABASE)
    body["request_id"] = request_id
    body["context"] = "release-bot is preparing v2"
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 201


async def test_answer_in_the_browser(
    service: Service, http: aiohttp.ClientSession, page: Page, tmp_path: Path
) -> None:
    await page.goto(f"{service.url}/")
    await expect(page.get_by_text("No question is waiting")).to_be_visible()

    # The list picks the new question up by itself.
    await create(http, service, "ask_browser")
    link = page.get_by_role("link", name="Which database should we use?")
    await expect(link).to_be_visible(timeout=10_000)
    poll = asyncio.create_task(http.get(f"{service.url}/v1/questions/ask_browser?wait=60"))
    await link.click()

    await expect(page.get_by_text("release-bot is preparing v2")).to_be_visible()
    await expect(page.get_by_text("Performance monitoring")).to_be_visible()
    await page.get_by_label("PostgreSQL").check()
    await page.get_by_role("button", name="Submit").click()
    await expect(page.get_by_role("alert")).to_have_text(
        "Please answer “Features” before submitting."
    )
    async with http.get(f"{service.url}/v1/questions/ask_browser") as response:
        assert (await response.json())["status"] == "waiting"
    assert not poll.done()

    # The choice made before the error is kept.
    await expect(page.get_by_label("PostgreSQL")).to_be_checked()
    await page.get_by_label("Caching").check()
    await page.get_by_label("Metrics").check()
    await page.get_by_label("Your name").fill("Lin")
    await page.get_by_role("button", name="Submit").click()
    await expect(page.locator("#outcome")).to_contain_text("Answered by Lin")
    await page.screenshot(path=str(tmp_path / "answered.png"), full_page=True)

    async with await poll as response:
        final = await response.json()
    assert final["answers"] == EXPECTED
    assert final["answered_by"]["name"] == "Lin"


async def test_cancel_in_the_browser(
    service: Service, http: aiohttp.ClientSession, page: Page
) -> None:
    await create(http, service, "ask_cancel")
    poll = asyncio.create_task(http.get(f"{service.url}/v1/questions/ask_cancel?wait=60"))
    await page.goto(f"{service.url}/q/ask_cancel")
    dialogs: list[str] = []

    async def accept(dialog: object) -> None:
        dialogs.append(dialog.message)  # type: ignore[attr-defined]
        await dialog.accept()  # type: ignore[attr-defined]

    page.on("dialog", accept)
    await page.get_by_role("button", name="Cancel").click()
    await expect(page.locator("#outcome")).to_contain_text("Cancelled by web user")
    assert dialogs == ["Cancel this question? The agent will be interrupted."]
    async with await poll as response:
        final = await response.json()
    assert final["status"] == "cancelled"
    assert final["error"] == "Interrupted"


async def test_an_open_form_follows_an_answer_given_elsewhere(
    service: Service, http: aiohttp.ClientSession, page: Page
) -> None:
    await create(http, service, "ask_elsewhere")
    await page.goto(f"{service.url}/q/ask_elsewhere")
    await expect(page.get_by_role("button", name="Submit")).to_be_visible()
    async with http.delete(f"{service.url}/v1/questions/ask_elsewhere") as response:
        assert response.status == 200
    await expect(page.locator("#outcome")).to_contain_text("Withdrawn by the agent", timeout=10_000)


async def test_the_page_breaks_none_of_its_own_security_policy(
    service: Service, http: aiohttp.ClientSession, page: Page
) -> None:
    await create(http, service, "ask_policy")
    complaints: list[str] = []
    page.on("console", lambda message: complaints.append(message.text))
    await page.goto(f"{service.url}/q/ask_policy")
    # The style sheet applied, and the script runs: it confirms a cancel before sending it.
    submit = page.get_by_role("button", name="Submit")
    assert await submit.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(47, 111, 235)"
    asked: list[str] = []

    async def dismiss(dialog: Dialog) -> None:
        asked.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", dismiss)
    await page.get_by_role("button", name="Cancel").click()
    assert asked == ["Cancel this question? The agent will be interrupted."]
    await expect(submit).to_be_visible()
    assert [c for c in complaints if "Content Security Policy" in c] == []
