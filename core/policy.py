"""Who may answer a request, checked the same way for every surface."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.answers import to_selections
from core.errors import InvalidQuestion, Problem
from core.models import Person, Policy, UserQuestion

# `platform:id` names one person; `platform-kind:id` (slack-group:S…, discord-role:…) a group
# that the person's surface resolves into `Person.groups`. The broker knows no platform.
ANSWERER = re.compile(r"(?P<kind>[a-z]+(?:-[a-z]+)?):(?P<id>@?[A-Za-z0-9_.-]{1,64})")
MAX_QUORUM = 50


def build_policy(
    questions: Sequence[UserQuestion],
    *,
    answerers: Any = None,
    quorum: Any = None,
    on_timeout: Any = None,
    remind_after_s: Any = None,
) -> Policy:
    """Check the approval fields of a request; every problem becomes part of one 422."""
    problems: list[Problem] = []
    entries = _answerers(answerers, problems)
    count = 1 if quorum is None else quorum
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_QUORUM:
        problems.append(
            Problem("quorum", f"must be a whole number from 1 to {MAX_QUORUM}, got {quorum!r}")
        )
        count = 1
    people = [e for e in entries if "-" not in e.split(":", 1)[0]]
    if entries and len(people) == len(entries) and count > len(people):
        problems.append(
            Problem(
                "quorum",
                f"{count} votes can never come from {len(people)} answerers; "
                "lower the quorum or add answerers",
            )
        )
    timeout_answers = _timeout_answers(questions, on_timeout, problems)
    if remind_after_s is not None and (
        isinstance(remind_after_s, bool)
        or not isinstance(remind_after_s, int | float)
        or remind_after_s <= 0
    ):
        problems.append(
            Problem(
                "remind_after_s", f"must be a positive number of seconds, got {remind_after_s!r}"
            )
        )
        remind_after_s = None
    if problems:
        raise InvalidQuestion(problems)
    return Policy(
        answerers=tuple(entries),
        quorum=count,
        timeout_answers=timeout_answers,
        remind_after_s=None if remind_after_s is None else float(remind_after_s),
    )


def may_answer(policy: Policy, person: Person) -> bool:
    if not policy.answerers:
        return True
    for entry in policy.answerers:
        kind, _, value = entry.partition(":")
        if kind == person.platform and value.lstrip("@") == person.id:
            return True
        if entry in person.groups:
            return True
    return False


def _answerers(raw: Any, problems: list[Problem]) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = [part for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list):
        problems.append(Problem("answerers", f"must be a list of strings, got {raw!r}"))
        return []
    entries: list[str] = []
    for index, entry in enumerate(raw):
        text = entry.strip() if isinstance(entry, str) else entry
        if not isinstance(text, str) or not ANSWERER.fullmatch(text):
            problems.append(
                Problem(
                    f"answerers[{index}]",
                    "must be slack:U…, slack-group:S…, discord:@<user id>, "
                    f"discord-role:<role id> or web:<name>, got {entry!r}",
                )
            )
        elif text not in entries:
            entries.append(text)
    return entries


def _timeout_answers(
    questions: Sequence[UserQuestion], raw: Any, problems: list[Problem]
) -> dict[str, str] | None:
    if raw is None or raw == "expire":
        return None
    answers = raw.get("answers") if isinstance(raw, dict) else None
    if not isinstance(answers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in answers.items()
    ):
        problems.append(
            Problem(
                "on_timeout", f'must be "expire" or {{"answers": {{header: label}}}}, got {raw!r}'
            )
        )
        return None
    if to_selections(questions, answers) is None:
        headers = ", ".join(repr(q.header) for q in questions)
        problems.append(
            Problem(
                "on_timeout.answers",
                f"must answer every question ({headers}) with its option labels "
                f"(multi-select joined with ', '), got {answers!r}",
            )
        )
        return None
    return dict(answers)
