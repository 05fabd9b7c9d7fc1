"""Reading where a request should go: `"web"`, `"slack:C0123"`, `"discord:@456"`, an object,
or a list of up to ten of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from askbridge.core.errors import Problem, UnknownTarget
from askbridge.core.models import Target
from askbridge.core.problems import broken, invalid, rule, shown, text_problem, texts

# Each target is one post; a request naming thousands of them is a mistake or an attack.
MAX_TARGETS = 10


class TargetObject(BaseModel):
    """A target as an object; `thread_ts` (Slack) and `thread_id` (Discord) mean `thread`."""

    model_config = ConfigDict(extra="ignore")

    platform: str = Field(min_length=1, description="web, slack or discord")
    channel: str = Field(default="", description="C0123 / U0123 (Slack), 123 or @456 (Discord)")
    thread: str | int | None = Field(default=None, description="the thread to post in, if any")
    thread_ts: str | None = Field(default=None, description="Slack's name for thread")
    thread_id: str | int | None = Field(default=None, description="Discord's name for thread")


TargetText = Annotated[
    str, Field(description="'web', 'slack:C0123', 'slack:C0123/<thread ts>', 'discord:@456'")
]


def parse_target(raw: Any) -> Target:
    """One target outside an ask (the configured default); UnknownTarget when unreadable."""
    read = _read_target(raw)
    if isinstance(read, Target):
        return read
    raise UnknownTarget("; ".join(str(Problem(f"target{p.location}", p.message)) for p in read))


def _read_target(raw: Any) -> Target | list[Problem]:
    if isinstance(raw, Target):
        return raw
    if isinstance(raw, str):
        if (problem := text_problem(raw)) is not None:
            return [Problem("", problem)]
        return _from_text(raw)
    if isinstance(raw, Mapping):
        return _from_object(raw)
    return [
        Problem(
            "",
            "must be a string such as 'web' or 'slack:C0123', or an object such as "
            f'{{"platform": "slack", "channel": "C0123"}}, got {shown(raw)}',
        )
    ]


def _from_text(text: str) -> Target | list[Problem]:
    text = text.strip()
    platform, _, rest = text.partition(":")
    channel, _, thread = rest.partition("/")
    if not platform:
        return [
            Problem("", f"names no platform, got {shown(text)}; use e.g. 'web' or 'slack:C0123'")
        ]
    return Target(platform=platform.lower(), channel=channel, thread=thread or None)


def _from_object(raw: Mapping[str, Any]) -> Target | list[Problem]:
    try:
        spelled = TargetObject.model_validate(raw)
    except ValidationError as error:
        return [Problem(f".{p.location}", p.message) for p in invalid(error).problems]
    thread = spelled.thread or spelled.thread_ts or spelled.thread_id
    target = Target(
        platform=spelled.platform.lower(),
        channel=spelled.channel,
        thread=None if thread is None else str(thread),
    )
    problems = list(
        texts("", platform=target.platform, channel=target.channel, thread=target.thread or "")
    )
    return problems or target


def read_targets(raw: Any) -> tuple[Target, ...]:
    """The `target` of an ask; empty for the server's default. Raises `broken(...)`."""
    if raw is None or raw == "":
        return ()
    if not isinstance(raw, list | tuple):
        read = _read_target(raw)
        if isinstance(read, Target):
            return (read,)
        raise broken(*read)
    if len(raw) > MAX_TARGETS:
        raise rule(f"must name at most {MAX_TARGETS} targets, got {len(raw)}")
    targets: list[Target] = []
    problems: list[Problem] = []
    for index, item in enumerate(raw):
        read = _read_target(item)
        if isinstance(read, Target):
            targets.append(read)
        else:
            problems += [Problem(f"[{index}]{p.location}", p.message) for p in read]
    if problems:
        raise broken(*problems)
    return tuple(targets)


TargetInput = (
    TargetText
    | TargetObject
    | Annotated[list[TargetText | TargetObject], Field(max_length=MAX_TARGETS)]
    | None
)
"""What `target` may be, for the JSON schema."""
