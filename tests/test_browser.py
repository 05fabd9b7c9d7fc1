"""A real headless Chromium answers on the page while the agent long-polls."""

from __future__ import annotations

import asyncio
import copy
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import Browser, Dialog, Page, async_playwright, expect

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from tests.conftest import DATABASE, EXPECTED
from tests.web_person import RELEASE_FORM, answer_on_web

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


async def create(
    http: aiohttp.ClientSession,
    service: Service,
    request_id: str,
    context: str = "release-bot is preparing v2",
    **extra: Any,
) -> None:
    body = copy.deepcopy(DATABASE)
    body.update(request_id=request_id, context=context, **extra)
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
        'Please answer "Features" before submitting.'
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
    assert dialogs == [
        "Cancel this question? The agent will be interrupted, and nobody can answer it afterwards."
    ]
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
    assert asked == [
        "Cancel this question? The agent will be interrupted, and nobody can answer it afterwards."
    ]
    await expect(submit).to_be_visible()
    assert [c for c in complaints if "Content Security Policy" in c or "error" in c] == []


PICKS = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}


async def create_many(
    http: aiohttp.ClientSession, service: Service, clock: ManualClock, numbers: range
) -> None:
    """Questions `ask_<n>` ("question <n>" in their context), each a second newer than the last."""
    for number in numbers:
        await clock.advance(1)
        await create(http, service, f"ask_{number:03}", f"question {number}")


async def test_an_old_question_keeps_the_choice_while_others_change(
    service: Service, http: aiohttp.ClientSession, browser: Browser, clock: ManualClock
) -> None:
    # The oldest of 111 waiting questions; two people must agree on it.
    await create(http, service, "ask_old", "the old one", quorum=2)
    await create_many(http, service, clock, range(110))
    context = await browser.new_context()
    page, listing = await context.new_page(), await context.new_page()
    loads: list[str] = []
    page.on("load", lambda loaded: loads.append(loaded.url))
    await listing.goto(f"{service.url}/")
    await page.goto(f"{service.url}/q/ask_old")
    await page.get_by_label("SQLite").check()
    await page.get_by_label("Logging").check()
    await page.get_by_label("Your name").fill("Lin")

    # Elsewhere, one person votes on it, others answer other questions, the agent withdraws
    # some and asks more.
    await answer_on_web(http, service.url, "ask_old", PICKS, name="Grace")
    for number in range(100, 105):
        await answer_on_web(http, service.url, f"ask_{number:03}", PICKS, name="Ada")
        async with http.delete(f"{service.url}/v1/questions/ask_{number - 100:03}") as response:
            assert response.status == 200
    await create_many(http, service, clock, range(110, 115))
    # The list, following every change, has caught up with the last of them.
    await expect(listing.get_by_text("question 114")).to_be_visible(timeout=10_000)

    # The page did not reload: the person's choice is as they left it.
    await expect(page.get_by_label("SQLite")).to_be_checked()
    await expect(page.get_by_label("Logging")).to_be_checked()
    await expect(page.get_by_label("Your name")).to_have_value("Lin")
    assert loads == [f"{service.url}/q/ask_old"]

    # Once the question is decided elsewhere, the page shows it.
    await answer_on_web(http, service.url, "ask_old", PICKS, name="Ada")
    await expect(page.locator("#outcome")).to_contain_text("Answered by", timeout=10_000)
    # The outcome can show before the page's load event has fired.
    await page.wait_for_load_state("load")
    assert loads == [f"{service.url}/q/ask_old"] * 2
    await context.close()


async def test_the_list_says_how_many_more_wait_and_pages_to_them(
    service: Service, http: aiohttp.ClientSession, page: Page, clock: ManualClock
) -> None:
    await create_many(http, service, clock, range(120))
    await page.goto(f"{service.url}/")
    items = page.locator("#waiting li")
    more = page.locator("#more")
    # The newest first.
    await expect(items).to_have_count(50)
    await expect(items.first).to_contain_text("question 119")
    await expect(more).to_have_text("And 70 more questions are waiting. Older questions")

    await page.get_by_role("link", name="Older questions").click()
    await expect(items).to_have_count(50)
    await expect(items.first).to_contain_text("question 69")
    await expect(items.last).to_contain_text("question 20")
    await expect(more).to_have_text("And 20 more questions are waiting. Older questions")
    # This page follows changes too, and stays this page: a question on it is answered.
    await answer_on_web(http, service.url, "ask_050", PICKS)
    await expect(more).to_have_text("And 19 more questions are waiting. Older questions")
    await expect(items.last).to_contain_text("question 19")
    await expect(items.first).to_contain_text("question 69")

    await page.get_by_role("link", name="Older questions").click()
    await expect(items).to_have_count(19)
    await expect(items.first).to_contain_text("question 18")
    await expect(more).to_have_count(0)
    await page.get_by_role("link", name="Newest questions").click()
    await expect(items.first).to_contain_text("question 119")


