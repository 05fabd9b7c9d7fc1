"""A request as an Adaptive Card (version 1.5, the newest Teams renders; `Action.Execute`
needs 1.4), rendered from its `RequestView`.

While waiting: the context, each question's header, text and option descriptions with an
`Input.ChoiceSet` (radio buttons or checkboxes for a few options, a drop-down for more), the
policy (who may answer, the votes against the quorum, the deadline), Submit, and Cancel behind
a confirmation. A single single-select question is answered with one click on its option.
Once ended: each question with its answer, the votes when several had to agree, who ended it
and when; no controls. Every text an agent or a person wrote goes in through `text.run`.
"""

from __future__ import annotations

from collections.abc import Mapping

from askbridge.adapters.teams.fit import fit, fits
from askbridge.adapters.teams.form import form_elements
from askbridge.adapters.teams.ids import (
    CANCEL,
    CHANGE,
    CHANGED_INPUT,
    DECLINE,
    FILL,
    NOTE_INPUT,
    PICK,
    SUBMIT,
    action_data,
    choice_input,
    words_input,
)
from askbridge.adapters.teams.members import named
from askbridge.adapters.teams.text import (
    Element,
    clip,
    paragraph,
    plain,
    run,
    when,
    words,
)
from askbridge.adapters.teams.tool_call import linked_when_cut, tool_elements
from askbridge.core.answers import MAX_TYPED_CHARS, NOTE_HINT, NOTE_LABEL, NOTE_PLACEHOLDER
from askbridge.core.changes import CHANGE_ACTION, CHANGE_HINT, CHANGE_TITLE, Changeable, offered
from askbridge.core.forms import as_uri
from askbridge.core.models import Person, UserQuestion
from askbridge.core.view import (
    CANCEL_HINT,
    CANCEL_QUESTION,
    CANCEL_SURE,
    CANCEL_WARNING,
    WHO_MAY_ANSWER,
    RequestView,
    plain_name,
)

VERSION = "1.5"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
EXPANDED_UP_TO = 5
"""Options shown as radio buttons or checkboxes; more go in a drop-down."""
MAX_CHOICE_TITLE = 200
OWN_WORDS = "Or in your own words"
OWN_WORDS_HINT = "Your answer, if none of the options fits"
VOTES = "Votes"
"""What heads an ended card's votes."""
MAX_WHO = 20
"""Answerers named on the card; the rest are counted."""
MAX_CHANGE_CHARS = 4000
"""The longest input the card offers to change in place (its field's maxLength); it is offered
only when the card has room for it whole besides everything else (`_offer_change`)."""


def render(
    view: RequestView,
    note: str | None = None,
    *,
    given: Mapping[str, object] | None = None,
    problems: Mapping[str, str] | None = None,
    names: Mapping[str, str | None] | None = None,
) -> Element:
    """The whole card for the request's current state; `note`: a line for the person who
    pressed only (the invoke's answer), above everything else. A typed form's inputs hold
    what the person `given` (else the defaults), each refused one with its `problems`.
    `names`: the Teams answerers' names in the conversation (`members`)."""
    who = answerers_text(named(view.answerers, names or {}))
    call = [] if view.tool is None else tool_elements(view.tool)
    card = _card(view, call, note, given, problems, who)
    # What the card's size cut of the call (`fit`) is cut as much as what the call's own
    # limits cut: the card links to all of it then too.
    with_link = None if view.tool is None else linked_when_cut(view.tool, call)
    if with_link is not None:
        card = _card(view, with_link, note, given, problems, who)
    return card


def _card(
    view: RequestView,
    call: list[Element],
    note: str | None,
    given: Mapping[str, object] | None,
    problems: Mapping[str, str] | None,
    who: str,
) -> Element:
    """The card with the tool `call`'s elements, fitted to Teams' size limit; `who`: its
    answerers as the card names them."""
    body: list[Element] = [plain(note, bold=True)] if note else []
    body += _waiting(view, call, who, given, problems) if view.waiting else _ended(view, call)
    card: Element = {"type": "AdaptiveCard", "$schema": SCHEMA, "version": VERSION, "body": body}
    if view.waiting:
        card["actions"] = _actions(view)
    fit(card)
    if view.waiting:
        _offer_change(card, view)
    return card


def attachment(card: Element) -> Element:
    return {"contentType": CONTENT_TYPE, "content": card}


