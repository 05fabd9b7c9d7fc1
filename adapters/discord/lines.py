"""The short texts about people and votes in a Discord message, note or reminder: names,
mentions of who may answer, the tally, times; each safe in Discord markdown."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import discord

from askbridge.adapters.discord.text import join_within, line, shorten
from askbridge.core.models import Person
from askbridge.core.view import RequestView, TallyRow, more_answers, plain_name

MAX_NAME = 100
MAX_WHO = 300
"""Who may answer, on the message: whole mentions only, then "and N more"."""
MAX_REMINDER_WHO = 1500
MAX_SUMMARY = 120
"""One distinct answer in the tally."""
MAX_VOTERS = 200
MAX_TALLY_ROWS = 3

DISCORD_ANSWERER = re.compile(r"discord(?:(?P<role>-role):|:@?)(?P<id>[0-9]{1,20})")
"""A Discord user (`discord:@<id>`, `discord:<id>`) or role (`discord-role:<id>`) answerer."""


def name(person: Person) -> str:
    """A person's name, safe in Discord markdown."""
    return shorten(line(plain_name(person)), MAX_NAME)


def names(people: Sequence[Person], bold: bool = False, limit: int = MAX_VOTERS) -> str:
    shown = [f"**{name(p)}**" if bold else name(p) for p in people]
    return join_within(shown, min(limit, MAX_VOTERS)) or "someone"


def summary(view: RequestView, answers: Mapping[str, str], limit: int = MAX_SUMMARY) -> str:
    """One set of answers in a line: the label alone for a single question."""
    return shorten(line(view.summary(answers)), min(limit, MAX_SUMMARY))


def tally_lines(view: RequestView, rows: Sequence[TallyRow], limit: int = MAX_VOTERS) -> list[str]:
    """Each distinct answer with its count out of the quorum and its voters, most first; each
    answer and each list of voters cut to `limit`."""
    lines = [
        "- "
        + view.tally_line(row).format(
            answers=f"**{summary(view, row.answers, limit)}**",
            voters=names(row.voters, limit=limit),
        )
        for row in rows[:MAX_TALLY_ROWS]
    ]
    if len(rows) > MAX_TALLY_ROWS:
        lines.append(f"- {more_answers(len(rows) - MAX_TALLY_ROWS)}")
    return lines


def reminder(view: RequestView) -> str:
    """The reply that nudges the answerers of a request that is still waiting."""
    who = answerers_text(view.answerers, MAX_REMINDER_WHO)
    return f"⏰ {view.reminder.format(answerers=who, **deadline_slots(view))}"


def deadline_slots(view: RequestView, limit: int = MAX_SUMMARY) -> dict[str, str]:
    """The deadline (when, and how long from now, in each reader's time zone) and the answer it
    gives (cut to `limit`), as the view's sentences about it take them."""
    deadline = view.deadline
    when = "" if deadline is None else f"{timestamp(deadline)} ({timestamp(deadline, 'R')})"
    default = view.default_answers
    answers = "" if default is None else f"**{summary(view, default, limit)}**"
    return {"deadline": when, "answers": answers}


def timestamp(when: datetime, style: Any = "f") -> str:
    """A time each reader sees in their own time zone."""
    return discord.utils.format_dt(when, style)


def mention(entry: str) -> str:
    """An answerer entry as Discord shows it: a user or role mention, else the entry itself
    (a Slack user or a web name can answer elsewhere, not here)."""
    found = DISCORD_ANSWERER.fullmatch(entry)
    if found is None:
        return f"`{entry}`"
    return f"<@&{found['id']}>" if found["role"] else f"<@{found['id']}>"


def answerers_text(answerers: Sequence[str], limit: int = MAX_WHO) -> str:
    return join_within((mention(a) for a in answerers), limit)