async def test_answer_in_ones_own_words_with_a_note(
    service: Service, http: aiohttp.ClientSession, page: Page, tmp_path: Path
) -> None:
    await create(http, service, "ask_words", allow_other=True, allow_notes=True)
    await page.goto(f"{service.url}/q/ask_words")
    database = page.locator("fieldset[data-header='Database']")
    features = page.locator("fieldset[data-header='Features']")
    await database.get_by_label("Or in your own words").fill("Neither — use MySQL 8")
    await features.get_by_label("Caching").check()
    await features.get_by_label("Or in your own words").fill("tracing")
    await page.get_by_label("A note for the agent").fill("Ask ops before the switch.")
    await page.get_by_label("Your name").fill("Lin")
    await page.get_by_role("button", name="Submit").click()

    await expect(page.locator("#outcome")).to_contain_text("Answered by Lin")
    answers = page.locator("#answers")
    await expect(answers).to_contain_text("Neither — use MySQL 8")
    await expect(answers).to_contain_text("Caching, tracing")
    await expect(answers.locator(".their-note")).to_have_text("Ask ops before the switch.")
    await page.screenshot(path=str(tmp_path / "own-words.png"), full_page=True)
    async with http.get(f"{service.url}/v1/questions/ask_words") as response:
        found = await response.json()
    assert found["answers"] == {"Database": "Neither — use MySQL 8", "Features": "Caching, tracing"}
    assert found["notes"] == {"Database": "Ask ops before the switch."}


async def test_a_reloaded_answer_is_not_posted_twice(
    service: Service, http: aiohttp.ClientSession, page: Page
) -> None:
    await create(http, service, "ask_reload", quorum=2)
    await page.goto(f"{service.url}/q/ask_reload")
    await page.get_by_label("PostgreSQL").check()
    await page.get_by_label("Caching").check()
    await page.get_by_label("Your name").fill("Lin")
    await page.get_by_role("button", name="Submit").click()
    receipt = page.get_by_text("Your vote is counted: 1 of 2")
    await expect(receipt).to_be_visible()
    # Reloading the page that followed posts the same form again.
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    await page.reload()
    assert posts == [f"{service.url}/q/ask_reload"]
    async with http.get(f"{service.url}/v1/questions/ask_reload/events") as response:
        kinds = [e["kind"] for e in (await response.json())["events"]]
    assert kinds.count("vote") == 1
    # No second receipt: the question as it stands, to answer again if Lin wants to.
    await expect(receipt).to_have_count(0)
    await expect(page.get_by_role("button", name="Submit")).to_be_visible()


# --- typed forms ------------------------------------------------------------------------------


async def ask_form(
    http: aiohttp.ClientSession, service: Service, request_id: str, form: dict[str, Any]
) -> asyncio.Task[aiohttp.ClientResponse]:
    """Ask for `form` on the page; the agent's long-poll for the answer."""
    body = {"request_id": request_id, "context": "release-bot is preparing v2", "form": form}
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 201, await response.text()
    return asyncio.create_task(http.get(f"{service.url}/v1/questions/{request_id}?wait=60"))


async def status_of(http: aiohttp.ClientSession, service: Service, request_id: str) -> Any:
    async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
        return await response.json()


async def test_fill_a_typed_form_in_the_browser(
    service: Service, http: aiohttp.ClientSession, page: Page, tmp_path: Path
) -> None:
    poll = await ask_form(http, service, "ask_form", RELEASE_FORM)
    complaints: list[str] = []
    page.on("console", lambda message: complaints.append(message.text))
    page.on("pageerror", lambda error: complaints.append(f"script error: {error}"))
    await page.goto(f"{service.url}/q/ask_form")
    await expect(page.get_by_role("heading")).to_have_text("Release details for billing v2")
    await expect(page.get_by_text("Who answers questions about the release")).to_be_visible()
    # Defaults prefilled.
    replicas = page.get_by_label("Replicas")
    await expect(replicas).to_have_value("3")
    await expect(page.get_by_label("Canary first")).to_be_checked()

    await page.get_by_label("Contact").fill("ops@example.com")
    await replicas.fill("4")
    await page.get_by_label("Canary first").uncheck()
    await page.get_by_label("Region").select_option(label="US East")
    await page.get_by_label("Load tests").check()
    await page.get_by_label("Smoke tests").check()
    await page.get_by_label("Your name").fill("Lin")
    await page.screenshot(path=str(tmp_path / "web-form.png"), full_page=True)
    assert (tmp_path / "web-form.png").stat().st_size > 0
    await page.get_by_role("button", name="Submit").click()

    await expect(page.locator("#outcome")).to_contain_text("Answered by Lin")
    answers = page.locator("#answers")
    for shown in ("ops@example.com", "No", "US East", "Smoke tests, Load tests"):
        await expect(answers).to_contain_text(shown)
    async with await poll as response:
        final = await response.json()
    assert final["status"] == "answered"
    assert final["action"] == "accept"
    assert [c for c in complaints if "Content Security Policy" in c] == []
    assert final["content"] == {
        "contact": "ops@example.com",
        "replicas": 4,
        "canary": False,
        "region": "us-east-1",
        "checks": ["smoke", "load"],
    }


