"""What a click means, and what came of it: the one vocabulary of every surface.

A surface parses its platform's interaction into a `Person`, the message it came from and an
`Intent`; `Broker.act` turns that into an `Outcome`; `note_for` decides which `Note` the person
is told of it, and the surface words that note once.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from askbridge.core.answers import NOTE_LABEL
from askbridge.core.changes import CHANGE_TITLE
from askbridge.core.models import Selections
from askbridge.core.refusals import Refusal as Refusal
from askbridge.core.view import Receipt, RequestView


class Action(enum.Enum):
    """What an element of a message, or of its answer form, does: the one vocabulary of every
    surface's id codec (`adapters/<surface>/ids.py`). Each codec spells an action its own way
    on the wire, and never changes that spelling, so old messages keep working; each surface
    has the elements it needs."""

    PICK = "pick"
    """One option: `Pick`."""
    CHOOSE_ONE = "choose_one"
    """The options of a single-select question, one chosen at a time: `Choose`."""
    CHOOSE_ANY = "choose_any"
    """The options of a multi-select question: `Choose`."""
    SUBMIT = "submit"
    """`Submit`, with what the message or the form holds."""
    CANCEL = "cancel"
    """The Cancel button, which asks whether the person is sure before anything ends: in a
    confirm dialog of the platform's own (a click arrives only once they are, and is
    `Cancel`), or in a private note whose button is CONFIRM_CANCEL."""
    CONFIRM_CANCEL = "confirm_cancel"
    """`Cancel`, confirmed."""
    WORDS = "words"
    """Opens the answer form for answers in one's own words (and a note)."""
    ADD_NOTE = "add_note"
    """Opens the answer form with the options and a note."""
    FORM = "form"
    """The answer form itself; its submission is a `Submit`."""
    TYPED = "typed"
    """The form's field for a question's answer in one's own words."""
    NOTE = "note"
    """The form's field for the note."""
    FILL = "fill"
    """Opens a typed form's inputs (a request with a `form`); their submission is a `Fill`."""
    FIELD = "field"
    """One input of a typed form (its field named beside the action)."""
    DECLINE = "decline"
    """`Decline`: the person says no to a typed form."""
    CHANGE = "change"
    """Opens the form that allows the tool call with a changed input (`core.changes`)."""
    CHANGED = "changed"
    """That form's field for the changed input."""


@dataclass(frozen=True)
class Pick:
    """One click on an option: the whole answer when one click answers the request, else that
    option chosen for its question."""

    question: int
    option: int


@dataclass(frozen=True)
class Choose:
    """A selection for one question, kept as the person's draft until they submit."""

    question: int
    options: tuple[int, ...]


@dataclass(frozen=True)
class Submit:
    """Vote with the draft plus `selections` (a click that carries every answer needs no
    draft), plus what the person typed: per question (`typed`, read as the agent reads an
    answer: labels are options, other words are their own) and a `note` on the answer."""

    selections: Selections = field(default_factory=dict)
    typed: Mapping[int, str] = field(default_factory=dict)
    note: str = ""
    changed: str | None = None
    """Allow with changes: the changed text (`core.changes`); `selections` then Allow once."""


def allow_with_changes(changed: str, note: str = "") -> Submit:
    """The submission of an "Edit and allow" form: Allow once (an approval's first option) with
    the input changed as `changed` says; the broker refuses it for any other request."""
    return Submit({0: (0,)}, note=note, changed=changed)


@dataclass(frozen=True)
class Cancel:
    """End the request without answers: the agent is interrupted."""


@dataclass(frozen=True)
class Fill:
    """Vote with the values of a typed form (a request with a `form`), field name -> value as
    the surface's input gave it: a text for a text input (numbers and dates typed too), a bool
    from a checkbox, a choice's value from a select, a list of values from a multi-select.
    The broker reads and checks them once (`core.forms.read_input`)."""

    values: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Decline:
    """Say no to a typed form: the request ends, and the agent is told no (not interrupted)."""


Intent = Pick | Choose | Submit | Cancel | Fill | Decline


NOTE = -1
"""The key of the note in `Refused.problems`."""
CHANGED = -2
"""The key of the changed input in `Refused.problems`."""


@dataclass(frozen=True)
class Decided:
    """The click ended the request (answered it, or cancelled it)."""

    view: RequestView


@dataclass(frozen=True)
class Counted:
    """A vote toward a quorum; the request still waits for more matching votes."""

    view: RequestView
    receipt: Receipt


