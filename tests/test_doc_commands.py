"""Every shell command of the README and the documentation is run by a test, as written, or is
on a short list of those that cannot run here, each with the reason."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import zipfile
from pathlib import Path
from site import getsitepackages

import aiohttp
import pytest

from askbridge.bots.settings import SlackSettings
from askbridge.core.version import VERSION
from tests.builds import checkout
from tests.claude.cli import find_claude
from tests.conftest import DEPLOY, waiting_ids
from tests.docs.commands import (
    ROOT,
    commands,
    commands_run_by_tests,
    doc_command,
    documents,
    env_files,
    split,
)
from tests.docs.settings_reference import settings_models, variable
from tests.server_process import ServerProcess
from tests.web_person import answer_on_web

CANNOT_RUN = {
    ("README.md", "claude --permission-mode default"): "an interactive Claude Code session, "
    "signed in to an Anthropic account (tests/claude drives the same CLI headless)",
    ("docs/how-to/claude-code.md", "claude --permission-mode default"): "the same",
    ("docs/how-to/container.md", "docker build -t askbridge ."): "no Docker daemon here "
    "(tests/test_container.py builds the image's wheel and environment as the Dockerfile does)",
    (
        "docs/how-to/container.md",
        "docker run -p 127.0.0.1:8765:8765 -e ASKBRIDGE_API_TOKEN=... -e SLACK_BOT_TOKEN=... "
        "-e SLACK_APP_TOKEN=... -v askbridge:/data askbridge",
    ): "the same",
}
"""Commands no test runs, and why. Keep it short: a command added to the docs needs a test."""

DEFAULT_URL = "http://127.0.0.1:8765"
BIN = Path(sys.executable).parent
APP_ID = "2f1c3e4a-5b6d-4e7f-8a9b-0c1d2e3f4a5b"


def shell_env(**extra: str) -> dict[str, str]:
    """The environment of a person who has installed askbridge: its command on the PATH, and
    none of the machine's askbridge or platform settings."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("ASKBRIDGE_", "SLACK_", "DISCORD_", "TEAMS_"))
    }
    kept["PATH"] = f"{BIN}{os.pathsep}{kept.get('PATH', '/usr/bin:/bin')}"
    return {**kept, **extra}


