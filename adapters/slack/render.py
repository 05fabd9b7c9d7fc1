"""A request as a Slack message: pure functions from a `Request` to Block Kit.

While waiting: the context line, the approval policy (who may answer, how many must agree, the
deadline), then per question a bold header tag, the question, and its options (buttons for a
one-click answer, radio buttons or checkboxes otherwise), the votes so far, then Submit and Cancel.
Once ended: no interactive elements; each header with its answer, the votes, and who ended it, when.
Every text is cut to Block Kit's limits with an ellipsis, so Slack never answers `invalid_blocks`;
a cut never splits an escape or a mention, and never leaves a ``` code block open.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
    MAX_SECTION_TEXT,
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
FENCE = "```"
CANCEL_WARNING = "The agent will be interrupted."
SLACK_USER_ID = re.compile(r"[UW][A-Z0-9]+")
SLACK_GROUP_ID = re.compile(r"S[A-Z0-9]+")

# Budgets (in characters, after escaping) that keep every composed section under its limit.
HEADER_BUDGET = 60
OPTION_LINE_LABEL_BUDGET = 150
OPTION_LINE_DESCRIPTION_BUDGET = 200
ANSWER_BUDGET = 1000
CONTEXT_BUDGET = 2000
NAME_BUDGET = 100
ANSWERERS_BUDGET = 2000
DEFAULT_ANSWER_BUDGET = 300
TALLY_BUDGET = 2800
TALLY_ANSWER_BUDGET = 300
VOTERS_BUDGET = 600
# What a section needs besides the question and the lines under it: the header tag, spacing.
HEADER_ROOM = 80


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
    return _cut(full, limit - len(ELLIPSIS)).rstrip() + ELLIPSIS


def _cut(full: str, length: int) -> str:
    """The first `length` characters of escaped text, less an entity the cut split."""
    return re.sub(r"&[a-z]*$", "", full[: max(length, 0)])


def formatted(text: str, limit: int) -> str:
    """`text` escaped for mrkdwn with its ``` code blocks kept (a permission prompt shows the
    tool's input in one), cut to `limit` characters: never inside an entity, and never leaving
    a code block open, which would swallow everything after it."""
    full = escape(text)
    if len(full) <= limit and full.count(FENCE) % 2 == 0:
        return full
    if len(full) <= limit - len(FENCE):
        cut, ellipsis = full, ""
    else:
        cut, ellipsis = _cut(full, limit - len(FENCE) - len(ELLIPSIS)), ELLIPSIS
    # A cut may split a fence; backticks left at the end would run into the closing one.
    cut = cut.rstrip("`")
    if cut.count(FENCE) % 2:
        return cut + ellipsis + FENCE
    return cut.rstrip() + ellipsis


def summary(text: str) -> str:
    """`text` without its code blocks, on one line: for notifications, which show no code."""
    parts = text.split(FENCE)
    prose = " ".join(p for i, p in enumerate(parts) if i % 2 == 0)
    return " ".join(prose.split()) or " ".join(text.replace(FENCE, " ").split())


def listed(items: Sequence[str], budget: int, *, sep: str = ", ", more: str = "{} more") -> str:
    """`items` joined by `sep` within `budget` characters; the ones that do not fit are counted
    (`more`), so a mention or an escape is never cut in half."""
    text = ""
    reserve = len(sep) + len(more.format(len(items)))
    for index, item in enumerate(items):
        joined = f"{text}{sep}{item}" if text else item
        if len(joined) + (reserve if index < len(items) - 1 else 0) > budget:
            tail = more.format(len(items) - index)
            return f"{text}{sep}{tail}" if text else tail
        text = joined
    return text


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


def answerer(entry: str) -> str:
    """An answerers entry as mrkdwn: a mention for a Slack member or user group."""
    kind, _, value = entry.partition(":")
    member = value.removeprefix("@")
    if kind == "slack" and SLACK_USER_ID.fullmatch(member):
        return f"<@{member}>"
    if kind == "slack-group" and SLACK_GROUP_ID.fullmatch(value):
        return f"<!subteam^{value}>"
    return escaped(entry, NAME_BUDGET)


def answerers(entries: Sequence[str]) -> str:
    return listed([answerer(e) for e in entries], ANSWERERS_BUDGET)


def given(answers: dict[str, str]) -> str:
    """Answers on one line, `Header: label; Header: label`, not yet escaped."""
    return "; ".join(f"{header}: {label}" for header, label in answers.items())