@dataclass(frozen=True)
class Drafted:
    """A choice kept until the person submits."""

    view: RequestView
    question: int
    draft: Selections

    @property
    def unanswered(self) -> list[str]:
        return self.view.unanswered(self.draft)


@dataclass(frozen=True)
class Refused:
    """Nothing was recorded, and why. `view` is the request as it stands, when there is one."""

    reason: Refusal
    view: RequestView | None = None
    missing: tuple[str, ...] = ()
    """Headers left unanswered (MISSING_ANSWERS)."""
    unchecked: tuple[str, ...] = ()
    """Group answerers whose membership could not be checked just now (NOT_ANSWERER)."""
    selections: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """What the person had chosen, so a form can be shown again as they left it."""
    problems: Mapping[int, str] = field(default_factory=dict)
    """BAD_TEXT: question index (NOTE for the note) -> what is wrong with what was typed."""
    field_problems: Mapping[str, str] = field(default_factory=dict)
    """BAD_VALUES: a typed form's field name -> why its value was refused (nothing recorded)."""
    values: Mapping[str, object] = field(default_factory=dict)
    """BAD_VALUES: what the person gave, so the form can be shown again as they left it."""

    def fields(self) -> list[tuple[str, str]]:
        """BAD_TEXT: each field whose text was not taken, named as a form names it (the
        question's header, or the note's label), and what is wrong with it, in a form's
        order: the questions', then the note's."""
        headers = [q.header for q in self.view.questions] if self.view is not None else []
        named = {NOTE: NOTE_LABEL, CHANGED: CHANGE_TITLE}
        return [
            (named[i] if i in named else headers[i] if i < len(headers) else "?", problem)
            for i, problem in sorted(self.problems.items(), key=lambda p: (p[0] < 0, abs(p[0])))
        ]


@dataclass(frozen=True)
class FormOpens:
    """The person may fill in an answer form (see `Broker.answer_form`): the request, and what
    they have chosen so far, which the form is prefilled with."""

    view: RequestView
    draft: Selections


Outcome = Decided | Counted | Drafted | Refused


class Note(enum.Enum):
    """Which note the person who clicked is told, privately, of what came of their click: the
    decision is made here once (`note_for`), and each surface words each note once."""

    COUNTED = "counted"
    """Their vote counted toward a quorum not reached yet: its receipt."""
    DRAFTED = "drafted"
    """A choice kept until they submit: what they chose, and what is still unanswered."""
    GONE = "gone"
    """The request is not there (or no longer): nothing to show of it."""
    FOREIGN = "foreign"
    """The click was not made for this request (another message, or options it lacks)."""
    SELF_APPROVAL = "self_approval"
    NOT_ANSWERER = "not_answerer"
    """Who may answer, and the groups that could not be checked just now."""
    ENDED = "ended"
    """How the request ended, and who ended it."""
    MISSING_ANSWERS = "missing_answers"
    BAD_TEXT = "bad_text"
    """Each typed field not taken and why, then what is still unanswered."""
    BAD_VALUES = "bad_values"
    """Each field of a typed form whose value was refused, and why; nothing was recorded."""


_REFUSAL_NOTES = {
    Refusal.UNKNOWN_REQUEST: Note.GONE,
    Refusal.FOREIGN_MESSAGE: Note.FOREIGN,
    Refusal.ALREADY_ENDED: Note.ENDED,
    Refusal.NOT_ANSWERER: Note.NOT_ANSWERER,
    Refusal.MISSING_ANSWERS: Note.MISSING_ANSWERS,
    Refusal.BAD_TEXT: Note.BAD_TEXT,
    Refusal.BAD_VALUES: Note.BAD_VALUES,
    Refusal.SELF_APPROVAL: Note.SELF_APPROVAL,
}


def note_for(outcome: Outcome) -> Note | None:
    """Which note follows `outcome`; None when the message itself shows it (the request was
    decided) or there is nothing to say (a replay of a click already counted). A refusal that
    needs the request to be worded (ENDED, NOT_ANSWERER) and has none is GONE."""
    match outcome:
        case Counted():
            return Note.COUNTED
        case Drafted():
            return Note.DRAFTED
        case Refused(reason=Refusal.REPLAYED):
            return None
        case Refused(reason=Refusal.ALREADY_ENDED | Refusal.NOT_ANSWERER, view=None):
            return Note.GONE
        case Refused(reason=reason):
            return _REFUSAL_NOTES[reason]
    return None
