"""The client against a server that takes connections and never answers: each call other than a
long-poll gives up after its own short limit, and every error names what happened."""

from __future__ import annotations

import pytest

from askbridge.bots.settings import with_where_to_set
from askbridge.client import REPLY_WITHIN_S, AskbridgeClient, Unanswered, Unreachable
from tests.hung_server import HungServer

QUESTION = {
    "question": "Deploy?",
    "header": "Deploy",
    "options": [{"label": "Yes", "description": "Ship it"}, {"label": "No", "description": "Wait"}],
    "multiSelect": False,
}


def test_a_call_that_is_not_a_long_poll_has_a_limit_of_a_few_seconds() -> None:
    assert 1 <= REPLY_WITHIN_S <= 30


async def test_creating_on_a_hung_server_ends_after_its_limit_naming_the_url_and_limit() -> None:
    async with HungServer() as hung, AskbridgeClient(hung.url, reply_within_s=0.2) as client:
        with pytest.raises(Unanswered) as unanswered:
            await client.create([QUESTION], request_id="ask_hung")
        held = await hung.next_request()
    assert (held.method, held.path, held.body["request_id"]) == (
        "POST",
        "/v1/questions",
        "ask_hung",
    )
    said = str(unanswered.value)
    assert said == (
        f"askbridge at {hung.url} did not answer within 0.2 s; check that `askbridge serve` "
        "there is not stopped or overloaded (its log says what it is doing)"
    )
    # The server is there: no setting to change, unlike when nothing is at the URL.
    assert with_where_to_set(unanswered.value) == said


async def test_a_timeout_is_named_by_its_kind_never_by_empty_brackets() -> None:
    notices: list[str] = []
    async with (
        HungServer() as hung,
        AskbridgeClient(
            hung.url, reconnect_for_s=0.3, reply_within_s=0.2, notice=notices.append
        ) as client,
    ):
        with pytest.raises(Unanswered) as unanswered:
            await client.withdraw("ask_hung")
    assert notices == [f"askbridge at {hung.url} is unreachable (TimeoutError); retrying"]
    assert "()" not in str(unanswered.value)


async def test_an_unreachable_server_still_says_why_and_where_to_look() -> None:
    async with AskbridgeClient("http://127.0.0.1:9", reconnect_for_s=0) as client:
        with pytest.raises(Unreachable) as unreachable:
            await client.withdraw("ask_nowhere")
    said = str(unreachable.value)
    assert "()" not in said
    assert said.startswith("askbridge at http://127.0.0.1:9 is unreachable (Cannot connect")
