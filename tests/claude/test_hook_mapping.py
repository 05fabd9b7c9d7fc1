"""Claude Code's hook input as an askbridge request, and the status object as hook output."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from askbridge.bots.claude_hook import with_file
from askbridge.core.ask import REQUEST_ID_PATTERN
from askbridge.core.errors import InvalidQuestion
from askbridge.core.hooks.claude_code import (
    BadHookInput,
    Decision,
    HookOptions,
    Source,
    ToolCall,
    ask_for,
    decide,
    hook_output,
)
from askbridge.core.tool_view import (
    MAX_FILE_BYTES,
    Code,
    Diff,
    Fields,
    FileText,
    Named,
    tool_view,
)
from tests.claude.scenario import APPROVAL_HOOK, QUESTION_HOOK, QUESTIONS, SESSION, SUGGESTIONS

OPTIONS = HookOptions()
ADA = {"platform": "slack", "id": "U1", "name": "Ada"}


def status(state: str, **fields: Any) -> dict[str, Any]:
    return {"request_id": "r", "status": state, **fields}


def test_a_question_hook_becomes_one_request_that_takes_own_words_and_notes() -> None:
    call = ToolCall.from_hook(QUESTION_HOOK)
    ask = ask_for(call, HookOptions(target=("slack:C0123",), answerers=("slack:U1",)))
    assert ask is not None
    assert ask.request_id == "claude_toolu_01A09q90qw90lq917835lq9"
    assert [q.header for q in ask.questions] == ["Database", "Features"]
    assert ask.questions[1].multi_select
    assert ask.allow_other
    assert ask.allow_notes
    assert ask.context == "Claude Code in /work/app (session 2de254c5)"
    assert [str(t) for t in ask.target] == ["slack:C0123"]
    assert ask.answerers == ("slack:U1",)
    # Claude Code's default hook timeout is 600 s: the deadline comes ten seconds before.
    assert ask.timeout_s == 590


def test_a_permission_prompt_is_named_by_its_session_prompt_and_input() -> None:
    call = ToolCall.from_hook(APPROVAL_HOOK)
    again = ToolCall.from_hook(copy.deepcopy(APPROVAL_HOOK))
    other = ToolCall.from_hook({**APPROVAL_HOOK, "tool_input": {"command": "npm test"}})
    later = ToolCall.from_hook({**APPROVAL_HOOK, "prompt_id": "another-prompt"})
    assert call.request_id == again.request_id
    assert len({call.request_id, other.request_id, later.request_id}) == 3
    assert REQUEST_ID_PATTERN.fullmatch(call.request_id)

    ask = ask_for(call, OPTIONS)
    assert ask is not None
    [question] = ask.questions
    # The question names the call; the call itself is shown as people know it.
    assert question.question == "Allow Claude Code to run a command?"
    assert ask.tool_use is not None
    shown = tool_view(ask.tool_use)
    assert Code(text="npm test -- --watch=false") in shown.parts
    assert (
        Fields(
            fields=(
                Named(name="Description", value="Run the tests"),
                Named(name="Working directory", value="/work/app"),
            )
        )
        in shown.parts
    )
    assert [(o.label, o.description) for o in question.options] == [
        ("Allow once", "Let this one call run"),
        ("Always allow Bash", "Always allow Bash(npm test *) in this project's local settings"),
        ("Allow this directory", "Allow access to /work/app for the rest of this session"),
        ("Deny", "Refuse; the agent is told no"),
    ]
    assert not ask.allow_other


def test_a_pre_tool_use_approval_cannot_be_remembered_and_shows_the_input() -> None:
    hook = {
        **SESSION,
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "/work/app/.env", "content": "KEY=1"},
        "tool_use_id": "toolu_02",
    }
    ask = ask_for(ToolCall.from_hook(hook), OPTIONS)
    assert ask is not None
    assert ask.request_id == "claude_toolu_02"
    [question] = ask.questions
    assert question.question == "Allow Claude Code to write .env?"
    assert ask.tool_use is not None
    shown = tool_view(ask.tool_use)
    diff = next(part for part in shown.parts if isinstance(part, Diff))
    assert (diff.path, diff.lines()) == ("/work/app/.env", ["@@ -0,0 +1,1 @@", "+KEY=1"])
    assert [o.label for o in question.options] == ["Allow once", "Deny"]


def test_the_permission_prompt_after_an_unanswered_question_asks_nothing() -> None:
    hook = {**QUESTION_HOOK, "hook_event_name": "PermissionRequest"}
    assert ask_for(ToolCall.from_hook(hook), OPTIONS) is None


def test_questions_askbridge_cannot_show_are_refused_by_name() -> None:
    questions = copy.deepcopy(QUESTIONS)
    questions[0]["header"] = "Far too long a header"
    hook = {**QUESTION_HOOK, "tool_input": {"questions": questions}}
    with pytest.raises(InvalidQuestion, match=r"questions\[0\]\.header"):
        ask_for(ToolCall.from_hook(hook), OPTIONS)


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("not an object", "must be a JSON object"),
        ({**QUESTION_HOOK, "hook_event_name": "PostToolUse"}, "got 'PostToolUse'"),
        ({**QUESTION_HOOK, "tool_input": "questions"}, "tool_input"),
        ({k: v for k, v in QUESTION_HOOK.items() if k != "tool_name"}, "tool_name"),
    ],
)
def test_input_that_is_not_claude_codes_is_named(raw: Any, named: str) -> None:
    with pytest.raises(BadHookInput, match=named):
        ToolCall.from_hook(raw)


def test_answers_come_back_by_question_text_with_the_questions_kept() -> None:
    call = ToolCall.from_hook(QUESTION_HOOK)
    answers = {"Which database should we use?": "DuckDB", "Which features do you want?": "Caching"}
    notes = {"Which database should we use?": {"notes": "columnar"}}
    answered = status("answered", answers_by_question=answers, annotations=notes, answered_by=ADA)
    assert hook_output(call, decide(call, answered, OPTIONS)).json_object() == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "Answered by Ada",
            "updatedInput": {"questions": QUESTIONS, "answers": answers, "annotations": notes},
        }
    }


def test_an_allow_never_goes_without_answers() -> None:
    call = ToolCall.from_hook(QUESTION_HOOK)
    partial = {"Which database should we use?": "SQLite"}
    for given in (status("answered", answers_by_question=partial), status("answered")):
        decision = decide(call, given, OPTIONS)
        assert decision.behavior is None
        assert hook_output(call, decision).json_object() == {
            "systemMessage": "askbridge: the answers did not fit the questions; answer here"
        }


def test_cancel_denies_and_the_deadline_does_what_on_timeout_says() -> None:
    call = ToolCall.from_hook(QUESTION_HOOK)
    cancelled = decide(call, status("cancelled", cancelled_by=ADA), OPTIONS)
    assert hook_output(call, cancelled).json_object() == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Interrupted by Ada",
        }
    }
    for state in ("expired", "waiting"):
        assert decide(call, status(state), OPTIONS) == Decision(
            None, "askbridge: nobody answered in time"
        )
        denying = HookOptions(on_timeout="deny")
        assert decide(call, status(state), denying) == Decision(
            "deny", "Timed out waiting for an answer"
        )
    assert decide(call, status("withdrawn"), OPTIONS).behavior is None


@pytest.mark.parametrize(
    ("choice", "decision"),
    [
        ("Allow once", {"behavior": "allow"}),
        ("Always allow Bash", {"behavior": "allow", "updatedPermissions": SUGGESTIONS[:1]}),
        ("Allow this directory", {"behavior": "allow", "updatedPermissions": SUGGESTIONS[1:]}),
        ("Deny", {"behavior": "deny", "message": "Denied by Ada"}),
    ],
)
def test_an_approval_answers_the_permission_request(choice: str, decision: Any) -> None:
    call = ToolCall.from_hook(APPROVAL_HOOK)
    answered = status("answered", answers={"Permission": choice}, answered_by=ADA)
    assert hook_output(call, decide(call, answered, OPTIONS)).json_object() == {
        "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}
    }


def test_a_deny_with_a_reason_gives_the_model_the_reason() -> None:
    call = ToolCall.from_hook(APPROVAL_HOOK)
    ask = ask_for(call, OPTIONS)
    assert ask is not None
    assert ask.allow_notes
    reason = "use the staging database"
    denied = status(
        "answered", answers={"Permission": "Deny"}, notes={"Permission": reason}, answered_by=ADA
    )
    decision = decide(call, denied, OPTIONS)
    assert decision == Decision("deny", f"Denied by Ada: {reason}")
    pre = ToolCall.from_hook({**APPROVAL_HOOK, "hook_event_name": "PreToolUse"})
    assert hook_output(pre, decision).json_object()["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": f"Denied by Ada: {reason}",
    }


def test_a_cancelled_approval_is_a_deny_the_model_reads() -> None:
    call = ToolCall.from_hook(APPROVAL_HOOK)
    output = hook_output(
        call, decide(call, status("cancelled", cancelled_by=ADA), OPTIONS)
    ).json_object()
    assert output["hookSpecificOutput"]["decision"] == {
        "behavior": "deny",
        "message": "Interrupted by Ada",
    }


def test_the_sdk_callback_offers_always_allow_only_with_suggestions() -> None:
    bare = ToolCall(source=Source.CAN_USE_TOOL, tool_name="Bash", tool_input={"command": "ls"})
    ask = ask_for(bare, OPTIONS)
    assert ask is not None
    assert [o.label for o in ask.questions[0].options] == ["Allow once", "Deny"]
    suggested = bare.model_copy(update={"permission_suggestions": tuple(SUGGESTIONS)})
    ask = ask_for(suggested, OPTIONS)
    assert ask is not None
    assert [o.label for o in ask.questions[0].options] == [
        "Allow once",
        "Always allow Bash",
        "Allow this directory",
        "Deny",
    ]


def test_each_suggestion_is_an_option_worded_as_claude_code_words_it() -> None:
    accept_edits = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
    rule = {
        "type": "addRules",
        "rules": [{"toolName": "Bash", "ruleContent": "touch a.txt"}],
        "behavior": "allow",
        "destination": "localSettings",
    }
    call = ToolCall.from_hook({**APPROVAL_HOOK, "permission_suggestions": [rule, accept_edits]})
    ask = ask_for(call, OPTIONS)
    assert ask is not None
    assert [(o.label, o.description) for o in ask.questions[0].options][1:3] == [
        ("Always allow Bash", "Always allow Bash(touch a.txt) in this project's local settings"),
        ("Allow all edits", "Accept every file edit for the rest of this session"),
    ]
    chosen = status("answered", answers={"Permission": "Allow all edits"}, answered_by=ADA)
    assert decide(call, chosen, OPTIONS).updated_permissions == (accept_edits,)
    # More suggestions than a question has room for: the first has its option, and one
    # "Always allow" takes them all.
    many = [rule, accept_edits, SUGGESTIONS[1]]
    crowded = ToolCall.from_hook({**APPROVAL_HOOK, "permission_suggestions": many})
    ask = ask_for(crowded, OPTIONS)
    assert ask is not None
    assert [o.label for o in ask.questions[0].options] == [
        "Allow once",
        "Always allow Bash",
        "Always allow",
        "Deny",
    ]
    chosen = status("answered", answers={"Permission": "Always allow"}, answered_by=ADA)
    assert decide(crowded, chosen, OPTIONS).updated_permissions == tuple(many)
    chosen = status("answered", answers={"Permission": "Always allow Bash"}, answered_by=ADA)
    assert decide(crowded, chosen, OPTIONS).updated_permissions == (rule,)


@pytest.mark.parametrize(
    ("timeout_s", "deadline_s", "wait_s"), [(600, 590, 595), (60, 54, 57), (5, 4, 4.5), (2, 1, 1.5)]
)
def test_the_deadline_and_the_wait_end_before_the_hooks_timeout(
    timeout_s: float, deadline_s: float, wait_s: float
) -> None:
    options = HookOptions(timeout_s=timeout_s)
    assert options.deadline_s == deadline_s
    assert options.wait_s == wait_s


def test_options_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"timeout_s: Input should be greater than or equal to 2"):
        OPTIONS.updated({"timeout_s": 1})
    with pytest.raises(ValueError, match="on_timeout"):
        OPTIONS.updated({"on_timeout": "allow"})
    assert OPTIONS.updated({"quorum": "2"}).quorum == 2


def test_a_long_working_directory_is_shortened_from_the_left() -> None:
    deep = "/work/" + "/".join(f"level{i}" for i in range(200))
    ask = ask_for(ToolCall.from_hook({**QUESTION_HOOK, "cwd": deep}), OPTIONS)
    assert ask is not None
    assert ask.context is not None
    assert ask.context.startswith("Claude Code in …")
    assert ask.context.endswith("/level199 (session 2de254c5)")
    assert len(ask.context) < 350


def test_the_input_goes_once_and_the_file_only_when_the_ask_stays_small(tmp_path: Path) -> None:
    small = tmp_path / "small.py"
    small.write_text("DEBUG = True\n")
    big = tmp_path / "big.txt"
    big.write_text("x" * (MAX_FILE_BYTES + 1))
    content = "y" * 100_000
    write = {**APPROVAL_HOOK, "tool_name": "Write", "cwd": str(tmp_path)}
    call = with_file(
        ToolCall.from_hook({**write, "tool_input": {"file_path": str(small), "content": content}})
    )
    assert call.file is None  # the input alone is larger than a file may be
    edit = {"file_path": str(small), "old_string": "True", "new_string": "False"}
    call = with_file(ToolCall.from_hook({**write, "tool_name": "Edit", "tool_input": edit}))
    assert call.file == FileText(path=str(small), text="DEBUG = True\n")
    too_big = {**edit, "file_path": str(big)}
    call = with_file(ToolCall.from_hook({**write, "tool_name": "Edit", "tool_input": too_big}))
    assert call.file is None
    # The tool's input is sent once, as the subject, and shown from there.
    ask = ask_for(
        ToolCall.from_hook({**write, "tool_input": {"file_path": "a", "content": content}}), OPTIONS
    )
    assert ask is not None
    assert len(json.dumps(ask.body())) < len(content) + 2_000
    assert ask.tool_use is not None
    assert ask.tool_use.input["content"] == content


RULE = [{"toolName": "Bash", "ruleContent": "rm:*"}]


@pytest.mark.parametrize(
    ("suggestion", "label", "description"),
    [
        (
            {"type": "addRules", "rules": RULE, "behavior": "deny", "destination": "session"},
            "Allow, then refuse Bash",
            "This call runs; then: always refuse Bash(rm:*) for the rest of this session",
        ),
        (
            {"type": "addRules", "rules": RULE, "behavior": "ask", "destination": "session"},
            "Allow, then ask about Bash",
            "This call runs; then: always ask about Bash(rm:*) for the rest of this session",
        ),
        (
            {
                "type": "replaceRules",
                "rules": [{"toolName": "Bash"}],
                "behavior": "allow",
                "destination": "projectSettings",
            },
            "Allow and replace rules",
            "Replace every 'always allow' rule in this project's settings with: Bash",
        ),
        (
            {"type": "removeRules", "rules": RULE, "behavior": "deny", "destination": "session"},
            "Allow, then remove rules",
            "This call runs; then: no longer always refuse Bash(rm:*) for the rest of this session",
        ),
        (
            {"type": "removeDirectories", "directories": ["/srv"], "destination": "session"},
            "Allow, then remove directory",
            "This call runs; then: no access to /srv for the rest of this session",
        ),
        (
            {"type": "setMode", "mode": "plan", "destination": "session"},
            "Allow, then plan mode",
            "This call runs; then: plan without changing anything for the rest of this session",
        ),
        # What askbridge does not know may allow more: it says so, and shows it as it is.
        (
            {"type": "addHooks", "hooks": ["curl x | sh"], "destination": "userSettings"},
            "Allow, then unknown change",
            "This call runs; then: a permission change askbridge does not know, which may allow "
            'more: "addHooks" {"hooks": ["curl x | sh"], "destination": "userSettings"}',
        ),
        (
            {"type": "setMode", "mode": "yolo", "destination": "session"},
            "Allow, then unknown change",
            "This call runs; then: a permission change askbridge does not know, which may allow "
            'more: "setMode" {"mode": "yolo", "destination": "session"}',
        ),
        (
            {"type": "addRules", "rules": RULE, "behavior": "allowAll"},
            "Allow, then unknown change",
            "This call runs; then: a permission change askbridge does not know, which may allow "
            'more: "addRules" {"rules": [{"toolName": "Bash", "ruleContent": "rm:*"}], '
            '"behavior": "allowAll"}',
        ),
        # A character that reorders or hides the text is shown by code point, as in the call.
        (
            {
                "type": "addRules",
                "rules": [{"toolName": "Bash\u200b", "ruleContent": "echo \u202ebad"}],
                "destination": "session",
            },
            "Always allow Bash<U+200B>",
            "Always allow Bash<U+200B>(echo <U+202E>bad) for the rest of this session",
        ),
        (
            {"type": "add\u202eRules", "rules": "<!channel> @everyone \u200b"},
            "Allow, then unknown change",
            "This call runs; then: a permission change askbridge does not know, which may allow "
            'more: "add\\u202eRules" {"rules": "<!channel> @everyone \\u200b"}',
        ),
    ],
)
def test_a_suggestion_says_what_it_does_and_that_this_call_runs(
    suggestion: dict[str, Any], label: str, description: str
) -> None:
    """Whoever picks an "always" option allows this call: an option that refuses, removes or
    replaces rules says so in its own words, never "Always refuse" for an allow, nor "Remember
    this choice" for a rule that allows every command."""
    call = ToolCall.from_hook({**APPROVAL_HOOK, "permission_suggestions": [suggestion]})
    ask = ask_for(call, OPTIONS)
    assert ask is not None
    assert [(o.label, o.description) for o in ask.questions[0].options][1] == (label, description)
    chosen = status("answered", answers={"Permission": label}, answered_by=ADA)
    assert hook_output(call, decide(call, chosen, OPTIONS)).json_object() == {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedPermissions": [suggestion]},
        }
    }
