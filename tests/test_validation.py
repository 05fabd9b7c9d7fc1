"""The AskUserQuestion rules: each failure names where, which rule, and the bad value."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askbridge.core.answers import to_answers, to_selections
from askbridge.core.errors import InvalidQuestion, MissingAnswers
from askbridge.core.models import AskUserQuestion, Person, UserQuestion, UserQuestionResponse
from askbridge.core.questions import parse_questions
from askbridge.core.wire import ask_frame, parse_frame, question_response
from tests.conftest import DATABASE


def questions() -> list[dict[str, Any]]:
    return copy.deepcopy(DATABASE["questions"])  # type: ignore[arg-type]


def problems(raw: Any) -> list[str]:
    with pytest.raises(InvalidQuestion) as caught:
        parse_questions(raw)
    return [str(p) for p in caught.value.problems]


def test_the_spec_example_is_valid_and_accepts_both_spellings() -> None:
    parsed = parse_questions(questions())
    assert [q.header for q in parsed] == ["Database", "Features"]
    assert [q.multi_select for q in parsed] == [False, True]
    snake = questions()
    snake[1]["multi_select"] = snake[1].pop("multiSelect")
    assert parse_questions(snake) == parsed


def test_unknown_fields_are_ignored() -> None:
    raw = questions()
    raw[0]["icon"] = "db"
    raw[0]["options"][0]["color"] = "blue"
    assert parse_questions(raw)[0].options[0].label == "PostgreSQL"


def test_questions_must_be_a_list_of_one_to_four() -> None:
    assert problems({"question": "x"}) == ["questions: must be a list of 1-4 questions, got dict"]
    assert problems([]) == ["questions: must hold 1-4 questions, got 0"]
    five = [dict(questions()[0], header=f"H{i}") for i in range(5)]
    assert problems(five) == ["questions: must hold 1-4 questions, got 5"]


def test_two_to_four_options() -> None:
    raw = questions()
    raw[0]["options"] = raw[0]["options"][:1]
    assert problems(raw) == ["questions[0].options: must hold 2-4 options, got 1"]
    raw = questions()
    raw[1]["options"] += [
        {"label": "Tracing", "description": ""},
        {"label": "Alerts", "description": ""},
    ]
    assert problems(raw) == ["questions[1].options: must hold 2-4 options, got 5"]


def test_header_is_one_to_twelve_characters() -> None:
    raw = questions()
    raw[0]["header"] = "Database engine"
    assert problems(raw) == [
        "questions[0].header: must be at most 12 characters, got 'Database engine' (15 characters)"
    ]
    raw[0]["header"] = "  "
    assert problems(raw) == [
        "questions[0].header: must be a short label of 1-12 characters, got ''"
    ]


def test_label_is_one_to_five_words() -> None:
    raw = questions()
    raw[0]["options"][1]["label"] = "a very small embedded sql database"
    assert problems(raw) == [
        "questions[0].options[1].label: must be 1-5 words, "
        "got 'a very small embedded sql database' (6 words)"
    ]
    raw[0]["options"][1]["label"] = " "
    assert problems(raw) == ["questions[0].options[1].label: must be 1-5 words, got ' ' (0 words)"]


def test_a_text_people_read_must_read_as_the_agent_wrote_it() -> None:
    raw = questions()
    raw[0]["options"][1]["label"] = "No \u202eseY"
    raw[0]["question"] = "Ship build \u20669871\u2069 now?"
    raw[1]["options"][0]["description"] = "\u202bcached\u202c"
    raw[1]["header"] = "Fea\u202dtures"
    assert problems(raw) == [
        "questions[0].question: must not contain LEFT-TO-RIGHT ISOLATE (U+2066, at character "
        "11): it reorders what people read; write the text in the order it is read",
        "questions[0].options[1].label: must not contain RIGHT-TO-LEFT OVERRIDE (U+202E, at "
        "character 3): it reorders what people read; write the text in the order it is read",
        "questions[1].header: must not contain LEFT-TO-RIGHT OVERRIDE (U+202D, at character 3): "
        "it reorders what people read; write the text in the order it is read",
        "questions[1].options[0].description: must not contain RIGHT-TO-LEFT EMBEDDING (U+202B, "
        "at character 0): it reorders what people read; write the text in the order it is read",
    ]
    # Right-to-left text needs none of them, and the marks mixed text uses are let through.
    raw = questions()
    raw[0]["options"][1]["label"] = "\u05e9\u05dc\u05d5\u05dd"
    raw[0]["question"] = "Use C++ \u200f(\u05e2\u05d1\u05e8\u05d9\u05ea)?"
    assert parse_questions(raw)[0].options[1].label == "\u05e9\u05dc\u05d5\u05dd"


def test_a_display_name_cannot_turn_the_sentence_around_it() -> None:
    person = Person(platform="slack", id="U1", name="mallory\u202e\u2066 (admin)\u2069")
    assert person.name == "mallory (admin)"
    assert Person.model_validate_json(person.model_dump_json()).name == "mallory (admin)"
    assert Person(platform="slack", id="U2", name="\u05e9\u05dc\u05d5\u05dd\u200f").name == (
        "\u05e9\u05dc\u05d5\u05dd\u200f"
    ), "a mark is let through"


def test_question_text_must_not_be_empty() -> None:
    raw = questions()
    raw[1]["question"] = ""
    assert problems(raw) == ["questions[1].question: must be a non-empty question text"]


def test_headers_unique_within_a_request() -> None:
    raw = questions()
    raw[1]["header"] = "Database"
    assert problems(raw) == [
        "questions[1].header: must be unique within the request (answers are keyed by header), "
        "'Database' is also the header of questions[0]"
    ]


def test_labels_unique_within_a_question() -> None:
    raw = questions()
    raw[1]["options"][2]["label"] = "Caching"
    assert problems(raw) == [
        "questions[1].options[2].label: must be unique within the question, "
        "'Caching' is also options[0]"
    ]


def test_multi_select_label_must_not_contain_the_separator() -> None:
    raw = questions()
    raw[1]["options"][0]["label"] = "Caching, fast"
    assert problems(raw) == [
        "questions[1].options[0].label: must not contain ', ' in a multi-select question "
        "(answers join labels with it), got 'Caching, fast'"
    ]
    # In a single-select question the separator is harmless.
    raw = questions()
    raw[0]["options"][0]["label"] = "Postgres, managed"
    assert parse_questions(raw)[0].options[0].label == "Postgres, managed"


def test_wrong_types_name_the_field() -> None:
    raw = questions()
    raw[0]["options"][0]["label"] = 7
    del raw[1]["header"]
    assert problems(raw) == [
        "questions[0].options[0].label: input should be a valid string, got 7",
        "questions[1].header: field required",
    ]


def test_all_problems_are_reported_at_once_in_the_error_text() -> None:
    raw = questions()
    raw[0]["header"] = "A header that is long"
    raw[1]["options"] = raw[1]["options"][:1]
    with pytest.raises(InvalidQuestion) as caught:
        parse_questions(raw)
    text = str(caught.value)
    assert text.startswith("AskUserQuestion was rejected (2 problems); fix the call and ask again:")
    assert "- questions[0].header: must be at most 12 characters" in text
    assert "- questions[1].options: must hold 2-4 options, got 1" in text


def test_answers_are_keyed_by_header_in_option_order() -> None:
    parsed = parse_questions(questions())
    # Metrics clicked before Caching: the answer still follows the options' order.
    assert to_answers(parsed, {0: (0,), 1: (2, 0)}) == {
        "Database": "PostgreSQL",
        "Features": "Caching, Metrics",
    }
    with pytest.raises(MissingAnswers) as caught:
        to_answers(parsed, {0: (1,)})
    assert caught.value.headers == ["Features"]
    assert str(caught.value) == 'Please answer "Features" before submitting.'


def test_answers_map_back_to_selections() -> None:
    parsed = parse_questions(questions())
    assert to_selections(parsed, {"Database": "SQLite", "Features": "Logging, Metrics"}) == {
        0: (1,),
        1: (1, 2),
    }
    assert to_selections(parsed, {"Database": "Oracle", "Features": "Logging"}) is None
    assert to_selections(parsed, {"Database": "SQLite"}) is None


def test_wire_frames_are_externally_tagged_snake_case() -> None:
    frame = {"AskUserQuestion": {"request_id": "ask_1", "questions": questions()}}
    ask = parse_frame(json.loads(json.dumps(frame)))
    assert isinstance(ask, AskUserQuestion)
    out = ask_frame(ask)
    assert out["AskUserQuestion"]["questions"][1]["multi_select"] is True
    assert "multiSelect" not in json.dumps(out)
    assert parse_frame("Interrupt") == "Interrupt"
    assert parse_frame({"TextDelta": "hello"}) is None
    assert question_response("ask_1", {"Database": "SQLite"}) == {
        "UserQuestionResponse": {"request_id": "ask_1", "answers": {"Database": "SQLite"}}
    }
    camel = {"UserQuestionResponse": {"requestId": "ask_2", "answers": {}}}
    assert parse_frame(camel) == UserQuestionResponse(request_id="ask_2", answers={})


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzÄé", min_size=1, max_size=8)
labels = st.lists(words, min_size=1, max_size=5).map(" ".join)
option_lists = st.lists(labels, min_size=2, max_size=4, unique=True).map(
    lambda ls: [{"label": label, "description": f"about {label}"} for label in ls]
)
question_lists = st.lists(
    st.fixed_dictionaries(
        {
            "question": words.map(lambda w: w + "?"),
            "header": st.text(alphabet="ABCDEFGHIJ", min_size=1, max_size=12),
            "multiSelect": st.booleans(),
            "options": option_lists,
        }
    ),
    min_size=1,
    max_size=4,
    unique_by=lambda q: q["header"],
)


@given(question_lists, st.data())
def test_round_trip_through_the_wire_and_answers(raw: list[dict[str, Any]], data: Any) -> None:
    frame = {"AskUserQuestion": {"requestId": "ask_x", "questions": raw}}
    ask = parse_frame(json.loads(json.dumps(frame)))
    assert isinstance(ask, AskUserQuestion)
    again = parse_frame(json.loads(json.dumps(ask_frame(ask))))
    assert again == ask
    parsed = parse_questions(raw)
    assert parsed == ask.questions
    selections = {}
    for index, question in enumerate(parsed):
        count = len(question.options)
        if question.multi_select:
            picked = data.draw(st.sets(st.integers(0, count - 1), min_size=1))
        else:
            picked = {data.draw(st.integers(0, count - 1))}
        selections[index] = tuple(sorted(picked))
    answers = to_answers(parsed, selections)
    assert set(answers) == {q.header for q in parsed}
    assert to_selections(parsed, answers) == selections
    response = parse_frame(json.loads(json.dumps(question_response("ask_x", answers))))
    assert response == UserQuestionResponse(request_id="ask_x", answers=answers)


def test_a_question_model_is_a_value() -> None:
    one = UserQuestion.model_validate(questions()[0])
    two = UserQuestion.model_validate(questions()[0])
    assert one == two
    assert hash(one) == hash(two)
