"""The one validated model of an ask: what an agent sends, checked the same way on every path.

The HTTP route, the agent WebSocket, the MCP tool, the CLI and the Python client all build an
`Ask`, and `/v1/schema` is its JSON schema. Each broken rule becomes a `Problem` naming where
(index and field), the rule and the bad value, because that text is the agent's tool error.
Rules that depend on configuration (is the target's platform set up?) are the broker's.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from core.answers import MULTI_SELECT_SEPARATOR, to_selections
from core.errors import InvalidQuestion, Problem, UnknownTarget
from core.models import Policy, Target, UserQuestion
from core.policy import ANSWERER

MIN_QUESTIONS, MAX_QUESTIONS = 1, 4
MIN_OPTIONS, MAX_OPTIONS = 2, 4
MAX_HEADER_CHARS = 12
MIN_LABEL_WORDS, MAX_LABEL_WORDS = 1, 5
MAX_CONTEXT_CHARS = 500
MAX_TARGETS = 10
MAX_ANSWERERS = 50
MAX_QUORUM = 50
MAX_SECONDS = 30 * 24 * 3600.0
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# One 422 lists at most this many problems: a body of a thousand bad options gets a short answer.
MAX_PROBLEMS = 20

_RULES = "askbridge_rules"


# --- problems ---------------------------------------------------------------------------


def invalid(error: ValidationError, where: str = "") -> InvalidQuestion:
    """The one translation of pydantic's errors into the Problems an agent reads."""
    problems: list[Problem] = []
    for detail in error.errors():
        at = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in detail["loc"])
        if detail["type"] == _RULES:
            found: Sequence[Problem] = detail["ctx"]["problems"]
            problems += [Problem((at + p.location).lstrip("."), p.message) for p in found]
            continue
        value = detail.get("input")
        missing = detail["type"] == "missing" or isinstance(value, Mapping)
        got = "" if missing else f", got {shown(value)}"
        problems.append(Problem(at.lstrip("."), f"{detail['msg'].lower()}{got}"))
    if len(problems) > MAX_PROBLEMS:
        more = len(problems) - MAX_PROBLEMS
        problems = [*problems[:MAX_PROBLEMS], Problem("", f"and {more} more not listed here")]
    return InvalidQuestion(problems)


def shown(value: Any) -> str:
    """A bad value as a problem quotes it: its repr, cut short when long or deeply nested."""
    short = reprlib.Repr()
    short.maxstring, short.maxother, short.maxlevel = 80, 80, 3
    return short.repr(value)


def _broken(*problems: Problem) -> PydanticCustomError:
    """Problems found in one field, located relative to it ("", "[1].header", ".answers")."""
    return PydanticCustomError(_RULES, "the AskUserQuestion rules", {"problems": problems})


def _rule(message: str) -> PydanticCustomError:
    return _broken(Problem("", message))


