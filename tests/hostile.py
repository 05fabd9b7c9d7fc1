"""Requests in every state whose every text is hostile: for each surface's escaping tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from askbridge.core.forms import (
    FEW_FIELDS,
    MAX_CHOICE_TITLE_CHARS,
    MAX_CHOICE_VALUE_CHARS,
    MAX_CHOICES,
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    FieldKind,
    Form,
    FormRefused,
    check_content,
    encode,
    parse_form,
    read_input,
)
from askbridge.core.models import (
    Person,
    Policy,
    QuestionOption,
    Request,
    Status,
    Target,
    UserQuestion,
    Vote,
)
from askbridge.core.problems import web_url_problem
from askbridge.core.tool_view import Code, Diff, DiffLine, Fields, Hunk, Named, Note, ToolView

HOSTILE = (
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<@U1>",
    "<@1>",
    "<@!1>",
    "<@&1>",
    "<#C1>",
    "<!subteam^S1>",
    "@everyone",
    "@here",
    "[x](https://e.example)",
    "<https://e.example|x>",
    "https://e.example",
    "*b*",
    "_i_",
    "~s~",
    "`c`",
    "```",
    "```py\nprint(1)",
    "&amp;",
    "&lt;",
    "<script>",
    "'\"><img src=x onerror=alert(1)>",
    "\n",
    "\\",
    "||spoiler||",
    "# heading",
    "> quote",
    "👩‍👩‍👧",
    "🏳️‍🌈",
)

SHOWN_AS_ONE = (
    "e\u0301",  # e and a combining acute accent
    "👍🏽",  # a thumb and its skin tone
    "👩\u200d💻",  # two emoji joined
    "🇫🇷",  # a flag: two regional indicators
    "❤\ufe0f",  # a variation selector
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # a tag sequence
)
"""Runs of code points that a reader sees as one character, which a cut must not split."""


def whole_pieces(text: str, pieces: list[str]) -> set[str]:
    """Every start of `text` (written as `pieces`) that ends between two of its pieces."""
    starts, at = {""}, 0
    for piece in pieces:
        at += len(piece)
        starts.add(text[:at])
    return starts


AT = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
STATES = ("waiting", "answered", "several", "timeout", "cancelled", "expired", "gone")
ANSWERERS = ("slack:U1", "slack-group:S1", "discord:@1", "discord-role:2", "web:x")


# One strategy object per set of arguments: hypothesis checks each new one before its first
# draw, which cost more than drawing the examples (the same examples either way).
@cache
def hostile_text(min_size: int = 1, max_parts: int = 4) -> st.SearchStrategy[str]:
    part = st.sampled_from(HOSTILE) | st.text(
        st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8
    )
    return st.lists(part, min_size=min_size, max_size=max_parts).map("".join)


@st.composite
def people(draw: st.DrawFn, platform: str | None = None) -> Person:
    platform = platform or draw(st.sampled_from(["slack", "discord", "web"]))
    ids = {"slack": "U0PERSON", "discord": "123456789", "web": "web-person"}
    suffix = draw(st.integers(0, 9))
    return Person(platform=platform, id=f"{ids[platform]}{suffix}", name=draw(hostile_text()))


@st.composite
def questions(draw: st.DrawFn) -> tuple[UserQuestion, ...]:
    count = draw(st.integers(1, 4))
    made = []
    for index in range(count):
        options = tuple(
            QuestionOption(label=f"{draw(hostile_text())}{o}", description=draw(hostile_text(0)))
            for o in range(draw(st.integers(2, 4)))
        )
        made.append(
            UserQuestion(
                question=draw(hostile_text()),
                header=f"{draw(hostile_text(max_parts=2))[:10]}{index}",
                options=options,
                multi_select=draw(st.booleans()),
            )
        )
    return tuple(made)


def _answers(qs: tuple[UserQuestion, ...], pick: int) -> dict[str, str]:
    return {q.header: q.options[pick % len(q.options)].label for q in qs}


@st.composite
def requests(draw: st.DrawFn) -> Request:
    """A request with hostile texts and names, in any state, with any policy."""
    qs = draw(questions())
    state = draw(
        st.sampled_from(
            ["waiting", "answered", "several", "timeout", "cancelled", "expired", "gone"]
        )
    )
    quorum = draw(st.integers(1, 3))
    entries = draw(
        st.lists(
            st.sampled_from(
                ["slack:U1", "slack-group:S1", "discord:@1", "discord-role:2", "web:x"]
            ),
            max_size=3,
            unique=True,
        )
    )
    timeout_answers = _answers(qs, 1) if draw(st.booleans()) else None
    policy = Policy(answerers=tuple(entries), quorum=quorum, timeout_answers=timeout_answers)
    voters = draw(st.lists(people(), max_size=4, unique_by=lambda p: p.key))
    votes = tuple(Vote(person=p, answers=_answers(qs, i % 2), at=AT) for i, p in enumerate(voters))
    fields: dict[str, Any] = {}
    winner = voters[0] if voters else draw(people())
    if state == "answered" or state == "several":
        fields = {"answers": _answers(qs, 0), "answered_by": winner}
    elif state == "timeout":
        fields = {"answers": _answers(qs, 1)}
    elif state == "cancelled":
        fields = {"cancelled_by": draw(people())}
    tool, policy = _tool_call(draw, state, fields, policy)
    status = {
        "waiting": Status.WAITING,
        "answered": Status.ANSWERED,
        "several": Status.ANSWERED,
        "timeout": Status.ANSWERED,
        "cancelled": Status.CANCELLED,
        "expired": Status.EXPIRED,
        "gone": Status.WITHDRAWN,
    }[state]
    return Request(
        request_id="ask_hostile",
        questions=qs,
        targets=(Target(platform="slack", channel="C1"),),
        context=draw(st.none() | hostile_text()),
        status=status,
        created_at=AT,
        expires_at=AT + timedelta(hours=1) if draw(st.booleans()) else None,
        ended_at=None if status is Status.WAITING else AT + timedelta(minutes=5),
        policy=policy,
        votes=votes,
        tool=tool,
        **fields,
    )


def nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in `tree`, depth first: for looking through rendered payloads."""
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from nodes(value)