async def test_a_value_out_of_bounds_is_refused_in_place_and_nothing_is_recorded(
    service: Service, http: aiohttp.ClientSession, page: Page
) -> None:
    poll = await ask_form(http, service, "ask_bounds", RELEASE_FORM)
    await page.goto(f"{service.url}/q/ask_bounds")
    await page.get_by_label("Contact").fill("ops@example.com")
    await page.get_by_label("Region").select_option("eu-west-1")
    await page.get_by_label("Security scan").check()
    replicas = page.get_by_label("Replicas")
    await replicas.fill("42")
    # The browser holds the number to its bounds; one that does not (or a form sent by hand)
    # meets the same check on the server.
    await page.get_by_role("button", name="Submit").click()
    assert await replicas.evaluate("input => input.validity.rangeOverflow")
    await expect(page.locator("#outcome")).to_have_count(0)
    await page.locator("form.typed").evaluate("form => { form.noValidate = true; }")
    await page.get_by_role("button", name="Submit").click()

    await expect(page.get_by_role("alert")).to_have_text(
        "Nothing was recorded: Replicas must be at most 10, got 42."
    )
    await expect(replicas).to_have_attribute("aria-invalid", "true")
    await expect(replicas).to_have_accessible_description("Replicas must be at most 10, got 42.")
    # Everything typed is kept.
    await expect(replicas).to_have_value("42")
    await expect(page.get_by_label("Contact")).to_have_value("ops@example.com")
    await expect(page.get_by_label("Region")).to_have_value("eu-west-1")
    await expect(page.get_by_label("Security scan")).to_be_checked()
    await expect(page.get_by_label("Smoke tests")).not_to_be_checked()
    await expect(page.get_by_label("Canary first")).to_be_checked()
    found = await status_of(http, service, "ask_bounds")
    assert (found["status"], found.get("votes", [])) == ("waiting", [])
    assert not poll.done()

    await replicas.fill("10")
    await page.get_by_role("button", name="Submit").click()
    await expect(page.locator("#outcome")).to_contain_text("Answered by web user")
    async with await poll as response:
        final = await response.json()
    assert final["content"] == {
        "contact": "ops@example.com",
        "replicas": 10,
        "canary": True,
        "region": "eu-west-1",
        "checks": ["security"],
    }


WHEN_FORM: dict[str, Any] = {
    "message": "When should the migration start?",
    "requested_schema": {
        "type": "object",
        "properties": {
            "start": {
                "type": "string",
                "format": "date-time",
                "title": "Start",
                "default": "2026-12-07T08:30:00Z",
            },
            "day": {"type": "string", "format": "date", "title": "Freeze day"},
            "runbook": {"type": "string", "format": "uri", "title": "Runbook"},
            "share": {"type": "number", "title": "Traffic share", "maximum": 1},
            "reason": {"type": "string", "title": "Reason"},
        },
        "required": ["start"],
    },
}


