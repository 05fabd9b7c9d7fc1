"""Hostile text on the web page: every page of a request, in every state, rendered with every text
field and person name drawn from strings that mean something to HTML, Slack or Discord.

A real HTML parser reads each page: it must find exactly the elements, attributes, comments and
declarations of a harmless request of the same shape, links only to askbridge's own paths, and
the hostile text again as text.
"""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.web import notes, render
from askbridge.adapters.web.surface import WebSurface
from askbridge.core.answers import to_answers
from askbridge.core.forms import FieldKind, encode, parse_form
from askbridge.core.models import (
    Person,
    Policy,
    QuestionOption,
    Request,
    Selections,
    Status,
    Target,
    UserQuestion,
    Vote,
)
from askbridge.core.view import Receipt, RequestView, end_sentence
from tests.hostile import (
    FORM_EXAMPLES,
    FormCase,
    form_cases,
    link_path,
    tool_texts,
    tool_view_of,
)
from tests.hostile import HOSTILE as SHARED_HOSTILE
from tests.web_person import typed_form

HOSTILE = [
    *SHARED_HOSTILE,
    "'><svg onload=alert(1)>",
    "javascript:alert(1)",
    "&lt;b&gt;",
    "&",
    "<!--",
    "-->",
    "<![CDATA[",
    "</textarea></title></style>",
    "\r\n",
    "\t",
    "e\u0301",
    "plain",
]
HOSTILE_TEXT = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=3).map("".join)
T0 = datetime(2030, 1, 1, tzinfo=UTC)
SAFE_LINK = re.compile(r"/(q/[A-Za-z0-9%._~-]+|web/live\.js|web/style\.css)?")


class Shape(enum.Enum):
    WAITING = "waiting"
    ANSWERED_BY_ONE = "answered by one"
    ANSWERED_BY_SEVERAL = "answered by several, with other votes"
    DECIDED_BY_TIMEOUT = "decided by timeout"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"


@dataclass(frozen=True)
class Spec:
    """Everything about a request but its text."""

    shape: Shape
    questions: tuple[tuple[int, bool], ...]  # (options, multi-select) per question
    answerers: int
    quorum: int
    others: int  # voters who gave another answer
    deadline: str  # "none", "expire" or "default"


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    shape = draw(st.sampled_from(Shape))
    questions = tuple(
        draw(st.lists(st.tuples(st.integers(2, 4), st.booleans()), min_size=1, max_size=3))
    )
    several = shape is Shape.ANSWERED_BY_SEVERAL
    quorum = draw(st.integers(2, 3)) if several else draw(st.sampled_from([1, 1, 2, 3]))
    deadline = draw(st.sampled_from(["none", "expire", "default"]))
    if shape is Shape.DECIDED_BY_TIMEOUT:
        deadline = "default"
    return Spec(
        shape=shape,
        questions=questions,
        answerers=draw(st.integers(0, 2)),
        quorum=quorum,
        others=draw(st.integers(0, 2)) if quorum > 1 else 0,
        deadline=deadline,
    )


def build(spec: Spec, text: Callable[[], str]) -> Request:
    """The request of `spec`, each text from `text()`, taken in a fixed order."""
    questions = tuple(
        UserQuestion(
            question=text(),
            header=text(),
            multi_select=multi,
            options=tuple(QuestionOption(label=text(), description=text()) for _ in range(n)),
        )
        for n, multi in spec.questions
    )
    agreed: Selections = {
        i: (0, 1) if multi else (0,) for i, (_, multi) in enumerate(spec.questions)
    }
    other: Selections = {**agreed, 0: (1,)}
    answers, other_answers = to_answers(questions, agreed), to_answers(questions, other)

    def person() -> Person:
        name = text()
        return Person(platform="web", id=name, name=name)

    shape = spec.shape
    agreeing = {
        Shape.WAITING: spec.quorum - 1,
        Shape.ANSWERED_BY_ONE: 1,
        Shape.ANSWERED_BY_SEVERAL: spec.quorum,
    }.get(shape, 0)
    voters = [(person(), answers) for _ in range(agreeing)]
    voters += [(person(), other_answers) for _ in range(spec.others)]
    votes = tuple(Vote(person=p, answers=a, at=T0) for p, a in voters)
    status = {
        Shape.WAITING: Status.WAITING,
        Shape.CANCELLED: Status.CANCELLED,
        Shape.EXPIRED: Status.EXPIRED,
        Shape.WITHDRAWN: Status.WITHDRAWN,
    }.get(shape, Status.ANSWERED)
    answered = shape in (Shape.ANSWERED_BY_ONE, Shape.ANSWERED_BY_SEVERAL)
    return Request(
        request_id=text(),
        questions=questions,
        targets=(Target(platform="web"),),
        context=text(),
        status=status,
        created_at=T0,
        expires_at=None if spec.deadline == "none" else T0 + timedelta(hours=1),
        ended_at=None if status is Status.WAITING else T0 + timedelta(minutes=5),
        answers=answers if status is Status.ANSWERED else None,
        answered_by=voters[agreeing - 1][0] if answered else None,
        cancelled_by=person() if shape is Shape.CANCELLED else None,
        policy=Policy(
            answerers=tuple(text() for _ in range(spec.answerers)),
            quorum=spec.quorum,
            timeout_answers=answers if spec.deadline == "default" else None,
        ),
        votes=votes,
    )


