"""A request as a Slack message: pure functions from a `Request` to Block Kit.

While waiting: the context line, then per question a bold header tag, the question, and its
options (buttons for a one-click answer, radio buttons or checkboxes otherwise), then Submit and
Cancel. Once ended: no interactive elements; each header with its answer and who ended it, when.
Every text is cut to Block Kit's limits with an ellipsis, so Slack never answers `invalid_blocks`.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from adapters.slack.action_ids import ActionId, Kind
from adapters.slack.blockkit import (
    MAX_BUTTON_TEXT,
    MAX_CONFIRM_BUTTON,
    MAX_CONFIRM_TEXT,
    MAX_CONFIRM_TITLE,
    MAX_CONTEXT_TEXT,
    MAX_FALLBACK_TEXT,
    MAX_OPTION_DESCRIPTION,
    MAX_OPTION_TEXT,
    ActionsBlock,
    Block,
    Button,
    Confirm,
    ContextBlock,
    Element,
    MessagePayload,
    Mrkdwn,
    Option,
    PlainText,
    SectionBlock,
)
from core.models import Person, Request, Status, UserQuestion

ELLIPSIS = "…"
CANCEL_WARNING = "The agent will be interrupted."
SLACK_USER_ID = re.compile(r"[UW][A-Z0-9]+")

# Budgets (in characters, after escaping) that keep every composed section under its limit.
HEADER_BUDGET = 60
QUESTION_BUDGET = 1800
ONE_CLICK_QUESTION_BUDGET = 1400
OPTION_LINE_LABEL_BUDGET = 150
OPTION_LINE_DESCRIPTION_BUDGET = 200
ANSWER_BUDGET = 1000
CONTEXT_BUDGET = 2000
NAME_BUDGET = 100


# ---- text ---------------------------------------------------------------------------------------


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: limit - len(ELLIPSIS)].rstrip() + ELLIPSIS


def escape(text: str) -> str:
    """mrkdwn treats `&`, `<` and `>` as control characters; an agent's text must not."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escaped(text: str, limit: int) -> str:
    """`text` escaped for mrkdwn and cut to `limit` characters without breaking an entity."""
    full = escape(text)
    if len(full) <= limit:
        return full
    cut = re.sub(r"&[a-z]*$", "", full[: limit - len(ELLIPSIS)])
    return cut.rstrip() + ELLIPSIS


def plain(text: str, limit: int) -> PlainText:
    return {"type": "plain_text", "text": shorten(text.strip() or "?", limit), "emoji": True}


def mrkdwn(text: str) -> Mrkdwn:
    return {"type": "mrkdwn", "text": text}


def who(person: Person | None) -> str:
    """A person as mrkdwn: a Slack mention when they are a Slack user, else their name."""
    if person is None:
        return "someone"
    if person.platform == "slack" and SLACK_USER_ID.fullmatch(person.id):
        return f"<@{person.id}>"
    return f"{escaped(person.name or person.id, NAME_BUDGET)} ({escaped(person.platform, 20)})"


