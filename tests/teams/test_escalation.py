"""An escalation ladder in Teams: a request nobody answers moves to the on-call people in their
conversation, who are pinged there with real mentions, and the first card says so."""

from __future__ import annotations

import copy

import aiohttp

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from tests.conftest import DEPLOY
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import mentioned, plain_texts
from tests.emulators.teams.emulator import Person
from tests.teams.conftest import ALICE
from tests.teams.test_answering import ask, status

ONCALL = Person("aad-oncall", "Olive")


async def test_a_ladder_hands_the_question_over_to_on_call_and_pings_them(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    team = teams.add_conversation(ALICE)
    oncall = teams.add_conversation(ONCALL)
    await ask(
        http,
        bridge.url,
        request_id="ask_ladder",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{team}",
        answerers=[f"teams:{ALICE.aad_id}"],
        timeout_s=3600,
        escalation=[
            {
                "after_s": 60,
                "answerers": [f"teams:{ONCALL.aad_id}"],
                "target": f"teams:{oncall}",
            }
        ],
    )
    first = await teams.wait_for_message(team)
    await clock.advance(60)
    handed = await teams.wait_for_message(oncall)
    ping = await teams.wait_for_message(oncall, 2)
    assert ping.reply_to == handed.id
    assert mentioned(ping.card) == [ONCALL.aad_id]
    found = await status(http, bridge.url, "ask_ladder")
    assert found["escalation_step"] == 1
    assert found["answerers"] == [f"teams:{ONCALL.aad_id}"]
    assert found["target"] == [f"teams:{team}", f"teams:{oncall}"]
    card = await teams.wait_for_card(
        first, lambda card: any("Escalated" in text for text in plain_texts(card))
    )
    # On-call is not in the first conversation: named without an id nobody can read.
    said = list(plain_texts(card))
    assert any("a person not in this conversation" in text for text in said), said
    assert not any(ONCALL.aad_id in text for text in said), said
    assert teams.refused == []