def pages(request: Request, name: str, stray: str) -> dict[str, str]:
    """Every page the request can appear on, with every note a click on it can bring."""
    view = RequestView.of(request)
    first = view.questions[0]
    found = {
        "index": render.index([view] if view.waiting else [], [] if view.waiting else [view], 7),
        "outcome": render.outcome(view, version=7),
        "ended": render.outcome(view, version=7, note=end_sentence(view)),
        "not answerer": render.outcome(
            view, version=7, note=notes.not_answerer_note(view, (stray,))
        ),
        "not found": render.not_found(stray, 7),
        "out of date": render.out_of_date(stray, 7),
    }
    if view.waiting:
        found["form"] = render.form(view, token="0" * 64, version=7, name=name)
        found["missing"] = render.form(
            view, token="0" * 64, version=7, chosen={0: (0,)}, missing=[first.header], name=name
        )
        if len(view.questions) == 1:
            receipt = Receipt(to_answers(view.questions, {0: (0,)}), 1, max(view.quorum, 2))
            found["receipt"] = render.outcome(
                view, version=7, note=notes.vote_note(receipt), flash=True
            )
    return found


class Page(HTMLParser):
    """The page as a parser sees it: its markup events in order, its text, its link targets."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.markup: list[tuple[str, ...]] = []
        self.text: list[str] = []
        self.links: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.markup.append(("start", tag, *sorted(k for k, _ in attrs)))
        self.links += [v or "" for k, v in attrs if k in ("href", "src", "action")]

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.markup.append(("end", tag))

    def handle_comment(self, data: str) -> None:
        self.markup.append(("comment",))

    def handle_decl(self, decl: str) -> None:
        self.markup.append(("decl", decl))

    def unknown_decl(self, data: str) -> None:
        self.markup.append(("unknown decl",))

    def handle_pi(self, data: str) -> None:
        self.markup.append(("pi",))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def shown(request: Request, page: str, name: str, stray: str) -> list[str]:
    """Texts a person must be able to read on `page`, exactly as they were given."""
    view = RequestView.of(request)
    questions = view.questions
    if page in ("not found", "out of date"):
        return [stray] if page == "not found" else []
    texts = [view.context, questions[0].header]
    if page == "index":
        return [*texts, questions[0].question, *(q.header for q in questions)]
    if len(questions) == 1:
        texts.append(questions[0].question)
    if page in ("form", "missing"):
        texts += [q.question for q in questions] + [q.header for q in questions]
        texts += [o.label for q in questions for o in q.options]
        texts += [o.description for q in questions for o in q.options]
    else:
        texts += [p.name for p in view.deciders]
        texts += [*view.answers, *view.answers.values()]
    if view.waiting:
        texts += view.answerers
    if view.needs_votes:
        texts += [p.name for row in view.tally for p in row.voters]
    if page == "not answerer":
        texts += [stray, *view.answerers]
    return texts


@settings(max_examples=500, derandomize=True, deadline=None)
@given(spec=specs(), data=st.data())
def test_hostile_text_stays_text_on_every_page(spec: Spec, data: st.DataObject) -> None:
    counter = itertools.count()
    hostile = build(spec, lambda: data.draw(HOSTILE_TEXT) + str(next(counter)))
    harmless = build(spec, lambda: f"t{next(counter)}")
    name, stray = data.draw(HOSTILE_TEXT) + "n", data.draw(HOSTILE_TEXT) + "s"

    expected = {key: Page(html) for key, html in pages(harmless, "Ada", "x").items()}
    for key, html in pages(hostile, name, stray).items():
        page = Page(html)
        assert page.markup == expected[key].markup, key
        assert all(SAFE_LINK.fullmatch(link) for link in page.links), (key, page.links)
        text = "".join(page.text)
        for value in shown(hostile, key, name, stray):
            assert value in text, (key, value)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(spec=specs(), data=st.data())
def test_hostile_text_in_a_tool_call_stays_text(spec: Spec, data: st.DataObject) -> None:
    """A diff, a command and arguments whose every text is hostile: the same markup as a
    harmless call's, and every text readable as written."""
    counter = itertools.count()

    def hostile_text() -> str:
        return data.draw(HOSTILE_TEXT) + str(next(counter))

    def harmless_text() -> str:
        return f"t{next(counter)}"

    hostile = build(spec, hostile_text).model_copy(update={"tool": tool_view_of(hostile_text)})
    harmless = build(spec, harmless_text).model_copy(update={"tool": tool_view_of(harmless_text)})
    expected = {key: Page(html) for key, html in pages(harmless, "Ada", "x").items()}
    assert hostile.tool is not None
    for key, html in pages(hostile, "Ada", "x").items():
        page = Page(html)
        assert page.markup == expected[key].markup, key
        if key in ("form", "missing", "outcome", "ended", "not answerer", "receipt"):
            text = "".join(page.text)
            for value in tool_texts(hostile.tool):
                assert value in text, (key, value)


