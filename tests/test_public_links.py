"""ASKBRIDGE_PUBLIC_URL: a chat message that must cut a long command links to the request's page
with a token that opens that page and nothing else; whoever opens it answers under the
request's usual policy, and the agent's text on it stays inert."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest

from askbridge.adapters.discord import tool_call as discord_tool
from askbridge.adapters.slack import tool_call as slack_tool
from askbridge.bots.service import Service
from askbridge.bots.settings import Settings
from askbridge.core.errors import StartupError
from askbridge.core.permissions import permission_questions
from askbridge.core.public_links import PublicLinks, opens, page_token
from askbridge.core.tool_view import fitted
from tests.conftest import StartService
from tests.discord.conftest import discord_env
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, start_bridge
from tests.web_person import answer_on_web, read_form

PUBLIC = "https://askbridge.example.com/team"
TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
HOSTILE = "<script>alert(1)</script> <!channel> @everyone [x](https://evil.example)"
COMMAND = "\n".join([f"echo step {n}" for n in range(1, 60)] + [f"echo '{HOSTILE}'"])


def approval(request_id: str, target: str | list[str] = "web", **fields: Any) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "questions": permission_questions({"tool_name": "Bash"}, always=None, shown=True),
        "tool": {"name": "Bash"},
        "subject": {"command": COMMAND},
        "target": target,
        **fields,
    }


async def ask(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> None:
    async with http.post(f"{url}/v1/questions", json=body, headers=AUTH) as response:
        assert response.status == 201, await response.text()


async def link_of(service: Service, request_id: str) -> str:
    request = await service.broker.get(request_id)
    assert request.tool is not None
    link = request.tool.full_view
    assert link is not None
    return link


def local(link: str) -> str:
    """The link's path and query, to open on the test's server."""
    parts = urlsplit(link)
    return f"{parts.path.removeprefix('/team')}?{parts.query}"


def test_a_token_opens_only_its_own_request() -> None:
    key = b"k" * 32
    token = page_token(key, "ask_a")
    assert opens(key, "ask_a", token)
    assert not opens(key, "ask_b", token)
    assert not opens(b"j" * 32, "ask_a", token)
    assert not opens(key, "ask_a", token[:-1])
    assert not opens(key, "ask_a", None)
    link = PublicLinks(PUBLIC, key).request_page("ask.a")
    assert link == f"{PUBLIC}/q/ask.a?token={page_token(key, 'ask.a')}"


async def test_the_link_opens_its_page_only_and_answers_under_its_policy(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(
        host="0.0.0.0", api_token=TOKEN, web_ui="on", public_url=PUBLIC + "/"
    )
    await ask(http, service.url, approval("ask_a", answerers=["web:Grace"]))
    await ask(http, service.url, approval("ask_b"))
    link = await link_of(service, "ask_a")
    assert link.startswith(f"{PUBLIC}/q/ask_a?token=")
    page = local(link)
    async with http.get(f"{service.url}{page}") as response:
        assert response.status == 200
        html = await response.text()
    # Every line of the command, the agent's markup as text.
    assert "echo step 1\n" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>alert" not in html
    assert len(re.findall(r"<script", html)) == 1, "only the page's own script"
    token = page.partition("token=")[2]
    for elsewhere in (f"/q/ask_b?token={token}", f"/?token={token}", "/q/ask_a?token=0f"):
        async with http.get(f"{service.url}{elsewhere}") as response:
            assert response.status == 401, elsewhere
    async with http.get(f"{service.url}/web/changes?request=ask_a&token={token}") as response:
        assert response.status == 200
    # The page answers under the request's policy: only Grace may.
    picks = {"Permission": ["Deny"]}
    status, said = await answer_on_web(http, service.url, "ask_a", picks, name="Mallory", link=page)
    assert status == 403
    assert "Only these people may answer this question: Grace." in said
    status, said = await answer_on_web(http, service.url, "ask_a", picks, name="Grace", link=page)
    assert status == 200, said
    async with http.get(f"{service.url}/v1/questions/ask_a", headers=AUTH) as response:
        found = await response.json()
    assert found["answers"] == {"Permission": "Deny"}
    assert found["answered_by"]["name"] == "Grace"


async def test_a_cut_command_links_to_its_page_in_slack_and_discord(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    async with SlackEmulator() as slack, DiscordEmulator(bot_username="askbridge-bot") as discord:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        guild = discord.add_guild("team")
        channel = discord.add_text_channel(guild.id, "approvals")
        bridge = await start_bridge(
            slack, "socket", start_service, http, public_url=PUBLIC, **discord_env(discord)
        )
        targets = [f"slack:{CHANNEL}", f"discord:{channel.id}"]
        await ask(http, bridge.url, approval("ask_cut", target=targets))
        link = await link_of(bridge.service, "ask_cut")
        request = await bridge.service.broker.get("ask_cut")
        slack_ref, discord_ref = request.messages
        message = slack.message(CHANNEL, slack_ref.message_id)
        links = [
            element
            for block in message.blocks
            for part in block.get("elements", [])
            for element in part.get("elements", [])
            if isinstance(element, dict) and element.get("type") == "link"
        ]
        assert links == [{"type": "link", "url": link, "text": "See all of it on the web page"}]
        hidden = fitted(COMMAND.split("\n"), slack_tool.MAX_LINES, slack_tool.BLOCK_BUDGET).hidden
        assert hidden > 0
        assert (
            f"_{hidden} more lines are not shown here_ · <{link}|See all of it on the web page>"
            in (message.visible_text)
        )
        assert not message.mentions.broadcasts
        shown = discord.message(int(discord_ref.message_id))
        hidden = fitted(
            COMMAND.split("\n"), discord_tool.MAX_LINES, discord_tool.BLOCK_BUDGET
        ).hidden
        said = (
            f"{hidden} more lines are not shown here\n-# [See all of it on the web page](<{link}>)"
        )
        assert said in shown.text
        assert not shown.pings.everyone
        # A short command is not cut, and needs no link.
        short = {**approval("ask_short", target=targets), "subject": {"command": "make"}}
        await ask(http, bridge.url, short)
        request = await bridge.service.broker.get("ask_short")
        slack_ref, discord_ref = request.messages
        assert "web page" not in slack.message(CHANNEL, slack_ref.message_id).visible_text
        assert "web page" not in discord.message(int(discord_ref.message_id)).text


CUT_WITHIN = {
    "one long line": ("Bash", {"command": "echo " + "a" * 400 + " && rm -rf ~"}),
    "a long argument": ("WebFetch", {"url": "https://example.com/" + "p" * 600 + "?then=evil"}),
    "many arguments": ("mcp__db__query", {f"arg{n}": "x" for n in range(12)}),
    "a long argument name": ("mcp__db__query", {"where_" + "n" * 120 + "_or_drop": "1"}),
    "a long path": ("Write", {"file_path": "/repo/" + "d/" * 200 + "app.py", "content": "x"}),
}


@pytest.mark.parametrize("case", CUT_WITHIN)
async def test_a_call_cut_within_a_line_or_an_argument_links_to_its_page(
    case: str, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    """A call may differ only past the cut of its one line, or in an argument left out: the
    message says so and links to all of it, as it does for lines left out."""
    name, given = CUT_WITHIN[case]
    async with SlackEmulator() as slack, DiscordEmulator(bot_username="askbridge-bot") as discord:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        guild = discord.add_guild("team")
        channel = discord.add_text_channel(guild.id, "approvals")
        bridge = await start_bridge(
            slack, "socket", start_service, http, public_url=PUBLIC, **discord_env(discord)
        )
        body = {
            **approval("ask_cut", target=[f"slack:{CHANNEL}", f"discord:{channel.id}"]),
            "questions": permission_questions({"tool_name": name}, always=None, shown=True),
            "tool": {"name": name},
            "subject": given,
        }
        await ask(http, bridge.url, body)
        link = await link_of(bridge.service, "ask_cut")
        slack_ref, discord_ref = (await bridge.service.broker.get("ask_cut")).messages
        slack_text = slack.message(CHANNEL, slack_ref.message_id).visible_text
        assert f"<{link}|See all of it on the web page>" in slack_text
        discord_text = discord.message(int(discord_ref.message_id)).text
        assert f"[See all of it on the web page](<{link}>)" in discord_text
        if name == "Bash":
            for text in (slack_text, discord_text):
                assert "The end of 1 line is not shown here" in text


def test_a_public_url_is_checked() -> None:
    with pytest.raises(ValueError, match=r"must be the web page's address, http:// or https://"):
        Settings(None, public_url="askbridge.example.com")


async def test_a_public_url_without_the_web_page_fails_startup(
    start_service: StartService,
) -> None:
    with pytest.raises(StartupError, match="ASKBRIDGE_PUBLIC_URL=https://askbridge"):
        await start_service(web_ui="off", public_url=PUBLIC)


async def test_a_page_opened_from_a_link_never_passes_its_token_on(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    """The token is in the page's address: a browser sends that address as the Referer of
    whatever the page leads to on another site, and may keep the page in its cache, unless
    told not to."""
    service = await start_service(
        host="0.0.0.0", api_token=TOKEN, web_ui="on", public_url=PUBLIC + "/"
    )
    await ask(http, service.url, approval("ask_a"))
    page = local(await link_of(service, "ask_a"))
    async with http.get(f"{service.url}{page}") as response:
        assert response.status == 200
        assert response.headers["Referrer-Policy"] == "same-origin"
        assert response.headers["Cache-Control"] == "no-store"
    form = await read_form(http, service.url, "ask_a", page)
    data = {"csrf": form.csrf, "click": form.click, "name": "Grace", "action": "submit"}
    field, value = form.options["Permission"]["Deny"]
    data[field] = value
    posted = f"{service.url}{form.action}"
    async with http.post(posted, data=data, allow_redirects=False) as response:
        # See Other, to the page with its token: the answer's page.
        assert response.status == 303
        assert "token=" in response.headers["Location"]
        assert response.headers["Referrer-Policy"] == "same-origin"
        assert response.headers["Cache-Control"] == "no-store"
    async with http.get(f"{service.url}{page}") as response:
        assert response.status == 200
        assert response.headers["Referrer-Policy"] == "same-origin"
