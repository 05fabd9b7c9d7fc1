"""What a person sees of a request, as facts computed once: every surface renders from here.

How it ended and who ended it, the voters, the tally against the quorum, the policy, what is
still unanswered, a voter's receipt. No markup: each surface words these facts once, through its
own escaping. See ARCHITECTURE.md, "Where each kind of decision lives".
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from askbridge.core.changes import Changeable, approved_view, changeable, changer
from askbridge.core.form_schema import Form, FormField
from askbridge.core.form_values import decode, shown_value
from askbridge.core.ladder_time import taken_at
from askbridge.core.models import Person, Request, Selections, Status, Target, UserQuestion
from askbridge.core.policy import Ineligible, answerers_now, eligibility, taken
from askbridge.core.tool_view import ToolView


class State(enum.StrEnum):
    """How a request stands, with an answer decided by its deadline told apart."""

    WAITING = "waiting"
    ANSWERED = "answered"
    DECIDED_BY_TIMEOUT = "decided_by_timeout"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"
    DECLINED = "declined"
    """A typed form a person (or its deadline) said no to."""


AGENT_ERRORS: Mapping[Status, str] = {
    Status.CANCELLED: "Interrupted",
    Status.EXPIRED: "Timed out waiting for an answer",
    Status.WITHDRAWN: "Withdrawn by the agent",
    Status.DECLINED: "Declined",
}
"""What the agent reads in `error` when its request ended without answers."""

FormAction = Literal["accept", "decline", "cancel"]
"""How a typed form ended, in MCP elicitation's words: filled in, declined (the agent is told
no), or anything else that ended it without values."""
FORM_ACTIONS: Mapping[Status, FormAction] = {
    Status.ANSWERED: "accept",
    Status.DECLINED: "decline",
    Status.CANCELLED: "cancel",
    Status.EXPIRED: "cancel",
    Status.WITHDRAWN: "cancel",
}
"""What the agent is told of a form that ended with each status."""

HEADINGS: Mapping[State, str] = {
    State.WAITING: "Waiting for an answer",
    State.ANSWERED: "Answered by {deciders}",
    State.DECIDED_BY_TIMEOUT: "Decided by timeout",
    State.CANCELLED: "Cancelled by {deciders} — the agent was interrupted",
    State.EXPIRED: "Expired without an answer",
    State.WITHDRAWN: "Withdrawn by the agent",
    State.DECLINED: "Declined by {deciders} — the agent was told no",
}
DECLINED_AT_DEADLINE_HEADING = "Declined at the deadline — the agent was told no"
"""How a message heads a form its deadline declined."""
"""How a message heads its request's state on every surface; `{deciders}`: who ended it, as
the surface shows people."""


@dataclass(frozen=True)
class TallyRow:
    """One distinct set of answers, who gave it, and whether it is the request's answer."""

    answers: Mapping[str, str]
    voters: tuple[Person, ...]
    decided: bool = False

    @property
    def count(self) -> int:
        return len(self.voters)


@dataclass(frozen=True)
class Receipt:
    """What one voter learns after a vote that did not decide the request yet."""

    answers: Mapping[str, str]
    matching: int
    quorum: int


@dataclass(frozen=True)
class Escalated:
    """An escalation step the request took: shown as "Escalated to <answerers> after 30 min"."""

    step: int
    """From 1."""
    answerers: tuple[str, ...] | None
    """Who may answer since (None: the same people as before)."""
    target: Target | None
    after: str
    """How long after the request was created, in words ("30 min")."""


