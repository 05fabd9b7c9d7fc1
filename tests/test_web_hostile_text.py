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

from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.web import notes, render
from askbridge.core.answers import to_answers
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
from tests.hostile import HOSTILE as SHARED_HOSTILE
from tests.hostile import tool_texts, tool_view_of

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
