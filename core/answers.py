"""Turning a person's selections into the answers map the agent receives, and back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.errors import MissingAnswers
from core.models import Selections, UserQuestion

# Multi-select answers join the chosen labels with this, so no such label may contain it.
MULTI_SELECT_SEPARATOR = ", "


def unanswered(questions: Sequence[UserQuestion], selections: Selections) -> list[str]:
    """Headers of the questions that have no selection yet."""
    return [q.header for i, q in enumerate(questions) if not selections.get(i)]


def to_answers(questions: Sequence[UserQuestion], selections: Selections) -> dict[str, str]:
    """Answers keyed by header.

    Multi-select labels are joined in the order the options were given, not the order they
    were clicked, so the same choice always gives the same answer.
    """
    missing = unanswered(questions, selections)
    if missing:
        raise MissingAnswers(missing)
    answers: dict[str, str] = {}
    for index, question in enumerate(questions):
        chosen = sorted(set(selections[index]))
        if not question.multi_select:
            chosen = chosen[-1:]
        answers[question.header] = MULTI_SELECT_SEPARATOR.join(
            question.options[o].label for o in chosen
        )
    return answers


def to_selections(
    questions: Sequence[UserQuestion], answers: Mapping[str, str]
) -> Selections | None:
    """The selections an answers map stands for, or None when it does not fit the questions."""
    if set(answers) != {q.header for q in questions}:
        return None
    selections: Selections = {}
    for index, question in enumerate(questions):
        labels = [question.options[i].label for i in range(len(question.options))]
        text = answers[question.header]
        parts = text.split(MULTI_SELECT_SEPARATOR) if question.multi_select else [text]
        if any(part not in labels for part in parts) or len(set(parts)) != len(parts):
            return None
        selections[index] = tuple(sorted(labels.index(part) for part in parts))
    return selections


def merge(base: Selections, update: Selections) -> Selections:
    merged = dict(base)
    merged.update(update)
    return merged
