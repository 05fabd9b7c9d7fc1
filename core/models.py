"""The wire-level structures of AskUserQuestion and the records askbridge keeps about them.

Input accepts the spellings agents use (`multiSelect`, `requestId`); output is snake_case,
as the agent framework's own serde output is.
"""

from __future__ import annotations

import enum
import json
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field

from askbridge.core.form_schema import Form
from askbridge.core.text_direction import REORDERING
from askbridge.core.tool_view import ToolView


class _Wire(BaseModel):
    # Unknown fields are ignored: agents add fields over time and that must not be fatal.
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class QuestionOption(_Wire):
    label: str
    description: str = ""


class UserQuestion(_Wire):
    question: str
    header: str
    options: tuple[QuestionOption, ...]
    multi_select: bool = Field(
        default=False, validation_alias=AliasChoices("multi_select", "multiSelect")
    )


class AskUserQuestion(_Wire):
    request_id: str = Field(validation_alias=AliasChoices("request_id", "requestId"))
    questions: tuple[UserQuestion, ...]


class UserQuestionResponse(_Wire):
    request_id: str = Field(validation_alias=AliasChoices("request_id", "requestId"))
    answers: dict[str, str]


class Status(enum.StrEnum):
    WAITING = "waiting"
    ANSWERED = "answered"
    CANCELLED = "cancelled"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"
    DECLINED = "declined"
    """A typed form a person said no to: the agent is told no, not interrupted."""

    @property
    def is_terminal(self) -> bool:
        return self is not Status.WAITING


def _shown_name(name: str) -> str:
    """A display name without the characters that would turn the text after it around: every
    surface shows names inside its own sentences ("Answered by mallory\u202e · 20:19")."""
    if REORDERING.isdisjoint(name):
        return name
    return "".join(c for c in name if c not in REORDERING)


class Person(_Wire):
    """Someone who acted on a request, as the surface they acted on knows them."""

    platform: str
    id: str
    name: Annotated[str, AfterValidator(_shown_name)] = ""
    # Groups the surface found this person in, as answerer entries ("<platform>-<kind>:<id>",
    # such as "chat-team:T0123"), so the broker can check eligibility without asking the platform.
    groups: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.id}"


class Target(_Wire):
    """Where a request is posted. `channel` and `thread` mean what the platform says they mean."""

    platform: str
    channel: str = ""
    thread: str | None = None

    def __str__(self) -> str:
        text = f"{self.platform}:{self.channel}" if self.channel else self.platform
        return f"{text}/{self.thread}" if self.thread else text


class MessageRef(_Wire):
    """An opaque pointer to a posted message; only the surface that made it reads `data`.

    As the origin of a click, `data` holds what the click claims about where it came from
    (workspace, app…); the broker refuses the click unless each claim that was also recorded
    when the message was posted matches it.
    """

    platform: str
    channel: str
    message_id: str
    data: dict[str, Any] = Field(default_factory=dict)
    target: int | None = None
    """Which of its request's targets the message was posted for (an index into `targets`);
    None for a click's origin, and for messages recorded before askbridge kept it."""


Selections = dict[int, tuple[int, ...]]
"""Question index -> chosen option indices."""


class QuietHours(_Wire):
    """A daily window (local time in `tz`) in which escalation steps wait until it ends."""

    tz: str
    start: str
    """HH:MM; a window that ends before it starts runs over midnight."""
    end: str


class EscalationStep(_Wire):
    """What happens `after_s` seconds after a request was created, if it still waits."""

    after_s: float
    answerers: tuple[str, ...] | None = None
    """Who may answer from this step on; None: the same people as before."""
    target: Target | None = None
    """Where the request is posted as well, from this step on."""
    mention: bool = True
    """Ping the people who may answer (through the platform's mentions), in each message's
    thread."""


class Ladder(_Wire):
    """A request's escalation steps, in order; no steps: the request never escalates."""

    steps: tuple[EscalationStep, ...] = ()
    quiet_hours: QuietHours | None = None


