"""The wire-level structures of AskUserQuestion and the records askbridge keeps about them.

Input accepts the spellings agents use (`multiSelect`, `requestId`); output is snake_case,
as the agent framework's own serde output is.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field


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

    @property
    def is_terminal(self) -> bool:
        return self is not Status.WAITING


class Person(_Wire):
    """Someone who acted on a request, as the surface they acted on knows them."""

    platform: str
    id: str
    name: str = ""

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
    """An opaque pointer to a posted message; only the surface that made it reads `data`."""

    platform: str
    channel: str
    message_id: str
    data: dict[str, Any] = Field(default_factory=dict)


Selections = dict[int, tuple[int, ...]]
"""Question index -> chosen option indices."""


class Request(_Wire):
    """Everything askbridge knows about one AskUserQuestion, as it is kept in the store."""

    request_id: str
    questions: tuple[UserQuestion, ...]
    targets: tuple[Target, ...]
    context: str | None = None
    status: Status = Status.WAITING
    created_at: datetime
    expires_at: datetime | None = None
    ended_at: datetime | None = None
    answers: dict[str, str] | None = None
    answered_by: Person | None = None
    cancelled_by: Person | None = None
    messages: tuple[MessageRef, ...] = ()

    @property
    def ended_by(self) -> Person | None:
        return self.answered_by or self.cancelled_by
