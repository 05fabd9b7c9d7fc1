"""Every text sent stays inside Block Kit's limits; long ones are shortened, never refused."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.slack.blockkit import (
    MAX_BUTTON_TEXT,
    MAX_OPTION_DESCRIPTION,
    MAX_OPTION_TEXT,
)
from askbridge.adapters.slack.ids import ActionId
from askbridge.adapters.slack.render import render
from askbridge.adapters.slack.text import inert, shorten
from askbridge.core.intents import Action
from askbridge.core.models import Person, QuestionOption, Request, Status, UserQuestion
from askbridge.core.view import RequestView
from tests.emulators.slack import validate_blocks
from tests.hostile import SHOWN_AS_ONE, whole_pieces
from tests.slack.conftest import Bridge, ask_body

LONG_WORD = "Supercalifragilisticexpialidocious"


def long_request_body(request_id: str) -> dict[str, Any]:
    long_label = " ".join([LONG_WORD] * 5)
    body = ask_body(request_id, context="Context <with> & markup " * 20)
    database, features = body["questions"]
    database["question"] = "Which database should we use? " + "Think it over. " * 400
    database["options"][0]["label"] = long_label
    database["options"][0]["description"] = "A very long description. " * 40
    features["options"][2]["description"] = "x" * 500
    return body


async def test_long_texts_are_shortened_and_slack_accepts_every_message(bridge: Bridge) -> None:
    slack = bridge.slack
    body = long_request_body("ask_long")
    message = await bridge.ask(body)
    long_label = body["questions"][0]["options"][0]["label"]
    shown_label = long_label[: MAX_OPTION_TEXT - 1] + "…"
    assert shown_label in message.visible_text
    assert "Think it over." in message.visible_text
    # Shown as written, in a plain_text element that Slack never parses.
    assert "Context <with> & markup" in message.visible_text
    assert message.blocks[0]["elements"][0]["type"] == "plain_text"
    assert "…" in message.text

    alice = slack.person("U1")
    await alice.choose_radio(message, shown_label)
    await alice.tick_checkboxes(message, ["Caching", "Metrics"])
    await alice.click_button(message, "Submit")

    outcome = await bridge.outcome("ask_long")
    assert outcome["answers"] == {"Database": long_label, "Features": "Caching, Metrics"}
    final = await bridge.final(message)
    assert long_label in final.visible_text
    assert slack.invalid_blocks_count == 0, slack.block_rejections
    assert slack.call_count("chat.update") == 1


async def test_a_long_one_click_question_is_accepted(bridge: Bridge) -> None:
    body = long_request_body("ask_long_one")
    body["questions"] = body["questions"][:1]
    message = await bridge.ask(body)
    label = body["questions"][0]["options"][0]["label"]
    await bridge.slack.person("U2").click_button(message, label[: MAX_BUTTON_TEXT - 1] + "…")
    assert (await bridge.outcome("ask_long_one"))["answers"] == {"Database": label}
    await bridge.final(message)
    assert bridge.slack.invalid_blocks_count == 0, bridge.slack.block_rejections


# ---- the renderer, for any request --------------------------------------------------------------

texts = st.text(min_size=1, max_size=4000).filter(str.strip)
short_texts = st.text(min_size=1, max_size=300).filter(str.strip)


@st.composite
def questions(draw: st.DrawFn) -> UserQuestion:
    labels = draw(st.lists(short_texts, min_size=2, max_size=4, unique=True))
    return UserQuestion(
        question=draw(texts),
        header=draw(st.text(min_size=1, max_size=12).filter(str.strip)),
        options=tuple(
            QuestionOption(label=label, description=draw(st.text(max_size=600))) for label in labels
        ),
        multi_select=draw(st.booleans()),
    )


@st.composite
def requests(draw: st.DrawFn) -> Request:
    asked = draw(st.lists(questions(), min_size=1, max_size=4, unique_by=lambda q: q.header))
    status = draw(st.sampled_from(list(Status)))
    person = Person(platform=draw(st.sampled_from(["slack", "web"])), id="U1", name=draw(texts))
    answers = {q.header: draw(texts) for q in asked} if status is Status.ANSWERED else None
    now = datetime(2030, 1, 1, tzinfo=UTC)
    return Request(
        request_id=draw(st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True)),
        questions=tuple(asked),
        targets=(),
        context=draw(st.none() | texts),
        status=status,
        created_at=now,
        ended_at=None if status is Status.WAITING else now,
        answers=answers,
        answered_by=person if status is Status.ANSWERED else None,
        cancelled_by=person if status is Status.CANCELLED else None,
    )


@settings(max_examples=150, deadline=None)
@given(requests(), st.text(alphabet="0123456789abcdef", min_size=8, max_size=8))
def test_every_render_is_valid_block_kit(request: Request, rev: str) -> None:
    payload = render(RequestView.of(request), rev)
    assert validate_blocks(payload["blocks"]) == []
    assert 0 < len(payload["text"]) <= 3000
    if request.status is Status.WAITING:
        ids = [
            e["action_id"]
            for b in payload["blocks"]
            if b["type"] == "actions"
            for e in b["elements"]
        ]
        assert all(ActionId.unpack(i).request_id == request.request_id for i in ids)
        assert any(ActionId.unpack(i).action is Action.CANCEL for i in ids)
    else:
        assert all(b["type"] != "actions" for b in payload["blocks"])


def test_block_ids_change_with_every_render() -> None:
    request = Request(
        request_id="ask_ids",
        questions=(
            UserQuestion(
                question="Q?",
                header="H",
                options=(QuestionOption(label="a"), QuestionOption(label="b")),
                multi_select=True,
            ),
        ),
        targets=(),
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
    )
    view = RequestView.of(request)
    first = {b["block_id"] for b in render(view, "00000001")["blocks"]}
    second = {b["block_id"] for b in render(view, "00000002")["blocks"]}
    assert first.isdisjoint(second)


@given(st.text(max_size=400), st.integers(min_value=2, max_value=300))
def test_shortening_keeps_within_the_limit(text: str, limit: int) -> None:
    short = shorten(text, limit)
    assert len(short) <= limit
    assert short == text or short.endswith("…")
    # In mrkdwn, every `&` starts one of its three escapes and nothing can style or mention.
    safe = inert(text)
    assert all(
        safe[i:].startswith(("&amp;", "&lt;", "&gt;")) for i, ch in enumerate(safe) if ch == "&"
    )
    assert not set(safe) & set("<>*_~`")


def one_question(question: str) -> Request:
    options = (QuestionOption(label="Approve"), QuestionOption(label="Reject"))
    return Request(
        request_id="ask_long_fallback",
        questions=(UserQuestion(question=question, header="Deploy", options=options),),
        targets=(),
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
    )


PREFIX = "Question from the agent: Deploy: "


@pytest.mark.parametrize("offset", range(5))
@pytest.mark.parametrize("char", ["&", "<", ">"])
def test_a_long_fallback_is_never_cut_inside_an_escape(char: str, offset: int) -> None:
    text = render(RequestView.of(one_question("x" * offset + char * 3000)), "00000001")["text"]
    assert len(text) <= 3000
    assert text.startswith(PREFIX + "x" * offset)
    kept = text.removesuffix("…")
    assert kept != text
    assert "&" not in re.sub("&(?:amp|lt|gt);", "", kept), kept[-8:]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["&", "<", ">", "a", *SHOWN_AS_ONE]), min_size=1500, max_size=2000),
    st.integers(min_value=0, max_value=4),
)
def test_a_long_fallback_is_cut_between_escapes_and_characters(
    pieces: list[str], offset: int
) -> None:
    pieces = ["x" * offset, *pieces]
    question = "".join(pieces)
    text = render(RequestView.of(one_question(question)), "00000001")["text"]
    assert len(text) <= 3000
    kept = text.removesuffix("…")
    assert kept != text
    assert kept.startswith(PREFIX)
    assert "&" not in re.sub("&(?:amp|lt|gt);", "", kept), kept[-8:]
    assert html.unescape(kept.removeprefix(PREFIX)) in whole_pieces(question, pieces)


@given(st.lists(st.sampled_from(["a", *SHOWN_AS_ONE]), max_size=40), st.integers(2, 60))
def test_shortening_never_splits_a_character_as_shown(pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    assert shorten(text, limit).removesuffix("…") in whole_pieces(text, pieces)


def test_the_limits_are_slacks() -> None:
    assert (MAX_OPTION_TEXT, MAX_OPTION_DESCRIPTION, MAX_BUTTON_TEXT) == (75, 75, 75)


def test_a_note_cut_to_its_budget_links_to_all_of_the_call() -> None:
    """A long lookalike host makes its note longer than a message shows of a note, though the
    URL itself is within its budget: the note is cut, and links to all of the call."""
    from askbridge.adapters.slack.tool_call import FIELD_BUDGET, tool_parts
    from askbridge.core.tool_view import FULL_VIEW, Note, ToolUse, tool_view

    page = "https://askbridge.example/q/r?token=" + "0" * 64
    host = ".".join(["\u0430pple"] * 41) + ".com"
    url = f"https://{host}/"
    tool = tool_view(ToolUse(name="WebFetch", input={"url": url, "prompt": "Read"}))
    tool = tool.model_copy(update={"full_view": page})
    assert len(url) <= FIELD_BUDGET < max(len(p.text) for p in tool.parts if isinstance(p, Note))
    links = re.findall(rf"'url': '([^']*)', 'text': '{FULL_VIEW}'", str(tool_parts(tool)))
    assert links == [page]
