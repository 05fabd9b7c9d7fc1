"""The documented shape of `POST /v1/questions`, served at `GET /v1/schema`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.models import UserQuestion


class TargetObject(BaseModel):
    platform: str = Field(description="web, slack or discord")
    channel: str = Field(default="", description="C0123 / U0123 (Slack), 123 or @456 (Discord)")
    thread_ts: str | None = Field(default=None, description="thread to post in, if any")


class TimeoutAnswers(BaseModel):
    answers: dict[str, str]


class AskBody(BaseModel):
    model_config = ConfigDict(title="AskUserQuestion request")

    request_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_.-]{1,64}$",
        description="The agent's id for this ask; repeating it is idempotent.",
    )
    questions: Annotated[list[UserQuestion], Field(min_length=1, max_length=4)]
    target: str | TargetObject | None = Field(
        default=None, description="'web', 'slack:C0123', 'discord:@456', or an object"
    )
    timeout_s: float | None = Field(default=None, gt=0)
    context: str | None = Field(default=None, max_length=500)
    answerers: list[str] | None = Field(
        default=None,
        description="who may answer: slack:U…, slack-group:S…, discord:@<id>, discord-role:<id>,"
        " web:<name>; absent: anyone who sees the message",
    )
    quorum: int | None = Field(
        default=None, ge=1, le=50, description="distinct people who must give the same answers"
    )
    on_timeout: Literal["expire"] | TimeoutAnswers | None = Field(
        default=None, description="what the deadline does: expire (default) or default answers"
    )
    remind_after_s: float | None = Field(
        default=None, gt=0, description="one reminder to the answerers after this many seconds"
    )


def request_schema() -> dict[str, Any]:
    return AskBody.model_json_schema()
