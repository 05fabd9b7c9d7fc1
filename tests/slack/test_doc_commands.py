"""The documentation's commands that ask in Slack, run as written against the Slack emulator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest

from tests.conftest import StartService
from tests.docs.commands import doc_command
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import start_bridge
from tests.test_doc_commands import shell

DEPLOY_SCRIPT = '#!/bin/sh\necho "deployed $*" > deployed\n'
GATES = [
    pytest.param(
        doc_command("README.md", "answers=$(askbridge ask --target slack:C0DEPLOYS"),
        ["U1", "U2"],
        "production",
        id="README",
    ),
    pytest.param(
        doc_command("docs/how-to/approvals.md", "answers=$(askbridge ask --target slack:C0DEPLOYS"),
        ["U1", "U2"],
        "production",
        id="approvals",
    ),
    pytest.param(
        doc_command("docs/reference/cli.md", "if answers=$(askbridge ask --target slack:C0DEPLOYS"),
        ["U3"],
        "",
        id="cli",
    ),
]


async def test_the_slack_tutorials_first_question(
    slack: SlackEmulator, start_service: StartService, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    slack.add_channel("C0123456789", "askbridge-test")
    bridge = await start_bridge(slack, "socket", start_service, http)
    command = doc_command("docs/tutorials/slack.md", "askbridge ask --target slack:C0123456789")
    ask = await shell(command, tmp_path, ASKBRIDGE_URL=bridge.url)
    message = await slack.wait_for_message("C0123456789", timeout=30)
    (await slack.person("U1").click_button(message, "PostgreSQL")).assert_acked()
    out, err = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == {"Database": "PostgreSQL"}


@pytest.mark.parametrize("pick", ["Approve", "Reject"])
@pytest.mark.parametrize(("script", "voters", "arguments"), GATES)
async def test_a_deploy_gate_deploys_only_what_its_approvers_approve(
    slack: SlackEmulator,
    start_service: StartService,
    http: aiohttp.ClientSession,
    tmp_path: Path,
    script: str,
    voters: list[str],
    arguments: str,
    pick: str,
) -> None:
    slack.add_user("U3", "carol")
    slack.add_channel("C0DEPLOYS", "deploys")
    slack.add_usergroup("S0SRE", ["U1", "U2"], handle="sre")
    bridge = await start_bridge(slack, "socket", start_service, http)
    deploy = tmp_path / "deploy.sh"
    deploy.write_text(DEPLOY_SCRIPT)
    deploy.chmod(0o755)
    gate = await shell(script, tmp_path, ASKBRIDGE_URL=bridge.url)
    message = await slack.wait_for_message("C0DEPLOYS", timeout=30)
    for voter in voters:
        (await slack.person(voter).click_button(message, pick)).assert_acked()
    _, err = await asyncio.wait_for(gate.communicate(), 30)
    deployed = tmp_path / "deployed"
    if pick == "Approve":
        assert gate.returncode == 0, err.decode()
        assert deployed.read_text() == f"deployed {arguments}\n"
    else:
        assert not deployed.exists()
