"""`askbridge ask` gates a shell script on a human: exit status says how it ended."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from askbridge.bots.cli import _parser, main
from askbridge.bots.client import AskbridgeClient, Unreachable
from askbridge.core.version import VERSION
from tests.conftest import DATABASE, EXPECTED, waiting_ids
from tests.docs.cli_reference import commands
from tests.server_process import ServerProcess
from tests.web_person import answer_on_web

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
async def started(server: ServerProcess) -> ServerProcess:
    await server.start()
    return server


async def run_ask(url: str, *args: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "ask",
        "--url",
        url,
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


DEPLOY_FLAGS = (
    "--question",
    "Deploy v2 to prod?",
    "--header",
    "Deploy",
    "--option",
    "Approve=Ship it",
    "--option",
    "Reject=Hold the release",
)


async def test_answered_exits_0_and_prints_the_answers(
    started: ServerProcess, http: aiohttp.ClientSession
) -> None:
    ask = await run_ask(started.url, *DEPLOY_FLAGS, "--context", "ci: release pipeline")
    (request_id,) = await waiting_ids(http, started.url)
    await answer_on_web(http, started.url, request_id, {"Deploy": ["Approve"]})
    out, err = await ask.communicate()
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == {"Deploy": "Approve"}


async def test_a_request_file_with_several_questions(
    started: ServerProcess, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(DATABASE))
    ask = await run_ask(started.url, "--file", str(request))
    await waiting_ids(http, started.url)
    picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
    await answer_on_web(http, started.url, "ask_db", picks)
    out, _ = await ask.communicate()
    assert ask.returncode == 0
    assert json.loads(out) == EXPECTED


async def test_cancelled_exits_3(started: ServerProcess, http: aiohttp.ClientSession) -> None:
    ask = await run_ask(started.url, *DEPLOY_FLAGS)
    (request_id,) = await waiting_ids(http, started.url)
    await answer_on_web(http, started.url, request_id, {}, action="cancel")
    out, err = await ask.communicate()
    assert ask.returncode == 3
    assert json.loads(out)["error"] == "Interrupted"
    assert "cancelled" in err.decode()


async def test_expired_exits_4(started: ServerProcess) -> None:
    # The server's real clock runs the deadline; the test only waits for the process to end.
    ask = await run_ask(started.url, *DEPLOY_FLAGS, "--timeout", "0.2")
    out, _ = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode == 4
    assert json.loads(out)["status"] == "expired"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_withdraws_the_question_and_exits_5(
    started: ServerProcess, http: aiohttp.ClientSession, signum: int
) -> None:
    # A CI runner cancels a job with SIGTERM; a person at a terminal presses Ctrl-C.
    ask = await run_ask(started.url, *DEPLOY_FLAGS, "--request-id", "ask_stopped")
    await stderr_line(ask, "asked ask_stopped")
    ask.send_signal(signum)
    _, err = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode == 5, err.decode()
    assert "the question was withdrawn" in err.decode()
    async with http.get(f"{started.url}/v1/questions/ask_stopped") as response:
        assert (await response.json())["status"] == "withdrawn"


async def test_invalid_question_exits_2_with_the_reason(started: ServerProcess) -> None:
    ask = await run_ask(
        started.url, "--question", "Go?", "--header", "A very long header", "--option", "Yes="
    )
    _, err = await ask.communicate()
    assert ask.returncode == 2
    assert "questions[0].header: must be at most 12 characters" in err.decode()
    assert "questions[0].options: must hold 2-4 options, got 1" in err.decode()


async def test_usage_errors_exit_2(tmp_path: Path) -> None:
    ask = await run_ask("http://127.0.0.1:9", "--question", "Go?")
    _, err = await ask.communicate()
    assert ask.returncode == 2
    assert "give --question, --header and 2-4 --option, or --file" in err.decode()


async def test_quorum_gate_and_the_audit_trail(
    started: ServerProcess, http: aiohttp.ClientSession
) -> None:
    ask = await run_ask(
        started.url,
        *DEPLOY_FLAGS,
        "--request-id",
        "ask_gate",
        "--answerer",
        "web:Grace",
        "--answerer",
        "web:Lin",
        "--quorum",
        "2",
    )
    await waiting_ids(http, started.url)
    for name in ("Grace", "Lin"):
        await answer_on_web(http, started.url, "ask_gate", {"Deploy": ["Approve"]}, name=name)
    out, err = await ask.communicate()
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == {"Deploy": "Approve"}

    audit = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "audit",
        "--url",
        started.url,
        "--request",
        "ask_gate",
        stdout=asyncio.subprocess.PIPE,
    )
    lines, _ = await audit.communicate()
    assert audit.returncode == 0
    events = [json.loads(line) for line in lines.decode().splitlines()]
    assert [(e["kind"], (e["actor"] or {}).get("name")) for e in events] == [
        ("created", None),
        ("posted", None),
        ("vote", "Grace"),
        ("vote", "Lin"),
        ("answered", "Lin"),
    ]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
async def test_serve_stops_cleanly_on_a_signal(server: ServerProcess, signum: int) -> None:
    await server.start()
    assert await server.stop(signum) == 0
    assert any("stopping" in line for line in server.log)
    assert not any("Traceback" in line for line in server.log)


@pytest.mark.parametrize(
    ("host", "bound", "which", "here"),
    [
        ("0.0.0.0", "0.0.0.0", "every interface", "127.0.0.1"),
        # asyncio binds IPv6's unspecified address for IPv6 alone.
        ("::", "[::]", "every IPv6 interface", "[::1]"),
        ("[::]", "[::]", "every IPv6 interface", "[::1]"),
    ],
)
async def test_serve_on_every_interface_says_so_and_where_to_reach_it_here(
    server: ServerProcess,
    http: aiohttp.ClientSession,
    host: str,
    bound: str,
    which: str,
    here: str,
) -> None:
    server.env.update({"ASKBRIDGE_HOST": host, "ASKBRIDGE_API_TOKEN": "the-token"})
    url = await server.start()
    [line] = [line for line in server.log if "is listening on" in line]
    port = url.rsplit(":", 1)[1]
    assert url == f"http://{here}:{port}"
    assert f"is listening on {bound}:{port} ({which}; on this machine {url}) (" in line
    async with http.get(f"{url}/healthz") as response:
        assert response.status == 200


@pytest.mark.parametrize("host", ["::", "[::]", "0:0:0:0:0:0:0:0"])
async def test_serve_on_every_ipv6_interface_needs_a_token(
    server: ServerProcess, host: str
) -> None:
    server.env["ASKBRIDGE_HOST"] = host
    with pytest.raises(AssertionError, match="ASKBRIDGE_API_TOKEN is not set"):
        await server.start()
    assert server.process is not None
    assert await server.process.wait() != 0


async def test_serve_on_ipv6_loopback_written_as_a_url_writes_it(
    server: ServerProcess, http: aiohttp.ClientSession
) -> None:
    """`[::1]` is loopback, as `::1` is: no token, and the server listens there."""
    server.env["ASKBRIDGE_HOST"] = "[::1]"
    url = await server.start()
    assert url.startswith("http://[::1]:")
    for path in ("/healthz", "/v1/questions"):
        async with http.get(f"{url}{path}") as response:
            assert response.status == 200, path


@pytest.mark.parametrize(("choice", "runs_on"), [("auto", "uvloop"), ("asyncio", "asyncio")])
async def test_serve_runs_on_the_event_loop_it_is_told_and_says_which(
    server: ServerProcess, http: aiohttp.ClientSession, choice: str, runs_on: str
) -> None:
    server.env["ASKBRIDGE_EVENT_LOOP"] = choice
    await server.start()
    assert any(f"event loop: {runs_on})" in line for line in server.log), server.log
    ask = await run_ask(server.url, *DEPLOY_FLAGS)
    (request_id,) = await waiting_ids(http, server.url)
    await answer_on_web(http, server.url, request_id, {"Deploy": ["Approve"]})
    out, err = await asyncio.wait_for(ask.communicate(), 60)
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == {"Deploy": "Approve"}


async def test_an_unknown_event_loop_is_refused_naming_the_setting(server: ServerProcess) -> None:
    server.env["ASKBRIDGE_EVENT_LOOP"] = "trio"
    with pytest.raises(AssertionError, match="ASKBRIDGE_EVENT_LOOP"):
        await server.start()
    assert server.process is not None
    assert await server.process.wait() != 0


async def test_no_server_exits_1_naming_the_setting() -> None:
    ask = await run_ask("http://127.0.0.1:9", *DEPLOY_FLAGS)
    _, err = await asyncio.wait_for(ask.communicate(), 60)
    assert ask.returncode == 1
    assert "is `askbridge serve` running there? Set ASKBRIDGE_URL" in err.decode()


async def test_the_client_library_names_the_url_it_was_given_and_no_setting() -> None:
    async with AskbridgeClient("http://127.0.0.1:9", reconnect_for_s=0) as client:
        with pytest.raises(Unreachable) as unreachable:
            await client.events(None, None)
    said = str(unreachable.value)
    assert said.startswith("askbridge at http://127.0.0.1:9 is unreachable (")
    assert said.endswith("; is `askbridge serve` running there?")
    assert "ASKBRIDGE_URL" not in said
    assert "--url" not in said


async def run_audit(url: str, *args: str) -> tuple[int, list[dict[str, object]], str]:
    audit = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "audit",
        "--url",
        url,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await audit.communicate()
    assert audit.returncode is not None
    return audit.returncode, [json.loads(line) for line in out.decode().splitlines()], err.decode()


async def test_audit_takes_the_request_id_as_an_argument(
    started: ServerProcess, http: aiohttp.ClientSession
) -> None:
    for request_id in ("ask_one", "ask_two"):
        body = {**DATABASE, "request_id": request_id}
        async with http.post(f"{started.url}/v1/questions", json=body) as response:
            assert response.status == 201
    code, events, _ = await run_audit(started.url, "ask_one")
    assert code == 0
    assert [(e["request_id"], e["kind"]) for e in events] == [
        ("ask_one", "created"),
        ("ask_one", "posted"),
    ]
    assert await run_audit(started.url, "--request", "ask_one") == (0, events, "")

    code, _, err = await run_audit(started.url, "ask_one", "--request", "ask_two")
    assert code == 2
    assert "name two requests" in err
    code, _, err = await run_audit(started.url, "ask_nope")
    assert code == 2
    assert "ask_nope" in err


def test_version() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "askbridge.bots.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == f"askbridge {VERSION}"
    assert VERSION != "0+unknown", "askbridge is installed (make dev)"


async def stderr_line(process: asyncio.subprocess.Process, fragment: str) -> str:
    """The next line the process writes to stderr that holds `fragment`."""
    assert process.stderr is not None
    async with asyncio.timeout(30):
        while line := (await process.stderr.readline()).decode():
            if fragment in line:
                return line
    raise AssertionError(f"stderr ended without {fragment!r}")


async def test_ask_says_where_to_answer_and_quiet_says_nothing(
    started: ServerProcess, http: aiohttp.ClientSession
) -> None:
    ask = await run_ask(started.url, *DEPLOY_FLAGS, "--request-id", "ask_told")
    line = await stderr_line(ask, "asked ask_told")
    assert f"answer at {started.url}/q/ask_told" in line
    await answer_on_web(http, started.url, "ask_told", {"Deploy": ["Approve"]})
    await ask.communicate()
    assert ask.returncode == 0

    quiet = await run_ask(started.url, *DEPLOY_FLAGS, "--request-id", "ask_quiet", "--quiet")
    await waiting_ids(http, started.url)
    await answer_on_web(http, started.url, "ask_quiet", {"Deploy": ["Reject"]})
    out, err = await quiet.communicate()
    assert quiet.returncode == 0
    assert json.loads(out) == {"Deploy": "Reject"}
    assert err == b""


async def test_ask_says_when_the_server_is_gone_and_when_it_is_back(
    started: ServerProcess, http: aiohttp.ClientSession
) -> None:
    ask = await run_ask(started.url, *DEPLOY_FLAGS, "--request-id", "ask_outage")
    await stderr_line(ask, "asked ask_outage")
    await started.kill()
    await stderr_line(ask, "is unreachable")
    url = await started.start(port=started.port)
    await stderr_line(ask, "is reachable again")
    await answer_on_web(http, url, "ask_outage", {"Deploy": ["Approve"]})
    out, _ = await ask.communicate()
    assert ask.returncode == 0
    assert json.loads(out) == {"Deploy": "Approve"}


async def test_a_refused_token_has_its_own_exit_status(server: ServerProcess) -> None:
    server.env["ASKBRIDGE_API_TOKEN"] = "the-right-token"
    url = await server.start()
    ask = await run_ask(url, *DEPLOY_FLAGS)
    _, err = await ask.communicate()
    assert ask.returncode == 6
    assert "ASKBRIDGE_API_TOKEN" in err.decode()


@pytest.mark.parametrize("argv", [["slack", "manifest"], ["slack-manifest"]])
def test_a_surface_with_an_app_manifest_has_a_command_that_prints_it(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed == (ROOT / "adapters" / "slack" / "manifest.yaml").read_text()


EVERY_COMMAND = [parser.prog for parser in commands(_parser())]
REQUIRED = {
    "askbridge prune": ["--older-than", "90d"],
    # Run by Claude Code, the hook's usage error is no decision instead, saying why
    # (tests/claude/test_hook_endpoints.py); at a terminal, printing its settings, it is this.
    "askbridge hook claude-code": ["--print-settings"],
}


@pytest.mark.parametrize("prog", EVERY_COMMAND)
def test_a_usage_error_names_the_command_it_was_given_to(
    capsys: pytest.CaptureFixture[str], prog: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*prog.split()[1:], *REQUIRED.get(prog, []), "--bogus"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {prog} ")
    assert err.endswith(f"\n{prog}: error: unrecognized arguments: --bogus\n")


def test_every_command_is_checked_for_its_usage_errors() -> None:
    assert {
        "askbridge",
        "askbridge ask",
        "askbridge hook claude-code",
        "askbridge slack manifest",
        "askbridge slack-manifest",
        "askbridge discord invite-url",
        "askbridge teams manifest",
    } <= set(EVERY_COMMAND)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["ask", "--question", "Go?"], "askbridge ask: error: give --question, --header"),
        (["ask", "--timeout", "soon"], "askbridge ask: error: argument --timeout: invalid float"),
        (["hook"], "askbridge hook: error: say which host: askbridge hook claude-code"),
        (["prune"], "askbridge prune: error: the following arguments are required: --older-than"),
        (["slack"], "askbridge slack: error: say which: manifest"),
        (["discord"], "askbridge discord: error: say which: invite-url"),
        (
            ["hook", "claude-code", "--print-settings", "--quorum", "0"],
            "askbridge hook claude-code: error: ",
        ),
    ],
)
def test_a_subcommand_says_what_it_misses_with_its_own_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], said: str
) -> None:
    monkeypatch.delenv("ASKBRIDGE_URL", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    prog = said.split(": error:")[0]
    assert err.startswith(f"usage: {prog} ")
    assert f"\n{said}" in err


def test_a_reader_that_goes_away_gets_no_traceback() -> None:
    # `askbridge audit ID | head`: the reader closes the pipe before askbridge has written.
    read, write = os.pipe()
    os.close(read)
    done = subprocess.run(
        [sys.executable, "-m", "askbridge", "slack-manifest"],
        stdout=write,
        stderr=subprocess.PIPE,
        timeout=60,
        check=False,
    )
    os.close(write)
    assert done.stderr.decode() == ""
    assert done.returncode == 141


def test_the_help_of_ask_gives_every_exit_status_and_both_kinds_of_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["ask", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for code in (0, 1, 2, 3, 4, 5, 6):
        assert f" {code} " in shown
    assert "7 a typed form was declined" in shown
    assert "{'form': {...}, ...}" in shown


def test_the_help_names_both_tools_the_mcp_server_serves(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "serve the ask_user_question and ask_form tools to an MCP client" in shown
