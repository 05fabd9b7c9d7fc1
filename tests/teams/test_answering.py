"""Questions answered in Teams end to end: askbridge's Teams adapter, on the Microsoft 365
Agents SDK, against the Teams emulator (Bot Connector, token authority, signing keys)."""

from __future__ import annotations

import copy
import logging
from typing import Any

import aiohttp
import pytest

from askbridge.bots.logs import UnusedFeatures
from askbridge.bots.service import Service
from tests.conftest import DATABASE, DEPLOY, EXPECTED
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import check_card, markdown_texts, plain_texts
from tests.emulators.teams.emulator import CHANNEL
from tests.teams.conftest import ALICE, BOB, actions


async def ask(http: aiohttp.ClientSession, url: str, **body: Any) -> dict[str, Any]:
    async with http.post(f"{url}/v1/questions", json=body) as response:
        found: dict[str, Any] = await response.json()
        assert response.status == 201, found
        return found


async def status(http: aiohttp.ClientSession, url: str, request_id: str) -> dict[str, Any]:
    async with http.get(f"{url}/v1/questions/{request_id}") as response:
        found: dict[str, Any] = await response.json()
        return found


def ended(card: dict[str, Any]) -> bool:
    return not actions(card)


async def test_the_specs_example_is_answered_in_teams(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    asked = await ask(http, bridge.url, **copy.deepcopy(DATABASE), target=f"teams:{conversation}")
    message = await teams.wait_for_message(conversation)
    assert asked["messages"][0]["message_id"] == message.id
    inputs = {e["id"]: e for e in message.card["body"] if e["type"] == "Input.ChoiceSet"}
    assert inputs["q0"]["isMultiSelect"] is False
    assert inputs["q0"]["style"] == "expanded"
    assert inputs["q1"]["isMultiSelect"] is True
    submit = actions(message.card)["Submit"]
    features = [c["title"] for c in inputs["q1"]["choices"]]
    picks = ",".join(str(features.index(f)) for f in ("Caching", "Metrics"))

    code, answer = await teams.press(bridge.url, message, ALICE, submit, {"q0": "0", "q1": picks})
    assert code == 200, answer
    assert answer["type"] == "application/vnd.microsoft.card.adaptive"
    assert ended(answer["value"])
    final = await status(http, bridge.url, "ask_db")
    assert final["status"] == "answered"
    assert final["answers"] == EXPECTED
    shown = await teams.wait_for_card(message, ended)
    texts = list(plain_texts(shown))
    assert any("Answered by Alice" in t for t in texts)
    assert "Caching, Metrics" in texts
    assert teams.refused == []


async def test_options_of_long_emoji_labels_are_cut_to_fit_and_answered_whole(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    """Each emoji is 12 bytes as the connector sends it (`\\ud83d\\ude80`): sixteen labels of
    150 made a card Teams refused, and the question was never posted."""
    conversation = teams.add_conversation()
    labels = [f"{o}" + "🚀" * 150 for o in range(4)]
    options = [{"label": label, "description": ""} for label in labels]
    questions = [
        {"question": "Pick?", "header": f"h{q}", "multiSelect": True, "options": options}
        for q in range(4)
    ]
    target = f"teams:{conversation}"
    await ask(http, bridge.url, request_id="ask_wide", questions=questions, target=target)
    message = await teams.wait_for_message(conversation)
    choices = [c for e in message.card["body"] for c in e.get("choices", [])]
    assert [c["value"] for c in choices] == ["0", "1", "2", "3"] * 4
    assert all(c["title"].endswith("🚀…") for c in choices)
    picks = {f"q{q}": "0,3" for q in range(4)}
    submit = actions(message.card)["Submit"]
    code, answer = await teams.press(bridge.url, message, ALICE, submit, picks)
    assert code == 200, answer
    check_card(answer["value"])
    final = await status(http, bridge.url, "ask_wide")
    assert final["answers"] == {f"h{q}": f"{labels[0]}, {labels[3]}" for q in range(4)}
    await teams.wait_for_card(message, ended)
    assert teams.refused == []


async def test_one_click_answers_a_single_question(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_deploy",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    assert "Submit" not in actions(message.card)
    code, _ = await teams.press(bridge.url, message, BOB, actions(message.card)["Reject"])
    assert code == 200
    final = await status(http, bridge.url, "ask_deploy")
    assert final["answers"] == {"Deploy": "Reject"}
    assert final["answered_by"] == {"platform": "teams", "id": BOB.aad_id, "name": "Bob"}
    await teams.wait_for_card(message, ended)


async def test_cancel_interrupts_the_agent(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_cancel",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    sure = actions(message.card)["Cancel question"]
    code, _ = await teams.press(bridge.url, message, ALICE, sure)
    assert code == 200
    assert (await status(http, bridge.url, "ask_cancel"))["status"] == "cancelled"
    shown = await teams.wait_for_card(message, ended)
    assert any("Cancelled by Alice" in t for t in plain_texts(shown))


async def test_someone_who_may_not_answer_is_refused_on_their_card_only(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_gate",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
        answerers=[f"teams:{ALICE.aad_id}"],
    )
    message = await teams.wait_for_message(conversation)
    code, answer = await teams.press(bridge.url, message, BOB, actions(message.card)["Approve"])
    assert code == 200
    refusal = list(plain_texts(answer["value"]))
    assert any("Only these people may answer" in t for t in refusal)
    assert (await status(http, bridge.url, "ask_gate"))["status"] == "waiting"
    assert len(message.versions) == 1, "nobody else's card changed"
    code, _ = await teams.press(bridge.url, message, ALICE, actions(message.card)["Approve"])
    assert (await status(http, bridge.url, "ask_gate"))["answers"] == {"Deploy": "Approve"}


async def test_forged_expired_and_misaddressed_tokens_are_refused(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_tokens",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    approve = actions(message.card)["Approve"]
    forger = type(teams.key)(teams.key.kid)  # same key id, another key
    claims = {"iss": "https://api.botframework.com", "aud": teams.app_id, "exp": 2**31}
    tokens = {
        "forged": forger.sign(claims),
        "expired": teams.signed(exp=1_000_000_000, nbf=None, iat=None),
        "wrong audience": teams.signed(aud="someone-elses-bot"),
        "wrong issuer": teams.signed(iss="https://sts.windows.net/evil/"),
        "another connector": teams.signed(serviceurl="https://smba.example/elsewhere/"),
        "unknown key": teams.key.sign(claims, kid="no-such-key"),
        "none": "",
    }
    for what, token in tokens.items():
        code, body = await teams.press(bridge.url, message, ALICE, approve, token=token)
        assert code == 401, (what, body)
    assert (await status(http, bridge.url, "ask_tokens"))["status"] == "waiting"
    code, _ = await teams.press(bridge.url, message, ALICE, approve)
    assert code == 200
    assert (await status(http, bridge.url, "ask_tokens"))["status"] == "answered"


NESTED = b"[" * 100_000 + b"]" * 100_000
"""Deeper than the JSON parser can go."""


async def test_a_delivery_without_a_valid_token_is_refused_before_its_body_is_read(
    teams: TeamsEmulator,
    bridge: Service,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    forger = type(teams.key)(teams.key.kid)
    forged = forger.sign({"iss": "https://api.botframework.com", "aud": teams.app_id, "exp": 2**31})
    for token in (None, f"Bearer {forged}"):
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = token
        for body in (b"{", NESTED, b"[1, 2]", b'"x"', b"\xff\xfe"):
            async with http.post(f"{bridge.url}/teams/messages", data=body, headers=headers) as r:
                assert r.status == 401, (token, body[:8])
                assert (await r.json())["error"] == "unauthorized"
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"{", "the body is not JSON"),
        (b"\xff\xfe", "the body is not JSON"),
        (NESTED, "the body is not JSON: nested too deeply"),
        (b"[1, 2]", "the body is not an activity (a JSON object)"),
        (b'"x"', "the body is not an activity (a JSON object)"),
    ],
)
async def test_a_signed_delivery_that_is_no_activity_gets_400(
    teams: TeamsEmulator,
    bridge: Service,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    body: bytes,
    expected: str,
) -> None:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {teams.signed()}"}
    async with http.post(f"{bridge.url}/teams/messages", data=body, headers=headers) as response:
        assert response.status == 400
        assert (await response.json())["error"].startswith(expected)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


PRESS_FOR_NO_ONE = {
    "type": "invoke",
    "name": "adaptiveCard/action",
    "id": "a1",
    "from": {"id": "29:alice", "name": "alice"},
    "conversation": {"id": "19:c1"},
    "value": {"action": {"type": "Action.Execute", "verb": "x", "data": {}}},
}
"""A press with no `recipient`, the bot it is for: the SDK reads it, then cannot answer it."""


@pytest.mark.parametrize(
    "activity",
    [
        *({}, {"type": 5}, {"type": "message", "from": 5}, {"type": "invoke", "conversation": "x"}),
        PRESS_FOR_NO_ONE,
        {**PRESS_FOR_NO_ONE, "recipient": None},
        {**PRESS_FOR_NO_ONE, "recipient": 5},
    ],
)
async def test_a_signed_activity_of_a_shape_teams_never_sends_gets_400(
    teams: TeamsEmulator,
    bridge: Service,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    activity: dict[str, Any],
) -> None:
    body = {"channelId": CHANNEL, "serviceUrl": f"{teams.url}/", **activity}
    headers = {"Authorization": f"Bearer {teams.signed()}"}
    async with http.post(f"{bridge.url}/teams/messages", json=body, headers=headers) as response:
        assert response.status == 400
        assert (await response.json())["error"].startswith("not an activity Teams would send: ")
    # The SDK's own line about it is left out of askbridge's log.
    shown = UnusedFeatures()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR and shown.filter(r)] == []
    assert "could not read an activity" in caplog.text


def inert_broken(text: str) -> bool:
    """Whether a Markdown text carries the hostile text's links, emphasis or mentions."""
    return any(mark in text for mark in ("evil", "**", "<at>"))


HOSTILE = "**bold** [click](https://evil.example) <at>Everyone</at> _x_ \n- item"


async def test_hostile_text_stays_inert(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    question = {
        "question": HOSTILE,
        "header": "H**x**",
        "options": [
            {"label": HOSTILE[:40], "description": HOSTILE},
            {"label": "Fine", "description": ""},
        ],
    }
    await ask(
        http,
        bridge.url,
        request_id="ask_hostile",
        context=HOSTILE,
        questions=[question],
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    assert HOSTILE in list(plain_texts(message.card)), "shown as written"
    for text in markdown_texts(message.card):
        assert not inert_broken(text), text
    await teams.press(bridge.url, message, ALICE, actions(message.card)[HOSTILE[:40]])
    shown = await teams.wait_for_card(message, ended)
    for text in markdown_texts(shown):
        assert not inert_broken(text), text


async def test_a_tool_call_shows_its_diff_line_by_line_in_monospace(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    edit = {
        "file_path": "/repo/app.py",
        "old_string": "DEBUG = True",
        "new_string": f"DEBUG = False  # {HOSTILE}",
    }
    await ask(
        http,
        bridge.url,
        request_id="ask_edit",
        questions=[{**DEPLOY, "question": "Allow Edit to edit app.py?"}],
        tool={"name": "Edit", "input": edit, "cwd": "/repo"},
        subject=edit,
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    texts = list(plain_texts(message.card))
    assert "Edit app.py" in texts
    lines = [
        (inline["text"], inline.get("color"))
        for element in message.card["body"]
        for inline in element.get("inlines", [])
        if inline.get("fontType") == "Monospace"
    ]
    assert lines == [
        ("-DEBUG = True", "Attention"),
        (
            "+DEBUG = False  # **bold** [click](https://evil.example) <at>Everyone</at> "
            "_x_<U+0020>",
            "Good",
        ),
        ("+- item", "Good"),
    ]
    for text in markdown_texts(message.card):
        assert not inert_broken(text), text


async def test_people_are_named_as_the_conversation_names_them_never_by_their_ids(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    """The card and the note to someone who may not answer name each Teams answerer as the
    conversation's members say, as written (a name is hostile text: no markup, no mention),
    and one who is not in the conversation without an id nobody can read."""
    from tests.emulators.teams.cards import mentioned
    from tests.emulators.teams.emulator import Person

    hostile = Person("aad-bob", "Bob **B** <at>everyone</at>")
    conversation = teams.add_conversation(hostile, ALICE)
    await ask(
        http,
        bridge.url,
        request_id="ask_named",
        questions=[copy.deepcopy(DEPLOY)],
        target=f"teams:{conversation}",
        answerers=[f"teams:{hostile.aad_id}", "teams:aad-ghost"],
    )
    message = await teams.wait_for_message(conversation)
    who = f"{hostile.name}, a person not in this conversation"
    shown = list(plain_texts(message.card))
    assert any(who in t for t in shown), shown
    assert not any("aad-" in t for t in shown), shown
    assert not any(hostile.name in t for t in markdown_texts(message.card))
    assert mentioned(message.card) == []
    asked = [(conversation, hostile.aad_id), (conversation, "aad-ghost")]
    assert teams.member_lookups == asked, "each person asked of Teams once"
    code, answer = await teams.press(bridge.url, message, ALICE, actions(message.card)["Approve"])
    assert code == 200
    refusal = list(plain_texts(answer["value"]))
    assert any(f"Only these people may answer this question: {who}" in t for t in refusal)
    assert not any("aad-" in t for t in refusal), refusal
    assert not any(hostile.name in t for t in markdown_texts(answer["value"]))
    code, _ = await teams.press(bridge.url, message, hostile, actions(message.card)["Approve"])
    assert code == 200
    await teams.wait_for_card(message, ended)
    assert teams.member_lookups == asked, "a press, and the card it ends, wait on no lookup"
