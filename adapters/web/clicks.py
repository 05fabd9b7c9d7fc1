"""A form posted from the answer page, parsed into what it means: the person's name and an
`Intent` (`parse`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aiohttp import web
from multidict import MultiDictProxy

from askbridge.core.intents import (
    Cancel,
    Intent,
    Submit,
)
from askbridge.core.models import Person

NAME_COOKIE = "askbridge_name"
MAX_NAME_CHARS = 80
FIELD = re.compile(r"q(\d{1,2})")
OWN = re.compile(r"q(\d{1,2})_own")
OPTION = re.compile(r"\d{1,2}")

Form = MultiDictProxy[str | bytes | bytearray | web.FileField]


@dataclass(frozen=True)
class Click:
    name: str
    """What the person typed as their name; "" for none."""
    intent: Intent

    @property
    def person(self) -> Person:
        return Person(platform="web", id=self.name or "local", name=self.name or "web user")


def parse(form: Form) -> Click:
    """Cancel, or Submit with the options checked (`q<question>=<option>`), the words typed
    for a question (`q<question>_own`) and the note (`note`)."""
    name = form.get("name")
    name = name.strip()[:MAX_NAME_CHARS] if isinstance(name, str) else ""
    if form.get("action") == "cancel":
        return Click(name, Cancel())
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
    return Click(name, submit)
