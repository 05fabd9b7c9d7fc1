"""The one validated model of an ask: what an agent sends, checked the same way on every path.

The HTTP route, the agent WebSocket, the MCP tool, the CLI and the Python client all build an
`Ask`, and `/v1/schema` is its JSON schema. Each broken rule becomes a `Problem` naming where
(index and field), the rule and the bad value, because that text is the agent's tool error.
Rules that depend on configuration (is the target's platform set up?) are the broker's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)

from askbridge.core.answers import to_selections
from askbridge.core.errors import ASK_USER_QUESTION, FORM_ASK, InvalidQuestion, Problem
from askbridge.core.escalation import MAX_ANSWERERS, LadderSchema, read_answerers, read_ladder
from askbridge.core.forms import (
    FEW_FIELDS,
    MAX_FIELDS,
    Form,
    FormRefused,
    check_content,
    encode,
    parse_form,
)
from askbridge.core.models import Ladder, Policy, QuestionOption, Target, UserQuestion
from askbridge.core.policy import ANSWERER
from askbridge.core.problems import (
    MAX_URL_CHARS,
    broken,
    invalid,
    json_text_problems,
    reordering_problem,
    rule,
    shown,
    text_problem,
    web_url_problem,
)
from askbridge.core.questions import (
    MAX_HEADER_CHARS,
    MAX_LABEL_WORDS,
    MAX_OPTIONS,
    MIN_LABEL_WORDS,
    MIN_OPTIONS,
    Questions,
)
from askbridge.core.subject import subject_sha256
from askbridge.core.surface import SurfaceWords
from askbridge.core.targets import MAX_TARGETS, TargetInput, describe_targets, read_targets
from askbridge.core.tool_view import ToolUse

MAX_CONTEXT_CHARS = 500
MAX_QUORUM = 50
MAX_SECONDS = 30 * 24 * 3600.0
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_REQUEST_ID_CHARS = 64
REQUEST_ID_SCHEMA = r"^\.*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
"""What an agent's request id may be: REQUEST_ID_PATTERN, not only dots ('.' and '..' are
dropped from a URL path, so the request could never be read), written without the look-ahead
that pydantic's regular expressions do not have."""


class TimeoutAnswers(BaseModel):
    model_config = ConfigDict(frozen=True)

    answers: dict[str, str] = Field(description="header -> label(s), multi-select ', '-joined")


class TimeoutContent(BaseModel):
    model_config = ConfigDict(frozen=True)

    content: dict[str, Any] = Field(
        description="field name -> value, as the form's requested_schema takes it"
    )


OnTimeout = Literal["expire", "decline"] | TimeoutAnswers | TimeoutContent


def _is_none(value: object) -> bool:
    return value is None


class FormInput(BaseModel):
    """A typed form as an agent sends it: MCP elicitation's `message` and `requestedSchema`
    (spelled requested_schema or requestedSchema), or a `url` for a person to open instead."""

    model_config = ConfigDict(title="Form")

    message: str = Field(description="what the person is asked, shown above the fields")
    requested_schema: dict[str, Any] | None = Field(
        default=None,
        exclude_if=_is_none,
        description='a flat object schema {"type": "object", "properties": {name: property}, '
        f'"required": [names]}} of 1-{MAX_FIELDS} properties (at most {FEW_FIELDS} where '
        "a surface that shows fewer in one form is among its targets), "
        "each a string (title, description, "
        "minLength, maxLength, format: email|uri|date|date-time, default), a number or "
        "integer (minimum, maximum, exclusiveMinimum, exclusiveMaximum, default), a boolean "
        "(default), a single choice (string with enum + enumNames, or oneOf of {const, "
        "title}) or a multiple choice (array of such an enum, minItems, maxItems)",
    )
    url: str | None = Field(
        default=None,
        exclude_if=_is_none,
        description="instead of a schema: a link the person opens, then says Done or Decline",
    )


Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS)]


