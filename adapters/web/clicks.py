"""A form posted from the answer page: what it means (`parse`), and the page that says what came
of it (`respond`), one per note that `core.intents.note_for` picks for the outcome."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aiohttp import web
from multidict import MultiDictProxy

from askbridge.adapters.web import render
from askbridge.core.intents import (
    Cancel,
    Counted,
    Intent,
    Note,
    Outcome,
    Refused,
    Submit,
    note_for,
)
from askbridge.core.models import Person
from askbridge.core.view import (
    NOT_ANSWERER,
    SELF_APPROVAL,
    UNCHECKED,
    Receipt,
    RequestView,
    counted_sentence,
    end_sentence,
)

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


def respond(
    outcome: Outcome, click: Click, *, request_id: str, token: str, version: int
) -> web.Response:
    """The page that follows a posted form: which note it carries is `note_for`'s call; which
    page shows it (and its status), this surface's."""
    match note_for(outcome), outcome:
        case None | Note.DRAFTED, _:
            # See Other: reloading the page that follows does not post the form again.
            reply = web.Response(status=303, headers={"Location": render.href(request_id)})
        case Note.COUNTED, Counted(view=view, receipt=receipt):
            note = vote_note(receipt)
            reply = render.response(render.outcome(view, version=version, note=note, flash=True))
        case Note.MISSING_ANSWERS | Note.BAD_TEXT, Refused(view=RequestView() as view):
            submitted = click.intent if isinstance(click.intent, Submit) else Submit()
            page = render.form(
                view,
                token=token,
                version=version,
                chosen=outcome.selections,
                missing=outcome.missing,
                name=click.name,
                typed=submitted.typed,
                their_note=submitted.note,
                problems=outcome.problems,
            )
            return render.response(page, 422)
        case Note.FOREIGN, Refused(view=RequestView() as view):
            note = "This form does not match the question any more; please choose again."
            page = render.form(view, token=token, version=version, name=click.name, note=note)
            return render.response(page, 400)
        case Note.SELF_APPROVAL, Refused(view=RequestView() as view):
            page = render.outcome(view, version=version, note=SELF_APPROVAL)
            return render.response(page, 403)
        case Note.NOT_ANSWERER, Refused(view=RequestView() as view):
            note = not_answerer_note(view, outcome.unchecked)
            return render.response(render.outcome(view, version=version, note=note), 403)
        case Note.ENDED, Refused(view=RequestView() as view):
            note = end_sentence(view)
            return render.response(render.outcome(view, version=version, note=note), 409)
        case _:
            return render.response(render.not_found(request_id, version), 404)
    if click.name:
        reply.set_cookie(
            NAME_COOKIE, click.name, max_age=365 * 24 * 3600, samesite="Strict", httponly=True
        )
    return reply


def vote_note(receipt: Receipt) -> str:
    return counted_sentence(receipt)


def not_answerer_note(view: RequestView, unchecked: tuple[str, ...]) -> str:
    note = NOT_ANSWERER.format(answerers=", ".join(view.answerers))
    if unchecked:
        note += UNCHECKED.format(groups=", ".join(unchecked))
    return note
