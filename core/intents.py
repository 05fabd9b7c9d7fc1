"""What a click means, and what came of it: the one vocabulary of every surface.

A surface parses its platform's interaction into a `Person`, the message it came from and an
`Intent`; `Broker.act` turns that into an `Outcome`, and the surface words the outcome once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from askbridge.core.answers import NOTE_LABEL
from askbridge.core.models import Selections
from askbridge.core.refusals import Refusal as Refusal
from askbridge.core.view import Receipt, RequestView


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


@dataclass(frozen=True)
class Cancel:
    """End the request without answers: the agent is interrupted."""


Intent = Pick | Choose | Submit | Cancel


NOTE = -1
"""The key of the note in `Refused.problems`."""


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

    def fields(self) -> list[tuple[str, str]]:
        """BAD_TEXT: each field whose text was not taken, named as a form names it (the
        question's header, or the note's label), and what is wrong with it, in a form's
        order: the questions', then the note's."""
        headers = [q.header for q in self.view.questions] if self.view is not None else []
        return [
            (NOTE_LABEL if i == NOTE else headers[i] if i < len(headers) else "?", problem)
            for i, problem in sorted(self.problems.items(), key=lambda p: (p[0] == NOTE, p[0]))
        ]


@dataclass(frozen=True)
class FormOpens:
    """The person may fill in an answer form (see `Broker.answer_form`): the request, and what
    they have chosen so far, which the form is prefilled with."""

    view: RequestView
    draft: Selections


Outcome = Decided | Counted | Drafted | Refused
