"""Requests in every state whose every text is hostile: for each surface's escaping tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

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
    fields: dict[str, object] = {}
    winner = voters[0] if voters else draw(people())
    if state == "answered" or state == "several":
        fields = {"answers": _answers(qs, 0), "answered_by": winner}
    elif state == "timeout":
        fields = {"answers": _answers(qs, 1)}
    elif state == "cancelled":
        fields = {"cancelled_by": draw(people())}
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
        tool=tool_view_of(lambda: draw(hostile_text())) if draw(st.booleans()) else None,
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