def _waiting(
    view: RequestView,
    call: list[Element],
    who: str,
    given: Mapping[str, object] | None = None,
    problems: Mapping[str, str] | None = None,
) -> list[Element]:
    body: list[Element] = [words(view.heading.format(deciders=""), bold=True)]
    if view.context:
        body.append(plain(view.context))
    body += call
    form = view.form
    if form is not None:
        body.append(plain(form.message.strip()))
        if form.url is not None:
            body.append(paragraph(run("🔗 "), run(form.url)))
        body += form_elements(form, given, problems)
    for q, question in enumerate(view.questions):
        body.append(
            paragraph(run(question.header, bold=True), run(" · "), run(question.question.strip()))
        )
        body += _descriptions(question)
        body.append(_input(view, q, question))
        if view.request.policy.allow_other:
            body.append(_text_input(words_input(q), OWN_WORDS, OWN_WORDS_HINT))
    if view.request.policy.allow_notes:
        body.append(_text_input(NOTE_INPUT, NOTE_LABEL, NOTE_PLACEHOLDER, multiline=True))
        body.append(words(NOTE_HINT, subtle=True))
    body += policy(view, who)
    body.append(words(f"{view.how_to_answer} {CANCEL_HINT}", subtle=True))
    return body


def _descriptions(question: UserQuestion) -> list[Element]:
    return [
        paragraph(run(o.label, bold=True), run(" — "), run(o.description.strip(), subtle=True))
        for o in question.options
        if o.description.strip()
    ]


def _text_input(input_id: str, label: str, placeholder: str, multiline: bool = False) -> Element:
    return {
        "type": "Input.Text",
        "id": input_id,
        "label": label,
        "placeholder": placeholder,
        "maxLength": MAX_TYPED_CHARS,
        "isMultiline": multiline,
    }


def _input(view: RequestView, q: int, question: UserQuestion) -> Element:
    request_id = view.request_id
    if view.one_click:
        return {
            "type": "ActionSet",
            "actions": [
                {
                    "type": "Action.Execute",
                    "title": clip(option.label, MAX_CHOICE_TITLE),
                    "verb": PICK,
                    "data": action_data(request_id, question=q, option=o),
                }
                for o, option in enumerate(question.options)
            ],
        }
    return {
        "type": "Input.ChoiceSet",
        "id": choice_input(q),
        "label": question.header,
        "style": "expanded" if len(question.options) <= EXPANDED_UP_TO else "compact",
        "isMultiSelect": question.multi_select,
        "choices": [
            {"title": clip(option.label, MAX_CHOICE_TITLE), "value": str(o)}
            for o, option in enumerate(question.options)
        ],
    }


def policy(view: RequestView, who: str) -> list[Element]:
    """Who may answer (`who`: the answerers as the card names them), how many must agree and
    the tally, what the deadline does: each a paragraph, the names in plain runs."""
    lines: list[Element] = []
    if view.answerers:
        before, _, after = WHO_MAY_ANSWER.partition("{answerers}")
        lines.append(paragraph(run(before), run(who), run(after)))
    if view.escalation_line is not None:
        lines.append(plain(view.escalation_line.format(answerers=who)))
    if view.needs_votes:
        lines.append(words(view.votes_needed, bold=True))
        lines += _tally(view)
    return lines + deadline_lines(view)


def deadline_lines(view: RequestView) -> list[Element]:
    """What the deadline does, if there is one: askbridge's words with the time, which only a
    TextBlock's own words may hold; the answers it gives, the agent's words, in runs of their
    own beneath."""
    if view.deadline_line is None or view.deadline is None:
        return []
    before, _, after = view.deadline_line.partition("{answers}")
    lines = [words("⏳ " + before.format(deadline=when(view.deadline)).rstrip())]
    default = view.default_answers
    if default is not None and "{answers}" in view.deadline_line:
        runs = [run(view.summary(default)), *([run(after)] if after else [])]
        lines.append({**paragraph(*runs), "spacing": "None"})
    return lines


def _tally(view: RequestView) -> list[Element]:
    """Each distinct answer given so far, with its count against the quorum and its voters."""
    lines: list[Element] = []
    for row in view.tally:
        voters = ", ".join(plain_name(p) for p in row.voters)
        text = view.tally_line(row).format(answers=view.summary(row.answers), voters=voters)
        lines.append(plain(f"• {text}"))
    return lines


def answerers_text(answerers: tuple[str, ...]) -> str:
    shown = ", ".join(answerers[:MAX_WHO])
    rest = len(answerers) - MAX_WHO
    return f"{shown} and {rest} more" if rest > 0 else shown