async def shell(command: str, cwd: Path, **env: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        command,
        cwd=cwd,
        env=shell_env(**env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def ran(command: str, cwd: Path, **env: str) -> str:
    """What `command` printed, once it exited 0."""
    process = await shell(command, cwd, **env)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, f"{command}\n{err.decode()}"
    return out.decode()


def given(synopsis: str) -> str:
    """A synopsis with its optional parts given: `[--multi]` is `--multi`."""
    return re.sub(r"\[([^\]]*)\]", r"\1", synopsis)


def left_out(synopsis: str) -> str:
    """A synopsis with its optional parts left out."""
    return re.sub(r"\s*\[[^\]]*\]", "", synopsis)


def test_every_command_of_the_readme_and_the_docs_is_run_by_a_test() -> None:
    every = {command.key for command in commands()}
    run = commands_run_by_tests()
    assert ("README.md", "make run") in every
    assert set(run) <= every
    not_run = every - set(run)
    assert not_run - set(CANNOT_RUN) == set(), "run these in a test, with doc_command"
    assert set(CANNOT_RUN) - not_run == set(), "a test runs these, or the docs dropped them"


def test_shell_commands_are_in_sh_blocks_where_the_tests_find_them() -> None:
    shells = re.compile(r"^\s*```(bash|shell|console|zsh|shell-session)\s*$", re.MULTILINE)
    for document in documents():
        found = shells.search(document.read_text())
        assert found is None, f"{document}: write ```sh, not {found[0].strip() if found else ''}"


def test_a_block_is_cut_into_commands_as_the_shell_reads_it() -> None:
    block = (
        "make run     # terminal 1\n"
        "# a comment\n"
        "askbridge ask --header Deploy \\\n"
        "    --option 'Approve=Ship it'\n"
        "cat >> .env <<'EOF'\n"
        "A=1\n"
        "EOF\n"
        "curl -d '{\n"
        '  "a": 1}\'\n'
    )
    assert split(block) == [
        "make run     # terminal 1",
        "askbridge ask --header Deploy \\\n    --option 'Approve=Ship it'",
        "cat >> .env <<'EOF'\nA=1\nEOF",
        "curl -d '{\n  \"a\": 1}'",
    ]
    script = 'if answers=$(askbridge ask); then\n  echo "$answers"\nfi\n'
    assert split(script) == [script.strip("\n")]


def test_every_line_of_env_file_blocks_is_a_setting() -> None:
    settings = {
        variable(model, name, field)
        for model in settings_models()
        for name, field in model.model_fields.items()
    }
    blocks = env_files()
    assert {document for document, _ in blocks} >= {"docs/tutorials/slack.md"}
    for document, block in blocks:
        for line in block.splitlines():
            name = line.lstrip("# ").split("=", 1)[0]
            if "=" in line and name.isupper():
                assert name in settings, f"{document}: {name} is not a setting"


async def test_the_command_line_reference_asks_and_the_answer_comes_back(
    server: ServerProcess, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    url = await server.start()
    flags = given(doc_command("docs/reference/cli.md", "askbridge ask --target web"))
    (tmp_path / "request.json").write_text(json.dumps({"questions": [DEPLOY], "target": "web"}))
    from_file = doc_command("docs/reference/cli.md", "askbridge ask --file request.json")
    for command in (flags, from_file):
        ask = await shell(command, tmp_path, ASKBRIDGE_URL=url)
        (request_id,) = await waiting_ids(http, url)
        await answer_on_web(http, url, request_id, {"Deploy": ["Approve"]})
        out, err = await asyncio.wait_for(ask.communicate(), 30)
        assert ask.returncode == 0, err.decode()
        assert json.loads(out) == {"Deploy": "Approve"}


SERVING = [
    pytest.param(doc_command("docs/reference/cli.md", "askbridge serve"), False, id="serve"),
    pytest.param(doc_command("README.md", "make run"), True, id="README"),
    pytest.param(doc_command("docs/tutorials/web.md", "make run"), True, id="web"),
    pytest.param(doc_command("docs/how-to/claude-code.md", "make run"), True, id="claude-code"),
]


@pytest.mark.parametrize(("command", "in_checkout"), SERVING)
async def test_the_command_that_starts_askbridge_serves(
    tmp_path: Path, http: aiohttp.ClientSession, command: str, in_checkout: bool
) -> None:
    server = ServerProcess(
        tmp_path / "askbridge.db",
        env=shell_env(),
        argv=("bash", "-c", command),
        cwd=ROOT if in_checkout else tmp_path,
    )
    url = await server.start()
    try:
        async with http.get(f"{url}/healthz") as response:
            assert response.status == 200
    finally:
        await server.stop()
    assert any("stopping" in line for line in server.log), "".join(server.log)


async def test_the_setup_commands_print_what_the_setup_steps_need(tmp_path: Path) -> None:
    manifest = await ran(doc_command("docs/reference/cli.md", "askbridge slack manifest"), tmp_path)
    assert manifest == (ROOT / "adapters" / "slack" / "manifest.yaml").read_text()
    for command in (
        doc_command("docs/reference/cli.md", "askbridge discord invite-url"),
        doc_command("docs/tutorials/discord.md", "askbridge discord invite-url"),
    ):
        invite = await ran(command, tmp_path, DISCORD_APPLICATION_ID="1234567890123456789")
        assert invite.startswith(
            "https://discord.com/oauth2/authorize?client_id=1234567890123456789&"
        )
    teams = {"TEAMS_APP_ID": APP_ID, "TEAMS_DEVELOPER_URL": "https://example.org"}
    await ran(
        doc_command("docs/reference/cli.md", "askbridge teams manifest --zip"), tmp_path, **teams
    )
    tutorial = doc_command("docs/tutorials/teams.md", "TEAMS_APP_ID=<app id>")
    package = tmp_path / "askbridge-teams.zip"
    package.unlink()
    await ran(tutorial.replace("<app id>", APP_ID), tmp_path)
    with zipfile.ZipFile(package) as archive:
        assert json.loads(archive.read("manifest.json"))["id"] == APP_ID
    shown = await ran(
        doc_command("docs/reference/cli.md", "python -m askbridge").replace("...", "--version"),
        tmp_path,
    )
    assert shown == f"askbridge {VERSION}\n"


async def test_the_hook_commands_print_install_and_uninstall_hooks_for_claude_code(
    tmp_path: Path,
) -> None:
    http_hooks = json.loads(
        await ran(
            given(
                doc_command(
                    "docs/reference/cli.md", "askbridge hook claude-code --print-settings [--http]"
                )
            ),
            tmp_path,
        )
    )
    assert http_hooks["hooks"]["PermissionRequest"][0]["hooks"][0]["type"] == "http"
    printed = await ran(
        doc_command(
            "docs/how-to/claude-code.md",
            "askbridge hook claude-code --print-settings --target slack:C0123",
        ),
        tmp_path,
    )
    assert "--target slack:C0123" in printed
    installed = doc_command(
        "docs/how-to/claude-code.md",
        "askbridge hook claude-code --install ~/app/.claude/settings.json",
    )
    assert await ran(installed, tmp_path, HOME=str(tmp_path)) == ""
    hooks = json.loads((tmp_path / "app" / ".claude" / "settings.json").read_text())["hooks"]
    assert set(hooks) == {"PreToolUse", "PermissionRequest", "Elicitation"}
    assert "--target slack:C0123456789" in hooks["PreToolUse"][0]["hooks"][0]["command"]
    # In the project: installed, then taken out, the project's own settings kept.
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text('{"model": "opus"}')
    for command in (
        doc_command(
            "docs/how-to/claude-code.md",
            "askbridge hook claude-code --install .claude/settings.json --target slack:C0123",
        ),
        doc_command(
            "docs/reference/cli.md", "askbridge hook claude-code --install .claude/settings.json"
        ),
    ):
        await ran(command, project)
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        assert settings["model"] == "opus"
        assert set(settings["hooks"]) == {"PreToolUse", "PermissionRequest", "Elicitation"}
        await ran(
            doc_command("docs/how-to/claude-code.md", "askbridge hook claude-code --uninstall"),
            project,
        )
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        assert settings == {"model": "opus"}


async def test_activating_the_checkout_environment_puts_askbridge_on_the_path(
    tmp_path: Path,
) -> None:
    activate = doc_command("docs/how-to/claude-code.md", ". .venv/bin/activate")
    if not (ROOT / ".venv" / "bin" / "activate").exists():
        pytest.skip("no .venv in the checkout: make dev makes it")
    found = await ran(f"{activate}\ncommand -v askbridge", ROOT, PATH="/usr/bin:/bin")
    assert found.strip() == str(ROOT / ".venv" / "bin" / "askbridge")


async def test_the_env_lines_the_readme_appends_are_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("ASKBRIDGE_PORT=9000\n")
    await ran(doc_command("README.md", "cat >> .env <<'EOF'"), tmp_path)
    slack = SlackSettings(_env_file=tmp_path / ".env")
    assert slack.bot_token is not None
    assert slack.bot_token.get_secret_value() == "xoxb-..."
    assert slack.app_token is not None
    assert (tmp_path / ".env").read_text().startswith("ASKBRIDGE_PORT=9000\nSLACK_BOT_TOKEN=")


async def test_the_audit_export_and_its_verification(
    server: ServerProcess, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    url = await server.start()
    body = {"request_id": "ask_audited", "questions": [DEPLOY], "target": "web"}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        assert response.status == 201
    await answer_on_web(http, url, "ask_audited", {"Deploy": ["Approve"]})
    export = doc_command("docs/how-to/audit.md", "askbridge audit --export audit.jsonl")
    verify = doc_command("docs/how-to/audit.md", "askbridge audit --verify audit.jsonl")
    await ran(left_out(export), tmp_path, ASKBRIDGE_URL=url)
    checked = await ran(verify, tmp_path)
    assert checked.startswith("audit.jsonl: OK, 4 events of 1 request, every"), checked
    # With every option the synopsis shows: a window of its own, which still verifies.
    await ran(given(export).replace(" ID", " ask_audited"), tmp_path, ASKBRIDGE_URL=url)
    checked = await ran(verify, tmp_path)
    assert checked.startswith("audit.jsonl: OK, "), checked


async def test_the_mcp_server_is_added_to_claude_code_and_connects(tmp_path: Path) -> None:
    claude = find_claude()
    add = doc_command("docs/how-to/mcp.md", "claude mcp add askbridge")
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    env = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "PATH": f"{claude.parent}{os.pathsep}/usr/bin:/bin",
    }
    await ran(add.replace("/path/to/askbridge", str(ROOT)), project, **env)
    shown = await ran("claude mcp get askbridge", project, **env)
    assert "Status: ✔ Connected" in shown, shown
    assert f"Command: {ROOT}/.venv/bin/askbridge" in shown
    assert f"Args: mcp --url {DEFAULT_URL}" in shown


INSTALLS = [
    pytest.param(doc_command("README.md", "python3 -m pip install ."), id="source"),
    pytest.param(doc_command("README.md", "python3 -m pip install '.[mcp,claude]'"), id="extras"),
    pytest.param(doc_command("README.md", "python3 -m pip wheel --no-deps"), id="wheel"),
]


@pytest.mark.parametrize("command", INSTALLS)
async def test_the_install_commands_install_askbridge(tmp_path: Path, command: str) -> None:
    # A fresh environment whose python3 sees the dependencies the tests run with (as a .pth),
    # and pip told to use nothing else: the command runs as written, without a network.
    environment = tmp_path / "env"
    made = await asyncio.create_subprocess_exec(
        getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", environment
    )
    assert await made.wait() == 0
    (site,) = environment.glob("lib/python3.*/site-packages")
    (site / "dependencies.pth").write_text("".join(f"{path}\n" for path in getsitepackages()))
    source = checkout(tmp_path / "askbridge")
    offline = {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_NO_INPUT": "1"}
    await ran(command, source, PATH=f"{environment / 'bin'}{os.pathsep}/usr/bin:/bin", **offline)
    shown = await ran(f"{environment / 'bin' / 'askbridge'} --version", tmp_path)
    assert shown == f"askbridge {VERSION}\n"
    where = await ran(
        f"{environment / 'bin' / 'python'} -c 'import askbridge; print(askbridge.__file__)'",
        tmp_path,
    )
    assert Path(where.strip()).is_relative_to(site)
