"""Allow with changes, in the broker: what a changed text becomes, what is refused, and the
quorum rule (votes agree only when they allow the same input)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.changes import changed_input
from askbridge.core.clock import ManualClock
from askbridge.core.hooks.claude_code import (
    HookOptions,
    Source,
    ToolCall,
    ask_for,
    decide,
    hook_output,
)
from askbridge.core.intents import (
    CHANGED,
    Counted,
    Decided,
    Refusal,
    Refused,
    Submit,
    allow_with_changes,
)
from askbridge.core.models import Person, Request
from askbridge.core.permissions import permission_questions
from askbridge.core.store.sqlite import SQLiteStore
from askbridge.core.view import RequestView
from tests.test_broker import ChatSurface

ALICE, BOB, CAROL = (Person(platform="chat", id=i, name=i.lower()) for i in ("A", "B", "C"))


@pytest.fixture
async def broker(store: SQLiteStore) -> AsyncIterator[Broker]:
    made = Broker(store, clock=ManualClock(), default_target="chat:C1", render_backoff_s=(0, 0))
    made.add_surface(ChatSurface())
    await made.start()
    yield made
    await made.stop()


async def approval(broker: Broker, name: str, given: dict[str, Any], **fields: Any) -> Request:
    questions = permission_questions({"tool_name": name}, always=None, shown=True)
    ask = Ask.parse(
        {
            "request_id": f"ask_{name.lower()}",
            "questions": questions,
            "tool": {"name": name, "cwd": "/repo"},
            "subject": given,
            "allow_changes": True,
            **fields,
        }
    )
    request, _ = await broker.ask(ask)
    return request


def problem(outcome: object) -> str:
    assert isinstance(outcome, Refused), outcome
    assert outcome.reason is Refusal.BAD_TEXT
    return outcome.problems[CHANGED]


async def test_a_changed_command_is_the_approved_input_and_the_view_shows_it(
    broker: Broker,
) -> None:
    asked = {"command": "rm -rf /tmp/x", "description": "Clean"}
    request = await approval(broker, "Bash", asked)
    assert RequestView.of(request).changeable is not None
    outcome = await broker.act(request.request_id, ALICE, allow_with_changes("ls /tmp/x\r\n"))
    assert isinstance(outcome, Decided)
    ended = outcome.view.request
    assert ended.answers == {"Permission": "Allow once"}
    assert ended.approved_input == {**asked, "command": "ls /tmp/x\n"}
    shown = outcome.view.tool
    assert shown is not None
    assert shown.parts[0].kind == "note"
    assert [p.text for p in shown.parts if p.kind == "code"] == ["ls /tmp/x\n"]
    assert outcome.view.changeable is None


async def test_an_unchanged_text_is_allow_once_and_an_empty_one_is_refused(
    broker: Broker,
) -> None:
    asked = {"file_path": "/repo/a.txt", "content": "one\ntwo\n"}
    request = await approval(broker, "Write", asked)
    refused = await broker.act(request.request_id, ALICE, allow_with_changes(" \n"))
    assert problem(refused) == "Please write the content; it cannot be empty."
    # A platform that drops the last line break sends the same content back.
    outcome = await broker.act(request.request_id, ALICE, allow_with_changes("one\ntwo"))
    assert isinstance(outcome, Decided)
    assert outcome.view.request.approved_input is None
    assert outcome.view.tool == request.tool


async def test_a_file_keeps_its_last_line_break_when_the_form_drops_it(broker: Broker) -> None:
    asked = {"file_path": "/repo/a.txt", "old_string": "x\n", "new_string": "y\n"}
    request = await approval(broker, "Edit", asked)
    outcome = await broker.act(request.request_id, ALICE, allow_with_changes("z"))
    assert isinstance(outcome, Decided)
    assert outcome.view.request.approved_input == {**asked, "new_string": "z\n"}


async def test_any_other_tool_is_changed_as_a_json_object(broker: Broker) -> None:
    asked = {"url": "https://example.com", "prompt": "Summarise"}
    request = await approval(broker, "WebFetch", asked)
    field = RequestView.of(request).changeable
    assert field is not None
    assert field.key is None
    assert field.label == "Input (JSON object)"
    request_id = request.request_id
    assert problem(await broker.act(request_id, ALICE, allow_with_changes("[1]"))) == (
        "Please write the input as a JSON object ({…})."
    )
    assert problem(await broker.act(request_id, ALICE, allow_with_changes("{"))).startswith(
        "Please write the input as a JSON object: Expecting property name"
    )
    changed = '{"url": "https://example.org", "prompt": "Summarise"}'
    outcome = await broker.act(request_id, ALICE, allow_with_changes(changed))
    assert isinstance(outcome, Decided)
    assert outcome.view.request.approved_input == {**asked, "url": "https://example.org"}


async def test_only_an_asker_that_takes_changes_is_offered_them(broker: Broker) -> None:
    questions = permission_questions({"tool_name": "Bash"}, always=None, shown=True)
    ask = Ask.parse(
        {
            "request_id": "ask_plain",
            "questions": questions,
            "tool": {"name": "Bash"},
            "subject": {"command": "make"},
        }
    )
    request, _ = await broker.ask(ask)
    assert RequestView.of(request).changeable is None
    outcome = await broker.act("ask_plain", ALICE, allow_with_changes("make clean"))
    assert isinstance(outcome, Refused)
    assert outcome.reason is Refusal.FOREIGN_MESSAGE
    # Deny with a change attached is no allow with changes either.
    changes = await approval(broker, "Bash", {"command": "make"})
    deny = Submit({0: (1,)}, changed="make clean")
    outcome = await broker.act(changes.request_id, ALICE, deny)
    assert isinstance(outcome, Refused)
    assert outcome.reason is Refusal.FOREIGN_MESSAGE


async def test_votes_count_together_only_for_the_same_changed_input(broker: Broker) -> None:
    request = await approval(broker, "Bash", {"command": "make"}, quorum=2)
    request_id = request.request_id
    first = await broker.act(request_id, ALICE, allow_with_changes("make test"))
    assert isinstance(first, Counted)
    assert first.receipt.answers == {"Permission": "Allow once, with changes"}
    plain = await broker.act(request_id, BOB, Submit({0: (0,)}))
    assert isinstance(plain, Counted)
    assert [(r.answers["Permission"], r.count) for r in plain.view.tally] == [
        ("Allow once, with changes", 1),
        ("Allow once", 1),
    ]
    outcome = await broker.act(request_id, CAROL, allow_with_changes("make test"))
    assert isinstance(outcome, Decided)
    assert outcome.view.request.approved_input == {"command": "make test"}
    assert outcome.view.deciders == (ALICE, CAROL)


def test_the_hook_returns_the_approved_input_as_claude_code_takes_it() -> None:
    call = ToolCall(
        source=Source.PERMISSION_REQUEST, tool_name="Bash", tool_input={"command": "make"}
    )
    ask = ask_for(call, HookOptions())
    assert ask is not None
    assert ask.allow_changes
    status = {
        "status": "answered",
        "answers": {"Permission": "Allow once"},
        "approved_input": {"command": "make test"},
        "answered_by": {"name": "alice"},
    }
    decision = decide(call, status, HookOptions())
    assert decision.message == "Allowed with changes by alice"
    assert hook_output(call, decision).json_object() == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": {"command": "make test"}},
        }
    }
    pre = call.model_copy(update={"source": Source.PRE_TOOL_USE})
    assert hook_output(pre, decide(pre, status, HookOptions())).json_object() == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "Allowed with changes by alice",
            "updatedInput": {"command": "make test"},
        }
    }


async def test_a_text_with_windows_line_breaks_keeps_them(broker: Broker) -> None:
    """Every form sends its line breaks as the platform writes them: a file's CRLF line breaks
    sent back unchanged are no change, and a changed text keeps them."""
    asked = {"file_path": "/repo/a.bat", "content": "@echo off\r\nset A=1\r\n"}
    request = await approval(broker, "Write", asked)
    for sent in ("@echo off\r\nset A=1\r\n", "@echo off\nset A=1"):
        field = RequestView.of(request).changeable
        assert field is not None
        assert changed_input(request, sent) is None, sent
    outcome = await broker.act(request.request_id, ALICE, allow_with_changes("@echo on\nset A=2"))
    assert isinstance(outcome, Decided)
    assert outcome.view.request.approved_input == {**asked, "content": "@echo on\r\nset A=2\r\n"}
