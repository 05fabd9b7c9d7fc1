"""The page that follows a posted form, one per note that `core.intents.note_for` picks for
the outcome: the web page's wording of each note (`respond`)."""

from __future__ import annotations

from aiohttp import web

from askbridge.adapters.web import render
from askbridge.adapters.web.clicks import NAME_COOKIE, Click, new_click_id
from askbridge.core.intents import Counted, Note, Outcome, Refused, Submit, note_for
from askbridge.core.view import (
    NOT_ANSWERER,
    SELF_APPROVAL,
    UNCHECKED,
    Receipt,
    RequestView,
    counted_sentence,
    end_sentence,
)


def respond(
    outcome: Outcome,
    click: Click,
    *,
    request_id: str,
    token: str,
    version: int,
    link_token: str | None = None,
) -> web.Response:
    """The page that follows a posted form: which note it carries is `note_for`'s call; which
    page shows it (and its status), this surface's. `link_token`: the page was opened from a
    link's token, which the pages that follow keep."""
    # A form shown again is a form of its own: the one posted was a click, seen now.
    match note_for(outcome), outcome:
        case None | Note.DRAFTED, _:
            reply = render.see_other(render.href(request_id, link_token))
        case Note.COUNTED, Counted(view=view, receipt=receipt):
            note = vote_note(receipt)
            reply = render.response(render.outcome(view, version=version, note=note, flash=True))
        case Note.MISSING_ANSWERS | Note.BAD_TEXT, Refused(view=RequestView() as view):
            submitted = click.intent if isinstance(click.intent, Submit) else Submit()
            page = render.form(
                view,
                token=token,
                version=version,
                click_id=new_click_id(),
                chosen=outcome.selections,
                missing=outcome.missing,
                name=click.name,
                typed=submitted.typed,
                their_note=submitted.note,
                problems=outcome.problems,
                changed=submitted.changed,
                link_token=link_token,
            )
            return render.response(page, 422)
        case Note.BAD_VALUES, Refused(view=RequestView() as view):
            page = render.form(
                view,
                token=token,
                version=version,
                click_id=new_click_id(),
                name=click.name,
                values=outcome.values,
                field_problems=outcome.field_problems,
            )
            return render.response(page, 422)
        case Note.FOREIGN, Refused(view=RequestView() as view):
            note = "This form does not match the question any more; please choose again."
            page = render.form(
                view,
                token=token,
                version=version,
                click_id=new_click_id(),
                name=click.name,
                note=note,
                link_token=link_token,
            )
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
    note = NOT_ANSWERER.format(answerers=render.answerers_text(view.answerers))
    if unchecked:
        note += UNCHECKED.format(groups=", ".join(unchecked))
    return note