def _tool_call(
    draw: st.DrawFn, state: str, fields: dict[str, Any], policy: Policy
) -> tuple[ToolView | None, Policy]:
    """A tool call to show with a request, or none, and the request's policy: an answered
    call may have been allowed with changes (`fields` gains the input that was approved)."""
    tool = tool_view_of(lambda: draw(hostile_text())) if draw(st.booleans()) else None
    if tool is not None and state == "answered" and draw(st.booleans()):
        # Allowed with changes: the call is shown as allowed, headed by who changed it.
        asked = {"command": draw(hostile_text()), "description": draw(hostile_text())}
        tool = tool.model_copy(update={"tool": "Bash", "asked": asked})
        fields["approved_input"] = {**asked, "command": draw(hostile_text())}
        policy = policy.model_copy(update={"allow_changes": True})
    return tool, policy


def tool_view_of(text: Callable[[], str]) -> ToolView:
    """A tool call shown with every kind of part, each text from `text()` in a fixed order:
    a diff with numbered and unnumbered hunks, a command, named values and a note."""
    numbered = Hunk(
        lines=(
            DiffLine(sign=" ", text=text(), old=1, new=1),
            DiffLine(sign="-", text=text(), old=2),
            DiffLine(sign="+", text=text(), new=2),
        )
    )
    bare = Hunk(lines=(DiffLine(sign="-", text=text()), DiffLine(sign="+", text=text())))
    return ToolView(
        tool=text(),
        title=text(),
        parts=(
            Note(text=text()),
            Diff(path=text(), hunks=(numbered, bare)),
            Code(label=text(), text=text()),
            Fields(fields=(Named(name=text(), value=text()), Named(name=text(), value=text()))),
        ),
    )


