"""Times on the page in a real Chromium: each reader sees a deadline and when a request ended in
their own time zone, including times that arrive with the list's live updates; without scripts
the page says them in UTC, which it names."""

from __future__ import annotations

import aiohttp
from playwright.async_api import Browser, expect

from askbridge.bots.service import Service
from tests.test_browser import browser, create
from tests.web_person import answer_on_web

__all__ = ["browser"]

PICKS = {"Database": ["SQLite"], "Features": ["Caching"]}


async def test_a_deadline_and_an_answer_time_read_in_the_readers_zone(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    # The service's clock starts at 2030-01-01 00:00 UTC: 09:00 in Tokyo.
    await create(http, service, "ask_tokyo", timeout_s=3600)
    context = await browser.new_context(timezone_id="Asia/Tokyo")
    page = await context.new_page()
    await page.goto(f"{service.url}/q/ask_tokyo")
    deadline = page.locator("time")
    await expect(deadline).to_have_text("2030-01-01 10:00 GMT+9")
    await expect(deadline).to_have_attribute("datetime", "2030-01-01T01:00:00Z")
    await expect(
        page.get_by_text("Open until 2030-01-01 10:00 GMT+9; then it expires.")
    ).to_be_visible()

    # The list follows the answer given elsewhere; the time it brings reads in Tokyo too.
    await page.goto(f"{service.url}/")
    await expect(page.get_by_role("link", name="Which database should we use?")).to_be_visible()
    status, _ = await answer_on_web(http, service.url, "ask_tokyo", PICKS, name="Lin")
    assert status == 200
    await expect(page.locator("#live")).to_contain_text(
        "Answered by Lin · 2030-01-01 09:00 GMT+9", timeout=10_000
    )
    await page.goto(f"{service.url}/q/ask_tokyo")
    await expect(page.locator("#outcome")).to_have_text("Answered by Lin · 2030-01-01 09:00 GMT+9")
    await context.close()


async def test_without_scripts_times_read_in_utc(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    await create(http, service, "ask_utc", timeout_s=3600)
    context = await browser.new_context(timezone_id="Asia/Tokyo", java_script_enabled=False)
    page = await context.new_page()
    await page.goto(f"{service.url}/q/ask_utc")
    await expect(
        page.get_by_text("Open until 2030-01-01 01:00 UTC; then it expires.")
    ).to_be_visible()
    status, _ = await answer_on_web(http, service.url, "ask_utc", PICKS, name="Lin")
    assert status == 200
    await page.goto(f"{service.url}/q/ask_utc")
    await expect(page.locator("#outcome")).to_have_text("Answered by Lin · 2030-01-01 00:00 UTC")
    await context.close()
