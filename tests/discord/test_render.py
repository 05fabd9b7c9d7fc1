"""The renderer on its own: layout, Discord's limits for any request (and any approval policy),
the ended states, and code blocks that stay closed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.adapters.discord.render import render
from askbridge.adapters.discord.text import clip, join_within, shorten
from askbridge.core.escalation import read_ladder
from askbridge.core.models import Person, Policy, Request, Status, Target, Vote
from askbridge.core.permissions import permission_questions
from askbridge.core.policy import ANSWERER
from askbridge.core.questions import parse_questions
from askbridge.core.tool_view import (
    Code,
    Fields,
    FileText,
    Named,
    Note,
    ToolUse,
    ToolView,
    tool_view,
)
from askbridge.core.view import RequestView
from tests.conftest import DATABASE
from tests.emulators.discord import validate_message
from tests.emulators.discord.components import (
    ACTION_ROW,
    BUTTON,
    CONTAINER,
    SEPARATOR,
    STRING_SELECT,
    TEXT_DISPLAY,
    count_components,
    has_interactive_components,
    visible_text,
    walk,
)
from tests.hostile import SHOWN_AS_ONE, tool_view_of, whole_pieces

COMPONENTS_V2 = 1 << 15
WHEN = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
ALICE = Person(platform="discord", id="4242", name="Alice")


def request(questions: Any, context: str | None = None, **ending: Any) -> Request:
    return Request(
        request_id="ask_r",
        questions=parse_questions(questions),
        targets=(Target(platform="discord", channel="1"),),
        context=context,
        created_at=WHEN,
        **ending,
    )


def payload(req: Request) -> dict[str, Any]:
    """The message body discord.py sends for the rendered view."""
    components: list[dict[str, Any]] = render(RequestView.of(req)).to_components()  # type: ignore[no-untyped-call]
    return {"flags": COMPONENTS_V2, "components": components}


def of_type(message: dict[str, Any], kind: int) -> list[dict[str, Any]]:
    return [p.component for p in walk(message["components"]) if p.component["type"] == kind]


def text(message: dict[str, Any]) -> str:
    return visible_text("", [], message["components"])


def test_the_spec_example_layout() -> None:
    message = payload(request(DATABASE["questions"], context="demo agent"))
    assert validate_message(message) is None
    [container] = message["components"]
    assert container["type"] == CONTAINER
    kinds = [c["type"] for c in container["components"]]
    # context; Database text + its buttons; Features text + its select; the hint; the controls
    assert kinds == [
        *(TEXT_DISPLAY, TEXT_DISPLAY, ACTION_ROW, TEXT_DISPLAY, ACTION_ROW),
        *(SEPARATOR, TEXT_DISPLAY, ACTION_ROW),
    ]

    buttons = of_type(message, BUTTON)
    assert [(b["label"], b["custom_id"]) for b in buttons] == [
        ("PostgreSQL", "ab:ask_r:o:0:0"),
        ("SQLite", "ab:ask_r:o:0:1"),
        ("Submit", "ab:ask_r:s"),
        ("Cancel", "ab:ask_r:c"),
    ]
    [select] = of_type(message, STRING_SELECT)
    assert select["custom_id"] == "ab:ask_r:m:1"
    assert (select["min_values"], select["max_values"]) == (1, 3)
    assert [(o["label"], o["value"], o["description"]) for o in select["options"]] == [
        ("Caching", "0", "Response caching"),
        ("Logging", "1", "Detailed logs"),
        ("Metrics", "2", "Performance monitoring"),
    ]
    assert "**PostgreSQL** — Relational with advanced features" in text(message)


def test_one_single_select_question_has_no_submit() -> None:
    message = payload(request(DATABASE["questions"][:1]))
    assert [b["label"] for b in of_type(message, BUTTON)] == ["PostgreSQL", "SQLite", "Cancel"]
    assert {b["style"] for b in of_type(message, BUTTON)[:2]} == {1}  # primary: they answer


def test_a_single_multi_select_question_still_needs_submit() -> None:
    message = payload(request(DATABASE["questions"][1:]))
    assert [b["label"] for b in of_type(message, BUTTON)] == ["Submit", "Cancel"]


def test_the_ended_message_has_no_controls_and_says_who_and_when() -> None:
    answers = {"Database": "PostgreSQL", "Features": "Caching, Metrics"}
    answered = request(
        DATABASE["questions"],
        status=Status.ANSWERED,
        answers=answers,
        answered_by=ALICE,
        ended_at=WHEN,
    )
    message = payload(answered)
    assert validate_message(message) is None
    assert not has_interactive_components(message["components"])
    assert of_type(message, ACTION_ROW) == []
    shown = text(message)
    assert "**Database** · Which database should we use?\n→ **PostgreSQL**" in shown
    assert "**Features** · Which features do you want?\n→ **Caching, Metrics**" in shown
    assert f"✅ Answered by **Alice** · <t:{int(WHEN.timestamp())}:f>" in shown


def test_every_ending_is_told() -> None:
    endings: dict[Status, tuple[str, dict[str, Any]]] = {
        Status.CANCELLED: ("✖️ Cancelled by **Alice**", {"cancelled_by": ALICE}),
        Status.EXPIRED: ("⌛ Expired without an answer", {}),
        Status.WITHDRAWN: ("↩️ Withdrawn by the agent", {}),
    }
    for status, (expected, extra) in endings.items():
        message = payload(request(DATABASE["questions"], status=status, ended_at=WHEN, **extra))
        assert validate_message(message) is None
        assert not has_interactive_components(message["components"])
        assert expected in text(message)
        assert "→" not in text(message)


words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Z", "C")), min_size=1)
long_text = st.text(min_size=1, max_size=3500).filter(str.strip)
option = st.fixed_dictionaries(
    {
        "label": st.lists(words, min_size=1, max_size=5).map(" ".join),
        "description": st.text(max_size=400),
    }
)


@st.composite
def requests(draw: st.DrawFn) -> Request:
    count = draw(st.integers(min_value=1, max_value=4))
    questions = []
    for q in range(count):
        multi = draw(st.booleans())
        options = draw(st.lists(option, min_size=2, max_size=4, unique_by=lambda o: o["label"]))
        if multi:
            # A multi-select label cannot hold the ", " that joins answers.
            for o in options:
                o["label"] = o["label"].replace(", ", ",")
            if len({o["label"] for o in options}) < len(options):
                multi = False
        questions.append(
            {
                "question": draw(long_text),
                "header": f"H{q}",
                "multiSelect": multi,
                "options": options,
            }
        )
    context = draw(st.none() | st.text(max_size=500))
    return request(questions, context=context)


@settings(max_examples=60, deadline=None)
@given(requests(), st.sampled_from(list(Status)))
def test_any_request_in_any_state_is_a_message_discord_accepts(
    req: Request, status: Status
) -> None:
    if status is not Status.WAITING:
        answers = {q.header: q.options[-1].label * 3 for q in req.questions}
        req = req.model_copy(
            update={"status": status, "ended_at": WHEN, "answers": answers, "answered_by": ALICE}
        )
    message = payload(req)
    assert validate_message(message) is None
    assert count_components(message["components"]) <= 40
    assert sum(len(t["content"]) for t in of_type(message, TEXT_DISPLAY)) <= 4000


def test_four_by_four_uses_31_of_40_components() -> None:
    questions = [
        {
            "question": f"Question {q}?",
            "header": f"Q{q}",
            "options": [{"label": f"Option {o}", "description": "d"} for o in range(4)],
        }
        for q in range(4)
    ]
    message = payload(request(questions, context="context"))
    assert validate_message(message) is None
    assert count_components(message["components"]) == 31


def test_shorten() -> None:
    assert shorten("abc", 3) == "abc"
    assert shorten("abcd", 3) == "ab…"
    assert shorten("ab  cd", 4) == "ab…"
    assert shorten("abc", 0) == ""


@given(st.lists(st.sampled_from(["a", *SHOWN_AS_ONE]), max_size=40), st.integers(1, 60))
def test_shortening_never_splits_a_character_as_shown(pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    for short in (shorten(text, limit), clip(text, limit)):
        assert len(short) <= limit
        assert short.removesuffix("…") in whole_pieces(text, pieces), short


def test_join_within_keeps_whole_items() -> None:
    items = ["<@1>", "<@22>", "<@333>"]
    assert join_within(items, 100) == "<@1>, <@22>, <@333>"
    assert join_within(items, 18) == "<@1> and 2 more"
    assert join_within(items, 10) == "3 people"
    assert join_within(["<@4444444444>"], 10) == "1 person"
    assert join_within([], 10) == ""


def test_names_and_labels_cannot_restyle_the_message() -> None:
    mallory = Person(platform="discord", id="9", name="**```Mallory")
    policy = Policy(quorum=2)
    waiting = request(DEPLOY).model_copy(
        update={"policy": policy, "votes": (vote(mallory, "Approve"),)}
    )
    shown = text(payload(waiting))
    assert "- **Approve** — 1/2 (\\*\\*\\`\\`\\`Mallory)" in shown
    assert "```" not in shown


# --- team approvals -----------------------------------------------------------------------

DEPLOY = [
    {
        "question": "Deploy build 4711 to production?",
        "header": "Deploy",
        "options": [
            {"label": "Approve", "description": "Ship it"},
            {"label": "Reject", "description": "Hold the release"},
        ],
    }
]
BOB = Person(platform="discord", id="4343", name="Bob")
GRACE = Person(platform="web", id="Grace", name="Grace")


def vote(person: Person, answer: str) -> Vote:
    return Vote(person=person, answers={"Deploy": answer}, at=WHEN)


def test_the_waiting_message_shows_the_policy_and_the_tally() -> None:
    policy = Policy(
        answerers=("discord:@4242", "discord:4343", "discord-role:77", "slack:U0123", "web:Grace"),
        quorum=2,
        timeout_answers={"Deploy": "Reject"},
    )
    waiting = request(DEPLOY).model_copy(
        update={
            "policy": policy,
            "votes": (vote(ALICE, "Approve"), vote(BOB, "Reject"), vote(GRACE, "Approve")),
            "expires_at": WHEN,
        }
    )
    message = payload(waiting)
    assert validate_message(message) is None
    shown = text(message)
    at = int(WHEN.timestamp())
    assert (
        "Who may answer: <@4242>, <@4343>, <@&77>, `slack:U0123`, `web:Grace`\n"
        "**Needs 2 matching votes**\n"
        "- **Approve** — 2/2 (Alice, Grace)\n"
        "- **Reject** — 1/2 (Bob)\n"
        f"⏳ If nobody decides by <t:{at}:f> (<t:{at}:R>), the answer is **Reject**\n"
        "-# One click votes; click another option to change your vote."
    ) in shown
    # The policy is one text with the hint: no component is spent on it.
    assert count_components(message["components"]) == count_components(
        payload(request(DEPLOY))["components"]
    )


def largest_approval(votes: int) -> Request:
    """An approval with the most of everything a waiting message shows: a tool call whose
    every part is long, four questions of four options whose labels escape to twice their
    length, twenty answerers, a quorum, a deadline with a default answer, and `votes`
    differing votes from people with long names."""
    long = "*" * 300
    tool = ToolView(
        tool="Bash",
        title="Run a command",
        parts=(
            Code(label="", text="\n".join(f"rm -rf /srv/{n} {long}" for n in range(40))),
            Note(text=long),
            Fields(fields=tuple(Named(name=long, value=long) for _ in range(9))),
        ),
    )
    questions = [
        {
            "question": "q?",
            "header": f"Q{q}",
            "options": [{"label": f"{o}{long}", "description": long} for o in range(4)],
        }
        for q in range(4)
    ]
    labels = [f"{o}{long}" for o in range(4)]
    voters = [Person(platform="web", id=f"v{n}", name="*" * 300) for n in range(votes)]
    policy = Policy(
        answerers=tuple(f"discord:@{100000000000000000 + n}" for n in range(20)),
        quorum=3,
        timeout_answers={q["header"]: labels[0] for q in questions},
    )
    return request(questions, context=long).model_copy(
        update={
            "policy": policy,
            "votes": tuple(
                Vote(person=p, answers={q["header"]: labels[n] for q in questions}, at=WHEN)
                for n, p in enumerate(voters)
            ),
            "expires_at": WHEN,
            "tool": tool,
        }
    )


def test_the_largest_approval_fits_once_votes_come_in() -> None:
    for votes in range(4):
        message = payload(largest_approval(votes))
        assert validate_message(message) is None, votes
        assert sum(len(t) for t in texts_of(message)) <= 4000
        shown = text(message)
        # What an approver must see to judge is still there: the command's start and every
        # option's label, whole or cut.
        assert "rm -rf /srv/0" in shown
        assert all(shown.count(f"- **{o}\\*") >= 4 for o in range(4)), shown


MARKUP = st.sampled_from(["*", "_", "<", "`", "|", "~", "@", "é", " "])
"""Characters the escaping doubles, and others."""
longest = st.lists(MARKUP, max_size=8).map(lambda cs: (("".join(cs) + "*") * 2000)[:2000])
many_answerers = tuple(f"discord:@{100000000000000000 + n}" for n in range(60))


@st.composite
def largest_approvals(draw: st.DrawFn) -> Request:
    """The largest approval in any state: every text as long as askbridge takes it and full of
    characters the escaping doubles, four questions of four options, a tool call or none, any
    quorum with votes from people with long names, a deadline with a default answer or none,
    and an escalation taken or not."""

    def text() -> str:
        return draw(longest)

    def label(o: int) -> str:
        # One word, as a label is at most five, and none holds the ", " that joins answers.
        return f"{o}{''.join(text().split())}"[:80]

    questions = [
        {
            "question": text(),
            "header": f"H{q}",
            "multiSelect": draw(st.booleans()),
            "options": [{"label": label(o), "description": text()} for o in range(4)],
        }
        for q in range(4)
    ]
    req = request(questions, context=text())
    asked = req.questions
    labels = [[o.label for o in q.options] for q in asked]
    voters = [Person(platform="web", id=f"v{n}", name=text()[:300]) for n in range(6)]
    votes = tuple(
        Vote(
            person=p,
            answers={q.header: draw(st.sampled_from(labels[i])) for i, q in enumerate(asked)},
            at=WHEN,
            notes={"H0": text()},
        )
        for p in voters[: draw(st.integers(0, 6))]
    )
    ladder = read_ladder({"steps": [{"after_s": 60, "answerers": list(many_answerers[30:])}]})
    policy = Policy(
        answerers=many_answerers[:30],
        quorum=draw(st.integers(1, 3)),
        timeout_answers=draw(st.none() | st.just({q.header: labels[0][0] for q in asked})),
        allow_other=True,
        allow_notes=True,
        escalation=ladder,
    )
    tool = draw(st.none() | st.just(largest_approval(0).tool) | st.just(tool_view_of(text)))
    update: dict[str, Any] = {
        "policy": policy,
        "votes": votes,
        "tool": tool,
        "expires_at": draw(st.none() | st.just(WHEN)),
        "escalation_step": draw(st.integers(0, 1)),
    }
    status = draw(st.sampled_from(list(Status)))
    if status is not Status.WAITING:
        update |= {"status": status, "ended_at": WHEN}
    if status is Status.ANSWERED:
        answers = votes[0].answers if votes else {q.header: text() for q in req.questions}
        update |= {"answers": answers, "answered_by": voters[0] if votes else None}
    return req.model_copy(update=update)


@settings(max_examples=80, deadline=None)
@given(largest_approvals())
def test_the_largest_approval_in_any_state_is_a_message_discord_accepts(req: Request) -> None:
    message = payload(req)
    assert validate_message(message) is None
    assert count_components(message["components"]) <= 40


def test_a_long_list_of_answerers_is_cut_between_mentions() -> None:
    answerers = tuple(f"discord:@{100000000000000000 + n}" for n in range(60))
    many = request(DEPLOY).model_copy(update={"policy": Policy(answerers=answerers)})
    shown = text(payload(many))
    [line] = [line for line in shown.splitlines() if line.startswith("Who may answer:")]
    assert line.endswith(", <@100000000000000011> and 48 more")


def test_the_ended_message_names_the_voters_or_the_timeout() -> None:
    votes = (vote(ALICE, "Approve"), vote(BOB, "Reject"), vote(GRACE, "Approve"))
    decided = request(DEPLOY).model_copy(
        update={
            "policy": Policy(quorum=2),
            "votes": votes,
            "status": Status.ANSWERED,
            "answers": {"Deploy": "Approve"},
            "answered_by": GRACE,
            "ended_at": WHEN,
        }
    )
    shown = text(payload(decided))
    assert "✅ Answered by **Alice**, **Grace** (2 matching votes) · <t:" in shown
    assert "-# Other votes:\n- **Reject** — 1/2 (Bob)" in shown

    by_timeout = decided.model_copy(update={"answers": {"Deploy": "Reject"}, "answered_by": None})
    shown = text(payload(by_timeout))
    assert "→ **Reject**" in shown
    assert "⏱️ Decided by timeout · <t:" in shown
    # Every vote cast before the deadline is still shown, the matching one too.
    assert "-# Votes:\n- **Approve** — 2/2 (Alice, Grace)\n- **Reject** — 1/2 (Bob)" in shown


PERMISSION_INPUT = {"command": "make release && " + "x" * 3000}


def test_a_permission_prompt_shows_its_input_as_a_code_block_cut_safely() -> None:
    prompt = {
        "tool_name": "Bash",
        "action": "run a shell command",
        "input": PERMISSION_INPUT,
        "details": "Why: " + "d" * 2400,
    }
    message = payload(request(permission_questions(prompt), context="c" * 500))
    assert validate_message(message) is None
    texts = [t["content"] for t in of_type(message, TEXT_DISPLAY)]
    assert sum(len(t) for t in texts) <= 4000
    [shown] = [t for t in texts if t.startswith("**Permission**")]
    code, options = shown.split("…\n```\n", 1)
    assert '```\n{\n  "command": "make release && xxx' in code
    assert code.count("```") == 1  # the one that opened, closed right after the ellipsis
    assert options.startswith("- **Allow once** — Let this one call run\n- **Always allow**")
    assert [b["label"] for b in of_type(message, BUTTON)] == [
        "Allow once",
        "Always allow",
        "Deny",
        "Cancel",
    ]


def test_a_code_block_the_agent_left_open_is_closed_before_the_options() -> None:
    question = [{**DEPLOY[0], "question": "Deploy this?\n```\ngit push origin main"}]
    for req in (
        request(question),
        request(question, status=Status.ANSWERED, answers={"Deploy": "Approve"}, ended_at=WHEN),
    ):
        [shown] = [t for t in texts_of(payload(req)) if t.startswith("**Deploy**")]
        assert shown.count("```") == 2
        assert "git push origin main\n```\n" in shown


def texts_of(message: dict[str, Any]) -> list[str]:
    return [t["content"] for t in of_type(message, TEXT_DISPLAY)]


fenced = st.lists(st.sampled_from(["```", "`", "\n", " ", "a", "bc", "{", "…"]), max_size=80).map(
    "".join
)


@given(fenced, st.integers(min_value=-1, max_value=90))
def test_shortening_never_leaves_a_code_block_open(text_: str, limit: int) -> None:
    short = shorten(text_, limit)
    assert len(short) <= max(limit, 0)
    if short != text_:
        assert short.count("```") % 2 == 0
        assert short == "" or "…" in short


@st.composite
def approvals(draw: st.DrawFn) -> Request:
    """Any request with any policy, and votes from people with long names."""
    req: Request = draw(requests())
    answerers = draw(st.lists(st.from_regex(ANSWERER, fullmatch=True), max_size=60))
    people = draw(
        st.lists(
            st.builds(
                Person,
                platform=st.sampled_from(["discord", "slack", "web"]),
                id=st.from_regex(r"[0-9]{1,20}", fullmatch=True),
                name=st.text(max_size=300),
            ),
            max_size=50,
            unique_by=lambda p: p.key,
        )
    )

    def answers() -> dict[str, str]:
        chosen: dict[str, str] = {}
        for question in req.questions:
            labels = [o.label for o in question.options]
            if question.multi_select:
                picked = draw(st.lists(st.sampled_from(labels), min_size=1, unique=True))
                chosen[question.header] = ", ".join(sorted(picked, key=labels.index))
            else:
                chosen[question.header] = draw(st.sampled_from(labels))
        return chosen

    votes = tuple(Vote(person=p, answers=answers(), at=WHEN) for p in people)
    policy = Policy(
        answerers=tuple(dict.fromkeys(answerers)),
        quorum=draw(st.integers(min_value=1, max_value=50)),
        timeout_answers=draw(st.none() | st.just(answers())),
    )
    return req.model_copy(
        update={
            "policy": policy,
            "votes": votes,
            "expires_at": draw(st.none() | st.just(WHEN)),
        }
    )


@settings(max_examples=60, deadline=None)
@given(approvals(), st.sampled_from(list(Status)), st.booleans())
def test_any_policy_and_tally_in_any_state_is_a_message_discord_accepts(
    req: Request, status: Status, by_timeout: bool
) -> None:
    if status is not Status.WAITING:
        winner = req.votes[0] if req.votes else None
        update: dict[str, Any] = {"status": status, "ended_at": WHEN}
        if status is Status.ANSWERED:
            update["answers"] = winner.answers if winner else req.policy.timeout_answers
            update["answered_by"] = None if by_timeout or winner is None else winner.person
        req = req.model_copy(update=update)
    message = payload(req)
    assert validate_message(message) is None
    assert count_components(message["components"]) <= 40
    assert sum(len(t) for t in texts_of(message)) <= 4000


def test_an_edit_shows_as_a_diff_block_and_a_long_one_says_what_it_hides() -> None:
    before = "".join(f"line {n}\n" for n in range(1, 200))
    old = "".join(f"line {n}\n" for n in range(50, 70))
    new = old.replace("line", "LINE ```")
    use = ToolUse(
        name="Edit",
        input={"file_path": "/repo/big.txt", "old_string": old, "new_string": new},
        cwd="/repo",
        file=FileText(path="/repo/big.txt", text=before),
    )
    asked = permission_questions({"tool_name": "Edit", "action": "edit big.txt"}, shown=True)
    message = payload(request(asked, context="c" * 500).model_copy(update={"tool": tool_view(use)}))
    assert validate_message(message) is None
    texts = [t["content"] for t in of_type(message, TEXT_DISPLAY)]
    assert sum(len(t) for t in texts) <= 4000
    [shown] = [t for t in texts if "**Edit big.txt**" in t]
    diff = shown.split("```diff\n", 1)[1].split("\n```", 1)[0].split("\n")
    assert diff[:5] == ["@@ -47,26 +47,26 @@", " line 47", " line 48", " line 49", "-line 50"]
    # The fence in the new text cannot close the block; the cut says how much is left.
    assert "+LINE `\u200b`` 50" in diff
    assert len(diff) == 30
    assert f"-# {1 + 26 + 20 - 30} more lines are not shown here" in shown
