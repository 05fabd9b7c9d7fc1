"""HTML for the answer page, from `RequestView`: plain forms that work without a script.

The markup lives in `templates/`, rendered by one Jinja2 environment that escapes every value
(nothing marks text safe), so text from an agent or a person cannot become markup; the page has
no inline script or style (`CSP`). This module words the facts and hands them over as data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import jinja2
from aiohttp import web

from askbridge.adapters.web.clicks import CLICK_FIELD
from askbridge.core.answers import MAX_TYPED_CHARS, NOTE_LABEL, NOTE_PLACEHOLDER
from askbridge.core.changes import CHANGE_HINT, CHANGE_TITLE, MAX_CHANGE_CHARS
from askbridge.core.intents import CHANGED, NOTE
from askbridge.core.view import (
    CANCEL_QUESTION,
    CANCEL_WARNING,
    WHO_MAY_ANSWER,
    RequestView,
    TallyRow,
    missing_sentence,
    names,
)

CSP = (
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
CANCEL_CONFIRM = f"{CANCEL_QUESTION} {CANCEL_WARNING}"

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("askbridge.adapters.web", "templates"),
    autoescape=True,
    # A value a template names but is not given fails the page, instead of showing nothing.
    undefined=jinja2.StrictUndefined,
    # A block tag on its own line leaves no line behind, so the templates can be laid out.
    trim_blocks=True,
    lstrip_blocks=True,
)
"""Made once, when the module loads; its templates are compiled on first use and cached."""


def response(html: str, status: int = 200) -> web.Response:
    reply = web.Response(text=html, status=status, content_type="text/html")
    reply.headers.update(
        {
            "Cache-Control": "no-store",
            "X-Frame-Options": "DENY",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": CSP,
        }
    )
    return reply


def _page(template: str, title: str, *, version: int, watching: str = "", **values: Any) -> str:
    """A whole page; `watching`: the waiting request it shows, so the script can follow it."""
    return TEMPLATES.get_template(template).render(
        title=title, version=version, watching=watching, **values
    )


# --- what the templates are given ------------------------------------------------------------


@dataclass(frozen=True)
class ListItem:
    href: str
    question: str
    headers: tuple[str, ...]
    hint: str
    """The context, and how the request ended if it did."""


@dataclass(frozen=True)
class Choice:
    label: str
    description: str
    checked: bool


@dataclass(frozen=True)
class Field:
    """One question of the form."""

    name: str
    header: str
    question: str
    kind: str
    """'radio' or 'checkbox'."""
    hint: str
    options: tuple[Choice, ...]
    marked: bool
    """Not answered, or answered with a problem."""
    own: str | None
    """The words typed for it; None when it takes none."""
    besides: str
    problem: str | None


@dataclass(frozen=True)
class Change:
    """The inline form that allows the tool call with a changed input."""

    title: str
    label: str
    hint: str
    text: str
    max_chars: int
    problem: str | None


@dataclass(frozen=True)
class AnswerRow:
    header: str
    answer: str
    note: str | None


@dataclass(frozen=True)
class VoteLine:
    line: str
    decided: bool


# --- pages ---------------------------------------------------------------------------------


def index(
    waiting: Sequence[RequestView],
    ended: Iterable[RequestView],
    version: int,
    *,
    more: int = 0,
    paged: bool = False,
) -> str:
    """Waiting questions, newest first; `more`: how many older ones wait beyond the last, which
    a link pages to; `paged`: this is such a page, not the newest."""
    older = f"/?before={quote(waiting[-1].request_id, safe='')}" if more and waiting else ""
    return _page(
        "index.html",
        "Questions",
        version=version,
        waiting=[_list_item(v) for v in waiting],
        ended=[_list_item(v) for v in ended],
        paged=paged,
        more=more_line(more),
        older=older,
    )


def form(
    view: RequestView,
    *,
    token: str,
    version: int,
    click_id: str = "",
    chosen: Mapping[int, Sequence[int]] | None = None,
    missing: Sequence[str] = (),
    name: str = "",
    note: str = "",
    typed: Mapping[int, str] | None = None,
    their_note: str = "",
    problems: Mapping[int, str] | None = None,
    changed: str | None = None,
) -> str:
    """The question as a form, as the person left it: `chosen` options checked, `typed` words,
    `their_note` and the `changed` input kept, `missing` questions and `problems` (question
    index, -1 the note, -2 the changed input) marked; `click_id`, the form's one-use id
    (`clicks.new_click_id`)."""
    chosen, typed, problems = chosen or {}, typed or {}, problems or {}
    policy = view.request.policy
    if missing:
        note = missing_sentence(missing)
    elif problems:
        note = "Please look at what is marked below."
    fields = [
        Field(
            name=f"q{index}",
            header=question.header,
            question=question.question,
            kind="checkbox" if question.multi_select else "radio",
            hint="Choose any that apply." if question.multi_select else "Choose one.",
            options=tuple(
                Choice(option.label, option.description, o_index in chosen.get(index, ()))
                for o_index, option in enumerate(question.options)
            ),
            marked=question.header in missing or index in problems,
            own=typed.get(index, "") if policy.allow_other else None,
            besides="besides those" if question.multi_select else "instead",
            problem=problems.get(index),
        )
        for index, question in enumerate(view.questions)
    ]
    return _page(
        "form.html",
        view.title,
        version=version,
        watching=view.request_id,
        **_top(view),
        policy=policy_lines(view),
        votes=_tally(view),
        note=note,
        action=href(view.request_id),
        token=token,
        click_field=CLICK_FIELD,
        click_id=click_id,
        fields=fields,
        max_chars=MAX_TYPED_CHARS,
        their_note=their_note if policy.allow_notes else None,
        note_label=NOTE_LABEL,
        note_placeholder=NOTE_PLACEHOLDER,
        note_problem=problems.get(NOTE),
        change=_change(view, changed, problems.get(CHANGED)),
        name=name,
        cancel_confirm=CANCEL_CONFIRM,
    )


def outcome(view: RequestView, *, version: int, note: str = "", flash: bool = False) -> str:
    """How the request stands: the outcome line, the answers, the votes; `note` on top (a
    receipt when `flash`, else why the click was not taken)."""
    notes = view.notes
    answers = [AnswerRow(h, a, notes.get(h)) for h, a in view.answers.items()]
    if view.form is not None:
        answers = [AnswerRow(f.title, value, None) for f, value in view.filled_in()]
    return _page(
        "outcome.html",
        view.title,
        version=version,
        watching=view.request_id if view.waiting else "",
        **_top(view),
        note=note,
        flash=flash,
        outcome=outcome_line(view),
        answers=answers,
        policy=policy_lines(view) if view.waiting else [],
        votes=_tally(view),
    )


def not_found(request_id: str, version: int) -> str:
    return _notice(
        "No such question",
        f"There is no question {request_id}. It may have been withdrawn before it was shown.",
        version,
    )


def out_of_date(request_id: str, version: int) -> str:
    return _page("out_of_date.html", "Out of date", version=version, again=href(request_id))


def unreadable(version: int) -> str:
    return _notice("Unreadable form", "The form could not be read; open it again.", version)


# --- facts worded for the page ---------------------------------------------------------------


def outcome_line(view: RequestView) -> str:
    heading = view.heading.format(deciders=names(view.deciders))
    return heading if view.ended_at is None else f"{heading} · {_when(view.ended_at)}"


def policy_lines(view: RequestView) -> list[str]:
    """Who may answer, how many must agree, and what the deadline does."""
    lines = []
    who = ", ".join(view.answerers)
    if view.answerers:
        lines.append(WHO_MAY_ANSWER.format(answerers=who))
    if view.escalation_line is not None:
        lines.append(f"{view.escalation_line.format(answerers=who)}.")
    if view.needs_votes:
        lines.append(f"{view.votes_needed}.")
    if view.deadline_line is not None and view.deadline is not None:
        default = view.default_answers
        answers = "" if default is None else view.summary(default)
        deadline = view.deadline_line.format(deadline=_when(view.deadline), answers=answers)
        lines.append(f"{deadline}.")
    return lines


def more_line(more: int) -> str:
    return f"And {more} more {'question is' if more == 1 else 'questions are'} waiting."


def tally_line(view: RequestView, row: TallyRow) -> str:
    return view.tally_line(row).format(answers=view.summary(row.answers), voters=names(row.voters))


# --- parts -------------------------------------------------------------------------------------


def _top(view: RequestView) -> dict[str, Any]:
    count = len(view.questions)
    heading = view.questions[0].question if count == 1 else f"Your agent has {count} questions"
    return {"heading": heading, "context": view.context, "tool": view.tool}


def _change(view: RequestView, typed: str | None, problem: str | None) -> Change | None:
    """The inline edit form, prefilled with the value as asked (or as the person left it)."""
    field = view.changeable
    if field is None:
        return None
    text = field.text if typed is None else typed
    return Change(CHANGE_TITLE, field.label, CHANGE_HINT, text, MAX_CHANGE_CHARS, problem)


def _tally(view: RequestView) -> list[VoteLine]:
    """Every answer given so far, when several people must agree; the deciding one marked."""
    if not view.needs_votes:
        return []
    return [VoteLine(tally_line(view, row), row.decided) for row in view.tally]


def _list_item(view: RequestView) -> ListItem:
    state = "" if view.waiting else f" — {outcome_line(view)}"
    return ListItem(
        href=href(view.request_id),
        question=view.lead,
        headers=tuple(q.header for q in view.questions),
        hint=view.context + state,
    )


def _notice(title: str, text: str, version: int) -> str:
    return _page("notice.html", title, version=version, text=text)


def href(request_id: str) -> str:
    """The question's path, whatever the id holds."""
    return f"/q/{quote(request_id, safe='')}"


def _when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC") if at else ""