async def test_a_date_and_time_is_typed_in_the_browsers_zone(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    poll = await ask_form(http, service, "ask_when", WHEN_FORM)
    context = await browser.new_context(timezone_id="Europe/Paris")
    page = await context.new_page()
    await page.goto(f"{service.url}/q/ask_when")
    start = page.get_by_label("Start")
    # The default, 08:30 UTC, is 09:30 in Paris in December, and the page says whose time.
    await expect(start).to_have_value("2026-12-07T09:30")
    hint = page.locator(f"#{await start.get_attribute('id')}-hint")
    await expect(hint).to_have_text("Time in your time zone (Europe/Paris, UTC+01:00).")
    # In July Paris is two hours ahead: the offset is the one of the time typed, as it is typed.
    await start.fill("2026-07-01T18:05")
    await expect(hint).to_have_text("Time in your time zone (Europe/Paris, UTC+02:00).")
    await page.get_by_label("Freeze day").fill("2026-12-24")
    await page.get_by_label("Runbook").fill("https://wiki.example/runbook")
    await page.get_by_label("Traffic share").fill("0.25")
    await page.get_by_label("Reason").fill("Quarterly\nmaintenance")
    await page.get_by_role("button", name="Submit").click()
    await expect(page.locator("#outcome")).to_contain_text("Answered by web user")
    async with await poll as response:
        final = await response.json()
    assert final["content"] == {
        "start": "2026-07-01T18:05:00+02:00",
        "day": "2026-12-24",
        "runbook": "https://wiki.example/runbook",
        "share": 0.25,
        "reason": "Quarterly\nmaintenance",
    }
    await context.close()


async def test_without_scripts_a_date_and_time_is_in_the_zone_the_field_names(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    poll = await ask_form(http, service, "ask_when", WHEN_FORM)
    context = await browser.new_context(timezone_id="Europe/Paris", java_script_enabled=False)
    page = await context.new_page()
    await page.goto(f"{service.url}/q/ask_when")
    start = page.get_by_label("Start")
    await expect(start).to_have_value("2026-12-07T08:30")
    await expect(page.get_by_text("Time in UTC.")).to_be_visible()
    await start.fill("2026-07-01T18:05")
    await page.get_by_role("button", name="Submit").click()
    await expect(page.locator("#outcome")).to_contain_text("Answered by web user")
    async with await poll as response:
        final = await response.json()
    assert final["content"] == {"start": "2026-07-01T18:05:00+00:00"}
    await context.close()


async def test_without_scripts_a_cancel_is_asked_first_on_a_page_of_its_own(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    await create(http, service, "ask_no_script")
    context = await browser.new_context(java_script_enabled=False)
    page = await context.new_page()
    await page.goto(f"{service.url}/q/ask_no_script")
    await page.get_by_label("Your name").fill("Lin")
    await page.get_by_role("button", name="Cancel").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Cancel this question?")
    await expect(page.get_by_text("The agent will be interrupted")).to_be_visible()
    async with http.get(f"{service.url}/v1/questions/ask_no_script") as response:
        assert (await response.json())["status"] == "waiting"
    # Back leaves it waiting; going through with it cancels it, as Lin.
    await page.get_by_role("link", name="Back to the question").click()
    await page.get_by_label("Your name").fill("Lin")
    await page.get_by_role("button", name="Cancel").click()
    await page.get_by_role("button", name="Cancel question").click()
    await expect(page.locator("#outcome")).to_contain_text("Cancelled by Lin")
    await context.close()


async def test_decline_and_cancel_a_typed_form_in_the_browser(
    service: Service, http: aiohttp.ClientSession, page: Page
) -> None:
    declined = await ask_form(http, service, "ask_decline", RELEASE_FORM)
    await page.goto(f"{service.url}/q/ask_decline")
    await page.get_by_label("Your name").fill("Lin")
    # Decline needs no value filled in, though some are required.
    await page.get_by_role("button", name="Decline").click()
    await expect(page.locator("#outcome")).to_contain_text("Declined by Lin")
    async with await declined as response:
        final = await response.json()
    assert (final["status"], final["action"]) == ("declined", "decline")
    assert "content" not in final

    cancelled = await ask_form(http, service, "ask_cancel_form", RELEASE_FORM)
    await page.goto(f"{service.url}/q/ask_cancel_form")
    dialogs: list[str] = []

    async def accept(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        await dialog.accept()

    page.on("dialog", accept)
    # The name given before is remembered.
    await expect(page.get_by_label("Your name")).to_have_value("Lin")
    await page.get_by_role("button", name="Cancel").click()
    await expect(page.locator("#outcome")).to_contain_text("Cancelled by Lin")
    assert dialogs == [
        "Cancel this question? The agent will be interrupted, and nobody can answer it afterwards."
    ]
    async with await cancelled as response:
        final = await response.json()
    assert (final["status"], final["action"]) == ("cancelled", "cancel")


async def test_a_url_form_shows_its_link_with_done_and_decline(
    service: Service, http: aiohttp.ClientSession, page: Page
) -> None:
    link = "https://login.example/device?code=WDJB-MJHT"
    poll = await ask_form(http, service, "ask_url", {"message": "Sign in to GitHub", "url": link})
    await page.goto(f"{service.url}/q/ask_url")
    shown = page.get_by_role("link", name=link)
    await expect(shown).to_have_attribute("href", link)
    await expect(shown).to_have_attribute("rel", "noopener noreferrer")
    await page.get_by_role("button", name="Done").click()
    await expect(page.locator("#outcome")).to_contain_text("Answered by web user")
    async with await poll as response:
        final = await response.json()
    assert (final["action"], final["content"]) == ("accept", {})
