"""The renderer on its own: layout, Discord's limits for any request, and the ended states."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord.render import render
from adapters.discord.text import fit, shorten
from core.models import Person, Request, Status, Target
from core.validation import parse_questions
from tests.conftest import DATABASE
from tests.emulators.discord import validate_message
from tests.emulators.discord.components import (
    ACTION_ROW,
    BUTTON,
    CONTAINER,
    SEPARATOR,
    STRING_SELECT,
    TEXT_DISPLAY,
    count_components,
    has_interactive_components,
    visible_text,
    walk,
)

COMPONENTS_V2 = 1 << 15
WHEN = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
ALICE = Person(platform="discord", id="4242", name="Alice")


def request(questions: Any, context: str | None = None, **ending: Any) -> Request:
    return Request(
        request_id="ask_r",
        questions=parse_questions(questions),
        targets=(Target(platform="discord", channel="1"),),
        context=context,
        created_at=WHEN,
        **ending,
    )


def payload(req: Request) -> dict[str, Any]:
    """The message body discord.py sends for the rendered view."""
    components: list[dict[str, Any]] = render(req).to_components()  # type: ignore[no-untyped-call]
    return {"flags": COMPONENTS_V2, "components": components}


def of_type(message: dict[str, Any], kind: int) -> list[dict[str, Any]]:
    return [p.component for p in walk(message["components"]) if p.component["type"] == kind]


def text(message: dict[str, Any]) -> str:
    return visible_text("", [], message["components"])


def test_the_spec_example_layout() -> None:
    message = payload(request(DATABASE["questions"], context="demo agent"))
    assert validate_message(message) is None
    [container] = message["components"]
    assert container["type"] == CONTAINER
    kinds = [c["type"] for c in container["components"]]
    # context; Database text + its buttons; Features text + its select; the hint; the controls
    assert kinds == [
        *(TEXT_DISPLAY, TEXT_DISPLAY, ACTION_ROW, TEXT_DISPLAY, ACTION_ROW),
        *(SEPARATOR, TEXT_DISPLAY, ACTION_ROW),
    ]

    buttons = of_type(message, BUTTON)
    assert [(b["label"], b["custom_id"]) for b in buttons] == [
        ("PostgreSQL", "ab:ask_r:o:0:0"),
        ("SQLite", "ab:ask_r:o:0:1"),
        ("Submit", "ab:ask_r:s"),
        ("Cancel", "ab:ask_r:c"),
    ]
    [select] = of_type(message, STRING_SELECT)
    assert select["custom_id"] == "ab:ask_r:m:1"
    assert (select["min_values"], select["max_values"]) == (1, 3)
    assert [(o["label"], o["value"], o["description"]) for o in select["options"]] == [
        ("Caching", "0", "Response caching"),
        ("Logging", "1", "Detailed logs"),
        ("Metrics", "2", "Performance monitoring"),
    ]
    assert "**PostgreSQL** — Relational with advanced features" in text(message)


def test_one_single_select_question_has_no_submit() -> None:
    message = payload(request(DATABASE["questions"][:1]))
    assert [b["label"] for b in of_type(message, BUTTON)] == ["PostgreSQL", "SQLite", "Cancel"]
    assert {b["style"] for b in of_type(message, BUTTON)[:2]} == {1}  # primary: they answer


def test_a_single_multi_select_question_still_needs_submit() -> None:
    message = payload(request(DATABASE["questions"][1:]))
    assert [b["label"] for b in of_type(message, BUTTON)] == ["Submit", "Cancel"]


def test_the_ended_message_has_no_controls_and_says_who_and_when() -> None:
    answers = {"Database": "PostgreSQL", "Features": "Caching, Metrics"}
    answered = request(
        DATABASE["questions"],
        status=Status.ANSWERED,
        answers=answers,
        answered_by=ALICE,
        ended_at=WHEN,
    )
    message = payload(answered)
    assert validate_message(message) is None
    assert not has_interactive_components(message["components"])
    assert of_type(message, ACTION_ROW) == []
    shown = text(message)
    assert "**Database** · Which database should we use?\n→ **PostgreSQL**" in shown
    assert "**Features** · Which features do you want?\n→ **Caching, Metrics**" in shown
    assert f"✅ Answered by **Alice** · <t:{int(WHEN.timestamp())}:f>" in shown


def test_every_ending_is_told() -> None:
    endings: dict[Status, tuple[str, dict[str, Any]]] = {
        Status.CANCELLED: ("✖️ Cancelled by **Alice**", {"cancelled_by": ALICE}),
        Status.EXPIRED: ("⌛ Expired unanswered", {}),
        Status.WITHDRAWN: ("↩️ Withdrawn by the agent", {}),
    }
    for status, (expected, extra) in endings.items():
        message = payload(request(DATABASE["questions"], status=status, ended_at=WHEN, **extra))
        assert validate_message(message) is None
        assert not has_interactive_components(message["components"])
        assert expected in text(message)
        assert "→" not in text(message)


words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Z", "C")), min_size=1)
long_text = st.text(min_size=1, max_size=3500).filter(str.strip)
option = st.fixed_dictionaries(
    {
        "label": st.lists(words, min_size=1, max_size=5).map(" ".join),
        "description": st.text(max_size=400),
    }
)


@st.composite
def requests(draw: st.DrawFn) -> Request:
    count = draw(st.integers(min_value=1, max_value=4))
    questions = []
    for q in range(count):
        multi = draw(st.booleans())
        options = draw(st.lists(option, min_size=2, max_size=4, unique_by=lambda o: o["label"]))
        if multi:
            # A multi-select label cannot hold the ", " that joins answers.
            for o in options:
                o["label"] = o["label"].replace(", ", ",")
            if len({o["label"] for o in options}) < len(options):
                multi = False
        questions.append(
            {
                "question": draw(long_text),
                "header": f"H{q}",
                "multiSelect": multi,
                "options": options,
            }
        )
    context = draw(st.none() | st.text(max_size=500))
    return request(questions, context=context)


@settings(max_examples=60, deadline=None)
@given(requests(), st.sampled_from(list(Status)))
def test_any_request_in_any_state_is_a_message_discord_accepts(
    req: Request, status: Status
) -> None:
    if status is not Status.WAITING:
        answers = {q.header: q.options[-1].label * 3 for q in req.questions}
        req = req.model_copy(
            update={"status": status, "ended_at": WHEN, "answers": answers, "answered_by": ALICE}
        )
    message = payload(req)
    assert validate_message(message) is None
    assert count_components(message["components"]) <= 40
    assert sum(len(t["content"]) for t in of_type(message, TEXT_DISPLAY)) <= 4000


def test_four_by_four_uses_31_of_40_components() -> None:
    questions = [
        {
            "question": f"Question {q}?",
            "header": f"Q{q}",
            "options": [{"label": f"Option {o}", "description": "d"} for o in range(4)],
        }
        for q in range(4)
    ]
    message = payload(request(questions, context="context"))
    assert validate_message(message) is None
    assert count_components(message["components"]) == 31


def test_shorten_and_fit() -> None:
    assert shorten("abc", 3) == "abc"
    assert shorten("abcd", 3) == "ab…"
    assert shorten("ab  cd", 4) == "ab…"
    assert shorten("abc", 0) == ""
    assert fit(["a" * 10, "b" * 2, "c" * 50], 30) == ["a" * 10, "b" * 2, "c" * 17 + "…"]
    assert fit(["a" * 40, "b" * 40], 30) == ["a" * 14 + "…", "b" * 14 + "…"]
    assert fit(["short"], 30) == ["short"]
