"""A form posted from the answer page, parsed into what it means: the person's name and an
`Intent` (`parse`).

A typed form's inputs name their field and say what they hold (`TEXT`, `FLAG`, `CHOICE`,
`CHOICES` before the field's name), so a click is read without reading the request first; the
broker checks every value against the form (`core.forms.read_input`)."""

from __future__ import annotations

import re
import secrets
import unicodedata
from dataclasses import dataclass

from aiohttp import web
from multidict import MultiDictProxy

from askbridge.core.intents import (
    Cancel,
    Decline,
    Fill,
    Intent,
    Submit,
    allow_with_changes,
)
from askbridge.core.models import Person
from askbridge.core.text_direction import REORDERING

NAME_COOKIE = "askbridge_name"
MAX_NAME_CHARS = 80
FIELD = re.compile(r"q(\d{1,2})")
OWN = re.compile(r"q(\d{1,2})_own")
OPTION = re.compile(r"\d{1,2}")
CLICK_FIELD = "click"
"""The form's one-use id: each form the page shows has its own, so the same form posted again
(a reload, back and submit again, a double click) is known as one click."""
CLICK_ID = re.compile(r"[A-Za-z0-9_-]{22,64}")
CONFIRMED = "confirmed"
"""Sent as "yes" with Cancel once the person has said yes to it: by the page's script after its
dialog, or by the page that asks first where no script runs (`confirmed`)."""

Form = MultiDictProxy[str | bytes | bytearray | web.FileField]

SHAPE = "shape"
"""A hidden input of a typed form's page, valued TYPED_FORM: its buttons mean Fill and Decline."""
TYPED_FORM = "form"
TEXT = "text."
"""Before a field's name: the input's text (a text, number, date, email or URL input)."""
ZONE = "zone."
"""Before a date-and-time field's name: the offset of the time typed ("+01:00"), which the
page's script sets to the browser's own for that time; an input gives none."""
FLAG = "flag."
"""Before a boolean field's name: a hidden "false", then the checkbox's "true" when checked."""
CHOICE = "choice."
"""Before a single-choice field's name: the chosen value, or "" for none."""
CHOICES = "choices."
"""Before a multi-choice field's name: each checked value."""
_LOCAL_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?")
_OFFSET = re.compile(r"[+-]\d{2}:\d{2}")


@dataclass(frozen=True)
class Click:
    name: str
    """What the person typed as their name; "" for none."""
    intent: Intent
    click_id: str | None = None
    """The form's one-use id; None from a form without one (shown before there were any)."""

    @property
    def person(self) -> Person:
        return Person(platform="web", id=self.name or "local", name=self.name or "web user")


def new_click_id() -> str:
    """A form's one-use id (`CLICK_FIELD`)."""
    return secrets.token_urlsafe(18)


def person_name(typed: str) -> str:
    """A typed name as askbridge keeps it: on one line, without control characters or any that
    reorder the text around it, at most MAX_NAME_CHARS. It is the person's id on the web, and
    the log and every page show it: a line break in it would write a line of its own into the
    log, an override would turn "Answered by …" around."""
    one_line = " ".join(typed.split())
    kept = "".join(c for c in one_line if c not in REORDERING and unicodedata.category(c) != "Cc")
    return kept.strip()[:MAX_NAME_CHARS]


def confirmed(form: Form) -> bool:
    """The person said yes to what the form asks first (a Cancel interrupts the agent)."""
    return form.get(CONFIRMED) == "yes"


def parse(form: Form) -> Click:
    """Cancel; Edit and allow (`action=change`) with the changed text (`changed`) and the note;
    on a typed form's page Decline, or Fill with its inputs' values (`fill`); or Submit with
    the options checked (`q<question>=<option>`), the words typed for a question
    (`q<question>_own`) and the note (`note`); the form's one-use id."""
    given_name = form.get("name")
    name = person_name(given_name) if isinstance(given_name, str) else ""
    given = form.get(CLICK_FIELD)
    click_id = given if isinstance(given, str) and CLICK_ID.fullmatch(given) else None
    if form.get("action") == "cancel":
        return Click(name, Cancel(), click_id)
    if form.get("action") == "change":
        changed, note = form.get("changed"), form.get("note")
        return Click(
            name,
            allow_with_changes(
                changed if isinstance(changed, str) else "",
                note if isinstance(note, str) else "",
            ),
            click_id,
        )
    if form.get(SHAPE) == TYPED_FORM:
        return Click(name, Decline() if form.get("action") == "decline" else fill(form), click_id)
    chosen: dict[int, set[int]] = {}
    typed: dict[int, str] = {}
    for key, value in form.items():
        field = FIELD.fullmatch(key)
        if field and isinstance(value, str) and OPTION.fullmatch(value):
            chosen.setdefault(int(field[1]), set()).add(int(value))
        own = OWN.fullmatch(key)
        if own and isinstance(value, str) and value.strip():
            typed[int(own[1])] = value
    note = form.get("note")
    submit = Submit(
        {q: tuple(sorted(o)) for q, o in chosen.items()},
        typed=typed,
        note=note if isinstance(note, str) else "",
    )
    return Click(name, submit, click_id)


def fill(form: Form) -> Fill:
    """A typed form's values as its inputs gave them: texts, a bool per checkbox, the chosen
    value of a select, a list per group of checkboxes (left out when none is checked, as an
    empty text is a field left empty). A date and time gets its offset appended; a line
    break is LF."""
    values: dict[str, object] = {}
    for key, value in form.items():
        if not isinstance(value, str):
            continue
        if key.startswith(TEXT):
            field = key.removeprefix(TEXT)
            # A browser sends a text area's line breaks as CRLF; the person typed one
            # character, which every other surface gives as LF (and maxlength counted as one).
            text = value.replace("\r\n", "\n")
            values[field] = _with_offset(text, form.get(ZONE + field))
        elif key.startswith(FLAG):
            field = key.removeprefix(FLAG)
            values[field] = values.get(field) is True or value == "true"
        elif key.startswith(CHOICE):
            values[key.removeprefix(CHOICE)] = value
        elif key.startswith(CHOICES):
            chosen = values.setdefault(key.removeprefix(CHOICES), [])
            if isinstance(chosen, list) and value not in chosen:
                chosen.append(value)
    return Fill(values)


def _with_offset(text: str, offset: object) -> str:
    """A datetime-local input's "2026-12-07T09:30" with its offset: "2026-12-07T09:30+01:00".
    A text that is no such time, or an offset that is no offset, stays as given, and the broker
    says what is wrong with it."""
    if isinstance(offset, str) and _OFFSET.fullmatch(offset) and _LOCAL_TIME.fullmatch(text):
        return text + offset
    return text