FAILED = "Something went wrong, so nothing was recorded. Please try again in a moment."
"""What a person is told when their click or form could not be handled."""
SELF_APPROVAL = "You asked for this, so your answer cannot count: someone else must decide it."
"""What the requester is told, privately, when their vote on their own request is refused."""
NO_LONGER_AVAILABLE = "This question is no longer available."
"""What a click on a request askbridge no longer knows is told."""
FOREIGN_CLICK = "This button does not belong to this question, so it was not counted."
"""What a click that claims a message, question or option its request does not have is told."""
NOT_ANSWERER = (
    "Only these people may answer this question: {answerers}. Your click was not counted."
)
"""What someone who may not answer is told; `{answerers}`: the view's answerers, as the
surface names them."""
UNCHECKED = (
    " askbridge could not check who is in {groups} just now; if you are, please try again in a"
    " minute."
)
"""Added to NOT_ANSWERER when the platform could not say whether the person is in some of the
groups that may answer."""
CANCEL_HINT = "Cancel tells the agent not to wait."
CANCEL_QUESTION = "Cancel this question?"
CANCEL_WARNING = "The agent will be interrupted, and nobody can answer it afterwards."
CANCEL_SURE = "Cancel question"
"""What a surface asks before a Cancel counts, and the button that says yes."""
WHO_MAY_ANSWER = "Who may answer: {answerers}"
"""The policy's first line; `{answerers}`: the view's answerers, as the surface names them."""
DECIDED_AT_DEADLINE = "If nobody decides by {deadline}, the answer is {answers}"
DECLINED_AT_DEADLINE = "If nobody fills it in by {deadline}, it is declined"
UNDECIDED_AT_DEADLINE = "If nobody decides by {deadline}, it is declined"
"""A form several must fill in alike: one of them may have filled it in already."""
OPEN_UNTIL = "Open until {deadline}; then it expires"
FORM_TITLE = "Form"
FORM_HOW_TO_ANSWER = "Fill in the form to answer, or Decline to tell the agent no."
FORM_HOW_TO_VOTE = (
    "Filling in the form casts your vote; fill it in again to change it. Decline tells the "
    "agent no."
)
LINK_HOW_TO_ANSWER = (
    "Open the link and do what it asks, then press Done; Decline tells the agent no."
)
LINK_HOW_TO_VOTE = (
    "Open the link and do what it asks, then press Done to cast your vote; Decline tells the "
    "agent no."
)
STILL_WAITING = "this question is still waiting for an answer."
REMINDER = f"Reminder: {STILL_WAITING}"
REMINDER_FOR = f"Reminder for {{answerers}}: {STILL_WAITING}"
ESCALATED_TO = "Escalated to {answerers} after {after}"
ESCALATED = "Escalated after {after}"
"""How the policy tells the escalation step taken: `{after}` is how long after the request was
made, in words; `{answerers}`, who may answer since."""


