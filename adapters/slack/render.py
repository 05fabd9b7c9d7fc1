"""A request as a Slack message: from a `RequestView` to Block Kit.

While waiting: the context, the policy, per question its text and options, the votes, then the
controls (`controls`); once ended, no interactive elements. Every piece of user text sits in
rich text or plain text (`text`) cut to Block Kit's limits, so Slack never answers
`invalid_blocks`.
"""

from __future__ import annotations

from askbridge.adapters.slack.blockkit import (
    MAX_FALLBACK_TEXT,
    Block,
    ContextBlock,
    Element,
    MessagePayload,
    RichElement,
)
from askbridge.adapters.slack.controls import (
    DECLINE_LABEL,
    DONE,
    DONE_LABEL,
    FILL_LABEL,
    actions,
    block_id,
    button,
    cancel,
    choices,
    form_buttons,
    link,
    plain,
)
from askbridge.adapters.slack.fill import title_of
from askbridge.adapters.slack.ids import ActionId
from askbridge.adapters.slack.text import (
    Emoji,
    Line,
    Span,
    When,
    answerer,
    block,
    bullets,
    filled,
    joined,
    mrkdwn,
    person,
    prose,
    section,
    shorten,
    shorten_mrkdwn,
)
from askbridge.adapters.slack.tool_call import tool_parts
from askbridge.core.forms import Form
from askbridge.core.intents import Action
from askbridge.core.view import (
    CANCEL_HINT,
    WHO_MAY_ANSWER,
    RequestView,
    State,
    TallyRow,
    given,
    more_answers,
)

CONTEXT_BUDGET = 2000
QUESTION_BUDGET = 2500
LABEL_BUDGET = 150
DESCRIPTION_BUDGET = 200
ANSWER_BUDGET = 1000
ANSWERERS_BUDGET = 1500
DEFAULT_ANSWER_BUDGET = 300
TALLY_ANSWER_BUDGET = 300
VOTERS_BUDGET = 600
NOTE_BUDGET = 3000
MAX_TALLY_ROWS = 10
ENDING_EMOJI = {
    State.ANSWERED: "white_check_mark",
    State.DECIDED_BY_TIMEOUT: "alarm_clock",
    State.CANCELLED: "no_entry_sign",
    State.EXPIRED: "hourglass",
    State.WITHDRAWN: "leftwards_arrow_with_hook",
    State.DECLINED: "no_good",
}
"""Each ending's mark before its heading."""


def render(view: RequestView, rev: str) -> MessagePayload:
    """The message for the request as it is now; `rev` makes this render's block_ids unique."""
    form = view.form
    if form is not None:
        blocks = _form_waiting(view, form, rev) if view.waiting else _form_ended(view, form, rev)
    else:
        blocks = _waiting(view, rev) if view.waiting else _ended(view, rev)
    return {"text": fallback(view), "blocks": blocks}


# ---- lines --------------------------------------------------------------------------------------


def answerers_line(entries: tuple[str, ...]) -> Line:
    return joined((answerer(e) for e in entries), ANSWERERS_BUDGET)


def policy_line(view: RequestView) -> Line:
    """Who may answer, how many must agree, and what the deadline does; [] when none apply."""
    parts: list[Line] = []
    who = answerers_line(view.answerers)
    if view.answerers:
        parts.append(filled(WHO_MAY_ANSWER, answerers=who))
    if view.escalation_line is not None:
        parts.append(filled(view.escalation_line, answerers=who))
    if view.needs_votes:
        parts.append([Span(view.votes_needed)])
    if view.deadline_line is not None:
        parts.append(filled(view.deadline_line, **deadline_slots(view)))
    return joined(parts, 10_000, sep=" · ")


def deadline_slots(view: RequestView) -> dict[str, Line]:
    """The deadline, and the answer it gives, as the view's sentences about it take them."""
    default = view.default_answers
    answers = "" if default is None else shorten(view.summary(default), DEFAULT_ANSWER_BUDGET)
    deadline: Line = [] if view.deadline is None else [When(view.deadline)]
    return {"deadline": deadline, "answers": [Span(answers)]}


def tally_row(view: RequestView, row: TallyRow) -> Line:
    voters = joined((person(p) for p in row.voters), VOTERS_BUDGET)
    answers: Line = [Span(shorten(view.summary(row.answers), TALLY_ANSWER_BUDGET))]
    return filled(view.tally_line(row), answers=answers, voters=voters)


