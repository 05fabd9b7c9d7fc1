"""Times on a Teams card read in each reader's own time zone and language: askbridge writes
them as Adaptive Cards' date and time functions, each in a TextBlock of its own words. Text from
an agent or a person that looks like one of those functions is shown as written."""

from __future__ import annotations

import copy
from zoneinfo import ZoneInfo

import aiohttp

from askbridge.adapters.teams.mentions import tag_text
from askbridge.bots.service import Service
from askbridge.core.clock import ManualClock
from tests.conftest import DATABASE, DEPLOY
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import plain_texts
from tests.teams.conftest import ALICE, actions
from tests.teams.test_answering import ask, ended

TOKYO = ZoneInfo("Asia/Tokyo")
LOOKALIKE = "{{DATE(2030-01-01T00:00:00Z, SHORT)}} {{TIME(2030-01-01T00:00:00Z)}}"
"""What an agent or a person may write: Teams would format it, were it not shown as written."""
WORD_JOINER = "\u2060"


async def test_a_deadline_and_an_end_time_read_in_the_readers_zone(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    # The service's clock starts at 2030-01-01 00:00 UTC: 09:00 in Tokyo.
    await ask(
        http,
        bridge.url,
        request_id="ask_deploy",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
        timeout_s=3600,
    )
    message = await teams.wait_for_message(conversation)
    said = " ".join(plain_texts(message.card, TOKYO))
    assert "Open until Tue, Jan 1, 2030 10:00 AM; then it expires" in said
    assert "UTC" not in said
    await teams.press(bridge.url, message, ALICE, actions(message.card)["Approve"], {})
    shown = await teams.wait_for_card(message, ended)
    assert "Tue, Jan 1, 2030 9:00 AM" in list(plain_texts(shown, TOKYO))
    assert "Tue, Jan 1, 2030 12:00 AM" in list(plain_texts(shown))


async def test_text_that_looks_like_a_time_function_is_shown_as_written(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        **copy.deepcopy(DATABASE),
        context=LOOKALIKE,
        target=f"teams:{conversation}",
        allow_notes=True,
    )
    message = await teams.wait_for_message(conversation)
    read = [text.replace(WORD_JOINER, "") for text in plain_texts(message.card, TOKYO)]
    assert LOOKALIKE in read
    submit = actions(message.card)["Submit"]
    inputs = {"q0": "1", "q1": "0", "note": LOOKALIKE}
    code, answer = await teams.press(bridge.url, message, ALICE, submit, inputs)
    assert code == 200, answer
    shown = await teams.wait_for_card(message, ended)
    read = [text.replace(WORD_JOINER, "") for text in plain_texts(shown, TOKYO)]
    assert read.count(LOOKALIKE) == 2


async def test_a_reminder_says_the_deadline_in_the_readers_zone(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession, clock: ManualClock
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_remind",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
        remind_after_s=300,
        timeout_s=3600,
    )
    await teams.wait_for_message(conversation)
    await clock.advance(300)
    reminder = await teams.wait_for_message(conversation, 2)
    said = list(plain_texts(reminder.card, TOKYO))
    assert said == [
        "Reminder: this question is still waiting for an answer.",
        "⏳ Open until Tue, Jan 1, 2030 10:00 AM; then it expires",
    ]
    assert teams.refused == []


def test_a_name_in_a_mention_is_never_a_time_function() -> None:
    assert (
        tag_text(LOOKALIKE)
        == "<at>DATE(2030-01-01T00:00:00Z, SHORT) TIME(2030-01-01T00:00:00Z)</at>"
    )