def test_a_tool_call_shows_as_a_diff_table_a_command_and_named_values() -> None:
    spec = Spec(Shape.WAITING, ((3, False),), 0, 1, 0, "none")
    counter = itertools.count()

    def text() -> str:
        return f"t{next(counter)}"

    request = build(spec, text).model_copy(update={"tool": tool_view_of(text)})
    page = Page(render.form(RequestView.of(request), token="0", version=1))
    starts = [m[1] for m in page.markup if m[0] == "start"]
    assert starts.count("tr") == 1 + 3 + 1 + 2  # a hunk header, its lines, "…", the bare hunk
    assert ("start", "pre", "class") in page.markup
    assert starts.count("dt") == 2
    assert "```" not in "".join(page.text)


def test_the_harmless_twin_has_the_same_shape_as_a_hand_written_request() -> None:
    """The comparison above is only as good as its baseline: a plain request renders a form
    with one input per option plus the csrf and name fields, and no script but the page's."""
    spec = Spec(Shape.WAITING, ((2, False), (3, True)), 0, 1, 0, "none")
    counter = itertools.count()
    page = Page(
        render.form(RequestView.of(build(spec, lambda: f"t{next(counter)}")), token="0", version=1)
    )
    inputs = [m for m in page.markup if m[:2] == ("start", "input")]
    assert len(inputs) == 2 + 3 + 2
    assert [m for m in page.markup if m[:2] == ("start", "script")] == [
        ("start", "script", "defer", "src")
    ]


# --- typed forms ----------------------------------------------------------------------------

FORM_KINDS = ("text", "email", "date-time", "integer", "boolean", "choice", "choices")


def typed_schema(kinds: tuple[str, ...], text: Callable[[], str]) -> dict[str, Any]:
    """A form with a field of each of `kinds`, every title, description, choice, default and
    name from `text()` (a name loses the control characters a name cannot hold)."""
    properties: dict[str, Any] = {}
    for kind in kinds:
        name = re.sub(r"[\x00-\x1f\x7f]", "", text())[-64:]
        common = {"title": text()[:200], "description": text()}
        choices = [{"const": text()[:100], "title": text()[:75]} for _ in range(2)]
        properties[name] = {
            "text": {"type": "string", **common, "default": text()},
            "email": {"type": "string", "format": "email", **common},
            "date-time": {"type": "string", "format": "date-time", **common},
            "integer": {"type": "integer", "maximum": 10, **common},
            "boolean": {"type": "boolean", **common, "default": True},
            "choice": {"type": "string", "oneOf": choices, **common},
            "choices": {"type": "array", "items": {"oneOf": choices}, **common},
        }[kind]
    return {
        "message": text(),
        "requested_schema": {"type": "object", "properties": properties, "required": [name]},
    }


FIXED_VALUES: dict[FieldKind, object] = {
    FieldKind.EMAIL: "ops@example.com",
    FieldKind.DATE_TIME: "2026-12-07T09:30:00+01:00",
    FieldKind.INTEGER: 7,
    FieldKind.BOOLEAN: True,
}


