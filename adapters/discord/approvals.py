"""Team approvals as Discord shows them: who may answer, the live tally, reminders, roles.

The broker decides who may answer and when a request is decided; this module only turns a
request's policy and votes into Discord text, and a clicking member's roles into the group
entries (`discord-role:<id>`) the broker checks answerers against.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import discord

from adapters.discord.text import join_within, shorten
from core.models import Person, Request, Status

SNOWFLAKE = re.compile(r"[0-9]{1,20}")
USER_KIND, ROLE_KIND = "discord", "discord-role"
MAX_WHO = 300
"""Who may answer, on the message: whole mentions only, then "and N more"."""
MAX_REMINDER_WHO = 1500
MAX_SUMMARY = 120
"""One distinct answer in the tally."""
MAX_VOTERS = 200
MAX_TALLY_ROWS = 3
MAX_PINGS = 100
"""Discord's limit on the users (and on the roles) one message may ping."""


# --- who may answer -----------------------------------------------------------------


def user_id(entry: str) -> str | None:
    """The user id of a `discord:@<id>` (or `discord:<id>`) answerer entry, else None."""
    kind, _, value = entry.partition(":")
    value = value.removeprefix("@")
    return value if kind == USER_KIND and SNOWFLAKE.fullmatch(value) else None


def role_id(entry: str) -> str | None:
    """The role id of a `discord-role:<id>` answerer entry, else None."""
    kind, _, value = entry.partition(":")
    return value if kind == ROLE_KIND and SNOWFLAKE.fullmatch(value) else None


def mention(entry: str) -> str:
    """An answerer entry as Discord shows it: a user or role mention, else the entry itself
    (a Slack user or a web name can answer elsewhere, not here)."""
    if (user := user_id(entry)) is not None:
        return f"<@{user}>"
    if (role := role_id(entry)) is not None:
        return f"<@&{role}>"
    return f"`{entry}`"


def who_may_answer(answerers: Sequence[str], limit: int = MAX_WHO) -> str:
    return join_within((mention(a) for a in answerers), limit)


def not_eligible(answerers: Sequence[str]) -> str:
    """The private note for someone who may not answer; nothing of theirs was recorded."""
    return (
        f"Only {who_may_answer(answerers)} may answer this question, so your click was not "
        "counted. Ask one of them to decide."
    )


def pings(answerers: Sequence[str]) -> discord.AllowedMentions:
    """Exactly the Discord users and roles among the answerers may be pinged; nobody else."""
    users = [discord.Object(id=int(u)) for a in answerers if (u := user_id(a)) is not None]
    roles = [discord.Object(id=int(r)) for a in answerers if (r := role_id(a)) is not None]
    return discord.AllowedMentions(
        everyone=False,
        users=users[:MAX_PINGS] or False,
        roles=roles[:MAX_PINGS] or False,
        replied_user=False,
    )


def groups(user: discord.User | discord.Member, guild_id: int | None) -> tuple[str, ...]:
    """The clicking member's roles as answerer entries; none in a DM.

    The role ids come from the interaction's own member object, so they are right even for
    a role the client's cache has not seen. The guild's id is its @everyone role.
    """
    if not isinstance(user, discord.Member) or guild_id is None:
        return ()
    ids = {int(r) for r in getattr(user, "_roles", ())}
    ids.update(role.id for role in user.roles)
    ids.add(guild_id)
    return tuple(f"{ROLE_KIND}:{i}" for i in sorted(ids))


# --- votes --------------------------------------------------------------------------


def summary(request: Request, answers: Mapping[str, str]) -> str:
    """One set of answers in a line: the label alone for a single question."""
    if len(request.questions) == 1:
        text = answers.get(request.questions[0].header, "")
    else:
        text = "; ".join(f"{q.header}: {answers.get(q.header, '')}" for q in request.questions)
    return shorten(plain(text), MAX_SUMMARY)


def plain(text: str) -> str:
    """Text shown as written: a `*` or a ``` in a name or label must not restyle the message."""
    return discord.utils.escape_markdown(text)


def names(people: Sequence[Person], limit: int = MAX_VOTERS, bold: bool = False) -> str:
    shown = [shorten(plain(p.name or p.id), 100) for p in people]
    if bold:
        shown = [f"**{n}**" for n in shown]
    return join_within(shown, limit)


def tally_lines(request: Request, skip: Mapping[str, str] | None = None) -> list[str]:
    """Each distinct answer with its count out of the quorum and its voters, most first."""
    rows = [(a, p) for a, p in request.tally() if skip is None or a != skip]
    quorum = request.policy.quorum
    lines = [
        f"- **{summary(request, answers)}** — {len(people)}/{quorum} ({names(people)})"
        for answers, people in rows[:MAX_TALLY_ROWS]
    ]
    if len(rows) > MAX_TALLY_ROWS:
        lines.append(f"- and {len(rows) - MAX_TALLY_ROWS} more answers")
    return lines


def matching(request: Request, answers: Mapping[str, str]) -> list[Person]:
    """Who voted for exactly these answers."""
    return [v.person for v in request.votes if v.answers == dict(answers)]


def vote_note(request: Request, person: Person) -> str | None:
    """The private note after a vote that did not decide the request yet."""
    if request.policy.quorum <= 1 or request.status is not Status.WAITING:
        return None
    vote = next((v for v in request.votes if v.person.key == person.key), None)
    if vote is None:
        return None
    count = len(matching(request, vote.answers))
    return (
        f"Your vote is counted: {count} of {request.policy.quorum} matching votes so far, for "
        f"**{summary(request, vote.answers)}**. You can change it until the question is decided."
    )


# --- the waiting message ------------------------------------------------------------


def policy_lines(request: Request) -> list[str]:
    """Who may answer, how many must agree and the tally, and what the deadline does."""
    policy = request.policy
    lines: list[str] = []
    if policy.answerers:
        lines.append(f"**Who may answer:** {who_may_answer(policy.answerers)}")
    if policy.quorum > 1:
        lines.append(f"**Needs {policy.quorum} matching votes**")
        lines.extend(tally_lines(request))
    if request.expires_at is not None:
        when = timestamp(request.expires_at, "R")
        if policy.timeout_answers is not None:
            default = summary(request, policy.timeout_answers)
            lines.append(
                f"⏳ If nobody decides {when}, the answer is **{default}** (decided by timeout)"
            )
        else:
            lines.append(f"⏳ Expires {when} unless answered first")
    return lines


def timestamp(when: datetime, style: Any = "f") -> str:
    """A time each reader sees in their own time zone."""
    return discord.utils.format_dt(when, style)


# --- reminders ----------------------------------------------------------------------


def reminder_text(request: Request) -> str:
    """The reply that nudges the answerers of a request that is still waiting."""
    policy = request.policy
    still = "this question is still waiting for an answer"
    details: list[str] = []
    if policy.quorum > 1:
        best = max((len(p) for _, p in request.tally()), default=0)
        details.append(f"{best} of {policy.quorum} matching votes so far")
    if request.expires_at is not None:
        verb = "is decided by timeout" if policy.timeout_answers is not None else "expires"
        details.append(f"it {verb} {timestamp(request.expires_at, 'R')}")
    tail = f" ({'; '.join(details)})" if details else ""
    if policy.answerers:
        who = who_may_answer(policy.answerers, MAX_REMINDER_WHO)
        return f"⏰ Reminder for {who}: {still}{tail}."
    return f"⏰ Reminder: {still}{tail}."