def when(moment: datetime | None) -> str:
    """A time every reader sees in their own time zone; the fallback is UTC."""
    if moment is None:
        return ""
    utc = moment.astimezone(UTC)
    fallback = utc.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(utc.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


# ---- building blocks ----------------------------------------------------------------------------


def _id(rev: str, name: str) -> str:
    # block_ids change with every render: Slack keeps a client's choices per block_id, and an
    # updated message must not inherit them.
    return f"ab-{rev}-{name}"


def _section(rev: str, name: str, text: str) -> SectionBlock:
    return {"type": "section", "block_id": _id(rev, name), "text": mrkdwn(text)}


def _context(rev: str, name: str, text: str) -> ContextBlock:
    return {"type": "context", "block_id": _id(rev, name), "elements": [mrkdwn(text)]}


def _actions(rev: str, name: str, elements: list[Element]) -> ActionsBlock:
    return {"type": "actions", "block_id": _id(rev, name), "elements": elements}


def _question_text(question: UserQuestion, budget: int) -> str:
    return f"*{escaped(question.header, HEADER_BUDGET)}*  {escaped(question.question, budget)}"


def _option(index: int, label: str, description: str) -> Option:
    option: Option = {"text": plain(label, MAX_OPTION_TEXT), "value": str(index)}
    if description.strip():
        option["description"] = plain(description, MAX_OPTION_DESCRIPTION)
    return option


def _button(action: ActionId, label: str, value: str) -> Button:
    return {
        "type": "button",
        "action_id": action.pack(),
        "text": plain(label, MAX_BUTTON_TEXT),
        "value": value,
    }


def _cancel(request_id: str) -> Button:
    confirm: Confirm = {
        "title": plain("Cancel this question?", MAX_CONFIRM_TITLE),
        "text": plain(f"{CANCEL_WARNING} Nobody can answer it afterwards.", MAX_CONFIRM_TEXT),
        "confirm": plain("Cancel question", MAX_CONFIRM_BUTTON),
        "deny": plain("Keep it", MAX_CONFIRM_BUTTON),
        "style": "danger",
    }
    button = _button(ActionId(request_id, Kind.CANCEL), "Cancel", "cancel")
    button["style"] = "danger"
    button["confirm"] = confirm
    return button


# ---- the message --------------------------------------------------------------------------------


def is_one_click(request: Request) -> bool:
    """One single-select question: a click on an option is the whole answer."""
    return len(request.questions) == 1 and not request.questions[0].multi_select


def render(request: Request, rev: str) -> MessagePayload:
    """The message for `request` as it is now; `rev` makes this render's block_ids unique."""
    if request.status is Status.WAITING:
        return {"text": _fallback(request), "blocks": _waiting(request, rev)}
    return {"text": _fallback(request), "blocks": _ended(request, rev)}


def _header_blocks(request: Request, rev: str) -> list[Block]:
    if not request.context:
        return []
    return [_context(rev, "context", escaped(request.context, CONTEXT_BUDGET))]


def _waiting(request: Request, rev: str) -> list[Block]:
    blocks = _header_blocks(request, rev)
    request_id = request.request_id
    if is_one_click(request):
        question = request.questions[0]
        lines = [_question_text(question, ONE_CLICK_QUESTION_BUDGET)]
        for option in question.options:
            line = f"• *{escaped(option.label, OPTION_LINE_LABEL_BUDGET)}*"
            if option.description.strip():
                line += f" — {escaped(option.description, OPTION_LINE_DESCRIPTION_BUDGET)}"
            lines.append(line)
        blocks.append(_section(rev, "q0", "\n".join(lines)))
        buttons: list[Element] = [
            _button(ActionId(request_id, Kind.PICK, 0, index), option.label, str(index))
            for index, option in enumerate(question.options)
        ]
        buttons.append(_cancel(request_id))
        blocks.append(_actions(rev, "q0-options", buttons))
        return blocks
    for index, question in enumerate(request.questions):
        blocks.append(_section(rev, f"q{index}", _question_text(question, QUESTION_BUDGET)))
        options = [
            _option(o, option.label, option.description)
            for o, option in enumerate(question.options)
        ]
        element: Element
        if question.multi_select:
            action = ActionId(request_id, Kind.CHECK, index)
            element = {"type": "checkboxes", "action_id": action.pack(), "options": options}
        else:
            action = ActionId(request_id, Kind.RADIO, index)
            element = {"type": "radio_buttons", "action_id": action.pack(), "options": options}
        blocks.append(_actions(rev, f"q{index}-options", [element]))
    submit = _button(ActionId(request_id, Kind.SUBMIT), "Submit", "submit")
    submit["style"] = "primary"
    blocks.append(_actions(rev, "buttons", [submit, _cancel(request_id)]))
    return blocks


def _ended(request: Request, rev: str) -> list[Block]:
    blocks = _header_blocks(request, rev)
    answers = request.answers or {}
    for index, question in enumerate(request.questions):
        text = _question_text(question, QUESTION_BUDGET)
        if question.header in answers:
            text += f"\n→ *{escaped(answers[question.header], ANSWER_BUDGET)}*"
        blocks.append(_section(rev, f"q{index}", text))
    blocks.append(_context(rev, "outcome", outcome_line(request)))
    return blocks


def outcome_line(request: Request) -> str:
    """How the request ended, who ended it and when, as mrkdwn."""
    at = when(request.ended_at)
    match request.status:
        case Status.ANSWERED:
            line = f":white_check_mark: Answered by {who(request.answered_by)} · {at}"
        case Status.CANCELLED:
            line = (
                f":no_entry_sign: Cancelled by {who(request.cancelled_by)} · {at}"
                " — the agent was interrupted"
            )
        case Status.EXPIRED:
            line = f":hourglass: Expired without an answer · {at}"
        case Status.WITHDRAWN:
            line = f":leftwards_arrow_with_hook: Withdrawn by the agent · {at}"
        case _:
            line = "Waiting for an answer"
    return shorten(line, MAX_CONTEXT_TEXT)


def _fallback(request: Request) -> str:
    """The plain `text` Slack shows in notifications and where blocks cannot be shown."""
    asked = "; ".join(f"{q.header}: {q.question}" for q in request.questions)
    ended_by = request.ended_by
    name = (ended_by.name or ended_by.id) if ended_by else "someone"
    match request.status:
        case Status.WAITING:
            text = f"{request.context} — {asked}" if request.context else asked
            text = f"Question from the agent: {text}"
        case Status.ANSWERED:
            given = "; ".join(f"{h}: {a}" for h, a in (request.answers or {}).items())
            text = f"Answered by {name}: {given}"
        case Status.CANCELLED:
            text = f"Cancelled by {name}: {asked}"
        case Status.EXPIRED:
            text = f"Expired without an answer: {asked}"
        case _:
            text = f"Withdrawn by the agent: {asked}"
    return escaped(text, MAX_FALLBACK_TEXT)
