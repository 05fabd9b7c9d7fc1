"""Answers in a person's own words, and notes on answers: what the agent receives, what is
refused, how votes agree, and what the audit trail keeps."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from askbridge.core.answers import answer_text, typed_problem, with_typed
from askbridge.core.api.status import StatusObject
from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.intents import NOTE, Counted, Decided, Refusal, Refused, Submit
from askbridge.core.models import Person, UserQuestion
from askbridge.core.questions import parse_questions
from askbridge.core.store.sqlite import SQLiteStore
from tests.chat import Chat
from tests.conftest import DATABASE, DEPLOY

ADA = Person(platform="chat", id="U1", name="Ada")
LIN = Person(platform="chat", id="U2", name="Lin")
DATABASE_Q, FEATURES_Q = parse_questions(copy.deepcopy(DATABASE["questions"]))


@pytest.fixture
async def broker(tmp_path: Path) -> AsyncIterator[Broker]:
    store = SQLiteStore(tmp_path / "typed.db")
    await store.open()
    made = Broker(store, clock=ManualClock(), default_target="chat:C1")
    made.add_surface(Chat())
    await made.start()
    yield made
    await made.stop()
    await store.close()


async def ask(broker: Broker, request_id: str, questions: Any = None, **fields: Any) -> None:
    body = {"request_id": request_id, "questions": questions or DATABASE["questions"], **fields}
    await broker.ask(Ask.parse(body))


def test_what_was_typed_reads_as_the_agent_reads_an_answer() -> None:
    # Single-select: a label is that option; other words replace the options.
    assert with_typed(DATABASE_Q, (0,), "") == ((0,), "")
    assert with_typed(DATABASE_Q, (0,), "SQLite") == ((1,), "")
    assert with_typed(DATABASE_Q, (0,), "  Neither — use MySQL 8 ") == ((), "Neither — use MySQL 8")
    # Multi-select: labels are options, other words come after them.
    assert with_typed(FEATURES_Q, (), "Caching, Metrics") == ((0, 2), "")
    assert with_typed(FEATURES_Q, (0,), "Metrics, tracing too") == ((0, 2), "tracing too")
    assert answer_text(FEATURES_Q, (2, 0), "tracing too") == "Caching, Metrics, tracing too"
    assert answer_text(DATABASE_Q, (0,), "MySQL 8") == "MySQL 8"


def test_typed_words_are_checked() -> None:
    assert typed_problem("fine\nwith a newline") is None
    assert typed_problem("   ") is not None
    assert typed_problem("x" * 2001) is not None
    assert typed_problem("x" * 1990 + "      ") is None
    assert typed_problem("bell\a") is not None
    assert typed_problem("pasted\tfrom a table\nof\treasons") is None
    assert typed_problem("a\tcarriage\rreturn") == "Please remove the control characters."
    assert typed_problem("No \u202eseY") == (
        "Please remove the characters that change the direction of the text."
    )
    assert typed_problem("\u2067\u05e9\u05dc\u05d5\u05dd\u2069 then") is not None
    mixed = "C++ \u200f(\u05e2\u05d1\u05e8\u05d9\u05ea)"
    assert typed_problem(mixed) is None, "a mark is let through"


async def test_own_words_and_a_note_come_back_to_the_agent(broker: Broker) -> None:
    await ask(broker, "ask_typed", allow_other=True, allow_notes=True)
    typed = {0: " Neither — use MySQL 8 ", 1: "Caching, tracing too"}
    # A reason pasted from a table holds a tab.
    note = " Ask ops\tfirst. "
    outcome = await broker.act("ask_typed", ADA, Submit(typed=typed, note=note))
    assert isinstance(outcome, Decided)
    body = StatusObject.of(outcome.view.request).model_dump(mode="json")
    assert body["answers"] == {
        "Database": "Neither — use MySQL 8",
        "Features": "Caching, tracing too",
    }
    assert body["notes"] == {"Database": "Ask ops\tfirst."}
    question = DATABASE["questions"][0]["question"]  # type: ignore[index]
    assert body["annotations"] == {question: {"notes": "Ask ops\tfirst."}}
    assert body["answers_by_question"][question] == "Neither — use MySQL 8"
    events = await broker.events("ask_typed")
    vote = next(e for e in events if e.kind == "vote")
    assert vote.actor == ADA
    assert vote.data == {"answers": body["answers"], "notes": body["notes"]}


async def test_words_and_notes_are_refused_unless_the_ask_allows_them(broker: Broker) -> None:
    await ask(broker, "ask_plain")
    refused = await broker.act("ask_plain", ADA, Submit({1: (0,)}, typed={0: "MySQL"}, note="hi"))
    assert isinstance(refused, Refused)
    assert refused.reason is Refusal.BAD_TEXT
    assert set(refused.problems) == {0, NOTE}
    # A field prefilled with the options picked is still an answer from the options.
    chosen = await broker.act("ask_plain", ADA, Submit(typed={0: "SQLite", 1: "Caching"}))
    assert isinstance(chosen, Decided)
    assert chosen.view.answers == {"Database": "SQLite", "Features": "Caching"}


async def test_empty_or_long_words_record_nothing(broker: Broker) -> None:
    await ask(broker, "ask_bad", allow_other=True, allow_notes=True)
    for typed, note in (({0: "x" * 2001}, ""), ({0: "SQLite"}, "x" * 2001)):
        refused = await broker.act("ask_bad", ADA, Submit({1: (0,)}, typed=typed, note=note))
        assert isinstance(refused, Refused)
        assert refused.reason is Refusal.BAD_TEXT
    missing = await broker.act("ask_bad", ADA, Submit(typed={0: "   "}))
    assert isinstance(missing, Refused)
    assert missing.reason is Refusal.MISSING_ANSWERS
    assert [e.kind for e in await broker.events("ask_bad")] == ["created", "posted"]


async def test_own_words_agree_only_when_they_are_the_same(broker: Broker) -> None:
    await ask(broker, "ask_vote", questions=[DEPLOY], quorum=2, allow_other=True)
    first = await broker.act("ask_vote", ADA, Submit(typed={0: "After 18:00"}))
    assert isinstance(first, Counted)
    other = await broker.act("ask_vote", LIN, Submit(typed={0: "after 18:00"}))
    assert isinstance(other, Counted)
    assert [row.count for row in other.view.tally] == [1, 1]
    same = await broker.act("ask_vote", LIN, Submit(typed={0: "  After 18:00\n"}))
    assert isinstance(same, Decided)
    assert same.view.answers == {"Deploy": "After 18:00"}
    assert [p.name for p in same.view.deciders] == ["Ada", "Lin"]


def test_a_request_names_whether_it_takes_words_and_notes() -> None:
    ask = Ask.parse({"questions": [DEPLOY], "allowOther": True, "allowNotes": "true"})
    assert ask.policy.allow_other
    assert ask.policy.allow_notes
    assert not Ask.parse({"questions": [DEPLOY]}).policy.allow_other
    assert UserQuestion.model_validate(DEPLOY).header == "Deploy"