def form_request(schema: dict[str, Any], text: Callable[[], str], status: Status) -> Request:
    """A request for `schema`'s form in `status`: filled in with a value for each field (texts
    from `text()`), or declined by someone named by `text()`."""
    form = parse_form(schema)
    content: dict[str, object] = {}
    for field in form.fields:
        if field.kind is FieldKind.TEXT:
            content[field.name] = text()
        elif field.kind is FieldKind.CHOICE:
            content[field.name] = field.choices[1].value
        elif field.kind is FieldKind.CHOICES:
            content[field.name] = [c.value for c in field.choices]
        else:
            content[field.name] = FIXED_VALUES[field.kind]
    who = text()
    person = Person(platform="web", id=who, name=who)
    answered = status is Status.ANSWERED
    return Request(
        request_id="ask_form",
        questions=(),
        form=form,
        targets=(Target(platform="web"),),
        context=text(),
        status=status,
        created_at=T0,
        ended_at=None if status is Status.WAITING else T0 + timedelta(minutes=5),
        answers=encode(content) if answered else None,
        answered_by=person if answered else None,
        declined_by=person if status is Status.DECLINED else None,
        votes=(Vote(person=person, answers=encode(content), at=T0),) if answered else (),
    )


@dataclass(frozen=True)
class TypedPages:
    pages: dict[str, str]
    given: dict[str, object]
    """What was typed into the refused form."""
    problems: dict[str, str]
    """The problems with it."""
    answered: RequestView
    declined: RequestView


def typed_pages(schema: dict[str, Any], text: Callable[[], str], name: str) -> TypedPages:
    """Every page of a typed form: as it first shows, as it comes back refused with what was
    typed, in the list, answered and declined."""
    waiting = RequestView.of(form_request(schema, text, Status.WAITING))
    form = waiting.form
    assert form is not None
    given: dict[str, object] = {}
    for field in form.fields:
        if field.kind is FieldKind.BOOLEAN:
            given[field.name] = True
        elif field.kind is FieldKind.CHOICE:
            given[field.name] = field.choices[1].value
        elif field.kind is FieldKind.CHOICES:
            given[field.name] = [c.value for c in field.choices]
        else:
            given[field.name] = text()
    problems = {field.name: text() for field in form.fields}
    answered = RequestView.of(form_request(schema, text, Status.ANSWERED))
    declined = RequestView.of(form_request(schema, text, Status.DECLINED))
    pages = {
        "form": render.form(waiting, token="0" * 64, version=7, click_id="c" * 24, name=name),
        "refused": render.form(
            waiting,
            token="0" * 64,
            version=7,
            click_id="c" * 24,
            name=name,
            values=given,
            field_problems=problems,
        ),
        "index": render.index([waiting], [answered, declined], 7),
        "answered": render.outcome(answered, version=7),
        "declined": render.outcome(declined, version=7, note=end_sentence(declined)),
    }
    return TypedPages(pages, given, problems, answered, declined)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(FORM_KINDS), min_size=1, max_size=5).map(tuple),
    url=st.booleans(),
    data=st.data(),
)
def test_hostile_text_in_a_typed_form_stays_text(
    kinds: tuple[str, ...], url: bool, data: st.DataObject
) -> None:
    """Every text of a typed form hostile (its message, fields' names, titles, descriptions,
    choices, defaults, the values typed and the problems with them, the values given, who
    declined; a URL-mode form's link): the same markup as a harmless form's, every text
    readable as written, and no link but askbridge's own and the form's, as it was given."""
    counter = itertools.count()

    def hostile() -> str:
        return data.draw(HOSTILE_TEXT) + str(next(counter))

    schema = typed_schema(kinds, hostile)
    harmless_counter = itertools.count()

    def harmless() -> str:
        return f"t{next(harmless_counter)}"

    harmless_schema = typed_schema(kinds, harmless)
    link = ""
    if url:
        link = "https://e.example/" + link_path(data.draw(HOSTILE_TEXT))
        schema = {"message": schema["message"], "url": link}
        harmless_schema = {"message": harmless_schema["message"], "url": "https://e.example/t"}
    name = data.draw(HOSTILE_TEXT) + "n"
    found = typed_pages(schema, hostile, name)
    expected_pages = typed_pages(harmless_schema, harmless, "Ada").pages
    form = parse_form(schema)
    for key, html in found.pages.items():
        page, expected = Page(html), Page(expected_pages[key])
        assert page.markup == expected.markup, key
        links = [x for x in page.links if not (url and x == link)]
        assert all(SAFE_LINK.fullmatch(x) for x in links), (key, page.links)
        text = "".join(page.text)
        shown_texts = [form.message]
        if key in ("form", "refused"):
            shown_texts += [f.title for f in form.fields]
            shown_texts += [f.description for f in form.fields]
            shown_texts += [c.title for f in form.fields for c in f.choices]
            if url:
                shown_texts.append(link)
                assert link in page.links
        if key == "refused":
            shown_texts += found.problems.values()
            # What was typed is in its input again, as it was typed.
            sent = typed_form(html).data
            for field in form.fields:
                if field.kind.is_text or field.kind.is_number:
                    assert (f"text.{field.name}", found.given[field.name]) in sent, field.name
            assert ("name", name) in sent
        if key == "answered":
            shown_texts += [f.title for f, _ in found.answered.filled_in()]
            shown_texts += [value for _, value in found.answered.filled_in()]
            shown_texts += [p.name for p in found.answered.deciders]
        if key == "declined":
            shown_texts += [p.name for p in found.declined.deciders]
        for value in shown_texts:
            assert value in text, (key, value)


