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
from tests.emulators.teams.cards import MAX_MESSAGE_BYTES, markdown_texts, mentioned, plain_texts
from tests.emulators.teams.emulator import CARD, Person
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
    # Mallory by the name Teams gives her, as her mention does; Bob, whom Teams did not name
    # here, as no id, and Grace of the web page by her entry.
    assert (
        f"Reminder for {MALLORY.name}, a person not in this conversation, web:grace: this "
        "question is still waiting for an answer." in said
    )
    assert teams.refused == []


async def test_a_reminder_of_twenty_long_names_mentions_as_many_as_fit(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    """Twenty answerers whose names are 120 emoji (12 bytes each as sent) or 300 CJK
    characters: all their mentions would be far past Teams' limit. The reminder mentions as
    many as fit, each whole and with its entity, in order, and says how many more."""
    people = [Person(f"aad-{n}", ("🚀" * 120) if n % 2 else ("漢" * 300)) for n in range(20)]
    conversation = teams.add_conversation(*people)
    await ask(
        http,
        bridge.url,
        request_id="ask_remind_many",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
        answerers=[f"teams:{p.aad_id}" for p in people],
        remind_after_s=300,
    )
    await teams.wait_for_message(conversation)
    await clock.advance(300)
    reminder = await teams.wait_for_message(conversation, 2)
    assert teams.refused == []
    pinged = mentioned(reminder.card)
    assert 0 < len(pinged) < len(people)
    assert pinged == [p.aad_id for p in people[: len(pinged)]]
    entities = reminder.card["msteams"]["entities"]
    assert [e["mentioned"]["name"] for e in entities] == [p.name for p in people[: len(pinged)]]
    tags = " ".join(e["text"] for e in entities)
    [line] = [t for t in markdown_texts(reminder.card) if t.startswith("⏰")]
    assert line == f"⏰ {tags} and {len(people) - len(pinged)} more"


async def test_a_message_past_teams_limit_as_sent_is_refused(teams: TeamsEmulator) -> None:
    """The emulator measures the whole message as Teams does, not only its card: a small card
    in an activity made large around it is refused."""
    conversation = teams.add_conversation()
    token = "a-token-the-authority-issued"
    teams.issued.add(token)
    card = {"type": "AdaptiveCard", "version": "1.5", "body": []}
    activity = {
        "type": "message",
        "text": "x" * MAX_MESSAGE_BYTES,
        "attachments": [{"contentType": CARD, "content": card}],
    }
    async with aiohttp.ClientSession() as session:
        url = f"{teams.url}/v3/conversations/{conversation}/activities"
        headers = {"Authorization": f"Bearer {token}"}
        async with session.post(url, json=activity, headers=headers) as response:
            assert response.status == 400
        activity["text"] = "x"
        async with session.post(url, json=activity, headers=headers) as response:
            assert response.status == 201
    assert teams.refused == [f"the message is over {MAX_MESSAGE_BYTES} bytes as sent"]
