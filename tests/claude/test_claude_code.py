"""The real `claude` CLI asks through askbridge's hooks, and the model reads what people said.

Each test runs the pinned CLI as the Agent SDK runs it, with the hooks block printed by
`askbridge hook claude-code --print-settings`, against the fake API. The model's first turn
calls AskUserQuestion (two questions, one multi-select), the next one a Bash command that
needs approval. The assertions read the tool_result the CLI sent back to the model.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from askbridge.core.models import Status
from askbridge.core.tool_view import Code, Fields, Named
from tests.claude.cli import CLAUDE_VERSION, ClaudeRun, Sandbox
from tests.claude.fake_anthropic import ToolUse, Turn, in_order, result_text
from tests.claude.scenario import (
    ANSWERED,
    StartFake,
    ask_tool,
    bash_tool,
    install_hooks,
    next_waiting,
    printed_settings,
    result_of,
)
from tests.conftest import StartService
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, TARGET, start_bridge
from tests.web_person import answer_on_web

Claude = Callable[..., ClaudeRun]
PICKS = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
TOKEN = "hook-test-token-0123456789"


async def test_the_command_hook_asks_on_the_web_and_a_denied_bash_never_runs(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    ask, bash = ask_tool(), bash_tool(sandbox.project)
    fake = await start_fake(in_order(Turn("Let me ask.", (ask,)), Turn(tools=(bash,))))
    settings = await printed_settings(sandbox, service.url, "--timeout", "120")
    run = claude(fake.url)
    await run.start("Set up the database.", settings)

    seen: set[str] = set()
    question = await next_waiting(service.broker, seen)
    assert question.request_id == f"claude_{ask.id}"
    assert question.policy.allow_other
    assert question.policy.allow_notes
    assert question.context is not None
    assert question.context.startswith(f"Claude Code in {sandbox.project} (session ")
    status, _ = await answer_on_web(http, service.url, question.request_id, PICKS, name="Ada")
    assert status == 200

    approval = await next_waiting(service.broker, seen)
    [asked] = approval.questions
    assert asked.question == "Allow Claude Code to run a command?"
    # The command as Claude Code sent it, its description and where it runs.
    assert approval.tool is not None
    assert approval.tool.parts[:2] == (
        Code(text=bash.input["command"]),
        Fields(
            fields=(
                Named(name="Description", value="Write made.txt"),
                Named(name="Working directory", value=str(sandbox.project)),
            )
        ),
    )
    assert [o.label for o in asked.options] == [
        "Allow once",
        "Always allow Bash",
        "Allow this directory",
        "Deny",
    ]
    picks = {"Permission": ["Deny"]}
    status, _ = await answer_on_web(http, service.url, approval.request_id, picks, name="Ada")
    assert status == 200
    await run.result()

    answered = result_of(fake, ask)
    assert result_text(answered) == ANSWERED
    assert not answered.get("is_error")
    denied = result_of(fake, bash)
    assert denied["is_error"]
    assert result_text(denied) == "Denied by Ada"
    assert not (sandbox.project / "made.txt").exists()
    # The hooks decided first: AskUserQuestion never reached the SDK host, and the host's
    # Bash prompt was withdrawn when the hook's Deny came.
    assert run.prompts("AskUserQuestion") == []
    [prompt] = run.prompts("Bash")
    assert run.withdrawn(prompt)


async def test_a_pre_tool_use_approval_lets_bash_run_once_without_the_hosts_prompt(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    bash = bash_tool(sandbox.project)
    fake = await start_fake(in_order(Turn(tools=(bash,))))
    flags = ("--pre-tool-use", "Bash", "--no-approvals")
    settings = await printed_settings(sandbox, service.url, "--http", *flags)
    run = claude(fake.url)
    await run.start("Write the file.", settings)

    approval = await next_waiting(service.broker, set())
    assert approval.request_id == f"claude_{bash.id}"
    assert [o.label for o in approval.questions[0].options] == ["Allow once", "Deny"]
    picks = {"Permission": ["Allow once"]}
    await answer_on_web(http, service.url, approval.request_id, picks, name="Ada")
    await run.result()

    assert not result_of(fake, bash).get("is_error")
    assert (sandbox.project / "made.txt").read_text() == "made\n"
    assert run.prompts("Bash") == []
    assert not (sandbox.project / ".claude").exists()


async def test_a_cancel_is_a_refusal_never_an_empty_answer(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    ask = ask_tool()
    fake = await start_fake(in_order(Turn(tools=(ask,))))
    settings = await printed_settings(sandbox, service.url, "--no-approvals")
    run = claude(fake.url)
    await run.start("Set up the database.", settings)

    question = await next_waiting(service.broker, set())
    await answer_on_web(http, service.url, question.request_id, {}, action="cancel", name="Ada")
    await run.result()

    refused = result_of(fake, ask)
    assert refused["is_error"]
    assert result_text(refused) == "PreToolUse:AskUserQuestion hook error: Interrupted by Ada"
    assert run.prompts("AskUserQuestion") == []


async def test_own_words_and_a_note_typed_on_the_web_reach_the_model_through_the_http_hook(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    ask = ask_tool()
    fake = await start_fake(in_order(Turn(tools=(ask,))))
    settings = await printed_settings(sandbox, service.url, "--http", "--no-approvals")
    run = claude(fake.url)
    await run.start("Set up the database.", settings)

    question = await next_waiting(service.broker, set())
    status, _ = await answer_on_web(
        http,
        service.url,
        question.request_id,
        {"Features": ["Caching", "Metrics"]},
        typed={"Database": "DuckDB, embedded"},
        note="columnar, please",
        name="Ada",
    )
    assert status == 200
    await run.result()

    assert result_text(result_of(fake, ask)).startswith(
        'The user answered: "Which database should we use?"="DuckDB, embedded" '
        "notes: columnar, please, "
        '"Which features do you want?"="Caching, Metrics". '
    )


async def test_nobody_answering_in_time_leaves_the_question_to_the_terminal(
    service: Service, clock: ManualClock, sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    ask = ask_tool()
    fake = await start_fake(in_order(Turn(tools=(ask,))))
    settings = await printed_settings(sandbox, service.url, "--http", "--timeout", "60")
    run = claude(fake.url)
    await run.start("Set up the database.", settings)

    question = await next_waiting(service.broker, set())
    assert question.expires_at is not None
    assert (question.expires_at - question.created_at).total_seconds() == 54
    await clock.advance(54)
    prompt = await run.prompt("AskUserQuestion")
    await run.answer(prompt, "deny", "answered in the terminal instead")
    await run.result()

    assert result_text(result_of(fake, ask)) == "answered in the terminal instead"
    assert "PreToolUse:AskUserQuestion says: askbridge: nobody answered in time; answer here" in (
        run.notices()
    )
    # The PermissionRequest hook that follows for AskUserQuestion asks nothing more.
    assert [r.request_id for r in await service.broker.list_requests()] == [question.request_id]


async def test_a_question_claude_code_stops_waiting_for_is_withdrawn(
    service: Service, sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    fake = await start_fake(in_order(Turn(tools=(ask_tool(),))))
    settings = await printed_settings(sandbox, service.url, "--no-approvals")
    run = claude(fake.url)
    await run.start("Set up the database.", settings)
    question = await next_waiting(service.broker, set())

    await run.terminate()
    # Claude Code stops its hook; the hook takes the question back before it ends.
    withdrawn = await service.broker.wait(question.request_id, 30)
    assert withdrawn.status is Status.WITHDRAWN


@pytest.mark.parametrize("form", ["command", "http"])
async def test_a_question_whose_claude_code_is_killed_is_withdrawn_at_once(
    form: str, service: Service, sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    fake = await start_fake(in_order(Turn(tools=(ask_tool(),))))
    flags = ["--no-approvals"] + (["--http"] if form == "http" else [])
    settings = await printed_settings(sandbox, service.url, *flags)
    run = claude(fake.url)
    await run.start("Set up the database.", settings)
    question = await next_waiting(service.broker, set())

    # Killed, Claude Code stops no hook: the command hook sees its parent go, the HTTP hook
    # its connection close, and the question is taken back long before its deadline.
    await run.kill()
    withdrawn = await service.broker.wait(question.request_id, 10)
    assert withdrawn.status is Status.WITHDRAWN


@pytest.mark.parametrize("form", ["command", "http"])
async def test_an_unreachable_server_leaves_the_question_to_the_terminal(
    form: str, sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    ask = ask_tool()
    fake = await start_fake(in_order(Turn(tools=(ask,))))
    flags = ["--no-approvals"] + (["--http"] if form == "http" else [])
    settings = await printed_settings(sandbox, "http://127.0.0.1:9", *flags)
    run = claude(fake.url)
    await run.start("Set up the database.", settings)

    prompt = await run.prompt("AskUserQuestion")
    await run.answer(prompt, "deny", "answered in the terminal instead")
    await run.result()

    assert result_text(result_of(fake, ask)) == "answered in the terminal instead"
    if form == "command":
        [notice] = [n for n in run.notices() if "askbridge" in n]
        assert notice.startswith("PreToolUse:AskUserQuestion says: askbridge: could not ask: ")
        assert "http://127.0.0.1:9 is unreachable" in notice


async def test_hooks_installed_in_the_projects_settings_run_beside_its_own(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    ask = ask_tool()
    fake = await start_fake(in_order(Turn(tools=(ask,))))
    recorded = sandbox.root / "recorded"
    recorded.mkdir()
    own = shlex.join(
        [sys.executable, str(Path(__file__).parent / "recording_hook.py"), str(recorded)]
    )
    file = sandbox.project / ".claude" / "settings.json"
    file.parent.mkdir()
    mine = {"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": own}]}
    file.write_text(json.dumps({"hooks": {"PreToolUse": [mine]}}))
    await install_hooks(sandbox, service.url, file, "--no-approvals")
    run = claude(fake.url)
    await run.start("Set up the database.")  # no --settings: the project's own file

    question = await next_waiting(service.broker, set())
    status, _ = await answer_on_web(http, service.url, question.request_id, PICKS, name="Ada")
    assert status == 200
    await run.result()

    assert result_text(result_of(fake, ask)) == ANSWERED
    [given] = recorded.glob("input-*.json")  # the project's own hook ran too
    assert json.loads(given.read_text())["tool_use_id"] == ask.id


async def test_a_hook_command_that_cannot_run_leaves_the_question_to_the_terminal(
    sandbox: Sandbox, start_fake: StartFake, claude: Claude
) -> None:
    ask = ask_tool()
    fake = await start_fake(in_order(Turn(tools=(ask,))))
    settings = await printed_settings(sandbox, "http://127.0.0.1:9", "--no-approvals")
    # A setting the hook cannot take, in the environment Claude Code runs its hooks in.
    run = claude(fake.url, ASKBRIDGE_HOOK_QUORUM="0")
    await run.start("Set up the database.", settings)

    # Not refused in the hook's name: the terminal asks, and says what to fix.
    prompt = await run.prompt("AskUserQuestion")
    await run.answer(prompt, "deny", "answered in the terminal instead")
    await run.result()

    assert result_text(result_of(fake, ask)) == "answered in the terminal instead"
    [notice] = [n for n in run.notices() if "askbridge" in n]
    assert notice == (
        "PreToolUse:AskUserQuestion says: askbridge: cannot run the hook: invalid settings: "
        "ASKBRIDGE_HOOK_QUORUM: Input should be greater than or equal to 1 (got '0'); "
        "answer here"
    )


async def test_the_http_hook_asks_in_slack_and_always_allow_adds_claude_codes_rule(
    start_service: StartService,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    ask = ask_tool()
    bash = ToolUse("Bash", {"command": "touch made.txt", "description": "Make made.txt"})
    again = ToolUse("Bash", bash.input)
    fake = await start_fake(in_order(Turn(tools=(ask,)), Turn(tools=(bash,)), Turn(tools=(again,))))
    async with SlackEmulator() as slack:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        bridge = await start_bridge(slack, "socket", start_service, http, api_token=TOKEN)
        token = {"ASKBRIDGE_API_TOKEN": TOKEN}
        flags = ("--http", "--target", TARGET)
        settings = await printed_settings(sandbox, bridge.url, *flags, env=token)
        run = claude(fake.url, **token)
        await run.start("Set up the database.", settings)
        alice = slack.person("U1")

        seen: set[str] = set()
        question = await next_waiting(bridge.service.broker, seen)
        message = slack.message(CHANNEL, question.messages[0].message_id)
        await alice.choose_radio(message, "PostgreSQL")
        await alice.tick_checkboxes(message, ["Caching", "Metrics"])
        (await alice.click_button(message, "Submit")).assert_acked()

        approval = await next_waiting(bridge.service.broker, seen)
        message = slack.message(CHANNEL, approval.messages[0].message_id)
        assert "```\ntouch made.txt\n```" in message.visible_text
        # Each of Claude Code's suggestions is an option of its own, worded as it words them.
        assert "Always allow Bash(touch made.txt) in this project's local settings" in (
            message.visible_text
        )
        (await alice.click_button(message, "Always allow Bash")).assert_acked()
        await run.result()
        # The rule chosen lets the same command run again without asking anyone.
        asked = await bridge.service.broker.list_requests()
        assert len(asked) == 2

    assert result_text(result_of(fake, ask)) == ANSWERED
    ran = result_of(fake, bash)
    assert not ran.get("is_error")
    assert (sandbox.project / "made.txt").exists()
    assert not result_of(fake, again).get("is_error")
    local = json.loads((sandbox.project / ".claude" / "settings.local.json").read_text())
    assert local["permissions"]["allow"] == ["Bash(touch made.txt)"]
    [prompt] = run.prompts("Bash")
    assert run.withdrawn(prompt)


def test_ci_installs_the_cli_version_these_tests_pin() -> None:
    script = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert f"\nCLAUDE_CODE_VERSION={CLAUDE_VERSION}\n" in script
    assert 'export ASKBRIDGE_TEST_CLAUDE="$CLAUDE_CODE_PREFIX/node_modules/.bin/claude"' in script
