"""How the page reads in a real Chromium: on a phone's width, with text no line can hold, in a
dark colour scheme."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any, Literal

import aiohttp
import pytest
from playwright.async_api import Browser, Page, async_playwright

from askbridge.bots.service import Service
from tests.conftest import DATABASE
from tests.test_browser import CHROMIUM_FLAGS, chromium_path

WORD = "w" * 2000
"""One word no line can hold, as an agent may send a hash, a path or a base64 blob."""


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            await launched.close()


async def phone(browser: Browser, scheme: Literal["light", "dark"] = "light") -> Page:
    context = await browser.new_context(viewport={"width": 360, "height": 740}, color_scheme=scheme)
    return await context.new_page()


async def ask(http: aiohttp.ClientSession, service: Service, body: dict[str, Any]) -> None:
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 201, await response.text()


async def scrolls_sideways(page: Page) -> bool:
    return bool(await page.evaluate("document.documentElement.scrollWidth > window.innerWidth"))


async def test_a_word_longer_than_a_line_wraps_on_a_phone(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    body: dict[str, Any] = copy.deepcopy(DATABASE)
    body["request_id"] = "ask_long"
    body["context"] = "c" * 500
    question: dict[str, Any] = body["questions"][0]
    question.update(question=f"Which {WORD}?", header="H" * 12)
    question["options"][0].update(label="L" * 60, description=WORD)
    await ask(http, service, body)
    page = await phone(browser)
    for path in ("/", "/q/ask_long"):
        await page.goto(f"{service.url}{path}")
        assert not await scrolls_sideways(page), path
    # Every button stays on the screen, reachable without scrolling sideways.
    submit = await page.get_by_role("button", name="Submit").bounding_box()
    assert submit is not None
    assert submit["x"] + submit["width"] <= 360