def outcome_line(view: RequestView) -> Line:
    """How the request ended, who ended it and when."""
    deciders = joined((person(p) for p in view.deciders), ANSWERERS_BUDGET) or [Span("someone")]
    heading = filled(view.heading, deciders=deciders)
    if view.state is State.WAITING or view.ended_at is None:
        return heading
    return [Emoji(ENDING_EMOJI[view.state]), Span(" "), *heading, Span(" · "), When(view.ended_at)]


def fallback(view: RequestView) -> str:
    """The `text` Slack shows in notifications and where blocks cannot be shown."""
    if view.form is not None:
        return _form_fallback(view, view.form)
    asked = "; ".join(f"{q.header}: {one_line(q.question)}" for q in view.questions)
    # Names, not mentions: the notification of a finished question pings nobody.
    names = shorten(", ".join(p.name or p.id for p in view.deciders) or "someone", 500)
    if view.state is State.WAITING:
        text = f"{view.context} — {asked}" if view.context else asked
        line = f"Question from the agent: {text}"
    else:
        detail = given(view.answers) if view.answers else asked
        line = f"{view.heading.format(deciders=names)}: {detail}"
    return shorten_mrkdwn(mrkdwn([Span(line)]), MAX_FALLBACK_TEXT)


def one_line(text: str) -> str:
    """`text` without its code blocks, on one line: notifications show no code."""
    parts = text.split("```")
    prose_only = " ".join(p for i, p in enumerate(parts) if i % 2 == 0)
    return " ".join(prose_only.split()) or " ".join(text.replace("```", " ").split())


# ---- blocks -------------------------------------------------------------------------------------


def _context(view: RequestView, rev: str) -> list[Block]:
    if not view.context:
        return []
    note: ContextBlock = {
        "type": "context",
        "block_id": block_id(rev, "context"),
        "elements": [plain(view.context, CONTEXT_BUDGET)],
    }
    return [note]


def _question(view: RequestView, rev: str, index: int, below: list[RichElement]) -> Block:
    question = view.questions[index]
    lead: Line = [Span(shorten(question.header, 60), bold=True)]
    elements = prose(lead, shorten(question.question.strip(), QUESTION_BUDGET))
    return block(block_id(rev, f"q{index}"), [*elements, *below])


def _tool(view: RequestView, rev: str) -> list[Block]:
    """The tool call the request asks to approve, each part a block of its own."""
    tool = view.tool
    if tool is None:
        return []
    return [block(block_id(rev, f"tool{i}"), part) for i, part in enumerate(tool_parts(tool))]


def _option_line(label: str, description: str) -> Line:
    line: Line = [Span(shorten(label, LABEL_BUDGET), bold=True)]
    if description.strip():
        line.append(Span(f" — {shorten(description.strip(), DESCRIPTION_BUDGET)}"))
    return line


def _tally(view: RequestView, rev: str) -> list[Block]:
    if not view.needs_votes or not view.tally:
        return []
    rows = [tally_row(view, row) for row in view.tally[:MAX_TALLY_ROWS]]
    if len(view.tally) > MAX_TALLY_ROWS:
        rows.append([Span(more_answers(len(view.tally) - MAX_TALLY_ROWS))])
    head = section([Span("Votes", bold=True)])
    return [block(block_id(rev, "votes"), [head, bullets(rows)])]


def _waiting(view: RequestView, rev: str) -> list[Block]:
    blocks = _context(view, rev)
    policy = policy_line(view)
    if policy:
        blocks.append(block(block_id(rev, "policy"), [section(policy)]))
    blocks += _tool(view, rev)
    request_id = view.request_id
    if view.one_click:
        question = view.questions[0]
        lines = [_option_line(o.label, o.description) for o in question.options]
        blocks.append(_question(view, rev, 0, [bullets(lines)]))
        blocks.extend(_tally(view, rev))
        buttons: list[Element] = [
            button(ActionId(request_id, Action.PICK, 0, index), option.label, str(index))
            for index, option in enumerate(question.options)
        ]
        buttons.extend(form_buttons(view))
        buttons.append(cancel(request_id))
        blocks.append(actions(rev, "q0-options", buttons))
        return [*blocks, _hint(view, rev)]
    for index, question in enumerate(view.questions):
        blocks.append(_question(view, rev, index, []))
        blocks.append(actions(rev, f"q{index}-options", [choices(request_id, index, question)]))
    blocks.extend(_tally(view, rev))
    submit = button(ActionId(request_id, Action.SUBMIT), "Submit", "submit")
    submit["style"] = "primary"
    blocks.append(actions(rev, "buttons", [submit, *form_buttons(view), cancel(request_id)]))
    return [*blocks, _hint(view, rev)]


