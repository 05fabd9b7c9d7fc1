"""The rules of an ask's `questions`: 1-4 questions, 2-4 options each, and what makes their
answers (keyed by header, multi-select labels joined with ", ") read back without loss."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter, ValidationError

from askbridge.core.answers import MULTI_SELECT_SEPARATOR
from askbridge.core.errors import Problem
from askbridge.core.models import UserQuestion
from askbridge.core.problems import broken, invalid, rule, shown, shown_texts

MIN_QUESTIONS, MAX_QUESTIONS = 1, 4
MIN_OPTIONS, MAX_OPTIONS = 2, 4
MAX_HEADER_CHARS = 12
MIN_LABEL_WORDS, MAX_LABEL_WORDS = 1, 5


def _a_list_of_questions(raw: Any) -> Any:
    if not isinstance(raw, list | tuple):
        kind = "null" if raw is None else type(raw).__name__
        raise rule(f"must be a list of {MIN_QUESTIONS}-{MAX_QUESTIONS} questions, got {kind}")
    return raw


def _question_rules(questions: tuple[UserQuestion, ...]) -> tuple[UserQuestion, ...]:
    problems = list(_question_problems(questions))
    if problems:
        raise broken(*problems)
    return questions


def _question_problems(questions: tuple[UserQuestion, ...]) -> Iterator[Problem]:
    if not MIN_QUESTIONS <= len(questions) <= MAX_QUESTIONS:
        yield Problem(
            "", f"must hold {MIN_QUESTIONS}-{MAX_QUESTIONS} questions, got {len(questions)}"
        )
    seen_headers: dict[str, int] = {}
    for q_index, question in enumerate(questions):
        where = f"[{q_index}]"
        yield from shown_texts(where, question=question.question, header=question.header)
        if not question.question.strip():
            yield Problem(f"{where}.question", "must be a non-empty question text")
        header = question.header
        if not header.strip():
            yield Problem(f"{where}.header", "must be a short label of 1-12 characters, got ''")
        elif len(header) > MAX_HEADER_CHARS:
            yield Problem(
                f"{where}.header",
                f"must be at most {MAX_HEADER_CHARS} characters, got {shown(header)} "
                f"({len(header)} characters)",
            )
        if header in seen_headers:
            yield Problem(
                f"{where}.header",
                f"must be unique within the request (answers are keyed by header), "
                f"{shown(header)} is also the header of questions[{seen_headers[header]}]",
            )
        else:
            seen_headers[header] = q_index
        yield from _option_problems(where, question)


def _option_problems(where: str, question: UserQuestion) -> Iterator[Problem]:
    options = question.options
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        yield Problem(
            f"{where}.options",
            f"must hold {MIN_OPTIONS}-{MAX_OPTIONS} options, got {len(options)}",
        )
    seen_labels: dict[str, int] = {}
    for o_index, option in enumerate(options):
        yield from shown_texts(
            f"{where}.options[{o_index}]", label=option.label, description=option.description
        )
        at = f"{where}.options[{o_index}].label"
        label = option.label
        words = len(label.split())
        if not MIN_LABEL_WORDS <= words <= MAX_LABEL_WORDS:
            yield Problem(
                at,
                f"must be {MIN_LABEL_WORDS}-{MAX_LABEL_WORDS} words, "
                f"got {shown(label)} ({words} words)",
            )
        if label in seen_labels:
            yield Problem(
                at,
                f"must be unique within the question, {shown(label)} is also "
                f"options[{seen_labels[label]}]",
            )
        else:
            seen_labels[label] = o_index
        if question.multi_select and MULTI_SELECT_SEPARATOR in label:
            yield Problem(
                at,
                f"must not contain {MULTI_SELECT_SEPARATOR!r} in a multi-select question "
                f"(answers join labels with it), got {shown(label)}",
            )


Questions = Annotated[
    tuple[UserQuestion, ...],
    BeforeValidator(_a_list_of_questions),
    AfterValidator(_question_rules),
    Field(json_schema_extra={"minItems": MIN_QUESTIONS, "maxItems": MAX_QUESTIONS}),
]
_QUESTIONS: TypeAdapter[tuple[UserQuestion, ...]] = TypeAdapter(Questions)


def parse_questions(raw: Any) -> tuple[UserQuestion, ...]:
    """The `questions` of an ask on their own, checked, or InvalidQuestion."""
    try:
        return _QUESTIONS.validate_python(raw)
    except ValidationError as error:
        raise invalid(error, "questions") from None