def text_problem(text: str) -> str | None:
    """Why a text cannot be stored and shown on every platform, or None when it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"must be valid Unicode text, got a lone surrogate {text[error.start]!r} at "
            f"character {error.start} (half of a UTF-16 pair; send the whole character)"
        )
    return None


def _texts(where: str, **texts: str) -> Iterator[Problem]:
    for name, text in texts.items():
        if (problem := text_problem(text)) is not None:
            yield Problem(f"{where}.{name}", problem)


# --- questions --------------------------------------------------------------------------


def _a_list_of_questions(raw: Any) -> Any:
    if not isinstance(raw, list | tuple):
        kind = "null" if raw is None else type(raw).__name__
        raise _rule(f"must be a list of {MIN_QUESTIONS}-{MAX_QUESTIONS} questions, got {kind}")
    return raw


def _question_rules(questions: tuple[UserQuestion, ...]) -> tuple[UserQuestion, ...]:
    problems = list(_question_problems(questions))
    if problems:
        raise _broken(*problems)
    return questions


def _question_problems(questions: tuple[UserQuestion, ...]) -> Iterator[Problem]:
    if not MIN_QUESTIONS <= len(questions) <= MAX_QUESTIONS:
        yield Problem(
            "", f"must hold {MIN_QUESTIONS}-{MAX_QUESTIONS} questions, got {len(questions)}"
        )
    seen_headers: dict[str, int] = {}
    for q_index, question in enumerate(questions):
        where = f"[{q_index}]"
        yield from _texts(where, question=question.question, header=question.header)
        if not question.question.strip():
            yield Problem(f"{where}.question", "must be a non-empty question text")
        header = question.header
        if not header.strip():
            yield Problem(f"{where}.header", "must be a short label of 1-12 characters, got ''")
        elif len(header) > MAX_HEADER_CHARS:
            yield Problem(
                f"{where}.header",
                f"must be at most {MAX_HEADER_CHARS} characters, got {shown(header)} "
                f"({len(header)} characters)",
            )
        if header in seen_headers:
            yield Problem(
                f"{where}.header",
                f"must be unique within the request (answers are keyed by header), "
                f"{shown(header)} is also the header of questions[{seen_headers[header]}]",
            )
        else:
            seen_headers[header] = q_index
        yield from _option_problems(where, question)


def _option_problems(where: str, question: UserQuestion) -> Iterator[Problem]:
    options = question.options
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        yield Problem(
            f"{where}.options",
            f"must hold {MIN_OPTIONS}-{MAX_OPTIONS} options, got {len(options)}",
        )
    seen_labels: dict[str, int] = {}
    for o_index, option in enumerate(options):
        yield from _texts(
            f"{where}.options[{o_index}]", label=option.label, description=option.description
        )
        at = f"{where}.options[{o_index}].label"
        label = option.label
        words = len(label.split())
        if not MIN_LABEL_WORDS <= words <= MAX_LABEL_WORDS:
            yield Problem(
                at,
                f"must be {MIN_LABEL_WORDS}-{MAX_LABEL_WORDS} words, "
                f"got {shown(label)} ({words} words)",
            )
        if label in seen_labels:
            yield Problem(
                at,
                f"must be unique within the question, {shown(label)} is also "
                f"options[{seen_labels[label]}]",
            )
        else:
            seen_labels[label] = o_index
        if question.multi_select and MULTI_SELECT_SEPARATOR in label:
            yield Problem(
                at,
                f"must not contain {MULTI_SELECT_SEPARATOR!r} in a multi-select question "
                f"(answers join labels with it), got {shown(label)}",
            )


Questions = Annotated[
    tuple[UserQuestion, ...],
    BeforeValidator(_a_list_of_questions),
    AfterValidator(_question_rules),
    Field(json_schema_extra={"minItems": MIN_QUESTIONS, "maxItems": MAX_QUESTIONS}),
]
_QUESTIONS: TypeAdapter[tuple[UserQuestion, ...]] = TypeAdapter(Questions)


def parse_questions(raw: Any) -> tuple[UserQuestion, ...]:
    """The `questions` of an ask on their own, checked, or InvalidQuestion."""
    try:
        return _QUESTIONS.validate_python(raw)
    except ValidationError as error:
        raise invalid(error, "questions") from None


# --- targets ----------------------------------------------------------------------------


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
        return invalid(error).problems
    thread = spelled.thread or spelled.thread_ts or spelled.thread_id
    target = Target(
        platform=spelled.platform.lower(),
        channel=spelled.channel,
        thread=None if thread is None else str(thread),
    )
    problems = list(
        _texts("", platform=target.platform, channel=target.channel, thread=target.thread or "")
    )
    return problems or target


# --- the ask ----------------------------------------------------------------------------


class TimeoutAnswers(BaseModel):
    model_config = ConfigDict(frozen=True)

    answers: dict[str, str] = Field(description="header -> label(s), multi-select ', '-joined")


Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS)]


class Ask(BaseModel):
    """One AskUserQuestion and everything that decides where, for whom and how long."""

    model_config = ConfigDict(extra="ignore", frozen=True, title="AskUserQuestion request")

    questions: Questions = Field(description="1-4 questions, each with 2-4 options")
    request_id: Annotated[str, Field(pattern=f"^{REQUEST_ID_PATTERN.pattern}$")] | None = Field(
        default=None,
        validation_alias=AliasChoices("request_id", "requestId"),
        description="The agent's id for this ask; repeating it is idempotent.",
    )
    target: tuple[Target, ...] = Field(
        default=(),
        description=f"where to ask: one target or a list of up to {MAX_TARGETS}; "
        "absent: the server's default",
    )
    timeout_s: Seconds | None = Field(
        default=None, description="the deadline in seconds; absent: the server's default"
    )
    context: Annotated[str, Field(max_length=MAX_CONTEXT_CHARS)] | None = Field(
        default=None, description="a short line shown above the questions"
    )
    answerers: tuple[str, ...] = Field(
        default=(),
        description="who may answer: slack:U…, slack-group:S…, discord:@<id>, discord-role:<id>,"
        " web:<name>; absent: anyone who sees the message",
    )
    quorum: int = Field(
        default=1, ge=1, le=MAX_QUORUM, description="distinct people who must give the same answers"
    )
    on_timeout: Literal["expire"] | TimeoutAnswers = Field(
        default="expire", description="what the deadline does: expire, or give these answers"
    )
    remind_after_s: Seconds | None = Field(
        default=None, description="one reminder to the answerers after this many seconds"
    )

    @classmethod
    def parse(cls, raw: Any) -> Ask:
        """Read an ask as an agent sent it (a JSON object); InvalidQuestion names every problem."""
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            raise invalid(error) from None

    def body(self) -> dict[str, Any]:
        """The ask as the JSON body of `POST /v1/questions`; `Ask.parse` reads it back equal."""
        return self.model_dump(mode="json", exclude_defaults=True)

    @property
    def policy(self) -> Policy:
        timeout = self.on_timeout
        return Policy(
            answerers=self.answerers,
            quorum=self.quorum,
            timeout_answers=timeout.answers if isinstance(timeout, TimeoutAnswers) else None,
            remind_after_s=self.remind_after_s,
        )

    @field_validator("request_id", mode="before")
    @classmethod
    def _request_id(cls, raw: Any) -> Any:
        if raw is None:
            return None
        if isinstance(raw, str) and (problem := text_problem(raw)) is not None:
            raise _rule(problem)
        if not isinstance(raw, str) or not REQUEST_ID_PATTERN.fullmatch(raw):
            raise _rule(f"must be 1-64 letters, digits, '_', '.' or '-', got {shown(raw)}")
        return raw

    @field_validator(
        "target",
        mode="before",
        json_schema_input_type=TargetText
        | TargetObject
        | Annotated[list[TargetText | TargetObject], Field(max_length=MAX_TARGETS)]
        | None,
    )
    @classmethod
    def _targets(cls, raw: Any) -> tuple[Target, ...]:
        if raw is None or raw == "":
            return ()
        if not isinstance(raw, list | tuple):
            read = _read_target(raw)
            if isinstance(read, Target):
                return (read,)
            raise _broken(*read)
        if len(raw) > MAX_TARGETS:
            raise _rule(f"must name at most {MAX_TARGETS} targets, got {len(raw)}")
        targets: list[Target] = []
        problems: list[Problem] = []
        for index, item in enumerate(raw):
            read = _read_target(item)
            if isinstance(read, Target):
                targets.append(read)
            else:
                problems += [Problem(f"[{index}]{p.location}", p.message) for p in read]
        if problems:
            raise _broken(*problems)
        return tuple(targets)

    @field_validator("timeout_s", mode="before")
    @classmethod
    def _timeout(cls, raw: Any) -> float | None:
        return _seconds(raw, f"must be a number of seconds above 0 and at most {MAX_SECONDS:.0f}")

    @field_validator("remind_after_s", mode="before")
    @classmethod
    def _reminder(cls, raw: Any) -> float | None:
        return _seconds(raw, f"must be a positive number of seconds, at most {MAX_SECONDS:.0f}")

    @field_validator("context", mode="before")
    @classmethod
    def _context(cls, raw: Any) -> Any:
        rule = f"must be a text of at most {MAX_CONTEXT_CHARS} characters"
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise _rule(f"{rule}, got {shown(raw)}")
        if (problem := text_problem(raw)) is not None:
            raise _rule(problem)
        if "\x00" in raw:
            # Kept as a text column by the PostgreSQL store, which cannot hold NUL.
            raise _rule(
                f"must not contain NUL characters, got one at character {raw.index(chr(0))}"
            )
        if len(raw) > MAX_CONTEXT_CHARS:
            raise _rule(f"{rule}, got {len(raw)} characters")
        return raw

    @field_validator(
        "answerers",
        mode="before",
        json_schema_input_type=Annotated[list[str], Field(max_length=MAX_ANSWERERS)] | str | None,
    )
    @classmethod
    def _answerers(cls, raw: Any) -> tuple[str, ...]:
        if raw is None:
            return ()
        if isinstance(raw, str):
            raw = [part for part in raw.split(",") if part.strip()]
        if not isinstance(raw, list | tuple):
            raise _rule(f"must be a list of strings, got {shown(raw)}")
        if len(raw) > MAX_ANSWERERS:
            raise _rule(f"must name at most {MAX_ANSWERERS} answerers, got {len(raw)}")
        entries: list[str] = []
        problems: list[Problem] = []
        for index, entry in enumerate(raw):
            text = entry.strip() if isinstance(entry, str) else entry
            problem = text_problem(text) if isinstance(text, str) else None
            if problem is None and (not isinstance(text, str) or not ANSWERER.fullmatch(text)):
                problem = (
                    "must be slack:U…, slack-group:S…, discord:@<user id>, "
                    f"discord-role:<role id> or web:<name>, got {shown(entry)}"
                )
            if problem is not None:
                problems.append(Problem(f"[{index}]", problem))
            elif text not in entries:
                entries.append(text)
        if problems:
            raise _broken(*problems)
        return tuple(entries)

    @field_validator(
        "quorum",
        mode="before",
        json_schema_input_type=Annotated[int, Field(ge=1, le=MAX_QUORUM)] | None,
    )
    @classmethod
    def _quorum(cls, raw: Any) -> int:
        count = 1 if raw is None else raw
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_QUORUM:
            raise _rule(f"must be a whole number from 1 to {MAX_QUORUM}, got {shown(raw)}")
        return count

    @field_validator("quorum")
    @classmethod
    def _quorum_can_be_reached(cls, count: int, info: ValidationInfo) -> int:
        entries: tuple[str, ...] | None = info.data.get("answerers")
        people = [e for e in entries or () if "-" not in e.split(":", 1)[0]]
        if entries and len(people) == len(entries) and count > len(people):
            raise _rule(
                f"{count} votes can never come from {len(people)} answerers; "
                "lower the quorum or add answerers"
            )
        return count

    @field_validator(
        "on_timeout",
        mode="before",
        json_schema_input_type=Literal["expire"] | TimeoutAnswers | None,
    )
    @classmethod
    def _on_timeout(cls, raw: Any) -> Any:
        if raw is None or raw == "expire":
            return "expire"
        if isinstance(raw, TimeoutAnswers):
            return raw
        answers = raw.get("answers") if isinstance(raw, Mapping) else None
        if not isinstance(answers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in answers.items()
        ):
            raise _rule(f'must be "expire" or {{"answers": {{header: label}}}}, got {shown(raw)}')
        return {"answers": dict(answers)}

    @field_validator("on_timeout")
    @classmethod
    def _timeout_answers_fit(
        cls, value: Literal["expire"] | TimeoutAnswers, info: ValidationInfo
    ) -> Literal["expire"] | TimeoutAnswers:
        questions: tuple[UserQuestion, ...] | None = info.data.get("questions")
        if isinstance(value, str) or questions is None:
            return value
        if to_selections(questions, value.answers) is None:
            headers = ", ".join(shown(q.header) for q in questions)
            raise _broken(
                Problem(
                    ".answers",
                    f"must answer every question ({headers}) with its option labels "
                    f"(multi-select joined with ', '), got {shown(value.answers)}",
                )
            )
        return value


def ask_schema() -> dict[str, Any]:
    """The JSON schema of an ask (`GET /v1/schema`), with the question rules it can state."""
    schema = Ask.model_json_schema()
    question = schema["$defs"]["UserQuestion"]["properties"]
    question["header"].update(minLength=1, maxLength=MAX_HEADER_CHARS)
    question["header"]["description"] = "unique within the ask; the answers are keyed by it"
    question["options"].update(minItems=MIN_OPTIONS, maxItems=MAX_OPTIONS)
    question["multi_select"]["description"] = "also read as multiSelect"
    label = schema["$defs"]["QuestionOption"]["properties"]["label"]
    label["description"] = f"{MIN_LABEL_WORDS}-{MAX_LABEL_WORDS} words, unique within the question"
    return schema


def _seconds(raw: Any, rule: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw <= MAX_SECONDS:
        raise _rule(f"{rule}, got {shown(raw)}")
    return float(raw)
