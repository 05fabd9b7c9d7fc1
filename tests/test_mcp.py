"""`askbridge mcp`: an MCP client asks people through askbridge and gets their answers."""

from __future__ import annotations

import asyncio
import copy
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.elicitation import render_elicitation_schema
from pydantic import BaseModel, Field

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.version import VERSION
from tests.claude import form_mcp
from tests.claude.discord_forms import FILLED, on_discord
from tests.claude.scenario import TYPED, next_waiting
from tests.conftest import DATABASE, EXPECTED, waiting_ids
from tests.web_person import answer_on_web, fill_on_web


@asynccontextmanager
async def connected(service: Service, *flags: str) -> AsyncIterator[ClientSession]:
    """`askbridge mcp` as an MCP client starts it. (Not a fixture: the SDK's task groups
    must be left in the task that entered them.)"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    args = ["-m", "askbridge.bots.cli", "mcp", "--url", service.url, *flags]
    server = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text_of(result: types.CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_the_tool_is_listed_with_the_question_schema(service: Service) -> None:
    async with connected(service) as mcp:
        listed = await mcp.list_tools()
    [tool] = [t for t in listed.tools if t.name == "ask_user_question"]
    assert "questions" in tool.input_schema["required"]
    assert "multiple-choice" in (tool.description or "")


async def test_an_mcp_client_gets_the_answers(
    service: Service, http: aiohttp.ClientSession
) -> None:
    questions: Any = copy.deepcopy(DATABASE["questions"])
    arguments = {"questions": questions, "context": "an MCP agent"}
    async with connected(service) as mcp:
        call = asyncio.create_task(mcp.call_tool("ask_user_question", arguments))
        request_id, *_ = await waiting_ids(http, service.url)
        picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
        await answer_on_web(http, service.url, request_id, picks, name="Grace")
        result = await asyncio.wait_for(call, 30)
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"answers": EXPECTED, "answered_by": "Grace", "notes": {}}


async def test_a_cancel_or_a_bad_question_is_a_tool_error(
    service: Service, http: aiohttp.ClientSession
) -> None:
    bad: Any = copy.deepcopy(DATABASE["questions"])
    bad[0]["header"] = "A header far too long"
    good: Any = copy.deepcopy(DATABASE["questions"])
    async with connected(service) as mcp:
        result = await mcp.call_tool("ask_user_question", {"questions": bad})
        assert result.is_error
        assert "questions[0].header: must be at most 12 characters" in text_of(result)

        call = asyncio.create_task(mcp.call_tool("ask_user_question", {"questions": good}))
        request_id, *_ = await waiting_ids(http, service.url)
        await answer_on_web(http, service.url, request_id, {}, action="cancel")
        result = await asyncio.wait_for(call, 30)
    assert result.is_error
    assert "Interrupted" in text_of(result)


async def test_arguments_that_break_a_rule_are_a_tool_error_that_names_it(
    service: Service,
) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": []}}}
    quiet = {"tz": "Europe", "start": "22:00", "end": "07:00"}
    escalation = {"steps": [{"after_s": 5}], "quiet_hours": quiet}
    questions: Any = copy.deepcopy(DATABASE["questions"])
    async with connected(service) as mcp:
        form = await mcp.call_tool("ask_form", {"message": "m", "requested_schema": schema})
        ladder = await mcp.call_tool(
            "ask_user_question", {"questions": questions, "escalation": escalation}
        )
    assert form.is_error
    assert "requested_schema.properties.a.format: must be one of" in text_of(form)
    assert ladder.is_error
    assert "escalation.quiet_hours.tz: must be an IANA time zone" in text_of(ladder)


async def test_arguments_of_the_wrong_type_are_refused_as_the_http_api_refuses_them(
    service: Service,
) -> None:
    questions: Any = copy.deepcopy(DATABASE["questions"])
    async with connected(service) as mcp:
        text = await mcp.call_tool("ask_user_question", {"questions": "x"})
        quorum = await mcp.call_tool("ask_user_question", {"questions": questions, "quorum": "x"})
        form = await mcp.call_tool("ask_form", {"message": "m", "requested_schema": "x"})
    assert text.is_error
    assert "questions: must be a list of 1-4 questions, got str" in text_of(text)
    assert "validation error" not in text_of(text)
    assert quorum.is_error
    assert "quorum: must be a whole number from 1 to 50, got 'x'" in text_of(quorum)
    assert form.is_error
    assert "form.requested_schema: must be" in text_of(form)


async def test_the_server_names_its_version(service: Service) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "askbridge.bots.cli", "mcp", "--url", service.url],
        env=env,
    )
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        started = await session.initialize()
    assert started.server_info.name == "askbridge"
    assert started.server_info.version == VERSION


async def test_a_waiting_call_sends_progress_and_own_words_come_back(
    service: Service, http: aiohttp.ClientSession
) -> None:
    # Clients that abort a tool idle for a minute keep waiting while progress arrives.
    reports: list[tuple[float, str | None]] = []
    twice = asyncio.Event()

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))
        if len(reports) == 2:
            twice.set()

    questions: Any = copy.deepcopy(DATABASE["questions"])
    arguments = {"questions": questions, "allow_other": True, "allow_notes": True}
    async with connected(service, "--progress-every", "0.2") as mcp:
        call = asyncio.create_task(
            mcp.call_tool("ask_user_question", arguments, progress_callback=progressed)
        )
        request_id, *_ = await waiting_ids(http, service.url)
        await asyncio.wait_for(twice.wait(), 30)
        picks = {"Features": ["Caching"]}
        typed = {"Database": "DuckDB"}
        await answer_on_web(http, service.url, request_id, picks, typed=typed, note="columnar")
        result = await asyncio.wait_for(call, 30)
    assert result.structured_content == {
        "answers": {"Database": "DuckDB", "Features": "Caching"},
        "answered_by": "Ada",
        "notes": {"Database": "columnar"},
    }
    first, second = reports[:2]
    assert 0 < first[0] < second[0]
    assert second[1] is not None
    assert second[1].startswith("waiting for an answer in web (")


async def test_ask_form_gives_the_values_typed_with_progress_while_it_waits(
    tmp_path: Path,
    clock: ManualClock,
) -> None:
    reports: list[tuple[float, str | None]] = []
    reported = asyncio.Event()

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))
        reported.set()

    arguments = {"message": form_mcp.MESSAGE, "requested_schema": form_mcp.SCHEMA}
    async with (
        on_discord(tmp_path, clock) as discord,
        connected(discord.service, "--progress-every", "0.2") as mcp,
    ):
        listed = await mcp.list_tools()
        [tool] = [t for t in listed.tools if t.name == "ask_form"]
        assert "message" in tool.input_schema["required"]
        call = asyncio.create_task(
            mcp.call_tool("ask_form", arguments, progress_callback=progressed)
        )
        request = await next_waiting(discord.service.broker, set())
        await asyncio.wait_for(reported.wait(), 30)
        await discord.fill_in(request, FILLED)
        result = await asyncio.wait_for(call, 30)
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"action": "accept", "content": TYPED, "by": "Ada"}
    assert reports[0][1] is not None
    assert reports[0][1].startswith("waiting for an answer in discord:")


async def test_ask_form_says_decline_and_names_what_is_wrong_with_a_schema(
    tmp_path: Path,
    clock: ManualClock,
) -> None:
    bad: Any = copy.deepcopy(form_mcp.SCHEMA)
    bad["properties"]["amount"]["minimum"] = "one"
    async with on_discord(tmp_path, clock) as discord, connected(discord.service) as mcp:
        refused = await mcp.call_tool("ask_form", {"message": "Details", "requested_schema": bad})
        assert refused.is_error
        assert "requested_schema.properties.amount.minimum" in text_of(refused)

        arguments = {"message": form_mcp.MESSAGE, "requested_schema": form_mcp.SCHEMA}
        call = asyncio.create_task(mcp.call_tool("ask_form", arguments))
        request = await next_waiting(discord.service.broker, set())
        await discord.press(request, "Decline")
        result = await asyncio.wait_for(call, 30)
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"action": "decline", "by": "Ada"}


async def test_ask_form_gives_content_only_with_an_accepted_form(
    service: Service, http: aiohttp.ClientSession
) -> None:
    """MCP's ElicitResult carries `content` only when a form was accepted: a decline, a cancel
    and a link marked Done say their action and who gave it, and hold no content."""
    schema: Any = {"type": "object", "properties": {"note": {"type": "string"}}}
    link = {"message": "Sign in to the billing console", "url": "https://example.com/sign-in"}
    asked = [
        ({"message": "Anything to add?", "requested_schema": schema}, "decline"),
        ({"message": "Anything to add?", "requested_schema": schema}, "cancel"),
        (link, "submit"),
    ]
    results = []
    async with connected(service) as mcp:
        for arguments, action in asked:
            call = asyncio.create_task(mcp.call_tool("ask_form", arguments))
            request_id, *_ = await waiting_ids(http, service.url)
            await fill_on_web(http, service.url, request_id, {}, action=action, name="Grace")
            result = await asyncio.wait_for(call, 30)
            assert not result.is_error, text_of(result)
            results.append(result.structured_content)
    assert results == [
        {"action": "decline", "by": "Grace"},
        {"action": "cancel", "by": "Grace"},
        {"action": "accept", "by": "Grace"},
    ]


async def test_ask_form_takes_the_exclusive_bounds_the_mcp_sdk_writes(
    service: Service, http: aiohttp.ClientSession
) -> None:
    """The SDK writes `Field(gt=0)` as `exclusiveMinimum`; the form is asked, and a value on
    the bound is refused to the person, not the agent."""

    class Rating(BaseModel):
        score: float = Field(gt=0, lt=10)
        stars: int = Field(gt=0, le=5)

    schema = render_elicitation_schema(Rating)
    async with connected(service) as mcp:
        call, request_id = await ask_form_on_web(mcp, http, service, schema)
        given: dict[str, str | list[str]] = {"text.score": "0", "text.stars": "5"}
        code, page = await fill_on_web(http, service.url, request_id, given)
        assert "must be more than 0, got 0" in page
        assert not call.done()
        given = {"text.score": "9.5", "text.stars": "5"}
        code, page = await fill_on_web(http, service.url, request_id, given)
        assert code == 200, page
        result = await asyncio.wait_for(call, 30)
    assert not result.is_error, text_of(result)
    assert result.structured_content == {
        "action": "accept",
        "content": {"score": 9.5, "stars": 5},
        "by": "Ada",
    }


async def test_ask_form_takes_numbers_beyond_2_53_as_the_mcp_sdk_writes_them(
    service: Service, http: aiohttp.ClientSession
) -> None:
    class Distance(BaseModel):
        metres: float = Field(default=1e20, le=1e30)
        further: float

    schema = render_elicitation_schema(Distance)
    async with connected(service) as mcp:
        call, request_id = await ask_form_on_web(mcp, http, service, schema)
        # The default as the page shows it, and a large number as a person types it.
        code, page = await fill_on_web(http, service.url, request_id, {"text.further": "1e29"})
        assert code == 200, page
        result = await asyncio.wait_for(call, 30)
    assert not result.is_error, text_of(result)
    assert result.structured_content == {
        "action": "accept",
        "content": {"metres": 1e20, "further": 1e29},
        "by": "Ada",
    }


async def ask_form_on_web(
    mcp: ClientSession, http: aiohttp.ClientSession, service: Service, schema: dict[str, Any]
) -> tuple[asyncio.Task[types.CallToolResult], str]:
    """`ask_form` called with `schema`, and the id of the form it asks on the web page."""
    arguments = {"message": "Details", "requested_schema": schema}
    call = asyncio.create_task(mcp.call_tool("ask_form", arguments))
    asked = asyncio.create_task(waiting_ids(http, service.url))
    await asyncio.wait((call, asked), timeout=30, return_when=asyncio.FIRST_COMPLETED)
    # A refused schema ends the call at once: say why, rather than wait for the form.
    assert not call.done(), text_of(call.result())
    request_id, *_ = await asked
    return call, request_id
