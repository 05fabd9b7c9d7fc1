"""Claude Code's Elicitation hook input read, named, and answered (no server involved)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from mcp.server.elicitation import render_elicitation_schema
from pydantic import BaseModel, Field

from askbridge.core.errors import InvalidQuestion
from askbridge.core.hooks.claude_code import BadHookInput, HookOptions, ToolCall
from askbridge.core.hooks.elicitation import Answer, Elicitation, answer, ask_for, hook_output
from askbridge.core.hooks.flow import read_hook
from tests.claude import form_mcp
from tests.claude.scenario import ELICITATION_HOOK, SESSION

URL_HOOK: dict[str, Any] = {
    **SESSION,
    "hook_event_name": "Elicitation",
    "mcp_server_name": form_mcp.SERVER,
    "message": form_mcp.URL_MESSAGE,
    "mode": "url",
    "url": form_mcp.URL,
}
OPTIONS = HookOptions()
ADA = {"id": "web:ada", "name": "Ada"}


def test_an_elicitation_is_read_and_a_tool_call_still_is() -> None:
    read = read_hook(ELICITATION_HOOK)
    assert isinstance(read, Elicitation)
    assert read.server == form_mcp.SERVER
    assert read.requested_schema == form_mcp.SCHEMA
    assert read.url is None
    assert read.context == (
        f"Claude Code in /work/app (session 2de254c5): the MCP server {form_mcp.SERVER} asks"
    )
    link = read_hook(URL_HOOK)
    assert isinstance(link, Elicitation)
    assert link.url == form_mcp.URL
    assert link.requested_schema is None
    tool = {**SESSION, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}
    assert isinstance(read_hook(tool), ToolCall)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"mcp_server_name": ""}, "mcp_server_name"),
        ({"message": 7}, "message"),
        ({"mode": "sheet"}, "mode"),
        ({"requested_schema": None}, "form mode without a requested_schema"),
        ({"mode": "url"}, "url mode without a url"),
    ],
)
def test_an_input_that_is_not_claude_codes_is_refused_with_what_is_wrong(
    change: dict[str, Any], words: str
) -> None:
    with pytest.raises(BadHookInput, match=words):
        read_hook({**ELICITATION_HOOK, **change})


def test_the_same_input_twice_is_one_request_and_anything_else_another() -> None:
    first = Elicitation.from_hook(ELICITATION_HOOK)
    again = Elicitation.from_hook(copy.deepcopy(ELICITATION_HOOK))
    assert first.request_id == again.request_id
    assert first.request_id.startswith("claude_elicit_")
    assert len(first.request_id) <= 64
    schema = copy.deepcopy(form_mcp.SCHEMA)
    schema["properties"]["amount"]["maximum"] = 5000
    others: list[dict[str, Any]] = [
        {"prompt_id": "another-prompt"},
        {"session_id": "another-session"},
        {"mcp_server_name": "tickets"},
        {"message": "Other details"},
        {"requested_schema": schema},
    ]
    ids = {Elicitation.from_hook({**ELICITATION_HOOK, **o}).request_id for o in others}
    assert first.request_id not in ids
    assert len(ids) == len(others)
    assert Elicitation.from_hook(URL_HOOK).request_id != first.request_id


CONTENT = {"email": "a@example.com", "amount": 7, "urgent": False, "category": "meals"}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (
            {"status": "answered", "action": "accept", "content": CONTENT, "answered_by": ADA},
            Answer("accept", CONTENT, "Filled in by Ada"),
        ),
        (
            {"status": "declined", "action": "decline", "declined_by": ADA},
            Answer("decline", None, "Declined by Ada"),
        ),
        (
            {"status": "cancelled", "action": "cancel", "cancelled_by": ADA},
            Answer("cancel", None, "Cancelled by Ada"),
        ),
        ({"status": "expired"}, Answer(None, None, "askbridge: nobody answered in time")),
        ({"status": "withdrawn"}, Answer(None, None, "askbridge: the question was withdrawn")),
        (
            {"status": "answered", "answered_by": ADA},
            Answer(None, None, "askbridge: the answer carried no values"),
        ),
    ],
)
def test_each_ending_is_the_action_the_server_gets(
    status: dict[str, Any], expected: Answer
) -> None:
    assert answer(Elicitation.from_hook(ELICITATION_HOOK), status, OPTIONS) == expected


def test_a_link_done_is_accept_without_content_and_deny_on_timeout_declines() -> None:
    link = Elicitation.from_hook(URL_HOOK)
    done = {"status": "answered", "action": "accept", "content": {}, "answered_by": ADA}
    assert answer(link, done, OPTIONS) == Answer("accept", None, "Done, said Ada")
    deny = OPTIONS.updated({"on_timeout": "deny"})
    assert answer(link, {"status": "expired"}, deny).action == "decline"


def test_the_output_is_the_shape_claude_code_reads() -> None:
    accepted = hook_output(Answer("accept", CONTENT, "Filled in by Ada")).json_object()
    assert accepted == {
        "hookSpecificOutput": {
            "hookEventName": "Elicitation",
            "action": "accept",
            "content": CONTENT,
        }
    }
    declined = hook_output(Answer("decline", None, "Declined by Ada")).json_object()
    assert declined == {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}}
    none = hook_output(Answer(None, None, "askbridge: nobody answered in time")).json_object()
    assert none == {"systemMessage": "askbridge: nobody answered in time; answer here"}


def test_the_form_is_asked_as_the_server_sent_it_and_a_link_as_a_link() -> None:
    asked = Elicitation.from_hook(ELICITATION_HOOK)
    ask = ask_for(asked, OPTIONS.updated({"target": ["web"], "timeout_s": 60}))
    assert ask.request_id == asked.request_id
    assert ask.questions == ()
    assert ask.form is not None
    assert ask.form.message == form_mcp.MESSAGE
    assert [f.name for f in ask.form.fields] == list(form_mcp.SCHEMA["properties"])
    assert ask.context == asked.context
    assert ask.timeout_s == 54
    link = ask_for(Elicitation.from_hook(URL_HOOK), OPTIONS)
    assert link.form is not None
    assert link.form.url == form_mcp.URL
    assert link.form.fields == ()


def test_a_form_askbridge_cannot_show_is_refused_with_the_reason() -> None:
    nested = copy.deepcopy(form_mcp.SCHEMA)
    del nested["properties"]["urgent"]
    nested["properties"]["address"] = {"type": "object", "properties": {}}
    with pytest.raises(InvalidQuestion, match="address"):
        ask_for(Elicitation.from_hook({**ELICITATION_HOOK, "requested_schema": nested}), OPTIONS)


def test_a_long_server_name_and_working_directory_still_fit_the_context() -> None:
    long = {**ELICITATION_HOOK, "mcp_server_name": "s" * 500, "cwd": "/" + "d" * 900}
    ask = ask_for(Elicitation.from_hook(long), OPTIONS)
    assert ask.context is not None
    assert ask.context.endswith("s" * 99 + "… asks")


def test_a_form_the_mcp_sdk_renders_is_asked_as_it_came() -> None:
    """What a server on the official SDK sends Claude Code, from a pydantic model: `gt`/`lt` as
    exclusive bounds, a float beyond 2**53, optional fields. The hook asks it; it does not
    hand the form back to the terminal."""

    class Expense(BaseModel):
        amount: float = Field(gt=0, lt=1e20)
        nights: int = Field(default=1, gt=0)
        note: str | None = None
        urgent: bool | None = None

    schema = render_elicitation_schema(Expense)
    asked = Elicitation.from_hook({**ELICITATION_HOOK, "requested_schema": schema})
    ask = ask_for(asked, OPTIONS)
    assert ask.form is not None
    assert [(f.name, f.minimum, f.maximum) for f in ask.form.fields] == [
        ("amount", 0, 1e20),
        ("nights", 1, None),
        ("note", None, None),
        ("urgent", None, None),
    ]
    assert ask.form.as_sent()["requested_schema"] == schema