OWN_SCRIPT = ("start", "script", "defer", "src")
"""The only script a page holds: askbridge's live.js, linked (checked by SAFE_LINK)."""


def form_case_pages(case: FormCase, name: str) -> dict[str, str]:
    """Every page a typed form of `case` appears on in its state, with the notes it can bring:
    as it first shows and as it comes back refused with what was typed, a receipt, the list,
    and how it stands."""
    view = RequestView.of(case.request)
    found = {
        "index": render.index([view] if view.waiting else [], [] if view.waiting else [view], 7),
        "outcome": render.outcome(view, version=7),
        "ended": render.outcome(view, version=7, note=end_sentence(view)),
    }
    if view.waiting:
        token, click = "0" * 64, "c" * 24
        found["form"] = render.form(view, token=token, version=7, click_id=click, name=name)
        found["refused"] = render.form(
            view,
            token=token,
            version=7,
            click_id=click,
            name=name,
            values=case.typed,
            field_problems=case.problems,
        )
        receipt = Receipt(encode(case.content), 1, max(view.quorum, 2))
        found["receipt"] = render.outcome(
            view, version=7, note=notes.vote_note(receipt), flash=True
        )
    return found


@FORM_EXAMPLES
@given(case=form_cases("web", WebSurface.form_fields), name=HOSTILE_TEXT)
def test_a_hostile_form_stays_text_in_every_state(case: FormCase, name: str) -> None:
    """The shared typed-form cases (every kind of field, hostile names, titles, descriptions,
    choices, defaults, values typed and given, people; waiting with votes, answered, at the
    deadline, declined, cancelled, expired, withdrawn): no markup but the page's own, no link
    but askbridge's, every text readable as written, and what was typed kept in its input."""
    view = RequestView.of(case.request)
    form = case.form
    for key, html in form_case_pages(case, name).items():
        page = Page(html)
        assert not [m for m in page.markup if m[0] in ("comment", "pi", "unknown decl")], key
        attributes = [a for m in page.markup if m[0] == "start" for a in m[2:]]
        assert not [a for a in attributes if a.startswith("on")], (key, attributes)
        scripts = [m for m in page.markup if m[:2] == ("start", "script")]
        assert all(m == OWN_SCRIPT for m in scripts), (key, scripts)
        # A URL-mode form links its link, as it was given: the one link not askbridge's.
        links = [x for x in page.links if form.url is None or x != form.url]
        assert all(SAFE_LINK.fullmatch(x) for x in links), (key, page.links)
        text = "".join(page.text)
        readable = [form.message.strip()]
        if key in ("form", "refused"):
            readable += [f.title.strip() for f in form.fields]
            readable += [f.description.strip() for f in form.fields]
            readable += [c.title for f in form.fields for c in f.choices]
        if key == "refused":
            readable += case.problems.values()
            sent = typed_form(html).data
            for field in form.fields:
                if field.kind.is_text and field.kind not in (FieldKind.DATE, FieldKind.DATE_TIME):
                    assert (f"text.{field.name}", case.typed[field.name]) in sent, field.name
        if key in ("outcome", "ended"):
            readable += [value for _, value in view.filled_in()]
            readable += [p.name for p in view.deciders]
        for value in readable:
            assert value in text, (key, value)
