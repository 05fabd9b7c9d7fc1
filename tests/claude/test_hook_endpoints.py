"""Both hook forms without the CLI: `POST /v1/hooks/claude-code` and `askbridge hook
claude-code`, what they answer, when they give up, and the settings that install them."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from askbridge.bots.cli import main
from askbridge.bots.client import REPLY_WITHIN_S
from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.hooks.flow import WITHDRAW_S
from askbridge.core.models import Status
from askbridge.core.tool_view import Diff
from tests.claude.scenario import APPROVAL_HOOK, QUESTION_HOOK, QUESTIONS, next_waiting
from tests.conftest import StartService
from tests.hung_server import HungServer
from tests.server_process import ServerProcess
from tests.web_person import answer_on_web

HOOK = "/v1/hooks/claude-code"
PICKS = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
ANSWERS = {
    "Which database should we use?": "PostgreSQL",
    "Which features do you want?": "Caching, Metrics",
}


async def post_hook(
    http: aiohttp.ClientSession, url: str, body: Any, query: str = "", **headers: str
) -> tuple[int, dict[str, Any]]:
    async with http.post(f"{url}{HOOK}{query}", json=body, headers=headers) as response:
        return response.status, await response.json()


async def test_the_http_hook_answers_with_the_hook_output_and_a_redelivery_asks_once(
    service: Service, http: aiohttp.ClientSession
) -> None:
    hook = asyncio.create_task(post_hook(http, service.url, QUESTION_HOOK), name="hook")
    question = await next_waiting(service.broker, set())
    await answer_on_web(http, service.url, question.request_id, PICKS, name="Ada")
    status, output = await asyncio.wait_for(hook, 30)
    assert status == 200
    decided = output["hookSpecificOutput"]
    assert decided["permissionDecision"] == "allow"
    assert decided["updatedInput"]["answers"] == ANSWERS
    assert decided["updatedInput"]["questions"] == QUESTIONS

    assert await post_hook(http, service.url, QUESTION_HOOK) == (200, output)
    assert len(await service.broker.list_requests()) == 1


async def test_the_query_string_sets_the_options(
    service: Service, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    query = "?target=web&timeout=30&on_timeout=deny"
    hook = asyncio.create_task(post_hook(http, service.url, APPROVAL_HOOK, query), name="hook")
    approval = await next_waiting(service.broker, set())
    assert approval.expires_at is not None
    assert (approval.expires_at - approval.created_at).total_seconds() == 27
    await clock.advance(27)
    status, output = await asyncio.wait_for(hook, 30)
    assert (status, output) == (
        200,
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "Timed out waiting for an answer"},
            }
        },
    )


@pytest.mark.parametrize(
    ("query", "body", "error"),
    [
        ("?timeout=1", QUESTION_HOOK, "timeout_s: Input should be greater than or equal to 2"),
        ("?quorum=0", QUESTION_HOOK, "quorum: Input should be greater than or equal to 1"),
        ("?quorum=51", QUESTION_HOOK, "quorum: Input should be less than or equal to 50"),
        ("?answer=web:ada", QUESTION_HOOK, "unknown query parameter 'answer'"),
        ("", [QUESTION_HOOK], "request body must be a JSON object"),
        ("", {**QUESTION_HOOK, "hook_event_name": "Stop"}, "got 'Stop'"),
    ],
)
async def test_a_bad_query_or_body_is_a_400_that_says_what_is_wrong(
    service: Service, http: aiohttp.ClientSession, query: str, body: Any, error: str
) -> None:
    status, found = await post_hook(http, service.url, body, query)
    assert status == 400
    assert error in found["error"]


@pytest.mark.parametrize(
    "hook",
    [
        {**APPROVAL_HOOK, "cwd": "/\ud800"},
        {**APPROVAL_HOOK, "tool_input": {"command": "ls \ud800"}},
        {**APPROVAL_HOOK, "tool_input": {"command\ud800": "ls"}},
    ],
)
async def test_a_tool_call_that_cannot_be_shown_is_left_to_claude_code_saying_why(
    service: Service, http: aiohttp.ClientSession, hook: dict[str, Any]
) -> None:
    # aiohttp writes the lone surrogate as JSON's escape, as Claude Code would.
    status, output = await post_hook(http, service.url, hook)
    assert status == 200
    assert output["systemMessage"].startswith("askbridge: cannot show these questions (")
    assert await service.broker.list_requests() == []


async def test_the_wait_ends_before_the_hooks_timeout_and_takes_the_question_back(
    service: Service, http: aiohttp.ClientSession
) -> None:
    # The manual clock never reaches the deadline: the hook's own time runs out first.
    status, output = await post_hook(http, service.url, QUESTION_HOOK, "?timeout=2")
    assert (status, output) == (
        200,
        {"systemMessage": "askbridge: nobody answered in time; answer here"},
    )
    [request] = await service.broker.list_requests()
    assert request.status is Status.WITHDRAWN


async def test_a_hook_claude_code_gives_up_on_takes_its_question_back(
    service: Service, http: aiohttp.ClientSession
) -> None:
    hook = asyncio.create_task(post_hook(http, service.url, QUESTION_HOOK), name="hook")
    question = await next_waiting(service.broker, set())
    hook.cancel()  # Claude Code's hook timeout, or its user answered in the terminal
    withdrawn = await service.broker.wait(question.request_id, 30)
    assert withdrawn.status is Status.WITHDRAWN


async def test_the_http_hook_needs_the_token(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(api_token="hook-token-0123456789")
    status, found = await post_hook(http, service.url, QUESTION_HOOK)
    assert status == 401
    assert "ASKBRIDGE_API_TOKEN" in found["error"]


async def run_hook(
    url: str,
    stdin: str,
    *flags: str,
    env: dict[str, str] | None = None,
    within_s: float = 30,
) -> tuple[dict[str, Any], list[str], int]:
    """`askbridge hook claude-code` as Claude Code runs it, waiting `within_s` at most for a
    person and for the command: output, stderr lines, status."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "hook",
        "claude-code",
        "--url",
        url,
        "--timeout",
        f"{within_s:g}",
        *flags,
        env={**keep, **(env or {})},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), within_s)
    assert process.returncode is not None
    return json.loads(out), err.decode().splitlines(), process.returncode


