"""How the page reads in a real Chromium: on a phone's width, with text no line can hold, in a
dark colour scheme, and to a person who hears it and moves through it with the keyboard."""

from __future__ import annotations

import copy
import re
from collections.abc import AsyncIterator
from typing import Any, Literal

import aiohttp
import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from askbridge.bots.service import Service
from askbridge.core.permissions import permission_questions
from tests.conftest import DATABASE
from tests.test_browser import CHROMIUM_FLAGS, chromium_path
from tests.web_person import RELEASE_FORM

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


async def test_a_tool_calls_named_values_wrap_on_a_phone(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    """An MCP tool's input is shown as its names and values, both the agent's to choose."""
    body = {
        "request_id": "ask_fields",
        "questions": permission_questions({"tool_name": "mcp__db__query"}, always=None, shown=True),
        "tool": {"name": "mcp__db__query"},
        "subject": {"k" * 300: WORD, "sql": "select 1"},
    }
    await ask(http, service, body)
    page = await phone(browser)
    await page.goto(f"{service.url}/q/ask_fields")
    assert not await scrolls_sideways(page)
    value = await page.get_by_text("select 1").bounding_box()
    assert value is not None
    assert value["x"] < 360


CONTRAST = """() => {
  // WCAG 2 contrast of every visible text against what is behind it, translucent layers
  // and the browser's own canvas included.
  const parse = (colour) => {
    const parts = colour.match(/[\\d.]+/g).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  };
  const probe = document.createElement('div');
  probe.style.background = 'Canvas';
  document.body.append(probe);
  const canvas = parse(getComputedStyle(probe).backgroundColor);
  probe.remove();
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3]))
    .concat([1]);
  const behind = (element) => {
    const layers = [];
    for (let at = element; at; at = at.parentElement) {
      const colour = parse(getComputedStyle(at).backgroundColor);
      if (colour[3] > 0) layers.unshift(colour);
      if (colour[3] === 1) break;
    }
    return layers.reduce((under, layer) => over(layer, under), canvas);
  };
  const luminance = (colour) => {
    const [r, g, b] = colour.slice(0, 3).map(v => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const failures = [];
  for (const element of document.body.querySelectorAll('*')) {
    const own = [...element.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !element.getClientRects().length) continue;
    const style = getComputedStyle(element);
    const background = behind(element);
    const text = over(parse(style.color), background);
    const [light, dark] = [luminance(text), luminance(background)].sort((a, b) => b - a);
    const ratio = (light + 0.05) / (dark + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) {
      failures.push(`${element.tagName}.${element.className} ${ratio.toFixed(2)} `
        + `${element.textContent.trim().slice(0, 30)}`);
    }
  }
  return failures;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_every_text_can_be_read_in_either_colour_scheme(
    service: Service, http: aiohttp.ClientSession, browser: Browser, scheme: str
) -> None:
    question = copy.deepcopy(DATABASE)
    await ask(http, service, question)
    edit = {
        "request_id": "ask_edit",
        "questions": permission_questions({"tool_name": "Edit"}, always=None, shown=True),
        "tool": {"name": "Edit", "cwd": "/repo"},
        "subject": {"file_path": "/repo/a.py", "old_string": "a = 1\\n", "new_string": "a = 2\\n"},
        "allow_changes": True,
        "allow_notes": True,
    }
    await ask(http, service, edit)
    await ask(http, service, {"request_id": "ask_form", "form": RELEASE_FORM})
    page = await phone(browser, "dark" if scheme == "dark" else "light")
    for path in ("/q/ask_db", "/q/ask_edit", "/q/ask_form"):
        await page.goto(f"{service.url}{path}")
        assert await page.evaluate(CONTRAST) == [], path
    # A refusal marks what is wrong; an answer shows how the request ended, and the list both.
    await page.get_by_role("button", name="Submit").click()
    assert await page.evaluate(CONTRAST) == [], "a refused form"
    await page.goto(f"{service.url}/q/ask_db")
    await page.get_by_label("SQLite").check()
    await page.get_by_label("Logging").check()
    await page.get_by_role("button", name="Submit").click()
    await page.locator("#outcome").wait_for()
    assert await page.evaluate(CONTRAST) == [], "an answered question"
    await page.goto(f"{service.url}/")
    assert await page.evaluate(CONTRAST) == [], "the list"


async def test_every_page_holds_what_it_says_in_one_main_landmark(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    await ask(http, service, copy.deepcopy(DATABASE))
    page = await phone(browser)
    for path in ("/", "/q/ask_db", "/q/ask_missing"):
        await page.goto(f"{service.url}{path}")
        main = page.get_by_role("main")
        await expect(main).to_have_count(1)
        await expect(main.get_by_role("heading", level=1)).to_have_count(1)


async def test_a_refused_answer_takes_the_keyboard_to_what_is_wrong_and_says_why(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    body: dict[str, Any] = copy.deepcopy(DATABASE)
    body["allow_other"] = True
    await ask(http, service, body)
    page = await phone(browser)
    await page.goto(f"{service.url}/q/ask_db")
    # Keys only: Tab to the first option, Space to choose it, Enter in the name to submit.
    await page.keyboard.press("Tab")
    await page.keyboard.press("Space")
    await page.get_by_label("Your name").focus()
    await page.keyboard.type("Lin")
    await page.keyboard.press("Enter")
    missing = 'Please answer "Features" before submitting.'
    await expect(page.get_by_role("alert")).to_have_text(missing)
    # The page opens where the answer is missing, and the group says what is wrong with it.
    await expect(page.get_by_label("Caching")).to_be_focused()
    features = page.get_by_role("group", name="Features")
    await expect(features).to_have_accessible_description(re.compile(re.escape(missing)))
    # Words that cannot be taken: the page opens at them, and they say why.
    await page.keyboard.press("Space")
    own = page.get_by_role("textbox", name="Or in your own words (besides those)")
    await own.fill("No \u202eseY")
    await page.get_by_role("button", name="Submit").click()
    await expect(own).to_be_focused()
    await expect(own).to_have_attribute("aria-invalid", "true")
    await expect(own).to_have_accessible_description(re.compile("direction of the text"))
    # A typed form opens at the first value refused.
    await ask(http, service, {"request_id": "ask_form", "form": RELEASE_FORM})
    await page.goto(f"{service.url}/q/ask_form")
    await page.get_by_label("Contact").fill("ops@example.com")
    await page.get_by_label("Region").select_option("eu-west-1")
    await page.get_by_label("Replicas").fill("42")
    await page.locator("form.typed").evaluate("form => { form.noValidate = true; }")
    await page.get_by_role("button", name="Submit").click()
    await expect(page.get_by_label("Replicas")).to_be_focused()


async def test_an_ending_is_in_the_pages_title_which_is_read_when_it_loads(
    service: Service, http: aiohttp.ClientSession, browser: Browser
) -> None:
    await ask(http, service, copy.deepcopy(DATABASE))
    page = await phone(browser)
    await page.goto(f"{service.url}/q/ask_db")
    await expect(page).to_have_title("Database · askbridge")
    # Withdrawn elsewhere: the page loads itself again, and its title says how it ended.
    async with http.delete(f"{service.url}/v1/questions/ask_db") as response:
        assert response.status == 200
    await expect(page).to_have_title(re.compile("^Withdrawn by the agent"), timeout=10_000)
