"""HTML for the answer page, from `RequestView`: plain forms that work without a script.

The markup lives in `templates/`, rendered by one Jinja2 environment that escapes every value
(nothing marks text safe), so text from an agent or a person cannot become markup; the page has
no inline script or style (`CSP`). This module words the facts and hands them over as data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import jinja2
from aiohttp import web

from askbridge.adapters.web import clicks
from askbridge.core.answers import MAX_TYPED_CHARS, NOTE_LABEL, NOTE_PLACEHOLDER
from askbridge.core.changes import CHANGE_HINT, CHANGE_TITLE, MAX_CHANGE_CHARS, offered
from askbridge.core.forms import FieldKind, Form, FormField, number_text
from askbridge.core.intents import CHANGED, NOTE
from askbridge.core.public_links import TOKEN_PARAM
from askbridge.core.view import (
    CANCEL_QUESTION,
    CANCEL_SURE,
    CANCEL_WARNING,
    NOT_RECORDED,
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


HEADERS = {
    "Cache-Control": "no-store",
    # A page's address may hold a link's token (`core.public_links`): a browser would send it
    # as the Referer of whatever the page leads to on another site. Not no-referrer: under it a
    # browser sends the page's own forms with `Origin: null`, which the origin check refuses.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": CSP,
}
"""On every response of the web page, set once where its routes are added (`handlers`): its
pages, the redirect that follows an answer, the sign-in refusal, the script's long-poll."""


def response(html: str, status: int = 200) -> web.Response:
    return web.Response(text=html, status=status, content_type="text/html")


def see_other(location: str) -> web.Response:
    """See Other, to `location`: reloading the page that follows does not post the form again."""
    return web.Response(status=303, headers={"Location": location})


def _page(template: str, title: str, *, version: int, watching: str = "", **values: Any) -> str:
    """A whole page; `watching`: the waiting request it shows, so the script can follow it."""
    return TEMPLATES.get_template(template).render(
        title=title, version=version, watching=watching, **values
    )


# --- what the templates are given ------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """A piece of a line of text; a time when `at` is set (its instant, ISO 8601), which the
    page marks as one so that its script can show it in the reader's own zone."""

    text: str
    at: str | None = None


Line = tuple[Piece, ...]
"""A line of text that may hold times, for the `line` macro (parts.html)."""


@dataclass(frozen=True)
class ListItem:
    href: str
    question: str
    headers: tuple[str, ...]
    hint: Line
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
class Option:
    """One choice of a typed form's select or group of checkboxes."""

    value: str
    title: str
    chosen: bool


@dataclass(frozen=True)
class Input:
    """One field of a typed form, as its input shows it."""

    id: str
    """The element's id, from the field's place in the form (never from its name)."""
    name: str
    """The input's name: what it holds (`clicks.TEXT`...) and the field's name."""
    field: str
    control: str
    """'input', 'textarea', 'checkbox', 'select' or 'checkboxes'."""
    type: str
    """An input's type: text, email, url, date, datetime-local or number."""
    label: str
    description: str
    required: bool
    value: str
    checked: bool
    options: tuple[Option, ...]
    limits: tuple[tuple[str, str], ...]
    """Attributes the browser checks before it sends the form (the broker checks again)."""
    hint: str
    zone: str | None
    """A date and time: the offset of the time shown, sent with it (see `clicks.ZONE`)."""
    problem: str | None

    @property
    def described_by(self) -> str:
        """The ids of the texts that describe the input, for aria-describedby."""
        parts = [
            f"{self.id}-{part}"
            for part, shown in (("desc", self.description), ("hint", self.hint))
            if shown
        ]
        if self.problem:
            parts.append(f"{self.id}-error")
        return " ".join(parts)


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
    values: Mapping[str, object] | None = None,
    field_problems: Mapping[str, str] | None = None,
    link_token: str | None = None,
) -> str:
    """The question as a form, as the person left it: `chosen` options checked, `typed` words,
    `their_note` and the `changed` input kept, `missing` questions and `problems` (question
    index, -1 the note, -2 the changed input) marked; `click_id`, the form's one-use id
    (`clicks.new_click_id`). For a request with a typed form, its page (`typed_form`):
    `values` given and `field_problems` marked."""
    if view.form is not None:
        return typed_form(
            view,
            view.form,
            token=token,
            version=version,
            click_id=click_id,
            name=name,
            note=note,
            values=values,
            problems=field_problems,
        )
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
        action=href(view.request_id, link_token),
        token=token,
        click_field=clicks.CLICK_FIELD,
        click_id=click_id,
        fields=fields,
        max_chars=MAX_TYPED_CHARS,
        their_note=their_note if policy.allow_notes else None,
        note_label=NOTE_LABEL,
        note_placeholder=NOTE_PLACEHOLDER,
        note_problem=problems.get(NOTE),
        change=_change(view, changed, problems.get(CHANGED)),
        focus=_focus(fields, problems),
        name=name,
        cancel_confirm=CANCEL_CONFIRM,
    )


