"""Approvals in Teams: an agent's permission prompt on the agent WebSocket shows on a card with
its command verbatim, and one click answers the agent; a team's votes stay in sight on the card
once it has ended."""

from __future__ import annotations

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.changes import CHANGE_ACTION
from askbridge.core.clock import ManualClock
from askbridge.core.permissions import permission_questions
from tests.conftest import DEPLOY, StartService
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import card_inputs, markdown_texts, plain_texts
from tests.emulators.teams.emulator import Person
from tests.teams.conftest import ALICE, BOB, actions
from tests.teams.test_answering import ask, ended, status

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


async def test_edit_and_allow_changes_the_command_in_place_on_the_card(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    asked = {"command": "rm -rf build/", "description": "Clean"}
    questions = permission_questions({"tool_name": "Bash"}, always=None, shown=True)
    await ask(
        http,
        bridge.url,
        request_id="ask_change",
        questions=questions,
        tool={"name": "Bash"},
        subject=asked,
        allow_changes=True,
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    behind = next(a for a in message.card["actions"] if a["title"] == "Edit and allow…")
    field = behind["card"]["body"][0]
    assert (field["type"], field["id"], field["value"]) == (
        "Input.Text",
        "changed",
        asked["command"],
    )
    changed = "rm -rf build/cache **only** <at>Everyone</at>"
    press = actions(message.card)["Edit and allow"]
    code, answer = await teams.press(bridge.url, message, ALICE, press, {"changed": changed})
    assert code == 200, answer
    final = await status(http, bridge.url, "ask_change")
    assert final["answers"] == {"Permission": "Allow once"}
    assert final["approved_input"] == {**asked, "command": changed}
    card = await teams.wait_for_card(message, ended)
    shown = list(plain_texts(card))
    assert changed in shown, "the command as allowed, as written"
    assert any(text.startswith("Changed by ") for text in shown)
    assert not any("only" in text for text in markdown_texts(card))


async def test_a_command_too_long_for_the_card_is_not_offered_to_change(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    """2,300 emoji are 27 KB as the connector sends them: no field of the card holds them
    whole, so the card offers no Edit and allow (a person would have to type the whole call
    again), as Slack and Discord offer none past their form's size; it is still answered."""
    conversation = teams.add_conversation()
    asked = {"command": "echo " + "🚀" * 2300}
    questions = permission_questions({"tool_name": "Bash"}, always=None, shown=True)
    await ask(
        http,
        bridge.url,
        request_id="ask_wide",
        questions=questions,
        tool={"name": "Bash"},
        subject=asked,
        allow_changes=True,
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    assert CHANGE_ACTION not in [a["title"] for a in message.card["actions"]]
    assert "changed" not in card_inputs(message.card)
    code, answer = await teams.press(
        bridge.url, message, ALICE, actions(message.card)["Allow once"]
    )
    assert code == 200, answer
    final = await status(http, bridge.url, "ask_wide")
    assert final["answers"] == {"Permission": "Allow once"}
    assert "approved_input" not in final
    await teams.wait_for_card(message, ended)
    assert teams.refused == []


async def test_an_empty_change_is_refused_on_the_card(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    conversation = teams.add_conversation()
    questions = permission_questions({"tool_name": "Bash"}, always=None, shown=True)
    await ask(
        http,
        bridge.url,
        request_id="ask_empty",
        questions=questions,
        tool={"name": "Bash"},
        subject={"command": "make"},
        allow_changes=True,
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    press = actions(message.card)["Edit and allow"]
    code, _ = await teams.press(bridge.url, message, ALICE, press, {"changed": "  "})
    assert code == 200
    assert (await status(http, bridge.url, "ask_empty"))["status"] == "waiting"


async def test_a_cut_command_links_to_its_page(
    teams: TeamsEmulator, trusted: None, start_service: StartService, http: aiohttp.ClientSession
) -> None:
    bridge = await start_service(**teams.settings(), public_url="https://askbridge.example.com")
    conversation = teams.add_conversation()
    command = "\n".join(f"echo {n} **bold** <at>Everyone</at>" for n in range(80))
    questions = permission_questions({"tool_name": "Bash"}, always=None, shown=True)
    await ask(
        http,
        bridge.url,
        request_id="ask_long",
        questions=questions,
        tool={"name": "Bash"},
        subject={"command": command},
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    request = await bridge.broker.get("ask_long")
    assert request.tool is not None
    link = request.tool.full_view
    assert link is not None
    assert link.startswith("https://askbridge.example.com/q/ask_long?token=")
    opened = [
        action
        for element in message.card["body"]
        if element["type"] == "ActionSet"
        for action in element["actions"]
        if action["type"] == "Action.OpenUrl"
    ]
    assert opened == [
        {"type": "Action.OpenUrl", "title": "See all of it on the web page", "url": link}
    ]
    assert any("more lines are not shown here" in text for text in plain_texts(message.card))


CUT_WITHIN = {
    "one long line": ("Bash", {"command": "echo " + "a" * 400 + " && rm -rf ~"}),
    "a long argument": ("WebFetch", {"url": "https://example.com/" + "p" * 600 + "?then=evil"}),
    "many arguments": ("mcp__db__query", {f"arg{n}": "x" for n in range(12)}),
    "a long argument name": ("mcp__db__query", {"where_" + "n" * 120 + "_or_drop": "1"}),
    "a long path": ("Write", {"file_path": "/repo/" + "d/" * 200 + "app.py", "content": "x"}),
}


@pytest.mark.parametrize("case", CUT_WITHIN)
async def test_a_call_cut_within_a_line_or_an_argument_links_to_its_page(
    case: str,
    teams: TeamsEmulator,
    trusted: None,
    start_service: StartService,
    http: aiohttp.ClientSession,
) -> None:
    name, given = CUT_WITHIN[case]
    bridge = await start_service(**teams.settings(), public_url="https://askbridge.example.com")
    conversation = teams.add_conversation()
    await ask(
        http,
        bridge.url,
        request_id="ask_cut",
        questions=permission_questions({"tool_name": name}, always=None, shown=True),
        tool={"name": name},
        subject=given,
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    request = await bridge.broker.get("ask_cut")
    assert request.tool is not None
    opened = [
        action["url"]
        for element in message.card["body"]
        if element["type"] == "ActionSet"
        for action in element["actions"]
        if action["type"] == "Action.OpenUrl"
    ]
    assert opened == [request.tool.full_view]
    if name == "Bash":
        assert "The end of 1 line is not shown here" in plain_texts(message.card)


CAROL = Person("aad-carol", "Carol")


async def test_the_ended_card_shows_every_vote_as_the_other_surfaces_do(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    """Two of three must agree: Alice approves, Bob rejects, Carol approves. The ended card
    says who decided and keeps Bob's vote in sight, as Slack, Discord and the web page do."""
    conversation = teams.add_conversation()
    people = [f"teams:{p.aad_id}" for p in (ALICE, BOB, CAROL)]
    await ask(
        http,
        bridge.url,
        request_id="ask_two_of_three",
        questions=[DEPLOY],
        target=f"teams:{conversation}",
        answerers=people,
        quorum=2,
    )
    message = await teams.wait_for_message(conversation)
    for person, label in ((ALICE, "Approve"), (BOB, "Reject"), (CAROL, "Approve")):
        code, _ = await teams.press(bridge.url, message, person, actions(message.card)[label])
        assert code == 200
    shown = list(plain_texts(await teams.wait_for_card(message, ended)))
    assert "Answered by Alice, Carol (2 matching votes)" in shown[0]
    assert "• Approve — 2/2 (Alice, Carol)" in shown
    assert "• Reject — 1/2 (Bob)" in shown


async def test_a_card_decided_by_its_deadline_shows_the_votes_it_had(
    teams: TeamsEmulator,
    trusted: None,
    start_service: StartService,
    clock: ManualClock,
    http: aiohttp.ClientSession,
) -> None:
    """Nobody agreed before the deadline: the card says the deadline decided, and who had
    voted for what."""
    service = await start_service(**teams.settings())
    conversation = teams.add_conversation()
    await ask(
        http,
        service.url,
        request_id="ask_split",
        questions=[DEPLOY],
        target=f"teams:{conversation}",
        quorum=2,
        timeout_s=300,
        on_timeout={"answers": {"Deploy": "Reject"}},
    )
    message = await teams.wait_for_message(conversation)
    await teams.press(service.url, message, ALICE, actions(message.card)["Approve"])
    await teams.press(service.url, message, BOB, actions(message.card)["Reject"])
    await clock.advance(300)
    shown = list(plain_texts(await teams.wait_for_card(message, ended)))
    assert shown[0].startswith("Decided by timeout")
    assert "• Approve — 1/2 (Alice)" in shown
    assert "• Reject — 1/2 (Bob)" in shown


@pytest.mark.parametrize("pressed", ["Allow once", "Edit and allow"])
async def test_a_press_that_changes_nothing_allows_the_call_as_asked(
    pressed: str, teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    """Teams sends the inputs as the card gave them: Allow once beside Edit and allow does not
    send its field (it is behind the ShowCard), and Edit and allow with the field untouched
    sends the call as asked; either allows it once, unchanged."""
    conversation = teams.add_conversation()
    asked = {"command": "make release"}
    await ask(
        http,
        bridge.url,
        request_id="ask_same",
        questions=permission_questions({"tool_name": "Bash"}, always=None, shown=True),
        tool={"name": "Bash"},
        subject=asked,
        allow_changes=True,
        target=f"teams:{conversation}",
    )
    message = await teams.wait_for_message(conversation)
    assert card_inputs(message.card)["changed"]["value"] == asked["command"]
    code, answer = await teams.press(bridge.url, message, ALICE, actions(message.card)[pressed])
    assert code == 200, answer
    final = await status(http, bridge.url, "ask_same")
    assert final["answers"] == {"Permission": "Allow once"}
    assert "approved_input" not in final
    card = await teams.wait_for_card(message, ended)
    assert not any(text.startswith("Changed by ") for text in plain_texts(card))
