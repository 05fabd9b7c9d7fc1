"""Hostile text in every field and every name, in every state, and in every answer and note
people typed: the Discord message and every private note show it as written, and the form for
typing stays within Discord's limits. Nothing pings, no mention or masked link is live except
the answerers the agent named, no markup is set off but askbridge's own, and no code block is
left open. The emulator's analyser (`tests.emulators.discord.markdown`, `.mentions`) reads the
texts as Discord does.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askbridge.adapters.discord import forms
from askbridge.adapters.discord.lines import DISCORD_ANSWERER, reminder
from askbridge.adapters.discord.notes import cancel_note, form_note, note
from askbridge.adapters.discord.render import render, words_label
from askbridge.adapters.discord.surface import NO_PINGS
from askbridge.adapters.discord.text import escape, line, prose, shorten
from askbridge.core.answers import MULTI_SELECT_SEPARATOR, typed_problem
from askbridge.core.intents import NOTE, Counted, Decided, Drafted, Outcome, Refusal, Refused
from askbridge.core.models import Person, Policy, Request, Selections, Status, Target, Vote
from askbridge.core.questions import parse_questions
from askbridge.core.view import RequestView, State
from tests.emulators.discord import (
    AllowedMentions,
    live_markdown,
    mentioned_in,
    validate_message,
    validate_modal,
)
from tests.emulators.discord.components import TEXT_DISPLAY, walk
from tests.emulators.discord.markdown import read
from tests.emulators.discord.mentions import pings
from tests.hostile import hostile_text, tool_view_of

WHEN = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
HOSTILE = [
    *("<!channel>", "<!here>", "<@U1>", "<@1>", "<@!1>", "<@&1>", "<#1>", "<@123456789012345678>"),
    *("@everyone", "@here", "<t:1:R>", "</x:1>", "<:e:1>", "<https://e.example>"),
    *("[x](https://e.example)", "[x](<https://e.example>)", "[", "](", ")", "https://e.example/a_"),
    *("*_~", "**", "__", "~~", "||", "```", "``", "`", "\\", "&amp;", "&lt;@1&gt;"),
    *("\n", "\n# ", "\n-# ", "\n> ", ">>> ", "- ", "1. ", " ", "👩‍👩‍👧‍👦", "🏳️‍🌈"),
    *("Deploy", "yes", "build 4711", "ok"),
]
ANSWERERS = ["discord:@4242", "discord:4343", "discord-role:77", "slack:U0123", "web:Grace"]
OUR_SUBTEXT = (
    *("-# One click", "-# Your choices", "-# Other votes:", "-# Votes:"),
    *("-# Fill in the form", "-# Filling in the form", "-# Open the link"),
)
"""The lines askbridge itself sets in small print."""
HIDDEN_LINES = re.compile(
    r"-# (The ends? of \d+ lines?( and \d+ more lines?)?|\d+ more lines?) (is|are) not shown here"
)
"""What a cut diff or command says in small print below its code block."""
OUR_ITEMS = re.compile(r"- ")
"""askbridge's own list items (options, tally rows, fields), whole or cut short: an agent's or
a person's `- ` at the start of a line is escaped, so only a numbered item or one of these
could be theirs."""

hostile = st.lists(st.sampled_from(HOSTILE), min_size=1, max_size=8).map("".join)
long_hostile = st.tuples(hostile, st.integers(min_value=1, max_value=120)).map(
    lambda t: t[0] * t[1]
)
word = hostile.map(lambda s: "".join(s.split()) or "x")


def _typable(text: str) -> str:
    """`text` as askbridge would keep it when typed: no control characters but newlines and
    tabs."""
    kept = "".join(c for c in text if c in "\n\t" or not (ord(c) < 32 or 127 <= ord(c) < 160))
    kept = kept.strip()[:2000].strip() or "x"
    assert typed_problem(kept) is None
    return kept


typed = (hostile_text() | hostile | long_hostile).map(_typable)
"""What a person may type as an answer or a note: the shared hostile strings, and these."""


def assert_shown_as_written(text: str, answerers: tuple[str, ...]) -> None:
    """Of `text`, only askbridge's own markup is live: bold, its small print, the agent's code
    blocks (closed), the answerers' mentions and inline-code entries."""
    found = live_markdown(text)
    assert found.masked_links == (), text
    assert not found.open_fence, text
    assert all(e.startswith("**") and e.endswith("**") for e in found.emphasis), found.emphasis
    assert all(
        line.startswith(OUR_SUBTEXT) or HIDDEN_LINES.fullmatch(line) or OUR_ITEMS.match(line)
        for line in found.line_markup
    ), found.line_markup
    entries = {f"`{a}`" for a in answerers}
    assert all(c.startswith("```") or c in entries for c in found.code), found.code
    ids = [m for a in answerers if (m := DISCORD_ANSWERER.fullmatch(a)) is not None]
    mentioned = mentioned_in(text)
    assert mentioned.users <= {int(m["id"]) for m in ids if not m["role"]}, text
    assert mentioned.roles <= {int(m["id"]) for m in ids if m["role"]}, text
    assert (mentioned.everyone, mentioned.here) == (False, False), text
    # Discord would find @everyone and @here in a code block too; escaped, they hold a ZWSP.
    assert re.search(r"@(everyone|here)", text) is None, text
    # A bare link runs up to a space or a `<`: an escape right after one would be part of it.
    # The links are read as Discord reads them: not in code, and not after an escaped `<`.
    assert all("\\" not in link for link in read(text).previewed), text


