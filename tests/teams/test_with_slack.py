"""One request in Teams and Slack at once: votes from both count toward one quorum, and the
Teams card shows the tally as it grows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.conftest import DEPLOY, StartService
from tests.emulators.slack import SlackEmulator
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import plain_texts
from tests.slack.conftest import CHANNEL, slack_settings
from tests.teams.conftest import ALICE, BOB, actions
from tests.teams.test_answering import ask, ended, status


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U1", "carol")
        emulator.add_channel(CHANNEL, "deploys")
        yield emulator


async def test_a_quorum_across_teams_and_slack(
    teams: TeamsEmulator,
    trusted: None,
    slack: SlackEmulator,
    start_service: StartService,
    http: aiohttp.ClientSession,
) -> None:
    connections = slack.socket.connections_total
    service = await start_service(**slack_settings(slack, "socket"), **teams.settings())
    await slack.wait_socket_connected(after=connections)
    conversation = teams.add_conversation()
    created = await ask(
        http,
        service.url,
        request_id="ask_both",
        questions=[DEPLOY],
        target=[f"teams:{conversation}", f"slack:{CHANNEL}"],
        quorum=2,
    )
    assert [m["platform"] for m in created["messages"]] == ["teams", "slack"]
    card = await teams.wait_for_message(conversation)
    slack_ref = created["messages"][1]
    slack_message = slack.message(slack_ref["channel"], slack_ref["message_id"])

    # Alice approves in Teams, Bob rejects there: no quorum; her card tells her so.
    code, answer = await teams.press(service.url, card, ALICE, actions(card.card)["Approve"])
    assert code == 200
    assert any(t.startswith("Your vote is counted: 1 of 2") for t in plain_texts(answer["value"]))
    await teams.press(service.url, card, BOB, actions(card.card)["Reject"])

    def tallied(shown: dict[str, Any]) -> bool:
        texts = list(plain_texts(shown))
        return any("Approve — 1/2" in t for t in texts) and any("Reject — 1/2" in t for t in texts)

    await teams.wait_for_card(card, tallied)
    assert (await status(http, service.url, "ask_both"))["status"] == "waiting"

    # Carol approves in Slack: two matching votes across the two platforms.
    (await slack.person("U1").click_button(slack_message, "Approve")).assert_acked()
    async with http.get(f"{service.url}/v1/questions/ask_both?wait=10") as response:
        final = await response.json()
    assert final["answers"] == {"Deploy": "Approve"}
    approvers = sorted(
        (v["voter"]["platform"], v["voter"]["id"])
        for v in final["votes"]
        if v["answers"] == {"Deploy": "Approve"}
    )
    assert approvers == [("slack", "U1"), ("teams", ALICE.aad_id)]
    shown = await teams.wait_for_card(card, ended)
    assert any("Answered by" in t and "Alice" in t for t in plain_texts(shown))
    await slack.wait_for_update(
        slack_message.channel, slack_message.ts, lambda m: not m.has_interactive_elements
    )