async def test_the_command_hook_prints_the_decision(
    service: Service, http: aiohttp.ClientSession
) -> None:
    hook = asyncio.create_task(run_hook(service.url, json.dumps(QUESTION_HOOK)), name="hook")
    question = await next_waiting(service.broker, set())
    assert question.expires_at is not None
    assert (question.expires_at - question.created_at).total_seconds() == 27
    await answer_on_web(http, service.url, question.request_id, PICKS, name="Ada")
    output, errors, code = await hook
    assert (code, errors) == (0, [])
    assert output["hookSpecificOutput"]["updatedInput"]["answers"] == ANSWERS


async def test_the_command_hook_shows_a_multi_edit_as_one_hunk_per_edit_in_the_file(
    service: Service, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    # MultiEdit, in the shape older CLIs sent it (2.1.332 no longer has the tool).
    target = tmp_path / "app.py"
    target.write_text("".join(f"line {n}\n" for n in range(1, 31)))
    edits = [
        {"old_string": "line 5\n", "new_string": "line five\n"},
        {"old_string": "line 25\n", "new_string": "line twenty-five\n"},
    ]
    hook = {
        **APPROVAL_HOOK,
        "cwd": str(tmp_path),
        "tool_name": "MultiEdit",
        "tool_input": {"file_path": str(target), "edits": edits},
    }
    running = asyncio.create_task(run_hook(service.url, json.dumps(hook)), name="hook")
    approval = await next_waiting(service.broker, set())
    assert approval.tool is not None
    assert approval.tool.title == "Edit app.py"
    [diff] = [part for part in approval.tool.parts if isinstance(part, Diff)]
    assert [hunk.header() for hunk in diff.hunks] == ["@@ -2,7 +2,7 @@", "@@ -22,7 +22,7 @@"]
    async with http.get(f"{service.url}/q/{approval.request_id}") as response:
        page = await response.text()
    assert "<td class='num'>25</td><td class='num'></td><td class='sign'>-</td>" in page
    await answer_on_web(http, service.url, approval.request_id, {"Permission": ["Allow once"]})
    output, errors, code = await running
    assert (code, errors) == (0, [])
    assert output["hookSpecificOutput"]["decision"]["behavior"] == "allow"


async def test_the_command_hook_without_a_server_says_why_in_one_line() -> None:
    output, errors, code = await run_hook("http://127.0.0.1:9", json.dumps(QUESTION_HOOK))
    assert code == 0
    [line] = errors
    assert line.startswith("askbridge: could not ask: askbridge at http://127.0.0.1:9 is ")
    assert line.endswith("running there? Set ASKBRIDGE_URL (or --url) to where it is")
    assert output == {"systemMessage": f"{line}; answer here"}


@pytest.mark.parametrize(
    ("token", "said"),
    [
        (None, "it needs an API token, and none was given"),
        ("not-the-servers-token", "the API token given is not the server's"),
    ],
)
async def test_the_command_hook_says_which_token_to_set_when_it_is_refused(
    start_service: StartService, token: str | None, said: str
) -> None:
    service = await start_service(api_token="hook-token-0123456789")
    env = {"ASKBRIDGE_API_TOKEN": token} if token else {}
    output, errors, code = await run_hook(service.url, json.dumps(QUESTION_HOOK), env=env)
    assert code == 0
    [line] = errors
    assert line == (
        f"askbridge: could not ask: askbridge at {service.url} refused this request: {said}; "
        "set ASKBRIDGE_API_TOKEN to the server's token where this runs (its environment, or "
        ".env in its working directory)"
    )
    assert output == {"systemMessage": f"{line}; answer here"}


@pytest.mark.parametrize(
    ("flags", "env", "named"),
    [
        (["--timeout", "1"], {}, "timeout_s: Input should be greater than or equal to 2, got 1.0"),
        (["--quorum", "two"], {}, "argument --quorum: invalid int value: 'two'"),
        (["--no-such-flag"], {}, "unrecognized arguments: --no-such-flag"),
        ([], {"ASKBRIDGE_HOOK_QUORUM": "0"}, "invalid settings: ASKBRIDGE_HOOK_QUORUM: "),
    ],
)
async def test_a_hook_command_that_cannot_run_makes_no_decision_and_says_why(
    flags: list[str], env: dict[str, str], named: str
) -> None:
    # Exit status 2 is a decision to Claude Code: the tool call refused (a question never
    # asked, the model reading the usage error), a permission denied, a form declined.
    output, errors, code = await run_hook(
        "http://127.0.0.1:9", json.dumps(QUESTION_HOOK), *flags, env=env
    )
    assert code == 0
    [line] = errors
    assert line.startswith("askbridge: cannot run the hook: ")
    assert named in line
    assert output == {"systemMessage": f"{line}; answer here"}


def test_printing_the_settings_with_a_bad_option_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["hook", "claude-code", "--print-settings", "--timeout", "1"])
    assert exited.value.code == 2
    shown = capsys.readouterr()
    assert shown.out == ""
    assert shown.err.startswith("usage: askbridge hook claude-code ")
    assert "askbridge hook claude-code: error: timeout_s: " in shown.err


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("{not json", "Expecting property name enclosed in double quotes"),
        # Installed by hand on an event askbridge does not answer.
        (
            json.dumps({**QUESTION_HOOK, "hook_event_name": "PostToolUse"}),
            "askbridge answers PreToolUse, PermissionRequest and Elicitation hooks, "
            "got 'PostToolUse'",
        ),
    ],
)
async def test_the_command_hook_names_input_it_cannot_read_at_the_terminal(
    given: str, named: str
) -> None:
    output, errors, code = await run_hook("http://127.0.0.1:9", given)
    assert code == 0
    [line] = errors
    assert line.startswith("askbridge: cannot read the hook input: ")
    assert named in line
    # No decision; the person at the terminal reads why.
    assert output == {"systemMessage": line}


