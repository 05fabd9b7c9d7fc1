"""The Teams tutorial's question, run as written against the Teams emulator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from askbridge.bots.service import Service
from tests.docs.commands import doc_command
from tests.emulators.teams import TeamsEmulator
from tests.teams.conftest import ALICE, actions
from tests.test_doc_commands import shell

SHOWN = "19:abc…@thread.tacv2"
"""The tutorial's channel id, shortened as a reader's own would be."""


async def test_the_teams_tutorials_first_question(
    teams: TeamsEmulator, bridge: Service, tmp_path: Path
) -> None:
    conversation = teams.add_conversation()
    command = doc_command("docs/tutorials/teams.md", "askbridge ask --target")
    assert SHOWN in command
    ask = await shell(command.replace(SHOWN, conversation), tmp_path, ASKBRIDGE_URL=bridge.url)
    message = await teams.wait_for_message(conversation)
    code, _ = await teams.press(bridge.url, message, ALICE, actions(message.card)["Approve"])
    assert code == 200
    out, err = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode == 0, err.decode()
    assert json.loads(out) == {"Deploy": "Approve"}