@dataclass(frozen=True)
class RequestView:
    request: Request
    state: State
    deciders: tuple[Person, ...]
    """Who ended it: the agreeing voters, the one who answered, or the one who cancelled."""
    tally: tuple[TallyRow, ...]
    """Every distinct answer given so far, most votes first."""

    @classmethod
    def of(cls, request: Request) -> RequestView:
        state = _state(request)
        answered = state is State.ANSWERED
        rows = tuple(
            TallyRow(
                _with_changes(answers, changed),
                tuple(people),
                answered and answers == request.answers and changed == request.approved_input,
            )
            for answers, changed, people in request.tally_changes()
        )
        deciders: tuple[Person, ...] = ()
        if state is State.ANSWERED:
            agreeing = next((row.voters for row in rows if row.decided), ())
            answered_by = (request.answered_by,) if request.answered_by else ()
            deciders = agreeing or answered_by
        elif state is State.CANCELLED and request.cancelled_by is not None:
            deciders = (request.cancelled_by,)
        elif state is State.DECLINED and request.declined_by is not None:
            deciders = (request.declined_by,)
        return cls(request, state, deciders, rows)

    # --- what was asked -----------------------------------------------------------------

    @property
    def request_id(self) -> str:
        return self.request.request_id

    @property
    def questions(self) -> tuple[UserQuestion, ...]:
        return self.request.questions

    @property
    def context(self) -> str:
        return (self.request.context or "").strip()

    @property
    def one_click(self) -> bool:
        """One single-select question: a click on an option is the whole answer."""
        questions = self.request.questions
        return len(questions) == 1 and not questions[0].multi_select

    @property
    def title(self) -> str:
        """A short name for the request (a page's title): its first question's header, or
        "Form"."""
        return self.questions[0].header if self.questions else FORM_TITLE

    @property
    def lead(self) -> str:
        """What the request asks, in one text: its first question, or its form's message."""
        if self.questions:
            return self.questions[0].question
        return self.request.form.message if self.request.form is not None else ""

    @property
    def form(self) -> Form | None:
        """The typed form the request asks to fill in (it then has no questions)."""
        return self.request.form

    @property
    def content(self) -> dict[str, Any]:
        """A form's typed values once it was answered (field name -> value); else empty."""
        if self.request.form is None or self.request.answers is None:
            return {}
        return decode(self.request.answers)

    def filled_in(self, answers: Mapping[str, str] | None = None) -> list[tuple[FormField, str]]:
        """Each field of the form that was filled in, with its value as people read it, in the
        form's order: of the request's answer, or of `answers` (a vote's, a tally row's)."""
        form = self.request.form
        if form is None:
            return []
        content = self.content if answers is None else decode(answers)
        return [(f, shown_value(f, content[f.name])) for f in form.fields if f.name in content]

    # --- how it stands ------------------------------------------------------------------

    @property
    def waiting(self) -> bool:
        return self.state is State.WAITING

    @property
    def answers(self) -> Mapping[str, str]:
        return self.request.answers or {}

    @property
    def tool(self) -> ToolView | None:
        """The tool call to show: as it was allowed, when a person changed it before allowing
        it (headed by who did, named plainly: each surface escapes it as any other text)."""
        who = changer(self.request)
        if who is not None:
            return approved_view(self.request, plain_name(who))
        return self.request.tool

    @property
    def changeable(self) -> Changeable | None:
        """What a person may change of the tool call before allowing it, while it waits."""
        return changeable(self.request) if self.waiting else None

    @property
    def ended_at(self) -> datetime | None:
        return self.request.ended_at

    @property
    def notes(self) -> dict[str, str]:
        """header -> the notes the deciding voters gave with the answer (each note named by its
        voter when several agreed)."""
        deciding = {p.key for p in self.deciders} if self.state is State.ANSWERED else set()
        given_with = [v for v in self.request.votes if v.person.key in deciding and v.notes]
        found: dict[str, str] = {}
        for vote in given_with:
            for header, note in vote.notes.items():
                line = note if len(given_with) == 1 else f"{plain_name(vote.person)}: {note}"
                found[header] = f"{found[header]}\n{line}" if header in found else line
        return found

    @property
    def heading(self) -> str:
        """HEADINGS for the state, with how many agreed when several had to."""
        if self.state is State.DECLINED and not self.deciders:
            return DECLINED_AT_DEADLINE_HEADING
        heading = HEADINGS[self.state]
        if self.state is State.ANSWERED and len(self.deciders) > 1:
            heading += f" ({len(self.deciders)} matching votes)"
        return heading

    @property
    def other_votes(self) -> tuple[TallyRow, ...]:
        """The rows that did not decide the request."""
        return tuple(row for row in self.tally if not row.decided)

    @property
    def best_count(self) -> int:
        """The most matching votes any one answer has so far."""
        return max((row.count for row in self.tally), default=0)

    def tally_line(self, row: TallyRow) -> str:
        """How one distinct answer stands against the quorum; `{answers}` (its `summary`) and
        `{voters}` are the surface's to show."""
        return f"{{answers}} — {row.count}/{self.quorum} ({{voters}})"

    def unanswered(self, selections: Selections) -> list[str]:
        """Headers of the questions that have no selection yet, in order."""
        return [q.header for i, q in enumerate(self.questions) if not selections.get(i)]

    def receipt(self, person: Person) -> Receipt | None:
        """`person`'s vote and how many agree with it, while the request still waits."""
        if not self.waiting or self.quorum <= 1:
            return None
        mine = next((v for v in self.request.votes if v.person.key == person.key), None)
        if mine is None:
            return None
        same = [
            v for v in self.request.votes if (v.answers, v.changed) == (mine.answers, mine.changed)
        ]
        if self.request.form is not None:
            # A form's values as people read them, named by their fields' titles.
            shown = {f.title: value for f, value in self.filled_in(mine.answers)}
            return Receipt(shown, len(same), self.quorum)
        return Receipt(_with_changes(mine.answers, mine.changed), len(same), self.quorum)

    # --- the policy ---------------------------------------------------------------------

    @property
    def answerers(self) -> tuple[str, ...]:
        """Who may answer now: after an escalation step that names answerers, they do."""
        return answerers_now(self.request)

    @property
    def escalated(self) -> Escalated | None:
        """The last escalation step taken that opened the request to other answerers or
        posted it elsewhere (a step that only reminds is not shown)."""
        steps = taken(self.request)
        for number in range(len(steps), 0, -1):
            step = steps[number - 1]
            if step.answerers is not None or step.target is not None:
                # When it was taken, not when the ladder asked: quiet hours may have held it.
                after = taken_at(self.request, number) - self.request.created_at
                return Escalated(
                    number, step.answerers, step.target, duration(after.total_seconds())
                )
        return None

    @property
    def quorum(self) -> int:
        return self.request.policy.quorum

    @property
    def needs_votes(self) -> bool:
        """Several people must agree: the tally is worth showing."""
        return self.quorum > 1

    @property
    def votes_needed(self) -> str:
        """How a message says that several people must agree."""
        return f"Needs {self.quorum} matching votes"

    @property
    def how_to_answer(self) -> str:
        """How a message's controls work: whether one click answers (or votes), or Submit."""
        form = self.request.form
        if form is not None and form.url is not None:
            return LINK_HOW_TO_VOTE if self.needs_votes else LINK_HOW_TO_ANSWER
        if form is not None:
            return FORM_HOW_TO_VOTE if self.needs_votes else FORM_HOW_TO_ANSWER
        if self.needs_votes:
            if self.one_click:
                return "One click votes; click another option to change your vote."
            return (
                "Your choices are yours alone until you press Submit, which casts your vote; "
                "submit again to change it."
            )
        if self.one_click:
            return "One click answers."
        return "Your choices are yours alone until you press Submit."

    @property
    def escalation_line(self) -> str | None:
        """How the policy tells the escalation step taken, if any; `{answerers}`: who may
        answer since (the view's `answerers`), as the surface names them."""
        if (step := self.escalated) is None:
            return None
        if step.answerers:
            return ESCALATED_TO.format(answerers="{answerers}", after=step.after)
        return ESCALATED.format(after=step.after)

    @property
    def handed_over(self) -> bool:
        """The last thing that pinged the request's answerers was an escalation step that
        named them (not a reminder, nor a step that only reminds)."""
        step, request = self.escalated, self.request
        if step is None or not step.answerers or step.step != request.escalation_step:
            return False
        reminded, escalated = request.reminded_at, request.escalated_at
        return reminded is None or escalated is None or escalated >= reminded

    @property
    def deadline(self) -> datetime | None:
        return self.request.expires_at

    @property
    def deadline_line(self) -> str | None:
        """How the policy tells what the deadline does, if there is one: `{deadline}` is the
        time and `{answers}` the answer it gives (`summary` of `default_answers`), as the
        surface shows them."""
        if self.deadline is None:
            return None
        if self.request.policy.timeout_decline:
            return UNDECIDED_AT_DEADLINE if self.needs_votes else DECLINED_AT_DEADLINE
        return OPEN_UNTIL if self.default_answers is None else DECIDED_AT_DEADLINE

    @property
    def reminder(self) -> str:
        """The nudge to the people who may answer (everyone when anyone may): who, how the
        votes stand, and what the deadline will do; slots as in `deadline_line`, plus
        `{answerers}`."""
        words = [REMINDER_FOR if self.answerers else REMINDER]
        if self.handed_over and self.escalation_line is not None:
            # The people it was handed to were never asked before: not a reminder to them.
            words = [f"{self.escalation_line}: {STILL_WAITING}"]
        if self.needs_votes:
            words.append(f"It has {self.best_count} of {self.quorum} matching votes so far.")
        if (deadline := self.deadline_line) is not None:
            words.append(f"{deadline}.")
        return " ".join(words)

    @property
    def default_answers(self) -> Mapping[str, str] | None:
        """What the deadline answers; None when it expires the request instead."""
        return self.request.policy.timeout_answers

    def eligibility(self, person: Person) -> Person | Ineligible:
        """Whether `person`, with the groups they carry, may act on the request now (see
        `policy.eligibility`): they themselves, or why not."""
        return eligibility(self.request, person)

    def summary(self, answers: Mapping[str, str]) -> str:
        """One set of answers on a line: the label alone for a single question; a form's
        values as people read them, `Title: value; Title: value`."""
        if self.request.form is not None:
            return "; ".join(f"{f.title}: {value}" for f, value in self.filled_in(answers))
        if len(self.questions) == 1:
            return answers.get(self.questions[0].header, "")
        return given(answers)


