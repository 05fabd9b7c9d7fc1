"""Turning a person's selections (and words of their own) into the answers map the agent
receives, and back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from askbridge.core.errors import MissingAnswers
from askbridge.core.models import Policy, Selections, UserQuestion
from askbridge.core.problems import reordering_problem

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
    return {q.header: answer_text(q, selections[i], "") for i, q in enumerate(questions)}


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


def typing_hint(question: UserQuestion, own_words: bool) -> str:
    """What a field that takes a question's whole answer as typed text says it takes: its
    labels as the agent reads them (a multi-select's comma-separated), and words of one's own
    when the request takes them."""
    if question.multi_select:
        labels = MULTI_SELECT_SEPARATOR.join(o.label for o in question.options)
        return f"Any of {labels}, then your own words" if own_words else f"Any of {labels}"
    labels = " / ".join(o.label for o in question.options)
    return f"One of {labels}, or your own answer" if own_words else f"One of {labels}"


MAX_TYPED_CHARS = 2000

OWN_WORDS_TITLE = "Answer in your own words"
"""The title of the form for answers in one's own words (a platform may allow as few as 24
characters)."""
NOTE_TITLE = "Add a note"
"""The title of the form that only adds a note to one's picks."""
NOTE_LABEL = "A note for the agent"
NOTE_HINT = "The agent receives it with your answer."
NOTE_PLACEHOLDER = "Why, or on what condition (optional)"


def typed_problem(text: str) -> str | None:
    """Why words a person typed cannot be an answer or a note; None when they can."""
    shown = text.strip()
    if not shown:
        return "Please type something, or leave the field out."
    if len(shown) > MAX_TYPED_CHARS:
        return f"Please keep it to {MAX_TYPED_CHARS} characters (this is {len(shown)})."
    # A tab is kept as a line break is: a pasted reason or snippet holds them, and every
    # surface shows one as white space. Other control characters would show as nothing.
    if any((ord(c) < 32 and c not in "\n\t") or 127 <= ord(c) < 160 for c in shown):
        return "Please remove the control characters."
    if reordering_problem(shown) is not None:
        return "Please remove the characters that change the direction of the text."
    return None


def with_typed(
    question: UserQuestion, chosen: Sequence[int], typed: str
) -> tuple[tuple[int, ...], str]:
    """The options and the words of one's own that an answer stands for.

    What was typed is read as the agent would read it: an option's label is that option (so a
    field prefilled with what the person picked means those options), anything else is their
    own words, instead of the options of a single-select question, or after those of a
    multi-select one.
    """
    labels = [option.label for option in question.options]
    text = typed.strip()
    if not question.multi_select:
        if not text:
            return tuple(chosen)[-1:], ""
        return ((labels.index(text),), "") if text in labels else ((), text)
    picked = set(chosen)
    own = []
    for part in (p.strip() for p in text.split(MULTI_SELECT_SEPARATOR)):
        if part in labels:
            picked.add(labels.index(part))
        elif part:
            own.append(part)
    return tuple(sorted(picked)), MULTI_SELECT_SEPARATOR.join(own)


def answer_text(question: UserQuestion, chosen: Sequence[int], own: str) -> str:
    """One question's answer: its chosen labels in the order given, then the person's words."""
    picked = sorted(set(chosen)) if question.multi_select else sorted(set(chosen))[-1:]
    parts = [question.options[o].label for o in picked]
    if own:
        parts = [own] if not question.multi_select else [*parts, own]
    return MULTI_SELECT_SEPARATOR.join(parts)


def merge(base: Selections, update: Selections) -> Selections:
    merged = dict(base)
    merged.update(update)
    return merged


@dataclass(frozen=True)
class Ballot:
    """One person's vote as the agent will read it, or why it cannot be taken."""

    answers: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    problems: dict[int, str] = field(default_factory=dict)
    """Question index (-1: the note) -> what is wrong with what was typed there."""

    @property
    def ok(self) -> bool:
        return not self.missing and not self.problems


def ballot(
    questions: Sequence[UserQuestion],
    chosen: Selections,
    typed: Mapping[int, str],
    note: str,
    policy: Policy,
) -> Ballot:
    """The answers (and note) a submission gives, checked: every question answered, typed words
    allowed and well formed. A note belongs to the first question's answer."""
    answers: dict[str, str] = {}
    missing: list[str] = []
    problems: dict[int, str] = {}
    for index, question in enumerate(questions):
        picked, text = chosen.get(index, ()), typed.get(index, "")
        options, own = with_typed(question, picked, text)
        if not question.multi_select and len(picked) > 1 and not text.strip():
            problems[index] = "Please choose one option; this question takes one answer."
        elif own and not policy.allow_other:
            problems[index] = (
                "Please choose one of the options; this question takes no other answer."
            )
        elif own and (problem := typed_problem(own)) is not None:
            problems[index] = problem
        elif not options and not own:
            missing.append(question.header)
        else:
            answers[question.header] = answer_text(question, options, own)
    notes: dict[str, str] = {}
    if note.strip() and questions:
        if not policy.allow_notes:
            problems[-1] = "This question takes no notes."
        elif (problem := typed_problem(note)) is not None:
            problems[-1] = problem
        else:
            notes[questions[0].header] = note.strip()
    return Ballot(answers, notes, tuple(missing), problems)
