"""HTML for the answer page, from `RequestView`: plain forms that work without a script.

Every text that comes from an agent or a person goes through `escape` where it is placed, and
sentences are built as plain text first, then escaped whole. The page has no inline script or
style (`CSP`), so text that slipped through could still not run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from html import escape
from urllib.parse import quote

from aiohttp import web

from askbridge.core.answers import MAX_TYPED_CHARS, NOTE_LABEL, NOTE_PLACEHOLDER
from askbridge.core.intents import NOTE
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


def page(title: str, body: str, *, version: int, watching: str = "") -> str:
    """A whole page; `watching`: the waiting request it shows, so the script can follow it."""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)} · askbridge</title>"
        "<link rel='stylesheet' href='/web/style.css'>"
        "<script src='/web/live.js' defer></script></head>"
        f"<body data-version='{version}' data-request='{escape(watching)}'>{body}</body></html>"
    )


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
    waiting_items = "".join(_list_item(v) for v in waiting)
    ended_items = "".join(_list_item(v) for v in ended)
    parts = ["<h1>Questions from your agents</h1><div id='live'>"]
    if paged:
        parts.append("<p><a href='/'>Newest questions</a></p>")
    if waiting_items:
        parts.append(f"<ul class='requests' id='waiting'>{waiting_items}</ul>")
    elif paged:
        parts.append("<p id='waiting' class='hint'>No older question is waiting.</p>")
    else:
        parts.append(
            "<p id='waiting' class='hint'>No question is waiting. New ones appear here.</p>"
        )
    if more and waiting:
        older = f"/?before={quote(waiting[-1].request_id, safe='')}"
        parts.append(
            f"<p id='more'>{escape(more_line(more))} "
            f"<a href='{escape(older)}' rel='next'>Older questions</a></p>"
        )
    if ended_items:
        parts.append(f"<h2>Recently ended</h2><ul class='requests'>{ended_items}</ul>")
    parts.append("</div>")
    return page("Questions", "".join(parts), version=version)


def form(
    view: RequestView,
    *,
    token: str,
    version: int,
    chosen: Mapping[int, Sequence[int]] | None = None,
    missing: Sequence[str] = (),
    name: str = "",
    note: str = "",
    typed: Mapping[int, str] | None = None,
    their_note: str = "",
    problems: Mapping[int, str] | None = None,
) -> str:
    """The question as a form, as the person left it: `chosen` options checked, `typed` words
    and `their_note` kept, `missing` questions and `problems` (question index, -1 the note)
    marked."""
    chosen, typed, problems = chosen or {}, typed or {}, problems or {}
    policy = view.request.policy
    parts = [*_top(view), *_hints(policy_lines(view)), _tally(view)]
    if missing:
        note = missing_sentence(missing)
    elif problems:
        note = "Please look at what is marked below."
    if note:
        parts.append(f"<p class='error' role='alert'>{escape(note)}</p>")
    parts.append(f"<form method='post' action='{escape(href(view.request_id))}'>")
    parts.append(f"<input type='hidden' name='csrf' value='{escape(token)}'>")
    for index, question in enumerate(view.questions):
        kind = "checkbox" if question.multi_select else "radio"
        css = " class='missing'" if question.header in missing else ""
        hint = "Choose any that apply." if question.multi_select else "Choose one."
        if index in problems:
            css = " class='missing'"
        parts.append(
            f"<fieldset{css} data-header='{escape(question.header)}'>"
            f"<legend><span class='tag'>{escape(question.header)}</span></legend>"
            f"<p class='question'>{escape(question.question)} <span class='hint'>{hint}</span></p>"
        )
        for o_index, option in enumerate(question.options):
            checked = " checked" if o_index in chosen.get(index, ()) else ""
            parts.append(
                f"<label class='option'><input type='{kind}' name='q{index}' value='{o_index}'"
                f"{checked}> {escape(option.label)}"
                f"<span class='desc'>{escape(option.description)}</span></label>"
            )
        if policy.allow_other:
            besides = "besides those" if question.multi_select else "instead"
            parts.append(
                f"<label class='own'>Or in your own words ({besides}) "
                f"<input name='q{index}_own' maxlength='{MAX_TYPED_CHARS}' "
                f"value='{escape(typed.get(index, ''))}'></label>"
            )
        parts.extend(_problem(problems.get(index)))
        parts.append("</fieldset>")
    if policy.allow_notes:
        parts.append(
            f"<p><label class='own'>{escape(NOTE_LABEL)} <textarea name='note' "
            f"maxlength='{MAX_TYPED_CHARS}' placeholder='{escape(NOTE_PLACEHOLDER)}'>"
            f"{escape(their_note)}</textarea></label></p>"
        )
        parts.extend(_problem(problems.get(NOTE)))
    parts.append(
        "<p><label>Your name <input name='name' autocomplete='name' "
        f"value='{escape(name)}' placeholder='shown to the agent'></label></p>"
        "<button class='primary' name='action' value='submit'>Submit</button>"
        "<button class='danger' name='action' value='cancel' "
        f"data-confirm='{escape(CANCEL_CONFIRM)}'>Cancel</button></form>"
    )
    title = view.questions[0].header
    return page(title, "".join(parts), version=version, watching=view.request_id)


def outcome(view: RequestView, *, version: int, note: str = "", flash: bool = False) -> str:
    """How the request stands: the outcome line, the answers, the votes; `note` on top (a
    receipt when `flash`, else why the click was not taken)."""
    parts = _top(view)
    if note:
        parts.append(f"<p class='{'note' if flash else 'error'}' role='alert'>{escape(note)}</p>")
    parts.append(f"<p id='outcome'><strong>{escape(outcome_line(view))}</strong></p>")
    if view.answers:
        notes = view.notes
        rows = "".join(
            f"<tr><th>{escape(header)}</th><td>{escape(answer)}"
            + (f"<div class='their-note'>{escape(notes[header])}</div>" if header in notes else "")
            + "</td></tr>"
            for header, answer in view.answers.items()
        )
        parts.append(f"<table id='answers'>{rows}</table>")
    if view.waiting:
        parts.extend(_hints(policy_lines(view)))
    parts.append(_tally(view))
    parts.append("<p><a href='/'>All questions</a></p>")
    watching = view.request_id if view.waiting else ""
    return page(view.questions[0].header, "".join(parts), version=version, watching=watching)


def not_found(request_id: str, version: int) -> str:
    return _notice(
        "No such question",
        f"There is no question {request_id}. It may have been withdrawn before it was shown.",
        version,
    )


def out_of_date(request_id: str, version: int) -> str:
    body = (
        "<h1>This form is out of date</h1><p>It came from another site, or askbridge's key for "
        "forms changed since it was loaded. "
        f"<a href='{escape(href(request_id))}'>Open the question again</a>.</p>"
    )
    return page("Out of date", body, version=version)


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


def _top(view: RequestView) -> list[str]:
    count = len(view.questions)
    heading = view.questions[0].question if count == 1 else f"Your agent has {count} questions"
    parts = [f"<h1>{escape(heading)}</h1>"]
    if view.context:
        parts.append(f"<p class='context'>{escape(view.context)}</p>")
    return parts


def _problem(text: str | None) -> list[str]:
    return [f"<p class='error' role='alert'>{escape(text)}</p>"] if text else []


def _hints(lines: Iterable[str]) -> list[str]:
    return [f"<p class='hint'>{escape(line)}</p>" for line in lines]


def _tally(view: RequestView) -> str:
    """Every answer given so far, when several people must agree; the deciding one marked."""
    if not view.needs_votes or not view.tally:
        return ""
    rows = "".join(
        f"<li{' class=decided' if row.decided else ''}>{escape(tally_line(view, row))}</li>"
        for row in view.tally
    )
    return f"<h2>Votes</h2><ul id='tally'>{rows}</ul>"


def _list_item(view: RequestView) -> str:
    headers = " ".join(f"<span class='tag'>{escape(q.header)}</span>" for q in view.questions)
    state = "" if view.waiting else f" — {outcome_line(view)}"
    return (
        f"<li><a href='{escape(href(view.request_id))}'>{escape(view.questions[0].question)}</a> "
        f"{headers}<div class='hint'>{escape(view.context + state)}</div></li>"
    )


def _notice(title: str, text: str, version: int) -> str:
    body = f"<h1>{escape(title)}</h1><p>{escape(text)}</p><p><a href='/'>All questions</a></p>"
    return page(title, body, version=version)


def href(request_id: str) -> str:
    """The question's path, whatever the id holds."""
    return f"/q/{quote(request_id, safe='')}"


def _when(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC") if at else ""