def _hint(view: RequestView, rev: str) -> ContextBlock:
    """How the controls above work, and what Cancel does."""
    hint = f"{view.how_to_answer} {CANCEL_HINT}"
    return {"type": "context", "block_id": block_id(rev, "hint"), "elements": [plain(hint, 300)]}


def _ended(view: RequestView, rev: str) -> list[Block]:
    blocks = _context(view, rev) + _tool(view, rev)
    notes = view.notes
    for index, question in enumerate(view.questions):
        answer = view.answers.get(question.header)
        below: list[RichElement] = [] if answer is None else [section(_answer_line(answer))]
        if question.header in notes:
            below.append(section(note_line(view, notes[question.header])))
        blocks.append(_question(view, rev, index, below))
    blocks.extend(_tally(view, rev))
    blocks.append(block(block_id(rev, "outcome"), [section(outcome_line(view))]))
    return blocks


def note_line(view: RequestView, note: str) -> Line:
    """The note given with an answer, and whose it is (each voter's is named in `note` when
    several agreed)."""
    text = Span(shorten(note, NOTE_BUDGET))
    if len(view.deciders) == 1:
        return [Span("Note from "), *person(view.deciders[0]), Span(": "), text]
    return [Span("Notes: "), text]


def _answer_line(answer: str) -> Line:
    return [Span("→ "), Span(shorten(answer, ANSWER_BUDGET), bold=True)]


# ---- a typed form -------------------------------------------------------------------------------


def _form_fallback(view: RequestView, form: Form) -> str:
    asked = one_line(form.message)
    if view.state is State.WAITING:
        text = f"{view.context} — {asked}" if view.context else asked
        line = f"Form from the agent: {text}"
    else:
        names = shorten(", ".join(p.name or p.id for p in view.deciders) or "someone", 500)
        given = "; ".join(f"{title_of(f)}: {value}" for f, value in view.filled_in())
        line = f"{view.heading.format(deciders=names)}: {given or asked}"
    return shorten_mrkdwn(mrkdwn([Span(line)]), MAX_FALLBACK_TEXT)


def _form_message(form: Form, rev: str, below: list[RichElement]) -> Block:
    """The form's message, as the agent wrote it (code blocks kept), then `below`."""
    elements = prose([], shorten(form.message.strip(), QUESTION_BUDGET))
    return block(block_id(rev, "form"), [*elements, *below])


def _field_line(title: str, description: str, required: bool) -> Line:
    line: Line = [Span(shorten(title, LABEL_BUDGET), bold=True)]
    if required:
        line.append(Span(" (required)"))
    if description.strip():
        line.append(Span(f" — {shorten(description.strip(), DESCRIPTION_BUDGET)}"))
    return line


def _form_waiting(view: RequestView, form: Form, rev: str) -> list[Block]:
    """The form's message and each field it asks for; "Fill in…" opens the modal."""
    blocks = _context(view, rev)
    policy = policy_line(view)
    if policy:
        blocks.append(block(block_id(rev, "policy"), [section(policy)]))
    fields = [_field_line(title_of(f), f.description, f.required) for f in form.fields]
    below = [bullets(fields)] if fields else []
    if form.url is not None:
        # The address as text, so people see where the button goes before they click.
        below = [section([Span("Link: "), Span(form.url)])]
    blocks.append(_form_message(form, rev, below))
    blocks.extend(_tally(view, rev))
    request_id = view.request_id
    if form.url is not None:
        fill = button(ActionId(request_id, Action.FILL), DONE_LABEL, DONE)
        opening = [link(form.url)]
    else:
        fill = button(ActionId(request_id, Action.FILL), FILL_LABEL, "fill")
        opening = []
    fill["style"] = "primary"
    decline = button(ActionId(request_id, Action.DECLINE), DECLINE_LABEL, "decline")
    buttons: list[Element] = [*opening, fill, decline, cancel(request_id)]
    blocks.append(actions(rev, "buttons", buttons))
    return [*blocks, _hint(view, rev)]


def _form_ended(view: RequestView, form: Form, rev: str) -> list[Block]:
    """The form's message, the values given as people read them, and how it ended."""
    given: list[Line] = [
        [Span(shorten(title_of(f), LABEL_BUDGET), bold=True), Span(": "), Span(value_text(value))]
        for f, value in view.filled_in()
    ]
    blocks = _context(view, rev)
    blocks.append(_form_message(form, rev, [bullets(given)] if given else []))
    blocks.extend(_tally(view, rev))
    blocks.append(block(block_id(rev, "outcome"), [section(outcome_line(view))]))
    return blocks


def value_text(value: str) -> str:
    """A value a person gave, as they gave it (line breaks too), within a budget."""
    return shorten(value.strip() or "–", ANSWER_BUDGET)