SENT_WITH = AllowedMentions.of_request({"allowed_mentions": NO_PINGS.to_dict()})
"""What askbridge's messages and notes are sent with."""


# --- requests in every state --------------------------------------------------------------


people = st.builds(
    Person,
    platform=st.sampled_from(["discord", "slack", "web"]),
    id=st.from_regex(r"[0-9]{1,20}", fullmatch=True),
    name=hostile | long_hostile,
)


@st.composite
def questions(draw: st.DrawFn) -> list[dict[str, Any]]:
    asked = []
    for q in range(draw(st.integers(min_value=1, max_value=4))):
        count = draw(st.integers(min_value=2, max_value=4))
        labels = [
            " ".join([f"{o}{draw(word)}", *draw(st.lists(word, max_size=2))]) for o in range(count)
        ]
        asked.append(
            {
                "question": draw((hostile | long_hostile).map(lambda s: s + "?")),
                "header": f"{q}{draw(hostile)}"[:12],
                "multiSelect": draw(st.booleans()),
                "options": [{"label": label, "description": draw(hostile)} for label in labels],
            }
        )
    return asked


STATUS = {state: Status(state.value) for state in State if state.value in set(Status)}
STATUS[State.DECIDED_BY_TIMEOUT] = Status.ANSWERED


@st.composite
def views(draw: st.DrawFn) -> RequestView:
    """A request in any state, with any policy, its every text and name hostile."""
    asked = parse_questions(draw(questions()))
    allow_other, allow_notes = draw(st.booleans()), draw(st.booleans())

    def answers() -> dict[str, str]:
        found = {}
        for q in asked:
            own = draw(typed) if allow_other and draw(st.booleans()) else ""
            labels = [o.label for o in q.options]
            if q.multi_select:
                picked = labels[: draw(st.integers(0 if own else 1, 2))]
                found[q.header] = MULTI_SELECT_SEPARATOR.join([*picked, *[own][: bool(own)]])
            else:
                found[q.header] = own or draw(st.sampled_from(labels))
        return found

    def notes(often: bool = False) -> dict[str, str]:
        given = allow_notes and (often or draw(st.booleans()))
        return {asked[0].header: draw(typed)} if given else {}

    state = draw(st.sampled_from(list(State)))
    several = state is State.ANSWERED and draw(st.booleans())
    quorum = draw(st.integers(min_value=2, max_value=3)) if several else draw(st.integers(1, 3))
    voters = draw(st.lists(people, min_size=quorum + 2, max_size=6, unique_by=lambda p: p.key))
    decided = answers()
    deciding = voters[:quorum] if several else voters[:1] if quorum == 1 else []
    votes = [Vote(person=p, answers=decided, at=WHEN, notes=notes(True)) for p in deciding]
    others = voters[quorum:] if several else voters[1:] if quorum > 1 else []
    votes += [Vote(person=p, answers=answers(), at=WHEN, notes=notes()) for p in others]
    timeout = answers() if state is State.DECIDED_BY_TIMEOUT or draw(st.booleans()) else None
    update: dict[str, Any] = {"status": STATUS[state]}
    if state is not State.WAITING:
        update["ended_at"] = WHEN
    if state is State.ANSWERED:
        update |= {"answers": decided, "answered_by": voters[quorum - 1 if several else 0]}
    elif state is State.DECIDED_BY_TIMEOUT:
        update["answers"] = timeout
    elif state is State.CANCELLED:
        update["cancelled_by"] = draw(people)
    request = Request(
        request_id="ask_hostile",
        questions=asked,
        targets=(Target(platform="discord", channel="1"),),
        context=draw(st.none() | hostile | long_hostile),
        created_at=WHEN,
        expires_at=draw(st.none() | st.just(WHEN)),
        policy=Policy(
            answerers=tuple(draw(st.lists(st.sampled_from(ANSWERERS), unique=True))),
            quorum=quorum,
            timeout_answers=timeout,
            allow_other=allow_other,
            allow_notes=allow_notes,
        ),
        votes=tuple(votes),
        tool=tool_view_of(lambda: draw(hostile | long_hostile)) if draw(st.booleans()) else None,
        **update,
    )
    view = RequestView.of(request)
    assert view.state is state
    return view


