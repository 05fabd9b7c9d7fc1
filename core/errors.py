"""askbridge's one exception hierarchy; each boundary (HTTP, WebSocket, CLI, chat) maps it once."""

from __future__ import annotations

from dataclasses import dataclass

from askbridge.core.models import Request
from askbridge.core.view import RequestView, end_sentence


class AskbridgeError(Exception):
    """Base of every error askbridge raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One broken rule: where (`questions[1].options[2].label`), which rule, and the bad value."""

    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


ASK_USER_QUESTION = "AskUserQuestion"
FORM_ASK = "The form"
"""What an invalid ask is called in its error: the agent's model reads it as the name of its
call (a form is not an AskUserQuestion)."""


class InvalidQuestion(AskbridgeError):
    """The request breaks the rules of an ask (its questions, or its form); the text is meant
    for the agent's model."""

    def __init__(self, problems: list[Problem], what: str = ASK_USER_QUESTION) -> None:
        self.problems = problems
        self.what = what
        lines = "\n".join(f"- {p}" for p in problems)
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(
            f"{what} was rejected ({len(problems)} {noun}); fix the call and ask again:\n{lines}"
        )

    def about(self, what: str) -> InvalidQuestion:
        """The same problems, the ask called `what`."""
        return self if what == self.what else InvalidQuestion(self.problems, what)

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


class MessageRefused(AskbridgeError):
    """The platform answered and refused this one call: its message is gone, its channel
    archived or out of the app's reach. The platform is up; trying again is the message's own
    affair. A surface raises it only for such an answer, never for a connection error, a
    timeout, a server error or a rate limit (`RetryLater`), which say the platform is not."""


class RetryLater(AskbridgeError):
    """The platform asked us to wait `after_s` seconds before trying again (HTTP 429)."""

    def __init__(self, after_s: float, what: str = "") -> None:
        self.after_s = after_s
        super().__init__(f"{what or 'the platform'} asked to retry after {after_s:g} s")


class MissingAnswers(AskbridgeError):
    """A submission left questions unanswered."""

    def __init__(self, headers: list[str]) -> None:
        self.headers = headers
        names = ", ".join(f'"{h}"' for h in headers)
        super().__init__(f"Please answer {names} before submitting.")


class AlreadyEnded(AskbridgeError):
    """The agent (or the deadline) acted on a request that is no longer waiting."""

    def __init__(self, request: Request) -> None:
        self.request = request
        super().__init__(end_sentence(RequestView.of(request)))


class StartupError(AskbridgeError):
    """The service cannot start as configured; the message names the setting to fix."""


class NewerSchema(StartupError):
    """The database's schema is newer than this askbridge knows: a newer one upgraded it."""
