"""askbridge's one exception hierarchy; each boundary (HTTP, WebSocket, CLI, chat) maps it once."""

from __future__ import annotations

from dataclasses import dataclass

from core.models import Person, Request, Status


class AskbridgeError(Exception):
    """Base of every error askbridge raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One broken rule: where (`questions[1].options[2].label`), which rule, and the bad value."""

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class InvalidQuestion(AskbridgeError):
    """The request breaks the AskUserQuestion rules; the text is meant for the agent's model."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        lines = "\n".join(f"- {p}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(
            f"AskUserQuestion was rejected ({len(problems)} {noun}); fix the call and ask again:\n"
            f"{lines}"
        )

    def details(self) -> list[dict[str, str]]:
        """The problems as the `details` of an error body or frame."""
        return [{"location": p.location, "message": p.message} for p in self.problems]


class UnknownTarget(AskbridgeError):
    """The target names a platform askbridge does not have, or one that is not configured."""


class Conflict(AskbridgeError):
    """A request with this id exists with other questions."""


class NotFound(AskbridgeError):
    """No request has this id."""


class SurfaceUnavailable(AskbridgeError):
    """The platform could not be reached to post the question."""


class MissingAnswers(AskbridgeError):
    """A submission left questions unanswered."""

    def __init__(self, headers: list[str]) -> None:
        self.headers = headers
        names = ", ".join(f'"{h}"' for h in headers)
        super().__init__(f"Please answer {names} before submitting.")


class AlreadyEnded(AskbridgeError):
    """Someone acted on a request that is no longer waiting."""

    def __init__(self, request: Request) -> None:
        self.request = request
        super().__init__(describe_end(request))


def describe_end(request: Request) -> str:
    """One sentence a person can read: how the request ended and who ended it."""
    who = _name(request.ended_by)
    match request.status:
        case Status.ANSWERED if request.decided_by_timeout:
            return "This question was already decided by timeout."
        case Status.ANSWERED:
            agreeing = [v.person for v in request.votes if v.answers == request.answers]
            if len(agreeing) > 1:
                who = ", ".join(_name(p) for p in agreeing)
            return f"This question was already answered by {who}."
        case Status.CANCELLED:
            return f"This question was cancelled by {who}."
        case Status.EXPIRED:
            return "This question expired before anyone answered."
        case Status.WITHDRAWN:
            return "The agent withdrew this question."
        case _:
            return "This question is still waiting for an answer."


def _name(person: Person | None) -> str:
    if person is None:
        return "someone"
    return person.name or person.id


class ForeignMessage(AskbridgeError):
    """A click names a request but came from a message that was not posted for it."""

    def __init__(self) -> None:
        super().__init__("This button does not belong to this question, so it was not counted.")


class NotEligible(AskbridgeError):
    """Someone who is not among the request's answerers tried to answer it."""

    def __init__(self, answerers: tuple[str, ...]) -> None:
        self.answerers = answerers
        super().__init__(
            "Only these people may answer this question: " + ", ".join(answerers) + "."
        )
