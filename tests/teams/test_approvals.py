"""A tool approval in Teams: an agent's permission prompt on the agent WebSocket shows on a
card with its command verbatim, and one click answers the agent."""

from __future__ import annotations

import aiohttp

from askbridge.bots.service import Service
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import markdown_texts, plain_texts
from tests.teams.conftest import ALICE, actions

PROMPT = {
    "PermissionRequest": {
        "tool_name": "Bash",
        "action": "run a shell command",
        "input": {"command": "rm -rf build/ && make **release**"},
        "details": "in /srv/app",
    }
}


async def test_a_permission_prompt_is_answered_in_teams(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    url = f"{bridge.url}/v1/agent?target=teams:{conversation}".replace("http", "ws", 1)
    async with http.ws_connect(url) as socket:
        await socket.send_json({"TextDelta": "I need to run a command."})
        await socket.send_json(PROMPT)
        message = await teams.wait_for_message(conversation)
        shown = list(plain_texts(message.card))
        assert "rm -rf build/ && make **release**" in shown, "the command as written"
        assert not any("release" in text for text in markdown_texts(message.card))
        code, _ = await teams.press(bridge.url, message, ALICE, actions(message.card)["Deny"])
        assert code == 200
        response = await socket.receive_json(timeout=10)
    assert response == {
        "PermissionResponse": {"tool_name": "Bash", "allowed": False, "remember": False}
    }
