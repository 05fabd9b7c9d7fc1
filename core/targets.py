"""Reading where a request should go: a surface's name (`"web"`), `"<platform>:<channel>"`,
`"<platform>:<channel>/<thread>"`, an object, or a list of up to ten of them. Messages give
examples from the registered surfaces' specs (`SurfaceWords`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from askbridge.core.errors import Problem, UnknownTarget
from askbridge.core.models import Target
from askbridge.core.problems import broken, invalid, rule, shown, text_problem, texts
from askbridge.core.surface import SurfaceWords

# Each target is one post; a request naming thousands of them is a mistake or an attack.
MAX_TARGETS = 10


class TargetObject(BaseModel):
    """A target as an object; `thread_ts` and `thread_id` (the platforms' own words) mean
    `thread`."""

    model_config = ConfigDict(extra="ignore")

    platform: str = Field(min_length=1, description="the surface's name")
    channel: str = Field(default="", description="the channel, as the surface names it")
    thread: str | int | None = Field(default=None, description="the thread to post in, if any")
    thread_ts: str | None = Field(default=None, description="another name for thread")
    thread_id: str | int | None = Field(default=None, description="another name for thread")


TargetText = Annotated[
    str, Field(description="'<platform>:<channel>', '<platform>:<channel>/<thread>' or 'web'")
]


def describe_targets(defs: dict[str, Any], words: SurfaceWords) -> None:
    """Word the target object's schema (in `defs`, by model name) from the surfaces' specs."""
    fields = defs[TargetObject.__name__]["properties"]
    fields["platform"]["description"] = words.names()
    fields["channel"]["description"] = words.channels()


def parse_target(raw: Any, words: SurfaceWords | None = None) -> Target:
    """One target outside an ask (the configured default); UnknownTarget when unreadable."""
    read = _read_target(raw, words or SurfaceWords())
    if isinstance(read, Target):
        return read
    raise UnknownTarget("; ".join(str(Problem(f"target{p.location}", p.message)) for p in read))


def _read_target(raw: Any, words: SurfaceWords) -> Target | list[Problem]:
    if isinstance(raw, Target):
        return raw
    if isinstance(raw, str):
        if (problem := text_problem(raw)) is not None:
            return [Problem("", problem)]
        return _from_text(raw, words)
    if isinstance(raw, Mapping):
        return _from_object(raw)
    *_, channel = words.simple_targets()
    platform, _, name = channel.partition(":")
    return [
        Problem(
            "",
            f"must be a string such as {_examples(words)}, or an object such as "
            f'{{"platform": "{platform}", "channel": "{name}"}}, got {shown(raw)}',
        )
    ]


def _examples(words: SurfaceWords) -> str:
    return " or ".join(repr(t) for t in words.simple_targets())


def _from_text(text: str, words: SurfaceWords) -> Target | list[Problem]:
    text = text.strip()
    platform, _, rest = text.partition(":")
    channel, _, thread = rest.partition("/")
    if not platform:
        return [Problem("", f"names no platform, got {shown(text)}; use e.g. {_examples(words)}")]
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


def read_targets(raw: Any, words: SurfaceWords | None = None) -> tuple[Target, ...]:
    """The `target` of an ask; empty for the server's default. Raises `broken(...)`."""
    words = words or SurfaceWords()
    if raw is None or raw == "":
        return ()
    if not isinstance(raw, list | tuple):
        read = _read_target(raw, words)
        if isinstance(read, Target):
            return (read,)
        raise broken(*read)
    if len(raw) > MAX_TARGETS:
        raise rule(f"must name at most {MAX_TARGETS} targets, got {len(raw)}")
    targets: list[Target] = []
    problems: list[Problem] = []
    for index, item in enumerate(raw):
        read = _read_target(item, words)
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