def deciding_notes(request: Request) -> dict[str, str]:
    """`RequestView.of(request).notes`, for an agent's status object (on the click's path):
    only votes carry notes, so the view is worked out only when one of them does."""
    if request.answers is None or not any(vote.notes for vote in request.votes):
        return {}
    return RequestView.of(request).notes


WITH_CHANGES = "{answer}, with changes"
"""How a tally and a receipt tell an allow with changes from the plain one."""


def _with_changes(answers: dict[str, str], changed: object) -> dict[str, str]:
    if changed is None or not answers:
        return answers
    first = next(iter(answers))
    return {**answers, first: WITH_CHANGES.format(answer=answers[first])}


def duration(seconds: float) -> str:
    """A delay in words: `45 s`, `30 min`, `2 h`, `1 h 30 min`, `3 days`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes = whole // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours >= 48 and not minutes and not hours % 24:
        return f"{hours // 24} days"
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def more_answers(rest: int) -> str:
    """What a tally cut short says of the `rest` of its rows."""
    return f"and {rest} more {'answer' if rest == 1 else 'answers'}"


def given(answers: Mapping[str, str]) -> str:
    """Answers on one line: `Header: label; Header: label`."""
    return "; ".join(f"{header}: {label}" for header, label in answers.items())


def plain_name(person: Person) -> str:
    return person.name or person.id


def names(people: Iterable[Person], name: Callable[[Person], str] = plain_name) -> str:
    return ", ".join(name(p) for p in people) or "someone"


def end_sentence(view: RequestView, name: Callable[[Person], str] = plain_name) -> str:
    """Why a click came too late: how the request ended and who ended it."""
    match view.state:
        case State.DECIDED_BY_TIMEOUT:
            return "This question was already decided by timeout."
        case State.ANSWERED:
            return f"This question was already answered by {names(view.deciders, name)}."
        case State.CANCELLED:
            return f"This question was cancelled by {names(view.deciders, name)}."
        case State.EXPIRED:
            return "This question expired before anyone answered."
        case State.WITHDRAWN:
            return "The agent withdrew this question."
        case State.DECLINED if not view.deciders:
            return "This form was declined at its deadline."
        case State.DECLINED:
            return f"This form was declined by {names(view.deciders, name)}."
        case _:
            return "This question is still waiting for an answer."


def counted_sentence(receipt: Receipt, quote: Callable[[str], str] = str) -> str:
    """What a voter is told when their vote counted toward a quorum not reached yet; `quote`:
    how their surface shows the answers they gave (`Header: label; …`)."""
    return (
        f"Your vote is counted: {receipt.matching} of {receipt.quorum} matching votes so far, "
        f"for {quote(given(receipt.answers))}. You can change it until the question is decided."
    )


NOT_RECORDED = "Nothing was recorded:"
"""What heads the list of typed answers that could not be taken (`Refused.fields`)."""


def missing_sentence(headers: Sequence[str], quote: Callable[[str], str] = str) -> str:
    shown = ", ".join(f'"{quote(h)}"' for h in headers)
    return f"Please answer {shown} before submitting."


def _state(request: Request) -> State:
    if request.status is Status.ANSWERED and request.decided_by_timeout:
        return State.DECIDED_BY_TIMEOUT
    return State(request.status.value)
