"""A reminder in Teams: a reply in the card's thread that mentions exactly the Teams people
who may answer and are in the conversation (real `<at>` mentions with their entities), and
names the rest."""

from __future__ import annotations

import copy

import aiohttp

from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from tests.conftest import DEPLOY
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import mentioned, plain_texts
from tests.emulators.teams.emulator import Person
from tests.teams.conftest import BOB
from tests.teams.test_answering import ask

MALLORY = Person("aad-mallory", "Mal**lory** <at>everyone</at>")


async def test_a_reminder_mentions_the_answerers_in_the_thread(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    conversation = teams.add_conversation(MALLORY)
    await ask(
        http,
        bridge.url,
        request_id="ask_remind",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
        answerers=[f"teams:{MALLORY.aad_id}", f"teams:{BOB.aad_id}", "web:grace"],
        remind_after_s=300,
    )
    card = await teams.wait_for_message(conversation)
    await clock.advance(300)
    reminder = await teams.wait_for_message(conversation, 2)
    assert reminder.reply_to == card.id
    # Bob is not in the conversation: named, not mentioned.
    assert mentioned(reminder.card) == [MALLORY.aad_id]
    [entity] = reminder.card["msteams"]["entities"]
    assert entity["text"] == "<at>Mallory ateveryone/at</at>"
    assert entity["mentioned"]["name"] == MALLORY.name
    said = list(plain_texts(reminder.card))
    assert (
        f"Reminder for teams:{MALLORY.aad_id}, teams:{BOB.aad_id}, web:grace: this question is "
        "still waiting for an answer." in said
    )
    assert teams.refused == []
