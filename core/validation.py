"""The AskUserQuestion rules, with errors a model can act on.

Each problem names the question/option index, the field, the rule and the offending value,
because this text is what the agent receives as its tool error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from core.errors import InvalidQuestion, Problem
from core.models import UserQuestion

MIN_QUESTIONS, MAX_QUESTIONS = 1, 4
MIN_OPTIONS, MAX_OPTIONS = 2, 4
MAX_HEADER_CHARS = 12
MIN_LABEL_WORDS, MAX_LABEL_WORDS = 1, 5
MULTI_SELECT_SEPARATOR = ", "


def parse_questions(raw: Any) -> tuple[UserQuestion, ...]:
    """Turn the `questions` value of a request into checked questions, or raise InvalidQuestion."""
    if not isinstance(raw, list):
        raise InvalidQuestion(
            [Problem("questions", f"must be a list of 1-4 questions, got {_kind(raw)}")]
        )
    problems: list[Problem] = []
    questions: list[UserQuestion] = []
    for index, item in enumerate(raw):
        try:
            questions.append(UserQuestion.model_validate(item))
        except ValidationError as error:
            problems.extend(_type_problems(f"questions[{index}]", error))
    if problems:
        raise InvalidQuestion(problems)
    check_questions(questions)
    return tuple(questions)


def check_questions(questions: list[UserQuestion] | tuple[UserQuestion, ...]) -> None:
    problems = list(_question_problems(questions))
    if problems:
        raise InvalidQuestion(problems)


def _question_problems(questions: list[UserQuestion] | tuple[UserQuestion, ...]) -> Any:
    if not MIN_QUESTIONS <= len(questions) <= MAX_QUESTIONS:
        yield Problem(
            "questions",
            f"must hold {MIN_QUESTIONS}-{MAX_QUESTIONS} questions, got {len(questions)}",
        )
    seen_headers: dict[str, int] = {}
    for q_index, question in enumerate(questions):
        where = f"questions[{q_index}]"
        if not question.question.strip():
            yield Problem(f"{where}.question", "must be a non-empty question text")
        header = question.header
        if not header.strip():
            yield Problem(f"{where}.header", "must be a short label of 1-12 characters, got ''")
        elif len(header) > MAX_HEADER_CHARS:
            yield Problem(
                f"{where}.header",
                f"must be at most {MAX_HEADER_CHARS} characters, got {header!r} "
                f"({len(header)} characters)",
            )
        if header in seen_headers:
            yield Problem(
                f"{where}.header",
                f"must be unique within the request (answers are keyed by header), "
                f"{header!r} is also the header of questions[{seen_headers[header]}]",
            )
        else:
            seen_headers[header] = q_index
        yield from _option_problems(where, question)


def _option_problems(where: str, question: UserQuestion) -> Any:
    options = question.options
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        yield Problem(
            f"{where}.options",
            f"must hold {MIN_OPTIONS}-{MAX_OPTIONS} options, got {len(options)}",
        )
    seen_labels: dict[str, int] = {}
    for o_index, option in enumerate(options):
        at = f"{where}.options[{o_index}].label"
        label = option.label
        words = len(label.split())
        if not MIN_LABEL_WORDS <= words <= MAX_LABEL_WORDS:
            yield Problem(
                at,
                f"must be {MIN_LABEL_WORDS}-{MAX_LABEL_WORDS} words, got {label!r} ({words} words)",
            )
        if label in seen_labels:
            yield Problem(
                at,
                f"must be unique within the question, {label!r} is also "
                f"options[{seen_labels[label]}]",
            )
        else:
            seen_labels[label] = o_index
        if question.multi_select and MULTI_SELECT_SEPARATOR in label:
            yield Problem(
                at,
                f"must not contain {MULTI_SELECT_SEPARATOR!r} in a multi-select question "
                f"(answers join labels with it), got {label!r}",
            )


def _type_problems(where: str, error: ValidationError) -> list[Problem]:
    problems = []
    for detail in error.errors():
        path = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in detail["loc"]
        )
        value = detail.get("input")
        shown = "" if isinstance(value, Mapping) else f", got {value!r}"
        if detail["type"] == "missing":
            shown = ""
        problems.append(Problem(f"{where}{path}", f"{detail['msg'].lower()}{shown}"))
    return problems


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__
