"""Hostile text where the other hostile tests do not put it: what a person typed on the page
(answers in their own words, a note, their name) and the problems named about it, both in the
form that keeps them for another try and on the outcome that shows them. A parser must find the
markup of a harmless twin, and each text again, whole, where it belongs."""

from __future__ import annotations

from datetime import UTC, datetime
from html.parser import HTMLParser

from hypothesis import given, settings

from askbridge.adapters.web import render
from askbridge.core.intents import NOTE
from askbridge.core.models import (
    Person,
    Policy,
    QuestionOption,
    Request,
    Status,
    Target,
    UserQuestion,
    Vote,
)
from askbridge.core.view import RequestView
from tests.test_web_hostile_text import HOSTILE_TEXT, SAFE_LINK, Page

T0 = datetime(2030, 1, 1, tzinfo=UTC)
HEADERS = ("Database", "Features")


class Fields(HTMLParser):
    """The values the page gives its form fields: input name -> value, and the note's text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.values: dict[str, str] = {}
        self.note: str | None = None
        self._in_note = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "input" and found.get("type") not in ("radio", "checkbox"):
            self.values[found["name"]] = found.get("value", "")
        self._in_note = tag == "textarea"
        if self._in_note:
            self.note = ""

    def handle_endtag(self, tag: str) -> None:
        self._in_note = False

    def handle_data(self, data: str) -> None:
        if self._in_note and self.note is not None:
            self.note += data


def asked(*, waiting: bool, own: str = "", note: str = "", name: str = "") -> Request:
    """Two questions that take own words and notes; answered, when not `waiting`, by `name` in
    their own words `own` with the note `note` on each."""
    questions = tuple(
        UserQuestion(
            question=f"Which {header.lower()}?",
            header=header,
            multi_select=multi,
            options=(QuestionOption(label="A", description="a"), QuestionOption(label="B")),
        )
        for header, multi in zip(HEADERS, (False, True), strict=True)
    )
    person = Person(platform="web", id=name, name=name)
    answers = {header: f"{own} {i}" for i, header in enumerate(HEADERS)}
    notes = {header: f"{note} {i}" for i, header in enumerate(HEADERS)}
    return Request(
        request_id="ask_typed",
        questions=questions,
        targets=(Target(platform="web"),),
        context="typed",
        status=Status.WAITING if waiting else Status.ANSWERED,
        created_at=T0,
        ended_at=None if waiting else T0,
        answers=None if waiting else answers,
        answered_by=None if waiting else person,
        policy=Policy(allow_other=True, allow_notes=True),
        votes=() if waiting else (Vote(person=person, answers=answers, at=T0, notes=notes),),
    )


def form(own: str, note: str, name: str, problem: str) -> str:
    return render.form(
        RequestView.of(asked(waiting=True)),
        token="0" * 64,
        version=1,
        chosen={1: (0,)},
        name=name,
        typed={0: f"{own} 0", 1: f"{own} 1"},
        their_note=note,
        problems={0: f"{problem} 0", NOTE: f"{problem} n"},
    )


@settings(max_examples=300, derandomize=True, deadline=None)
@given(own=HOSTILE_TEXT, note=HOSTILE_TEXT, name=HOSTILE_TEXT, problem=HOSTILE_TEXT)
def test_what_a_person_typed_comes_back_as_text_in_the_form(
    own: str, note: str, name: str, problem: str
) -> None:
    html = form(own, note, name, problem)
    page = Page(html)
    assert page.markup == Page(form("own", "note", "Ada", "problem")).markup
    assert all(SAFE_LINK.fullmatch(link) for link in page.links), page.links
    fields = Fields(html)
    assert fields.values == {
        "csrf": "0" * 64,
        "q0_own": f"{own} 0",
        "q1_own": f"{own} 1",
        "name": name,
    }
    assert fields.note == note
    text = "".join(page.text)
    assert f"{problem} 0" in text
    assert f"{problem} n" in text


def outcome(own: str, note: str, name: str) -> str:
    return render.outcome(
        RequestView.of(asked(waiting=False, own=own, note=note, name=name)), version=1
    )


@settings(max_examples=300, derandomize=True, deadline=None)
@given(own=HOSTILE_TEXT, note=HOSTILE_TEXT, name=HOSTILE_TEXT)
def test_answers_in_own_words_and_notes_show_as_text_on_the_outcome(
    own: str, note: str, name: str
) -> None:
    page = Page(outcome(own, note, name))
    assert page.markup == Page(outcome("own", "note", "Ada")).markup
    assert all(SAFE_LINK.fullmatch(link) for link in page.links), page.links
    text = "".join(page.text)
    for shown in (f"{own} 0", f"{own} 1", f"{note} 0", f"{note} 1", name):
        assert shown in text, shown