def printed(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    assert main(["hook", "claude-code", "--print-settings", *flags]) == 0
    found: dict[str, Any] = json.loads(capsys.readouterr().out)
    return found


def test_the_printed_command_hook_runs_this_askbridge_with_its_options(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASKBRIDGE_API_TOKEN", raising=False)
    flags = ("--url", "http://127.0.0.1:8765", "--target", "slack:C0123", "--quorum", "2")
    settings = printed(capsys, *flags, "--answerer", "slack:U1", "--answerer", "slack:U2")
    [asked] = settings["hooks"]["PreToolUse"]
    [approvals] = settings["hooks"]["PermissionRequest"]
    assert asked["matcher"] == "AskUserQuestion"
    assert approvals["matcher"] == "*"
    [hook] = asked["hooks"]
    assert approvals["hooks"] == [hook]
    assert hook["type"] == "command"
    assert hook["timeout"] == 600
    assert shlex.split(hook["command"]) == [
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "hook",
        "claude-code",
        "--url",
        "http://127.0.0.1:8765",
        "--target",
        "slack:C0123",
        "--answerer",
        "slack:U1",
        "--answerer",
        "slack:U2",
        "--quorum",
        "2",
        "--timeout",
        "600",
    ]


def test_the_printed_http_hook_sends_the_token_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASKBRIDGE_API_TOKEN", "hook-token-0123456789")
    monkeypatch.setenv("ASKBRIDGE_HOOK_TARGET", "discord:123")
    settings = printed(
        capsys, "--http", "--url", "http://askbridge:8765", "--timeout", "120", "--no-approvals"
    )
    assert "PermissionRequest" not in settings["hooks"]
    [asked] = settings["hooks"]["PreToolUse"]
    assert asked["hooks"] == [
        {
            "type": "http",
            "url": "http://askbridge:8765/v1/hooks/claude-code?target=discord%3A123&timeout=120",
            "timeout": 120,
            "headers": {"Authorization": "Bearer $ASKBRIDGE_API_TOKEN"},
            "allowedEnvVars": ["ASKBRIDGE_API_TOKEN"],
        }
    ]
    assert "hook-token" not in json.dumps(settings)


def test_the_printed_settings_can_ask_before_named_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = printed(capsys, "--pre-tool-use", "Bash|Write", "--on-timeout", "deny")
    [asked] = settings["hooks"]["PreToolUse"]
    assert asked["matcher"] == "AskUserQuestion|Bash|Write"
    assert shlex.split(asked["hooks"][0]["command"])[-2:] == ["--on-timeout", "deny"]


GAVE_UP_WITHIN_S = REPLY_WITHIN_S + WITHDRAW_S + 30
"""Time enough for the hook to give up on a hung server and withdraw: its limits, and Python's
start, with room for a busy machine."""


async def test_the_command_hook_gives_up_on_a_hung_server_soon_and_takes_the_question_back() -> (
    None
):
    async with HungServer() as hung:
        started = asyncio.get_running_loop().time()
        running = asyncio.create_task(
            run_hook(hung.url, json.dumps(QUESTION_HOOK), within_s=GAVE_UP_WITHIN_S), name="hook"
        )
        created = await hung.next_request()
        # The create may yet be done by the server once it runs again: the hook withdraws it.
        withdrawal = await hung.next_request(REPLY_WITHIN_S + 10)
        output, errors, code = await running
        took = asyncio.get_running_loop().time() - started
    assert (created.method, created.path) == ("POST", "/v1/questions")
    request_id = created.body["request_id"]
    assert (withdrawal.method, withdrawal.path) == ("DELETE", f"/v1/questions/{request_id}")
    # The create's own limit, then the withdrawal's, and starting Python: not the long wait.
    assert took < REPLY_WITHIN_S + WITHDRAW_S + 10
    assert code == 0
    [line] = errors
    assert line == (
        f"askbridge: could not ask: askbridge at {hung.url} did not answer within "
        f"{REPLY_WITHIN_S:g} s; check that `askbridge serve` there is not stopped or "
        "overloaded (its log says what it is doing)"
    )
    assert output == {"systemMessage": f"{line}; answer here"}


async def test_a_question_the_server_reads_after_the_hook_gave_up_is_not_asked(
    server: ServerProcess, http: aiohttp.ClientSession
) -> None:
    url = await server.start()
    assert server.process is not None
    # Stopped: the kernel still takes the hook's connections, nothing reads them.
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        _, errors, code = await run_hook(url, json.dumps(QUESTION_HOOK), within_s=GAVE_UP_WITHIN_S)
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
    assert code == 0
    assert f"askbridge at {url} did not answer within" in errors[0]
    request_id = f"claude_{QUESTION_HOOK['tool_use_id']}"
    line = await server.logged(f"did not ask {request_id}", f"request {request_id} created")
    assert f"did not ask {request_id}: its agent had stopped waiting for this server" in line
    async with http.get(f"{url}/v1/questions/{request_id}") as response:
        assert response.status == 404