def _actions(view: RequestView) -> list[Element]:
    request_id = view.request_id
    confirm: Element = {
        "type": "AdaptiveCard",
        "version": VERSION,
        "body": [words(CANCEL_QUESTION, bold=True), words(CANCEL_WARNING)],
        "actions": [
            {
                "type": "Action.Execute",
                "title": CANCEL_SURE,
                "verb": CANCEL,
                "style": "destructive",
                "data": action_data(request_id),
                # Cancelling needs no input filled in, whatever the card requires.
                "associatedInputs": "none",
            }
        ],
    }
    actions: list[Element] = [{"type": "Action.ShowCard", "title": "Cancel", "card": confirm}]
    form = view.form
    if form is not None:
        done: Element = {
            "type": "Action.Execute",
            "title": "Done" if form.url is not None else "Submit",
            "verb": FILL,
            "style": "positive",
            "data": action_data(request_id),
        }
        decline: Element = {
            "type": "Action.Execute",
            "title": "Decline",
            "verb": DECLINE,
            "data": action_data(request_id),
            # Declining needs no input filled in, whatever the form requires.
            "associatedInputs": "none",
        }
        opened: list[Element] = []
        if form.url is not None:
            opened = [{"type": "Action.OpenUrl", "title": "Open the link", "url": as_uri(form.url)}]
        return [*opened, done, decline, *actions]
    # Words typed in place of an option go with Submit; a note goes with a pick too (Teams
    # sends a card's inputs with every press).
    if not view.one_click or view.request.policy.allow_other:
        submit: Element = {
            "type": "Action.Execute",
            "title": "Submit",
            "verb": SUBMIT,
            "style": "positive",
            "data": action_data(request_id),
        }
        actions.insert(0, submit)
    return actions


def _offer_change(card: Element, view: RequestView) -> None:
    """Edit and allow, before Cancel, when the card as fitted without it has room for its field
    prefilled with all of the input: the call shown is not cut for it, and a person never has
    to type a call again to change it."""
    actions: list[Element] = card["actions"]
    request_id = view.request_id

    def holds(field: Changeable) -> bool:
        with_change = [*actions[:-1], _change_card(request_id, field), actions[-1]]
        return len(field.text) <= MAX_CHANGE_CHARS and fits({**card, "actions": with_change})

    field = offered(view.changeable, holds)
    if field is not None:
        actions.insert(len(actions) - 1, _change_card(request_id, field))


def _change_card(request_id: str, field: Changeable) -> Element:
    """Edit and allow, in place: the input as asked in a field to change, and the press that
    allows it (with the card's note, which Teams sends along)."""
    changed: Element = {
        "type": "Input.Text",
        "id": CHANGED_INPUT,
        "label": field.label,
        "value": field.text,
        "maxLength": MAX_CHANGE_CHARS,
        "isMultiline": True,
        "isRequired": True,
        "errorMessage": f"The {field.label.lower()} cannot be empty",
    }
    allow: Element = {
        "type": "Action.Execute",
        "title": CHANGE_TITLE,
        "verb": CHANGE,
        "style": "positive",
        "data": action_data(request_id),
    }
    card: Element = {
        "type": "AdaptiveCard",
        "version": VERSION,
        "body": [changed, words(CHANGE_HINT, subtle=True)],
        "actions": [allow],
    }
    return {"type": "Action.ShowCard", "title": CHANGE_ACTION, "card": card}


def _ended(view: RequestView, call: list[Element]) -> list[Element]:
    body: list[Element] = []
    body.append(plain(view.heading.format(deciders=names(view.deciders)), bold=True))
    if view.ended_at is not None:
        ended: Element = {**words(when(view.ended_at), subtle=True), "spacing": "None"}
        body.append(ended)
    if view.context:
        body.append(plain(view.context, subtle=True))
    body += call
    form = view.form
    if form is not None:
        body.append(plain(form.message.strip(), subtle=True))
        for field, value in view.filled_in():
            body.append(paragraph(run(field.title, bold=True), run(": "), run(value)))
    notes = view.notes
    for question in view.questions:
        body.append(
            paragraph(run(question.header, bold=True), run(" · "), run(question.question.strip()))
        )
        if question.header in view.answers:
            body.append(paragraph(run("→ "), run(view.answers[question.header], bold=True)))
        if question.header in notes:
            body.append(paragraph(run("📝 "), run(notes[question.header])))
    if view.needs_votes and view.tally:
        # Every vote stays in sight once it has ended, as on the other surfaces.
        body += [words(VOTES, bold=True), *_tally(view)]
    return body


def names(people: tuple[Person, ...]) -> str:
    return ", ".join(plain_name(p) for p in people) or "someone"