class Ask(BaseModel):
    """One AskUserQuestion (or one typed form) and everything that decides where, for whom
    and how long."""

    model_config = ConfigDict(
        extra="ignore",
        frozen=True,
        title="AskUserQuestion request",
        # Exactly one of them: an ask is questions or a form. A null form is no form, as the
        # server reads every other null optional field as absent.
        json_schema_extra={
            "oneOf": [
                {"required": ["questions"]},
                {"required": ["form"], "properties": {"form": {"type": "object"}}},
            ]
        },
    )

    questions: Questions = Field(
        default=(), description="1-4 questions, each with 2-4 options; or give a form instead"
    )
    form: Form | None = Field(
        default=None,
        description="instead of questions: a typed form for a person to fill in (MCP "
        "elicitation's message and requestedSchema); the answer is its typed content",
    )
    request_id: (
        Annotated[str, Field(pattern=REQUEST_ID_SCHEMA, max_length=MAX_REQUEST_ID_CHARS)] | None
    ) = Field(
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
        description=f"who may answer: {SurfaceWords().answerer_entries()}; absent: anyone who "
        "sees the message",
    )
    quorum: int = Field(
        default=1, ge=1, le=MAX_QUORUM, description="distinct people who must give the same answers"
    )
    on_timeout: Literal["expire", "decline"] | TimeoutAnswers | TimeoutContent = Field(
        default="expire",
        description="what the deadline does: expire, or give these answers (questions), or "
        "give this content or decline (a form)",
    )
    remind_after_s: Seconds | None = Field(
        default=None, description="one reminder to the answerers after this many seconds"
    )
    allow_other: bool = Field(
        default=False,
        validation_alias=AliasChoices("allow_other", "allowOther"),
        description="people may answer in their own words instead of (single-select) or "
        "besides (multi-select) the options",
    )
    allow_notes: bool = Field(
        default=False,
        validation_alias=AliasChoices("allow_notes", "allowNotes"),
        description="people may attach a short note to their answer",
    )
    callback_url: Annotated[str, Field(max_length=MAX_URL_CHARS)] | None = Field(
        default=None,
        validation_alias=AliasChoices("callback_url", "callbackUrl"),
        description="an http(s) URL askbridge POSTs the status object to once the request "
        "ends, signed with the server's ASKBRIDGE_WEBHOOK_SECRET by Standard Webhooks "
        "(webhook-id, webhook-timestamp, webhook-signature)",
    )
    escalation: Ladder | None = Field(
        default=None,
        description="what happens while nobody answers: a list of steps {after_s (from "
        "creation), answerers?, target?, mention?} or {steps, quiet_hours: {tz, start, end}}; "
        "each step pings the people who may answer, and may open the request to other "
        "answerers or post it to another target; absent: the server's default ladder, unless "
        "remind_after_s is set; []: none",
    )
    subject: dict[str, Any] | str | None = Field(
        default=None,
        description="what is to be approved (a JSON object, e.g. a command and its "
        "arguments, or a text); the decision carries the SHA-256 of its RFC 8785 canonical "
        "JSON (subject_sha256)",
    )
    tool: ToolUse | None = Field(
        default=None,
        description="the tool call to approve ({name, input, cwd?}): every surface shows it as "
        "people know it (an Edit as a diff, a command as a command, arguments as names and "
        "values); file: {path, text} is the file it changes as the agent's machine has it, "
        "for line numbers and context",
    )
    allow_changes: bool = Field(
        default=False,
        validation_alias=AliasChoices("allow_changes", "allowChanges"),
        description="with `tool`: people may change the tool call's input before allowing it "
        "(a command, an edit's new text, a file's content, or the input as JSON); the status "
        "object's approved_input is then the input to run. Only for an agent that runs it",
    )
    requested_by: str | None = Field(
        default=None,
        validation_alias=AliasChoices("requested_by", "requestedBy"),
        description=f"who asks, as an answerer entry naming a person ({SurfaceWords().people()})",
    )
    no_self_approval: bool = Field(
        default=False,
        validation_alias=AliasChoices("no_self_approval", "noSelfApproval"),
        description="refuse a vote from requested_by",
    )

    @classmethod
    def parse(cls, raw: Any, words: SurfaceWords | None = None) -> Ask:
        """Read an ask as an agent sent it (a JSON object); InvalidQuestion names every problem,
        with examples from `words` (the surfaces of the server that will post it)."""
        try:
            return cls.model_validate(raw, context=words)
        except ValidationError as error:
            problem = invalid(error)
            is_form = isinstance(raw, Mapping) and raw.get("form") is not None
            raise problem.about(FORM_ASK if is_form else ASK_USER_QUESTION) from None

    @property
    def noun(self) -> str:
        """What the ask is called in an error its agent reads."""
        return ASK_USER_QUESTION if self.form is None else FORM_ASK

    @property
    def tool_use(self) -> ToolUse | None:
        """The tool call to show, its input taken from `subject` when it carries none (so an
        agent need not send the same input twice)."""
        tool = self.tool
        if tool is not None and not tool.input and isinstance(self.subject, dict):
            return tool.model_copy(update={"input": dict(self.subject)})
        return tool

    def body(self) -> dict[str, Any]:
        """The ask as the JSON body of `POST /v1/questions`; `Ask.parse` reads it back equal."""
        return self.model_dump(mode="json", exclude_defaults=True)

    @property
    def policy(self) -> Policy:
        timeout = self.on_timeout
        answers = (
            timeout.answers
            if isinstance(timeout, TimeoutAnswers)
            else encode(timeout.content)
            if isinstance(timeout, TimeoutContent)
            else None
        )
        return Policy(
            answerers=self.answerers,
            quorum=self.quorum,
            timeout_answers=answers,
            timeout_decline=timeout == "decline",
            remind_after_s=self.remind_after_s,
            allow_other=self.allow_other,
            allow_notes=self.allow_notes,
            callback_url=self.callback_url,
            escalation=self.escalation,
            subject_sha256=None if self.subject is None else subject_sha256(self.subject),
            requested_by=self.requested_by,
            no_self_approval=self.no_self_approval,
            allow_changes=self.allow_changes and self.tool is not None,
        )

    @model_validator(mode="before")
    @classmethod
    def _questions_are_named(cls, raw: Any) -> Any:
        if not isinstance(raw, Mapping):
            return raw
        if raw.get("form") is not None:
            if raw.get("questions") is not None:
                raise broken(
                    Problem(
                        "form",
                        "cannot be given with questions: an ask holds either questions "
                        "(AskUserQuestion) or a form, so leave one out",
                    )
                )
            return {k: v for k, v in raw.items() if k != "questions"}
        # A missing `questions` is refused in the words of any other non-list.
        if "questions" not in raw:
            return {**raw, "questions": None}
        return raw

    @field_validator("form", mode="before", json_schema_input_type=FormInput | None)
    @classmethod
    def _form(cls, raw: Any) -> Form | None:
        if raw is None or isinstance(raw, Form):
            return raw
        try:
            return parse_form(raw, where="")
        except InvalidQuestion as error:
            raise broken(*error.problems) from None

    @field_serializer("form")
    def _form_as_sent(self, form: Form | None) -> dict[str, Any] | None:
        return None if form is None else form.as_sent()

    @field_validator("allow_other", "allow_notes")
    @classmethod
    def _for_questions(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("form") is not None:
            raise rule("applies to questions, not to a form: leave it out")
        return value

    @field_validator("request_id", mode="before")
    @classmethod
    def _request_id(cls, raw: Any) -> Any:
        if raw is None:
            return None
        if isinstance(raw, str) and (problem := text_problem(raw)) is not None:
            raise rule(problem)
        if not isinstance(raw, str) or not REQUEST_ID_PATTERN.fullmatch(raw):
            raise rule(f"must be 1-64 letters, digits, '_', '.' or '-', got {shown(raw)}")
        if not raw.strip("."):
            raise rule(
                f"must hold a letter, digit, '_' or '-', got {shown(raw)}: a URL drops '.' and "
                "'..' from its path, so the request could not be read back"
            )
        return raw

    @field_validator("tool")
    @classmethod
    def _tool_texts(cls, tool: ToolUse | None) -> ToolUse | None:
        """The call is kept with the request and shown: each text must be Unicode that UTF-8
        can hold, its input's keys and values too."""
        if tool is None:
            return None
        file = None if tool.file is None else tool.file.model_dump()
        texts = {"name": tool.name, "input": tool.input, "cwd": tool.cwd, "file": file}
        if problems := list(json_text_problems(texts)):
            raise broken(*problems)
        return tool

    @field_validator("callback_url", mode="before")
    @classmethod
    def _callback_url(cls, raw: Any) -> Any:
        if raw is not None and (problem := web_url_problem(raw, fetched=True)) is not None:
            raise rule(problem)
        return raw

    @field_validator("escalation", mode="before", json_schema_input_type=LadderSchema)
    @classmethod
    def _escalation(cls, raw: Any, info: ValidationInfo) -> Ladder | None:
        return None if raw is None else read_ladder(raw, _words(info))

    @field_validator("escalation")
    @classmethod
    def _one_way_to_remind(cls, ladder: Ladder | None, info: ValidationInfo) -> Ladder | None:
        if ladder is not None and ladder.steps and info.data.get("remind_after_s") is not None:
            raise rule(
                "cannot be used with remind_after_s: make the reminder the ladder's first "
                'step ({"after_s": <seconds>}) and leave remind_after_s out'
            )
        return ladder

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, raw: Any) -> Any:
        if raw is None:
            return None
        if not isinstance(raw, Mapping | str):
            raise rule(f"must be a JSON object or a text, got {shown(raw)}")
        try:
            subject_sha256(raw)
        except (TypeError, ValueError) as error:
            raise rule(
                f"must be plain JSON (objects, lists, text, numbers no larger than 2**53): {error}"
            ) from None
        return raw if isinstance(raw, str) else dict(raw)

    @field_validator("requested_by", mode="before")
    @classmethod
    def _requested_by(cls, raw: Any, info: ValidationInfo) -> Any:
        if raw is None:
            return None
        entry = raw.strip() if isinstance(raw, str) else raw
        match = ANSWERER.fullmatch(entry) if isinstance(entry, str) else None
        if match is None or "-" in match["kind"]:
            raise rule(
                f"must name one person as an answerer entry ({_words(info).people()}), "
                f"got {shown(raw)}"
            )
        return entry

    @field_validator("no_self_approval")
    @classmethod
    def _needs_requester(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("requested_by") is None:
            raise rule("needs requested_by: name the person who asks, who may then not answer")
        return value

    @field_validator("target", mode="before", json_schema_input_type=TargetInput)
    @classmethod
    def _targets(cls, raw: Any, info: ValidationInfo) -> tuple[Target, ...]:
        return read_targets(raw, _words(info))

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
        wanted = f"must be a text of at most {MAX_CONTEXT_CHARS} characters"
        if raw is None:
            return None
        if not isinstance(raw, str):
            raise rule(f"{wanted}, got {shown(raw)}")
        if (problem := text_problem(raw, allow_nul=False) or reordering_problem(raw)) is not None:
            raise rule(problem)
        if len(raw) > MAX_CONTEXT_CHARS:
            raise rule(f"{wanted}, got {len(raw)} characters")
        return raw

    @field_validator(
        "answerers",
        mode="before",
        json_schema_input_type=Annotated[list[str], Field(max_length=MAX_ANSWERERS)] | str | None,
    )
    @classmethod
    def _answerers(cls, raw: Any, info: ValidationInfo) -> tuple[str, ...]:
        return read_answerers(raw, _words(info))

    @field_validator(
        "quorum",
        mode="before",
        json_schema_input_type=Annotated[int, Field(ge=1, le=MAX_QUORUM)] | None,
    )
    @classmethod
    def _quorum(cls, raw: Any) -> int:
        count = 1 if raw is None else raw
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_QUORUM:
            raise rule(f"must be a whole number from 1 to {MAX_QUORUM}, got {shown(raw)}")
        return count

    @field_validator("quorum")
    @classmethod
    def _quorum_can_be_reached(cls, count: int, info: ValidationInfo) -> int:
        entries: tuple[str, ...] | None = info.data.get("answerers")
        people = [e for e in entries or () if "-" not in e.split(":", 1)[0]]
        if entries and len(people) == len(entries) and count > len(people):
            raise rule(
                f"{count} votes can never come from {len(people)} "
                f"{'answerer' if len(people) == 1 else 'answerers'}; "
                "lower the quorum or add answerers"
            )
        return count

    @field_validator(
        "on_timeout",
        mode="before",
        json_schema_input_type=OnTimeout | None,
    )
    @classmethod
    def _on_timeout(cls, raw: Any, info: ValidationInfo) -> Any:
        if raw is None or raw == "expire":
            return "expire"
        if raw == "decline" or isinstance(raw, TimeoutAnswers | TimeoutContent):
            return raw
        if isinstance(raw, Mapping) and "content" in raw and isinstance(raw["content"], Mapping):
            if not all(isinstance(k, str) for k in raw["content"]):
                raise rule(f"content must be keyed by field name, got {shown(raw)}")
            return {"content": dict(raw["content"])}
        if info.data.get("form") is not None:
            raise rule(
                f'must be "expire", "decline" or {{"content": {{field: value}}}}, got {shown(raw)}'
            )
        answers = raw.get("answers") if isinstance(raw, Mapping) else None
        if not isinstance(answers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in answers.items()
        ):
            raise rule(f'must be "expire" or {{"answers": {{header: label}}}}, got {shown(raw)}')
        return {"answers": dict(answers)}

    @field_validator("on_timeout")
    @classmethod
    def _timeout_answers_fit(cls, value: OnTimeout, info: ValidationInfo) -> OnTimeout:
        if "form" not in info.data:
            return value  # the form itself was refused
        form: Form | None = info.data["form"]
        if form is not None:
            return _timeout_fits_form(value, form)
        if value == "decline" or isinstance(value, TimeoutContent):
            raise rule(
                'declining and content are for a form; questions take "expire" or '
                '{"answers": {header: label}}'
            )
        questions: tuple[UserQuestion, ...] | None = info.data.get("questions")
        if isinstance(value, str) or questions is None:
            return value
        if to_selections(questions, value.answers) is None:
            headers = ", ".join(shown(q.header) for q in questions)
            raise broken(
                Problem(
                    ".answers",
                    f"must answer every question ({headers}) with its option labels "
                    f"(multi-select joined with ', '), got {shown(value.answers)}",
                )
            )
        return value


def _timeout_fits_form(value: OnTimeout, form: Form) -> OnTimeout:
    """A form's on_timeout, its content checked against the form and kept typed."""
    if isinstance(value, TimeoutAnswers):
        raise rule(
            'a form\'s deadline gives {"content": {field: value}} (or "decline", or "expire"), '
            "not answers"
        )
    if not isinstance(value, TimeoutContent):
        return value
    try:
        checked = check_content(form, value.content)
    except FormRefused as refused:
        raise broken(
            *(Problem(f".content.{p.name}", p.message) for p in refused.problems)
        ) from None
    return TimeoutContent(content=checked)


def ask_schema(words: SurfaceWords | None = None) -> dict[str, Any]:
    """The JSON schema of an ask (`GET /v1/schema`), with the question rules it can state and
    examples from `words`."""
    schema = Ask.model_json_schema()
    describe_question_rules(schema["$defs"])
    describe_surfaces(schema, schema["$defs"], words or SurfaceWords())
    return schema


def describe_surfaces(ask: dict[str, Any], defs: dict[str, Any], words: SurfaceWords) -> None:
    """Word the descriptions that name surfaces (of the ask's schema `ask`, and of the models
    in `defs`) from the registered surfaces' specs."""
    fields = ask["properties"]
    fields["answerers"]["description"] = (
        f"who may answer: {words.answerer_entries()}; absent: anyone who sees the message"
    )
    fields["requested_by"]["description"] = (
        f"who asks, as an answerer entry naming a person ({words.people()})"
    )
    describe_targets(defs, words)


def _words(info: ValidationInfo) -> SurfaceWords:
    context = info.context
    return context if isinstance(context, SurfaceWords) else SurfaceWords()


def describe_question_rules(defs: dict[str, Any]) -> None:
    """Add to the schemas of a question and an option (in `defs`, by model name) the rules
    that their validators enforce and the JSON schema can state."""
    question = defs[UserQuestion.__name__]["properties"]
    question["header"].update(minLength=1, maxLength=MAX_HEADER_CHARS)
    question["header"]["description"] = "unique within the ask; the answers are keyed by it"
    question["options"].update(minItems=MIN_OPTIONS, maxItems=MAX_OPTIONS)
    question["multi_select"]["description"] = "also read as multiSelect"
    label = defs[QuestionOption.__name__]["properties"]["label"]
    label["description"] = f"{MIN_LABEL_WORDS}-{MAX_LABEL_WORDS} words, unique within the question"


def _seconds(raw: Any, wanted: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 < raw <= MAX_SECONDS:
        raise rule(f"{wanted}, got {shown(raw)}")
    return float(raw)