class Policy(_Wire):
    """Who may answer and how a request is decided: carried by the request, enforced by the
    broker."""

    answerers: tuple[str, ...] = ()
    quorum: int = 1
    # Answers that decide the request when its deadline passes (a form's content as
    # `core.forms.encode` keeps it); None: it expires, or is declined (`timeout_decline`).
    timeout_answers: dict[str, str] | None = None
    timeout_decline: bool = False
    """A form's deadline declines it (the agent is told no) instead of expiring it."""
    remind_after_s: float | None = None
    # A person may answer in their own words instead of (or besides) the options, and may
    # attach a note to their answer.
    allow_other: bool = False
    allow_notes: bool = False
    # Where askbridge POSTs the signed status object once the request ends (a webhook).
    callback_url: str | None = None
    escalation: Ladder | None = None
    # SHA-256 (hex) of the canonical JSON of what the request asks to approve (its subject).
    subject_sha256: str | None = None
    # Who asked (an answerer entry naming a person), and whether they may not answer.
    requested_by: str | None = None
    no_self_approval: bool = False
    # A person may change the tool call's input before allowing it (core/changes.py); only
    # an asker that runs the approved input it is given may offer it.
    allow_changes: bool = False


class Vote(_Wire):
    person: Person
    answers: dict[str, str]
    at: datetime
    notes: dict[str, str] = Field(default_factory=dict)
    """header -> the voter's note on that answer."""
    changed: dict[str, Any] | None = None
    """The tool input this vote allows instead of the one asked (an allow with changes)."""


class Request(_Wire):
    """Everything askbridge knows about one ask, as it is kept in the store: an AskUserQuestion
    (`questions`), or a typed form (`form`, and no questions)."""

    request_id: str
    questions: tuple[UserQuestion, ...]
    targets: tuple[Target, ...]
    context: str | None = None
    status: Status = Status.WAITING
    created_at: datetime
    expires_at: datetime | None = None
    ended_at: datetime | None = None
    answers: dict[str, str] | None = None
    approved_input: dict[str, Any] | None = None
    """The tool input the answer allows instead of the one asked (an allow with changes)."""
    answered_by: Person | None = None
    cancelled_by: Person | None = None
    declined_by: Person | None = None
    messages: tuple[MessageRef, ...] = ()
    policy: Policy = Policy()
    votes: tuple[Vote, ...] = ()
    remind_at: datetime | None = None
    reminded_at: datetime | None = None
    escalation_step: int = 0
    """How many steps of the escalation ladder have been taken (each claimed once)."""
    escalate_at: datetime | None = None
    """When the next step is due (quiet hours counted); None: no step is left before the
    deadline."""
    escalated_at: datetime | None = None
    tool: ToolView | None = None
    """The tool call the request asks to approve, as people see it."""
    posted_at: datetime | None = None
    """When every target had its message recorded; None while posting is unfinished (it
    failed, or the process died while posting) and the request still needs posting."""
    form: Form | None = None
    """The typed form a person fills in; its values are kept as `answers` (field name ->
    canonical JSON, see `core.forms.encode`)."""

    @property
    def decided_by_timeout(self) -> bool:
        """The deadline gave the on_timeout answers (or declined the form)."""
        if self.status is Status.DECLINED:
            return self.declined_by is None
        return self.status is Status.ANSWERED and self.answered_by is None

    @property
    def ended_by(self) -> Person | None:
        """Who ended the request: who answered, cancelled or declined it."""
        return self.answered_by or self.cancelled_by or self.declined_by

    def tally(self) -> list[tuple[dict[str, str], list[Person]]]:
        """Each distinct answer with its voters, most votes first; an allow with changes is an
        answer of its own for each input it allows (see `changes`)."""
        return [(answers, people) for answers, _, people in self.tally_changes()]

    def tally_changes(self) -> list[tuple[dict[str, str], dict[str, Any] | None, list[Person]]]:
        """`tally`, each answer with the changed input it allows (None: the one asked)."""
        groups: dict[str, tuple[dict[str, str], dict[str, Any] | None, list[Person]]] = {}
        for vote in self.votes:
            key = repr((sorted(vote.answers.items()), _key(vote.changed)))
            groups.setdefault(key, (vote.answers, vote.changed, []))[2].append(vote.person)
        return sorted(groups.values(), key=lambda group: -len(group[2]))


def _key(changed: dict[str, Any] | None) -> str | None:
    return None if changed is None else json.dumps(changed, sort_keys=True)