def tool_texts(tool: ToolView) -> list[str]:
    """Every text of `tool` a person must be able to read."""
    texts = [tool.title]
    for part in tool.parts:
        if isinstance(part, Diff):
            texts += [line.text for hunk in part.hunks for line in hunk.lines]
        elif isinstance(part, Code):
            texts += [part.label, part.text]
        elif isinstance(part, Fields):
            texts += [t for field in part.fields for t in (field.name, field.value)]
        else:
            texts.append(part.text)
    return texts


# --- typed forms ------------------------------------------------------------------------------

FORM_STATES = (
    "waiting",
    "answered",
    "several",
    "timeout",
    "declined",
    "declined at deadline",
    "cancelled",
    "expired",
    "gone",
)
FIELD_KINDS = (
    "text",
    "email",
    "uri",
    "date",
    "date-time",
    "number",
    "integer",
    "boolean",
    "choice",
    "choices",
)
EMAILS = ("*b*@e.example", "_i_~s~@e.example", "`c`||x||@e.example", "everyone@here.example")
"""Email addresses a form accepts that hold markup."""
URIS = (
    "javascript:alert(1)",
    "https://e.example/<!channel>",
    "https://e.example/*b*_i_",
    "slack://channel?team=T1&id=C1",
    "https://e.example/)](x",
    "mailto:<@U1>",
)
"""Links a form accepts (as values and defaults) that must not be live where shown."""


FORM_EXAMPLES = settings(
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # A form case is slow to shrink: one failure, made small, says enough.
    report_multiple_bugs=False,
)
"""How many `form_cases` each surface's property tries, the same on every run."""


@cache  # as hostile_text
def link_path(text: str) -> str:
    """`text` as a form's link may hold it past its host: each character the link rule
    (`core.problems.web_url_problem`) lets through there."""
    return "".join(c for c in text if web_url_problem(f"https://e.example/{c}") is None)


def form_text(min_size: int = 1, max_parts: int = 4) -> st.SearchStrategy[str]:
    """Hostile text as a form may hold it (`core.forms.parse_form` refuses a NUL)."""
    return hostile_text(min_size, max_parts).map(lambda s: s.replace("\x00", ""))


def _field_name(text: str, index: int) -> str:
    # A field's name is 1-64 printable characters; the index keeps names apart.
    kept = "".join(c for c in text if not (ord(c) < 32 or ord(c) == 127))
    return f"{kept[:60]}{index}"