def when(moment: datetime | None) -> str:
    """A time every reader sees in their own time zone; the fallback is UTC."""
    if moment is None:
        return ""
    utc = moment.astimezone(UTC)
    fallback = utc.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(utc.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


# ---- building blocks ----------------------------------------------------------------------------


def _id(rev: str, name: str) -> str:
    # Slack keeps a client's unsubmitted choices per block_id. The surface keeps `rev` while a
    # request waits, so a tally update leaves everyone's choices alone, and changes it once the
    # request ends, so the final message inherits none.
    return f"ab-{rev}-{name}"


def _section(rev: str, name: str, text: str) -> SectionBlock:
    return {"type": "section", "block_id": _id(rev, name), "text": mrkdwn(text)}


def _context(rev: str, name: str, text: str) -> ContextBlock:
    return {"type": "context", "block_id": _id(rev, name), "elements": [mrkdwn(text)]}


def _actions(rev: str, name: str, elements: list[Element]) -> ActionsBlock:
    return {"type": "actions", "block_id": _id(rev, name), "elements": elements}


def _question_text(question: UserQuestion, budget: int) -> str:
    return f"*{escaped(question.header, HEADER_BUDGET)}*  {formatted(question.question, budget)}"


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


def policy_line(request: Request) -> str:
    """Who may answer, how many must agree, and what the deadline does; "" when none apply."""
    policy = request.policy
    parts = []
    if policy.answerers:
        parts.append(f"Who may answer: {answerers(policy.answerers)}")
    if policy.quorum > 1:
        parts.append(f"Needs {policy.quorum} matching votes")
    if request.expires_at is not None:
        deadline = when(request.expires_at)
        if policy.timeout_answers is not None:
            default = escaped(given(policy.timeout_answers), DEFAULT_ANSWER_BUDGET)
            parts.append(f"If undecided by {deadline}: {default}")
        else:
            parts.append(f"Open until {deadline}")
    return " · ".join(parts)


def tally_text(request: Request) -> str:
    """Each distinct answer so far, its count out of the quorum, and who gave it."""
    quorum = request.policy.quorum
    lines = [
        f"• {escaped(given(answers), TALLY_ANSWER_BUDGET)} — *{len(people)}/{quorum}*: "
        + listed([who(p) for p in people], VOTERS_BUDGET)
        for answers, people in request.tally()
    ]
    body = listed(lines, TALLY_BUDGET, sep="\n", more="…and {} other answers")
    return f"*Votes* ({quorum} matching needed)\n{body}"


def _room(below: list[str]) -> int:
    """How long a question may be in a section that also holds the lines `below` it: a
    permission prompt's code block gets all the room its section has."""
    return MAX_SECTION_TEXT - HEADER_ROOM - sum(len(line) + 1 for line in below)


def _tally_blocks(request: Request, rev: str) -> list[Block]:
    if request.policy.quorum <= 1 or not request.votes:
        return []
    return [_section(rev, "votes", tally_text(request))]


def _waiting(request: Request, rev: str) -> list[Block]:
    blocks = _header_blocks(request, rev)
    policy = policy_line(request)
    if policy:
        blocks.append(_context(rev, "policy", policy))
    request_id = request.request_id
    if is_one_click(request):
        question = request.questions[0]
        lines = []
        for option in question.options:
            line = f"• *{escaped(option.label, OPTION_LINE_LABEL_BUDGET)}*"
            if option.description.strip():
                line += f" — {escaped(option.description, OPTION_LINE_DESCRIPTION_BUDGET)}"
            lines.append(line)
        text = "\n".join([_question_text(question, _room(lines)), *lines])
        blocks.append(_section(rev, "q0", text))
        blocks.extend(_tally_blocks(request, rev))
        buttons: list[Element] = [
            _button(ActionId(request_id, Kind.PICK, 0, index), option.label, str(index))
            for index, option in enumerate(question.options)
        ]
        buttons.append(_cancel(request_id))
        blocks.append(_actions(rev, "q0-options", buttons))
        return blocks
    for index, question in enumerate(request.questions):
        blocks.append(_section(rev, f"q{index}", _question_text(question, _room([]))))
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
    blocks.extend(_tally_blocks(request, rev))
    submit = _button(ActionId(request_id, Kind.SUBMIT), "Submit", "submit")
    submit["style"] = "primary"
    blocks.append(_actions(rev, "buttons", [submit, _cancel(request_id)]))
    return blocks


def _ended(request: Request, rev: str) -> list[Block]:
    blocks = _header_blocks(request, rev)
    answers = request.answers or {}
    for index, question in enumerate(request.questions):
        below = []
        if question.header in answers:
            below.append(f"→ *{escaped(answers[question.header], ANSWER_BUDGET)}*")
        text = "\n".join([_question_text(question, _room(below)), *below])
        blocks.append(_section(rev, f"q{index}", text))
    blocks.extend(_tally_blocks(request, rev))
    blocks.append(_context(rev, "outcome", outcome_line(request)))
    return blocks


def agreeing(request: Request) -> list[Person]:
    """Who voted for the answers the request ended with, in the order they voted."""
    return [v.person for v in request.votes if v.answers == request.answers]


def outcome_line(request: Request) -> str:
    """How the request ended, who ended it and when, as mrkdwn."""
    at = when(request.ended_at)
    voters = agreeing(request)
    match request.status:
        case Status.ANSWERED if request.decided_by_timeout:
            line = f":alarm_clock: Decided by timeout: nobody decided before the deadline · {at}"
        case Status.ANSWERED if len(voters) > 1:
            names = listed([who(p) for p in voters], ANSWERERS_BUDGET)
            line = f":white_check_mark: Answered by {names} ({len(voters)} matching votes) · {at}"
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
    asked = "; ".join(f"{q.header}: {summary(q.question)}" for q in request.questions)
    ended_by = request.ended_by
    name = (ended_by.name or ended_by.id) if ended_by else "someone"
    voters = agreeing(request)
    if len(voters) > 1:
        name = ", ".join(p.name or p.id for p in voters)
    match request.status:
        case Status.WAITING:
            text = f"{request.context} — {asked}" if request.context else asked
            text = f"Question from the agent: {text}"
        case Status.ANSWERED if request.decided_by_timeout:
            text = f"Decided by timeout: {given(request.answers or {})}"
        case Status.ANSWERED:
            text = f"Answered by {name}: {given(request.answers or {})}"
        case Status.CANCELLED:
            text = f"Cancelled by {name}: {asked}"
        case Status.EXPIRED:
            text = f"Expired without an answer: {asked}"
        case _:
            text = f"Withdrawn by the agent: {asked}"
    return escaped(text, MAX_FALLBACK_TEXT)


# ---- notes and replies --------------------------------------------------------------------------


def not_eligible_note(entries: Sequence[str], unchecked: Sequence[str] = ()) -> str:
    """The private note for someone who may not answer; `unchecked`: groups Slack could not
    tell us about just now."""
    text = (
        f"Only these people may answer this question: {answerers(entries)}. "
        "Your click was not counted."
    )
    if unchecked:
        text += (
            f" askbridge could not check who is in {answerers(unchecked)} just now; "
            "if you are, please try again in a minute."
        )
    return text


def vote_note(request: Request, person: Person) -> str:
    """The private note for someone whose vote was counted while the request still waits."""
    mine = next((v for v in request.votes if v.person.key == person.key), None)
    if mine is None:
        return "Your vote is counted."
    matching = sum(1 for v in request.votes if v.answers == mine.answers)
    return (
        f"Your vote is counted: {matching} of {request.policy.quorum} so far for "
        f"{escaped(given(mine.answers), TALLY_ANSWER_BUDGET)}. "
        "You can change it until the question is decided."
    )


def reminder_text(request: Request) -> str:
    """A thread reply that nudges the people who may answer (everyone when anyone may)."""
    policy = request.policy
    if policy.answerers:
        text = f":bell: {answerers(policy.answerers)}: this question is still waiting for you."
    else:
        text = ":bell: Reminder: this question is still waiting for an answer."
    if policy.quorum > 1:
        most = max((len(people) for _, people in request.tally()), default=0)
        text += f" It needs {policy.quorum} matching votes; the most so far is {most}."
    if request.expires_at is not None:
        deadline = when(request.expires_at)
        if policy.timeout_answers is not None:
            default = escaped(given(policy.timeout_answers), DEFAULT_ANSWER_BUDGET)
            text += f" If nobody decides by {deadline}, the answer will be {default}."
        else:
            text += f" It expires {deadline}."
    return text