def typed_form(
    view: RequestView,
    form: Form,
    *,
    token: str,
    version: int,
    click_id: str = "",
    name: str = "",
    note: str = "",
    values: Mapping[str, object] | None = None,
    problems: Mapping[str, str] | None = None,
) -> str:
    """A typed form's page: one input per field, prefilled with the defaults, or with the
    `values` the person gave and each of `problems` (field name -> why) marked at its field;
    or, for a URL-mode form, the link to open and Done. `click_id`: as for `form`."""
    problems = problems or {}
    if problems:
        note = refused_note(form, problems)
    inputs = [
        _input(index, field, values, problems.get(field.name))
        for index, field in enumerate(form.fields)
    ]
    return _page(
        "fill.html",
        form_title(form),
        version=version,
        watching=view.request_id,
        heading=form.message,
        context=view.context,
        policy=policy_lines(view),
        votes=_tally(view),
        note=note,
        action=href(view.request_id),
        token=token,
        click_field=clicks.CLICK_FIELD,
        click_id=click_id,
        shape=(clicks.SHAPE, clicks.TYPED_FORM),
        zone_prefix=clicks.ZONE,
        link=web_link(form.url),
        inputs=inputs,
        # The page opens at the first value refused: focus takes a screen reader there, and
        # it reads the field with what is wrong with it.
        focus=next((shown.id for shown in inputs if shown.problem), ""),
        submit="Done" if form.url is not None else "Submit",
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
    # Once it ended, the title says how: it is what is read first when the page loads itself
    # again after an answer given elsewhere.
    title = view.title if view.waiting else f"{ending(view)} · {view.title}"
    return _page(
        "outcome.html",
        title,
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


def confirm_cancel(
    request_id: str,
    *,
    token: str,
    version: int,
    click_id: str,
    name: str,
    link_token: str | None = None,
) -> str:
    """What the page's script asks before a Cancel, as a page of its own for a browser that runs
    none: its button posts the Cancel again, said yes to."""
    question = href(request_id, link_token)
    return _page(
        "confirm.html",
        CANCEL_QUESTION,
        version=version,
        warning=CANCEL_WARNING,
        sure=CANCEL_SURE,
        action=question,
        back=question,
        token=token,
        click_field=clicks.CLICK_FIELD,
        click_id=click_id,
        name=name,
        confirmed=clicks.CONFIRMED,
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


def ending(view: RequestView) -> str:
    """How the request stands, without when: "Answered by Lin"."""
    return view.heading.format(deciders=names(view.deciders))


def outcome_line(view: RequestView) -> Line:
    """How the request stands and when it ended: "Answered by Lin · 2030-01-01 09:00 UTC"."""
    heading = Piece(ending(view))
    return (heading,) if view.ended_at is None else (heading, Piece(" · "), _when(view.ended_at))


def policy_lines(view: RequestView) -> list[Line]:
    """Who may answer, how many must agree, and what the deadline does."""
    lines: list[Line] = []
    who = answerers_text(view.answerers)
    if view.answerers:
        lines.append((Piece(WHO_MAY_ANSWER.format(answerers=who)),))
    if view.escalation_line is not None:
        lines.append((Piece(f"{view.escalation_line.format(answerers=who)}."),))
    if view.needs_votes:
        lines.append((Piece(f"{view.votes_needed}."),))
    if view.deadline_line is not None and view.deadline is not None:
        default = view.default_answers
        answers = "" if default is None else view.summary(default)
        # The words either side of the time, each filled in; the time a piece of its own.
        before, _, after = view.deadline_line.partition("{deadline}")
        lines.append(
            (
                Piece(before.format(answers=answers)),
                _when(view.deadline),
                Piece(f"{after.format(answers=answers)}."),
            )
        )
    return lines


def answerers_text(entries: Sequence[str]) -> str:
    """Who may answer, as the page names people: a person of the page by the name they type
    (`Grace`, not `web:Grace`, which would be taken for a name to type), anyone else as the
    entry that names them elsewhere."""
    return ", ".join(e.removeprefix("web:") for e in entries)


def more_line(more: int) -> str:
    return f"And {more} more {'question is' if more == 1 else 'questions are'} waiting."


def tally_line(view: RequestView, row: TallyRow) -> str:
    return view.tally_line(row).format(answers=view.summary(row.answers), voters=names(row.voters))


def refused_note(form: Form, problems: Mapping[str, str]) -> str:
    """Nothing was recorded, and each refused field, named as the form names it, and why."""
    fields = "; ".join(f"{_field_title(form, name)} {why}" for name, why in problems.items())
    return f"{NOT_RECORDED} {fields}."


def form_title(form: Form) -> str:
    """A typed form's page title: the first line of its message, cut short."""
    first = form.message.strip().splitlines()[0] if form.message.strip() else "Form"
    return first if len(first) <= 80 else f"{first[:79]}…"


def web_link(url: str | None) -> str | None:
    """A URL-mode form's link, when it is one a browser may follow (http or https, no
    script): the ask checked it, and the page never links anything else."""
    if url is None or not re.match(r"https?://[^\s]+\Z", url, re.IGNORECASE):
        return None
    return url


# --- parts -------------------------------------------------------------------------------------


def _top(view: RequestView) -> dict[str, Any]:
    count = len(view.questions)
    # A form's message, or the one question.
    heading = view.lead if count <= 1 else f"Your agent has {count} questions"
    return {"heading": heading, "context": view.context, "tool": view.tool}


def _focus(fields: Sequence[Field], problems: Mapping[int, str]) -> str:
    """The control a refused form opens at, in the page's order: a question not answered, or
    its words refused; the note; the changed input. "" when nothing was refused."""
    for field in fields:
        if field.problem is not None and field.own is not None:
            return f"{field.name}_own"
        if field.marked:
            return field.name
    if NOTE in problems:
        return "note"
    return "changed" if CHANGED in problems else ""


def _change(view: RequestView, typed: str | None, problem: str | None) -> Change | None:
    """The inline edit form, prefilled with the value as asked (or as the person left it)."""
    # The page's field holds any text askbridge takes back.
    field = offered(view.changeable, lambda _: True)
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
    state = () if view.waiting else (Piece(" — "), *outcome_line(view))
    return ListItem(
        href=href(view.request_id),
        question=view.lead,
        headers=tuple(q.header for q in view.questions),
        hint=(Piece(view.context), *state),
    )


def _field_title(form: Form, name: str) -> str:
    field = form.field(name)
    return field.title if field is not None else name


_INPUT_TYPES = {
    FieldKind.TEXT: "text",
    FieldKind.EMAIL: "email",
    FieldKind.URI: "url",
    FieldKind.DATE: "date",
    FieldKind.DATE_TIME: "datetime-local",
    FieldKind.NUMBER: "number",
    FieldKind.INTEGER: "number",
}
LONG_TEXT = 200
"""A text field that may hold more characters than this is a textarea."""
_TIME = re.compile(
    r"(?P<local>\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)"
    r"(?P<offset>[Zz]|[+-]\d{2}:\d{2})?"
)


def _input(
    index: int, field: FormField, values: Mapping[str, object] | None, problem: str | None
) -> Input:
    """`field`'s input, holding what the person gave (`values`, when the form comes back
    refused: a field left out of them was left empty) or else its default."""
    value = field.default if values is None else values.get(field.name)
    kind = field.kind
    limits: list[tuple[str, str]] = []
    control, name, hint, zone = "input", clicks.TEXT + field.name, "", None
    text, checked = "", False
    options: tuple[Option, ...] = ()
    if kind is FieldKind.BOOLEAN:
        control, name, checked = "checkbox", clicks.FLAG + field.name, value is True
    elif kind is FieldKind.CHOICE:
        control, name = "select", clicks.CHOICE + field.name
        options = tuple(Option(c.value, c.title, c.value == value) for c in field.choices)
    elif kind is FieldKind.CHOICES:
        control, name = "checkboxes", clicks.CHOICES + field.name
        chosen = value if isinstance(value, list | tuple) else ()
        options = tuple(Option(c.value, c.title, c.value in chosen) for c in field.choices)
        hint = _items_hint(field)
    elif kind.is_number:
        text = _number_text(value)
        limits.append(("step", "1" if kind is FieldKind.INTEGER else "any"))
        limits += [
            (k, _number_text(v))
            for k, v in (("min", field.minimum), ("max", field.maximum))
            if v is not None
        ]
    elif kind is FieldKind.DATE_TIME:
        text, zone = _local_time(value)
        hint = "Time in UTC." if zone == "+00:00" else f"Time in UTC{zone}."
        if re.search(r"T\d{2}:\d{2}:", text):
            limits.append(("step", "1"))
    else:
        text = value if isinstance(value, str) else ""
        if kind is FieldKind.TEXT and field.max_length > LONG_TEXT:
            control = "textarea"
        if field.min_length:
            limits.append(("minlength", str(field.min_length)))
        if kind.is_text and kind not in (FieldKind.DATE,):
            limits.append(("maxlength", str(field.max_length)))
    return Input(
        id=f"f{index}",
        name=name,
        field=field.name,
        control=control,
        type=_INPUT_TYPES.get(kind, ""),
        label=field.title,
        description=field.description,
        required=field.required and control not in ("checkbox", "checkboxes"),
        value=text,
        checked=checked,
        options=options,
        limits=tuple(limits),
        hint=hint,
        zone=zone,
        problem=None if problem is None else f"{field.title} {problem}.",
    )


def _items_hint(field: FormField) -> str:
    low, high = field.min_items, field.max_items
    if low and high:
        return f"Choose {low}." if low == high else f"Choose {low} to {high}."
    if low:
        # An optional field may be left with nothing chosen, whatever its least number.
        if not field.required:
            return f"Optional: leave it empty, or choose at least {low}."
        return f"Choose at least {low}."
    if high:
        return f"Choose at most {high}."
    return "Choose any that apply."


def _number_text(value: object) -> str:
    """A number as an input holds it: 3, not 3.0; text typed stays as typed."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return number_text(value)


def _local_time(value: object) -> tuple[str, str]:
    """A date and time as a datetime-local input holds it, and the offset it is in: the
    offset it came with, else UTC (the page's script shows it in the browser's zone)."""
    found = _TIME.fullmatch(value) if isinstance(value, str) else None
    if found is None:
        return (value if isinstance(value, str) else ""), "+00:00"
    offset = found["offset"] or "+00:00"
    local = found["local"].replace(" ", "T").replace("t", "T")
    if local.endswith(":00") and local.count(":") == 2:
        local = local[: -len(":00")]
    return local, "+00:00" if offset in ("Z", "z") else offset


def _notice(title: str, text: str, version: int) -> str:
    return _page("notice.html", title, version=version, text=text)


def href(request_id: str, link_token: str | None = None) -> str:
    """The question's path, whatever the id holds; with the token of the link it was opened
    from (`core.public_links`), so that the page keeps opening."""
    path = f"/q/{quote(request_id, safe='')}"
    return path if link_token is None else f"{path}?{TOKEN_PARAM}={quote(link_token, safe='')}"


def _when(at: datetime) -> Piece:
    """A time as the page shows it: in UTC, which it names, so that it reads right where no
    script runs; the page's script shows it again in the reader's own zone."""
    utc = at.astimezone(UTC)
    return Piece(utc.strftime("%Y-%m-%d %H:%M UTC"), utc.isoformat().replace("+00:00", "Z"))
