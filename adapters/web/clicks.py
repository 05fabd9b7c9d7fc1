"""A form posted from the answer page, parsed into what it means: the person's name and an
`Intent` (`parse`)."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from aiohttp import web
from multidict import MultiDictProxy

from askbridge.core.intents import (
    Cancel,
    Intent,
    Submit,
    allow_with_changes,
)
from askbridge.core.models import Person

NAME_COOKIE = "askbridge_name"
MAX_NAME_CHARS = 80
FIELD = re.compile(r"q(\d{1,2})")
OWN = re.compile(r"q(\d{1,2})_own")
OPTION = re.compile(r"\d{1,2}")
CLICK_FIELD = "click"
"""The form's one-use id: each form the page shows has its own, so the same form posted again
(a reload, back and submit again, a double click) is known as one click."""
CLICK_ID = re.compile(r"[A-Za-z0-9_-]{22,64}")

Form = MultiDictProxy[str | bytes | bytearray | web.FileField]


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


def parse(form: Form) -> Click:
    """Cancel; Edit and allow (`action=change`) with the changed text (`changed`) and the note;
    or Submit with the options checked (`q<question>=<option>`), the words typed for a
    question (`q<question>_own`) and the note (`note`); the form's one-use id."""
    name = form.get("name")
    name = name.strip()[:MAX_NAME_CHARS] if isinstance(name, str) else ""
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
