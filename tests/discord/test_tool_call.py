"""The tool call's share of a Discord message: what runs keeps its room before the title and
the notes, and is cut itself (with its ellipsis, then the link to all of it) only when it
cannot be whole even with them gone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.discord.render import render
from askbridge.adapters.discord.text import escape, shorten
from askbridge.adapters.discord.tool_call import (
    BLOCK_BUDGET,
    FIELD_BUDGET,
    MAX_FIELDS,
    MAX_LINES,
    MAX_PARTS,
    MAX_TOOL_TEXT,
    tool_text,
)
from askbridge.core.models import Request, Target
from askbridge.core.questions import parse_questions
from askbridge.core.tool_view import (
    FULL_VIEW,
    NAME_CHARS,
    Code,
    Fields,
    Named,
    Note,
    Part,
    ToolUse,
    ToolView,
    is_cut,
    tool_view,
)
from askbridge.core.view import RequestView
from tests.emulators.discord import validate_message
from tests.emulators.discord.components import TEXT_DISPLAY, walk
from tests.hostile import SHOWN_AS_ONE

COMPONENTS_V2 = 1 << 15
WHEN = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
PAGE = "https://askbridge.example/q/ask_r?token=" + "0" * 64
WIDE = st.lists(
    st.sampled_from(["a", " ", "\n", "*", "_", "`", "```", "<@1>", "\\", "中", *SHOWN_AS_ONE]),
    max_size=400,
).map("".join)
"""Texts of characters markdown escapes, fences, mentions, wide and joined characters."""


def alone(part: Part) -> str:
    """What runs, as the call shows it with no title and nothing else."""
    return tool_text(ToolView(tool="Bash", title="", parts=(part,)))


@st.composite
def calls(draw: st.DrawFn) -> tuple[ToolView, Part]:
    """A call with a title, notes before and after what runs, and maybe a link to all of it;
    and what runs: a command or named values."""
    command = draw(
        st.builds(Code, text=st.text(max_size=1200) | WIDE, label=st.just("") | WIDE)
        | st.builds(Fields, fields=st.lists(st.builds(Named, name=WIDE, value=WIDE), max_size=3))
    )
    before = draw(st.lists(st.builds(Note, text=WIDE), max_size=2))
    after = draw(st.lists(st.builds(Note, text=WIDE), max_size=1))
    title = draw(st.text(max_size=600) | WIDE)
    full_view = draw(st.none() | st.just(PAGE))
    tool = ToolView(tool="Bash", title=title, parts=(*before, command, *after), full_view=full_view)
    return tool, command


@settings(max_examples=300, deadline=None)
@given(calls(), st.integers(min_value=0, max_value=MAX_TOOL_TEXT))
def test_what_runs_is_cut_after_the_title_and_notes(
    case: tuple[ToolView, Part], limit: int
) -> None:
    tool, runs = case
    shown = tool_text(tool, limit)
    link = "" if tool.full_view is None else f"\n-# [{FULL_VIEW}](<{tool.full_view}>)"
    linked = bool(link) and shown.endswith(link.removeprefix("\n"))
    rest = shown.removesuffix(link.removeprefix("\n")).removesuffix("\n") if linked else shown
    # Within the limit, save the link: a cut is never without it.
    assert len(rest) <= limit
    whole = alone(runs)
    hidden = is_cut(
        tool, MAX_LINES, BLOCK_BUDGET, MAX_PARTS, max_fields=MAX_FIELDS, value_chars=FIELD_BUDGET
    )
    # The call as shown with all the room it may have: cut itself (with its link) or whole.
    full = tool_text(tool, MAX_TOOL_TEXT)
    cut = hidden or full.endswith(link.removeprefix("\n")) or rest != full
    assert linked == (bool(link) and cut)
    # With room for all of what runs or for the link, not both, what runs comes first.
    if len(whole) <= limit - len(link) or (len(whole) <= limit and not hidden):
        assert whole in shown
    else:
        # Cut: the title and the notes are gone, what runs shows its start, then the link.
        assert shown == (shorten(whole, max(limit - len(link), 0)) + link).removeprefix("\n")


def test_what_runs_whole_comes_before_the_link() -> None:
    """A share with room for the whole command or for the link to all of the call, not both:
    the command is shown whole, under what is left of the title, and the link, which a cut
    title needs too, goes past the share."""
    command = "\n".join(f"step {n} " + "x" * 70 for n in range(8))
    tool = ToolView(tool="Bash", title="t" * 300, parts=(Code(text=command),), full_view=PAGE)
    whole = alone(Code(text=command))
    shown = tool_text(tool, len(whole) + 10)
    link = f"-# [{FULL_VIEW}](<{PAGE}>)"
    assert shown.endswith(f"{whole}\n{link}")
    assert len(shown) <= len(whole) + 10 + 1 + len(link)


def test_a_long_title_and_note_give_way_to_the_command_in_a_full_message() -> None:
    """Four long questions leave the call a tight share of the message: the command, not the
    title and the note before it, is what stays whole."""
    command = "kubectl rollout restart deployment/api --namespace production"
    tool = ToolView(
        tool="Bash",
        title="Run a command " + "that does many things " * 20,
        parts=(Note(text="Changed by someone before it was allowed " * 5), Code(text=command)),
    )
    options = [{"label": f"{'l' * 60}{o}", "description": "d" * 500} for o in range(4)]
    questions = [{"question": "q" * 2000, "header": f"H{q}", "options": options} for q in range(4)]
    req = Request(
        request_id="ask_r",
        questions=parse_questions(questions),
        targets=(Target(platform="discord", channel="1"),),
        context="c" * 2000,
        tool=tool,
        created_at=WHEN,
    )
    components: list[dict[str, Any]] = render(RequestView.of(req)).to_components()  # type: ignore[no-untyped-call]
    message = {"flags": COMPONENTS_V2, "components": components}
    assert validate_message(message) is None
    texts = [
        p.component["content"] for p in walk(components) if p.component["type"] == TEXT_DISPLAY
    ]
    assert sum(len(t) for t in texts) <= 4000
    [shown] = [t for t in texts if t.startswith("c" * 100)]
    assert shown.endswith(f"…**\n```\n{command}\n```")


def test_a_cut_command_keeps_its_link_in_a_full_message() -> None:
    """Four questions of four described options and a long context leave the call a share
    smaller than twice its link (a request id of 64 characters): the command is cut, with its
    ellipsis, and the message still links to all of it, its other texts cut further to make
    room."""
    request_id = "r" * 64
    page = f"https://askbridge.example.com/q/{request_id}?token=" + "0" * 64
    command = "\n".join(f"echo {n}" for n in range(80))
    tool = ToolView(tool="Bash", title="Run a command", parts=(Code(text=command),), full_view=page)
    options = [{"label": f"{'l' * 80}{o}", "description": "d" * 100} for o in range(4)]
    questions = [{"question": "q" * 2000, "header": f"H{q}", "options": options} for q in range(4)]
    req = Request(
        request_id=request_id,
        questions=parse_questions(questions),
        targets=(Target(platform="discord", channel="1"),),
        context="c" * 2000,
        tool=tool,
        created_at=WHEN,
    )
    link = f"-# [{FULL_VIEW}](<{page}>)"
    components: list[dict[str, Any]] = render(RequestView.of(req)).to_components()  # type: ignore[no-untyped-call]
    assert validate_message({"flags": COMPONENTS_V2, "components": components}) is None
    texts = [
        p.component["content"] for p in walk(components) if p.component["type"] == TEXT_DISPLAY
    ]
    assert sum(len(t) for t in texts) <= 4000
    [shown] = [t for t in texts if "echo 0" in t]
    assert shown.endswith(f"…\n```\n{link}")


def test_a_path_cut_for_room_keeps_the_link_and_the_diff_stays_whole() -> None:
    """A long message leaves an Edit of a deep file room for its whole diff but not for its
    whole title, which names the file: the diff stays whole, the path is cut, and the
    message links to all of the call, its other texts cut further to make room."""
    path = "/repo/" + "d/" * 120 + "app.py"
    before = "\n".join(f"line {n} = {n}" for n in range(16))
    edit = {"file_path": path, "old_string": before, "new_string": before.replace("= 1", "= 2")}
    tool = tool_view(ToolUse(name="Edit", input=edit)).model_copy(update={"full_view": PAGE})
    options = [{"label": f"{'l' * 80}{o}", "description": "d" * 100} for o in range(4)]
    questions = [{"question": "q" * 2000, "header": f"H{q}", "options": options} for q in range(4)]
    req = Request(
        request_id="ask_r",
        questions=parse_questions(questions),
        targets=(Target(platform="discord", channel="1"),),
        context="c" * 2000,
        tool=tool,
        created_at=WHEN,
    )
    components: list[dict[str, Any]] = render(RequestView.of(req)).to_components()  # type: ignore[no-untyped-call]
    assert validate_message({"flags": COMPONENTS_V2, "components": components}) is None
    texts = [
        p.component["content"] for p in walk(components) if p.component["type"] == TEXT_DISPLAY
    ]
    assert sum(len(t) for t in texts) <= 4000
    [shown] = [t for t in texts if "```diff" in t]
    diff = alone(tool.parts[0])
    assert "**Edit /repo/d/" in shown
    assert "app.py" not in shown
    assert shown.endswith(f"…**\n{diff}\n-# [{FULL_VIEW}](<{PAGE}>)")


def test_a_name_is_cut_only_past_its_budget_as_written_and_then_links() -> None:
    """A name of 100 asterisks is 200 characters escaped: shown whole, since it is within its
    budget as written; one past the budget is cut, and the call links to all of it."""
    within, past = "*" * NAME_CHARS, "n" * NAME_CHARS + "_or_drop"
    for name, cut in ((within, False), (past, True)):
        fields = Fields(fields=(Named(name=name, value="1"),))
        shown = tool_text(
            ToolView(tool="mcp__db__query", title="Query", parts=(fields,), full_view=PAGE)
        )
        assert (f"- **{escape(name)}**: 1" in shown) is not cut
        assert (FULL_VIEW in shown) is cut


def test_names_that_differ_only_in_white_space_never_look_the_same() -> None:
    """A line of Discord markdown joins white space; an argument's name is the call's, and
    `a  b`, `a b`, `a\\nb` and `a b ` are four different names."""
    spellings = ("a  b", "a b", "a\nb", "a\tb", "a b ", " a b")
    shown = {
        name: tool_text(tool_view(ToolUse(name="mcp__db__query", input={name: "1"})))
        for name in spellings
    }
    rows = {n: [r for r in text.split("\n") if r.endswith(": 1")] for n, text in shown.items()}
    assert all(len(found) == 1 for found in rows.values()), rows
    assert len({found[0] for found in rows.values()}) == len(spellings), rows
    assert rows["a b"] == ["- **a b**: 1"], "one space between words is shown as it is"
    assert rows["a  b"] == [f"- **{escape('a<U+0020><U+0020>b')}**: 1"]


def test_a_note_cut_to_its_budget_links_to_all_of_the_call() -> None:
    """A long lookalike host makes its note longer than a message shows of a note, though the
    URL itself is within its budget: the note is cut, and the call links to all of it."""
    host = ".".join(["\u0430pple"] * 25) + ".com"
    url = f"https://{host}/"
    tool = tool_view(ToolUse(name="WebFetch", input={"url": url, "prompt": "Read"}))
    tool = tool.model_copy(update={"full_view": PAGE})
    assert len(url) <= FIELD_BUDGET < max(len(p.text) for p in tool.parts if isinstance(p, Note))
    assert is_cut(
        tool, MAX_LINES, BLOCK_BUDGET, MAX_PARTS, max_fields=MAX_FIELDS, value_chars=FIELD_BUDGET
    )
    assert tool_text(tool).endswith(f"-# [{FULL_VIEW}](<{PAGE}>)")