def at_most(text: str, most: int, long: bool) -> str:
    """`text` within `most` characters; when `long`, repeated up to them (a form's limits)."""
    if long and text:
        text *= -(-most // len(text))
    return text[:most]


@st.composite
def _property(draw: st.DrawFn, kind: str, long: bool) -> tuple[dict[str, Any], Any]:
    """A field's property schema, its texts hostile (`long`: as long as a form takes them),
    with a default it accepts sometimes; and a value a person may give it."""
    prop: dict[str, Any] = {}
    if draw(st.booleans()):
        prop["title"] = at_most(draw(form_text()), MAX_TITLE_CHARS, long)
    if draw(st.booleans()):
        prop["description"] = at_most(draw(form_text(0)), MAX_DESCRIPTION_CHARS, long)
    value: Any
    if kind == "text":
        most = draw(st.sampled_from([None, 8, 3000]))
        prop |= {"type": "string"} | ({} if most is None else {"maxLength": most})
        # Spaces alone would leave a required field empty.
        value = at_most(draw(form_text()), (most or MAX_TEXT_CHARS) - 1, long).strip() or "x"
    elif kind == "email":
        prop |= {"type": "string", "format": "email"}
        value = draw(st.sampled_from(EMAILS))
    elif kind == "uri":
        prop |= {"type": "string", "format": "uri"}
        value = draw(st.sampled_from(URIS))
    elif kind == "date":
        prop |= {"type": "string", "format": "date"}
        value = "2030-01-01"
    elif kind == "date-time":
        prop |= {"type": "string", "format": "date-time"}
        value = "2030-01-01T12:00:00+01:00"
    elif kind in ("number", "integer"):
        prop |= {"type": kind, "minimum": -5, "maximum": 10**6}
        value = 7 if kind == "integer" else 2.5
    elif kind == "boolean":
        prop["type"] = "boolean"
        value = draw(st.booleans())
    else:
        count = MAX_CHOICES if long else draw(st.integers(1, 4))
        titles = draw(st.lists(form_text(max_parts=3), min_size=count, max_size=count))
        values = [f"{at_most(draw(form_text(max_parts=2)), 97, long)}{i}" for i in range(count)]
        named = [
            {"const": v, "title": at_most(t.strip(), MAX_CHOICE_TITLE_CHARS, long) or f"x{i}"}
            for i, (v, t) in enumerate(zip(values, titles, strict=True))
        ]
        if kind == "choice":
            prop |= {"type": "string", "oneOf": named}
            value = values[-1]
        else:
            items = {"type": "string", "enum": values, "enumNames": [n["title"] for n in named]}
            prop |= {"type": "array", "items": items}
            value = values[:2]
    if draw(st.booleans()):
        prop["default"] = value
    return prop, value


def form_request(form: Form, platform: str, channel: str = "c1") -> Request:
    """A request waiting on `form`, asked in `platform`'s `channel`."""
    return Request(
        request_id="r1",
        questions=(),
        targets=(Target(platform=platform, channel=channel),),
        created_at=AT,
        form=form,
    )


def largest_form(fields: int) -> dict[str, Any]:
    """A form of `fields` fields as large as a form takes: each a multi-choice with its name,
    title and description at their longest and 25 choices whose values and titles are too,
    after a message at its longest."""
    choices = [
        {
            "const": f"{'v' * (MAX_CHOICE_VALUE_CHARS - 2)}{c:02d}",
            "title": f"{'c' * (MAX_CHOICE_TITLE_CHARS - 2)}{c:02d}",
        }
        for c in range(MAX_CHOICES)
    ]
    properties = {
        f"{'n' * (MAX_NAME_CHARS - 2)}{i:02d}": {
            "type": "array",
            "title": "T" * MAX_TITLE_CHARS,
            "description": "D" * MAX_DESCRIPTION_CHARS,
            "items": {"type": "string", "oneOf": choices},
        }
        for i in range(fields)
    }
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return {"message": "M" * MAX_MESSAGE_CHARS, "requested_schema": schema}


@dataclass(frozen=True)
class FormCase:
    """A request asking a typed form, every text of it hostile, in some state; what a person
    typed into it that was refused, and why (`core.forms.read_input`'s words)."""

    request: Request
    content: dict[str, Any]
    """Values the form accepts (an answer's, a vote's, the deadline's)."""
    typed: dict[str, object]
    """What a person gave the form's inputs (`Fill.values`) that it refused, in part."""
    problems: dict[str, str]

    @property
    def form(self) -> Form:
        assert self.request.form is not None
        return self.request.form


@st.composite
def form_cases(draw: st.DrawFn, platform: str | None = None, fields: int = FEW_FIELDS) -> FormCase:
    """A request asking a typed form of up to `fields` fields (every kind, hostile message,
    names, titles, descriptions, choices, defaults and values) in any state, with hostile
    people."""
    # Long: every text as long as a form takes it, to find what a surface cannot hold (the
    # largest form of all is `largest_form`'s).
    long = draw(st.booleans())
    kinds = draw(st.lists(st.sampled_from(FIELD_KINDS), min_size=1, max_size=fields))
    properties: dict[str, Any] = {}
    content: dict[str, Any] = {}
    for index, kind in enumerate(kinds):
        prop, value = draw(_property(kind, long))
        name = (
            _field_name(draw(form_text(max_parts=2)), index) if draw(st.booleans()) else f"f{index}"
        )
        properties[name] = prop
        content[name] = value
    required = draw(st.lists(st.sampled_from(list(properties)), unique=True))
    schema = {"type": "object", "properties": properties, "required": required}
    message = at_most(draw(form_text()), MAX_MESSAGE_CHARS - 1, long)
    message += "" if message.strip() else "?"
    form = parse_form({"message": message, "requested_schema": schema})
    content = check_content(form, content)
    other = dict(content)
    for field in form.fields:
        if field.kind is FieldKind.TEXT and field.name in other:
            other[field.name] = at_most(draw(form_text()), field.max_length, long).strip() or "x"
    other = check_content(form, other)
    # What a person types where the form takes a text: hostile text, refused where it does
    # not fit (an address, a link, a number, a choice), quoted in the refusal.
    typed: dict[str, object] = {}
    for field in form.fields:
        said = at_most(draw(form_text()), MAX_TEXT_CHARS, long)
        too_long = field.kind is FieldKind.TEXT and draw(st.booleans())
        typed[field.name] = said + "x" * field.max_length if too_long else said

    try:
        read_input(form, typed)
        problems: dict[str, str] = {}
    except FormRefused as refused:
        problems = refused.by_field()
    if draw(st.integers(0, 7)) == 0:
        # A URL-mode form: a link to open (hostile past its host), then Done: nothing typed.
        url = "https://e.example/" + link_path(draw(form_text()))
        form = parse_form({"message": message, "url": url})
        content, other, typed, problems = {}, {}, {}, {}

    state = draw(st.sampled_from(FORM_STATES))
    voters = draw(st.lists(people(platform), max_size=4, unique_by=lambda p: p.key))
    votes = tuple(
        Vote(person=p, answers=encode(content if i % 2 == 0 else other), at=AT)
        for i, p in enumerate(voters)
    )
    policy = Policy(
        answerers=tuple(draw(st.lists(st.sampled_from(ANSWERERS), max_size=3, unique=True))),
        quorum=draw(st.integers(1, 3)),
        timeout_answers=encode(other) if state == "timeout" or draw(st.booleans()) else None,
        timeout_decline=state == "declined at deadline",
    )
    if policy.timeout_decline:
        policy = policy.model_copy(update={"timeout_answers": None})
    winner = voters[0] if voters else draw(people(platform))
    by_state: dict[str, dict[str, Any]] = {
        "waiting": {},
        "answered": {"answers": encode(content), "answered_by": winner},
        "several": {"answers": encode(content), "answered_by": winner},
        "timeout": {"answers": encode(other)},
        "declined": {"declined_by": draw(people(platform))},
        "declined at deadline": {},
        "cancelled": {"cancelled_by": draw(people(platform))},
        "expired": {},
        "gone": {},
    }
    ending = by_state[state]
    status = {
        "waiting": Status.WAITING,
        "answered": Status.ANSWERED,
        "several": Status.ANSWERED,
        "timeout": Status.ANSWERED,
        "declined": Status.DECLINED,
        "declined at deadline": Status.DECLINED,
        "cancelled": Status.CANCELLED,
        "expired": Status.EXPIRED,
        "gone": Status.WITHDRAWN,
    }[state]
    request = Request(
        request_id="form_hostile",
        questions=(),
        form=form,
        targets=(Target(platform="slack", channel="C1"),),
        context=draw(st.none() | form_text()),
        status=status,
        created_at=AT,
        expires_at=AT + timedelta(hours=1) if draw(st.booleans()) else None,
        ended_at=None if status is Status.WAITING else AT + timedelta(minutes=5),
        policy=policy,
        votes=votes,
        **ending,
    )
    return FormCase(request=request, content=content, typed=typed, problems=problems)


WIDE = (
    "🚀", "👩\u200d👩\u200d👧", "🇫🇷", "👍🏽", "漢", "字", "é", "e\u0301",
    '"', "\\", "\x01", "\x1b", "\x7f", "<", ">", "&",
)  # fmt: skip
"""Characters that JSON escapes to 6 or 12 bytes each, or that take two, or that join those
around them into one character as shown: what a payload measured by its characters
underestimates."""


@cache  # as hostile_text
def wide_text() -> st.SearchStrategy[str]:
    """A short pattern of `WIDE` characters, for `at_most` to repeat to a limit."""
    return st.lists(st.sampled_from(WIDE), min_size=1, max_size=6).map("".join)