FAST = settings(
    max_examples=500,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FAST
@given(views())
def test_hostile_text_is_shown_as_written(view: RequestView) -> None:
    components: list[dict[str, Any]] = render(view).to_components()  # type: ignore[no-untyped-call]
    assert validate_message({"flags": 1 << 15, "components": components}) is None
    texts = [
        p.component["content"] for p in walk(components) if p.component["type"] == TEXT_DISPLAY
    ]
    notes = [text for outcome in outcomes(view) if (text := note(outcome)) is not None]
    notes += [text for outcome in outcomes(view) if (text := form_note(outcome)) is not None]
    # What the private question about cancelling becomes: the ending, or why not.
    notes += [cancel_note(outcome) for outcome in outcomes(view)]
    if not view.waiting:
        notes.append(cancel_note(Decided(view)))
    if view.waiting:
        notes.append(reminder(view))
        notes += form_notes(view)
    for text in texts + notes:
        assert_shown_as_written(text, view.answerers)
    assert pings("", components, SENT_WITH).nobody
    for text in notes:
        assert validate_message({"content": shorten(text, 2000)}) is None
        assert pings(text, [], SENT_WITH).nobody


@settings(FAST, max_examples=200)
@given(questions(), typed, typed, people)
def test_words_and_a_note_given_with_the_answer_are_shown_as_written(
    asked: list[dict[str, Any]], words: str, note_text: str, voter: Person
) -> None:
    parsed = parse_questions(asked)
    answers = {
        q.header: f"{q.options[0].label}, {words}" if q.multi_select else words for q in parsed
    }
    request = Request(
        request_id="ask_hostile",
        questions=parsed,
        targets=(Target(platform="discord", channel="1"),),
        created_at=WHEN,
        status=Status.ANSWERED,
        ended_at=WHEN,
        answers=answers,
        answered_by=voter,
        policy=Policy(allow_other=True, allow_notes=True),
        votes=(Vote(person=voter, answers=answers, at=WHEN, notes={parsed[0].header: note_text}),),
    )
    components: list[dict[str, Any]] = render(RequestView.of(request)).to_components()  # type: ignore[no-untyped-call]
    assert validate_message({"flags": 1 << 15, "components": components}) is None
    texts = [
        p.component["content"] for p in walk(components) if p.component["type"] == TEXT_DISPLAY
    ]
    assert any("\n📝 " in text for text in texts), texts
    for text in texts:
        assert_shown_as_written(text, ())
    assert pings("", components, SENT_WITH).nobody


def outcomes(view: RequestView) -> list[Outcome]:
    """Every outcome a click (or a submitted form) on the request can have, with a note."""
    if not view.waiting:
        return [Refused(Refusal.ALREADY_ENDED, view)]
    headers = tuple(question.header for question in view.questions)
    last = len(headers) - 1
    found: list[Outcome] = [
        Refused(Refusal.NOT_ANSWERER, view),
        Refused(Refusal.MISSING_ANSWERS, view, headers),
        Drafted(view, 0, {0: (0, 1)}),
        Drafted(view, last, dict.fromkeys(range(len(headers)), (1,))),
        Refused(
            Refusal.BAD_TEXT,
            view,
            headers[1:],
            problems={
                0: "Please remove the control characters.",
                last: "Please keep it to 2000 characters (this is 2345).",
                NOTE: "This question takes no notes.",
            },
        ),
    ]
    for vote in view.request.votes[:1]:
        if (receipt := view.receipt(vote.person)) is not None:
            found.append(Counted(view, receipt))
    return found


def form_notes(view: RequestView) -> list[str]:
    """What a click on the form's button tells a person instead of opening the form; and the
    form, which must be one Discord takes (its texts are plain, never markdown)."""
    found = []
    drafts: list[Selections] = [{}, {0: (0, 1)}, dict.fromkeys(range(len(view.questions)), (1,))]
    for draft in drafts:
        if (why := forms.why_no_form(view, draft)) is not None:
            found.append(why)
        elif words_label(view) is not None:
            modal = forms.form(view, draft).to_dict()
            assert validate_modal(modal) is None, validate_modal(modal)
    return found


@FAST
@given(hostile | long_hostile, st.integers(min_value=0, max_value=400))
def test_shortening_never_cuts_an_escape_or_leaves_a_code_block_open(text: str, limit: int) -> None:
    full = prose(text)
    short = shorten(full, limit)
    assert len(short) <= limit
    assert_shown_as_written(short, ())
    if short != full and short:
        inside = short.endswith("…\n```")
        kept = short.removesuffix("\n```").removesuffix("…")
        assert full.startswith(kept)
        # A cut outside a code block ends on a whole escape (in one, a backslash is just text).
        dangling = len(kept) - len(kept.rstrip("\\"))
        assert inside or dangling % 2 == 0, kept


def test_what_escaping_does() -> None:
    # Every masked link, not only the first on a line (discord.py's escape_markdown stops there).
    assert escape("[a](b) c [x](https://e.example)") == "\\[a\\](b) c \\[x\\](https://e.example)"
    assert escape("<@1> <@&1> <#1> @here") == "\\<@1\\> \\<@&1\\> \\<#1\\> @\u200bhere"
    # A bare link stays a working link. Discord's links run up to a space or a `<`, so one
    # right before a `<` would swallow its escape: a space ends the link first.
    assert escape("https://e.example/a_b<https://x.example>") == (
        "https://e.example/a_b \\<https://x.example \\>"
    )
    # So would one right before any character the escaping escapes: the link ends at what was
    # written up to there, and the rest is escaped text.
    assert escape("https://e.example/x*y*") == "https://e.example/x \\*y\\*"
    assert escape("see https://e.example/a|b`c]") == "see https://e.example/a \\|b\\`c\\]"
    assert escape("steam://run/1\\x") == "steam://run/1 \\\\x"
    assert line("a\n# b\n-# c") == "a # b -# c"
    assert escape("a\n# b\n-# c\n- d") == "a\n\\# b\n\\-# c\n\\- d"
    # A code block stays one, on a line of its own, closed; an empty one is dropped.
    assert prose("see https://x```py\n<@1>") == "see https://x\n```py\n<@1>\n```"
    assert prose("a ``` \n ``` b") == "a  b"
