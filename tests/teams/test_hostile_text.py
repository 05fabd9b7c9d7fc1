"""Hostile text in every field and every name, in every state, with any tool call: the Teams
card Teams would render (`cards.check_card`), every text an agent or a person wrote shown as
written in plain runs, and no Markdown text on it but askbridge's own words. Texts far past
Teams' size limit are cut to fit it."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askbridge.adapters.teams.fit import MAX_CARD_BYTES, PREFILL_LEFT_OUT, sent_size
from askbridge.adapters.teams.mentions import MAX_MENTIONS, reminder_card, tag_text
from askbridge.adapters.teams.notes import note
from askbridge.adapters.teams.render import MAX_CHANGE_CHARS, VOTES, render
from askbridge.adapters.teams.surface import TeamsSurface
from askbridge.adapters.teams.text import MAX_RUN, when
from askbridge.core.answers import NOTE_HINT
from askbridge.core.ask import MAX_CONTEXT_CHARS
from askbridge.core.changes import CHANGE_ACTION
from askbridge.core.forms import (
    MAX_CHOICE_TITLE_CHARS,
    MAX_CHOICES,
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_TEXT_CHARS,
    MAX_TITLE_CHARS,
    Form,
    parse_form,
)
from askbridge.core.graphemes import cut_point
from askbridge.core.intents import Counted, Refusal, Refused
from askbridge.core.models import Person, Policy, Request, Status, Target
from askbridge.core.permissions import permission_questions
from askbridge.core.questions import MAX_OPTIONS, MAX_QUESTIONS, parse_questions
from askbridge.core.surface import form_fields_of
from askbridge.core.tool_view import Code, ToolUse, tool_view
from askbridge.core.view import (
    CANCEL_HINT,
    CANCEL_QUESTION,
    CANCEL_WARNING,
    Receipt,
    RequestView,
)
from tests.emulators.teams.cards import (
    card_inputs,
    check_card,
    markdown_texts,
    mentioned,
    plain_texts,
)
from tests.hostile import (
    FORM_EXAMPLES,
    SHOWN_AS_ONE,
    FormCase,
    at_most,
    form_cases,
    form_request,
    hostile_text,
    largest_form,
    requests,
    wide_text,
)

DYNAMIC_OWN = re.compile(
    r"and \d+ more|(The ends? of \d+ lines?( and \d+ more lines?)?|\d+ more lines?) (is|are) "
    r"not shown here"
)


def own_words(view: RequestView) -> set[str]:
    """Every Markdown text askbridge itself may put on the card of `view`: its words, and its
    times as date and time functions (the deadline's words with it)."""
    times = set()
    if view.deadline is not None and view.deadline_line is not None:
        before = view.deadline_line.partition("{answers}")[0]
        times.add("⏳ " + before.format(deadline=when(view.deadline)).rstrip())
    if view.ended_at is not None:
        times.add(when(view.ended_at))
    return times | {
        view.heading,
        view.votes_needed,
        VOTES,
        f"{view.how_to_answer} {CANCEL_HINT}",
        NOTE_HINT,
        CANCEL_QUESTION,
        CANCEL_WARNING,
        PREFILL_LEFT_OUT,
    }


def assert_inert(view: RequestView, card: dict[str, object]) -> None:
    check_card(card)
    own = own_words(view)
    for text in markdown_texts(card):
        assert text in own or DYNAMIC_OWN.fullmatch(text), text


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(requests(), hostile_text())
def test_every_card_is_inert_and_shows_texts_as_written(request: Request, said: str) -> None:
    view = RequestView.of(request)
    card = render(view)
    assert_inert(view, card)
    shown = "\n".join(plain_texts(card))
    for question in view.questions:
        assert question.header in shown
        if view.waiting:
            assert all(option.label in shown for option in question.options)
    refused = Refused(Refusal.MISSING_ANSWERS, view, missing=(said,))
    told = render(view, note(refused))
    assert_inert(view, told)
    assert said in "\n".join(plain_texts(told))


@settings(max_examples=10, deadline=None)
@given(requests(), st.integers(5_000, 40_000))
def test_a_card_past_teams_limit_is_cut_to_fit(request: Request, size: int) -> None:
    long = ("*x* 👩‍👩‍👧 " * size)[:size]
    questions = tuple(
        q.model_copy(
            update={
                "question": long,
                "options": tuple(o.model_copy(update={"description": long}) for o in q.options),
            }
        )
        for q in request.questions
    )
    view = RequestView.of(request.model_copy(update={"questions": questions, "context": long}))
    assert_inert(view, render(view))


@FORM_EXAMPLES
@given(form_cases())
def test_a_hostile_form_stays_plain_on_every_card(case: FormCase) -> None:
    """Every kind of field, hostile names, titles, descriptions, choices, defaults and values,
    in every state: the card with its inputs and defaults, the card after a refusal (what was
    typed kept, each reason under its field, the note above), and the ended card with the
    values given or who declined, each one Teams takes, with no mention and no Markdown of an
    agent's or a person's text."""
    view = RequestView.of(case.request)
    cards = [render(view)]
    refused = Refused(Refusal.BAD_VALUES, view, field_problems=case.problems, values=case.typed)
    told = note(refused)
    assert told is not None
    if view.waiting:
        cards.append(render(view, told, given=case.typed, problems=case.problems))
        votes = case.request.votes
        cards += [render(view, note(Counted(view, Receipt(v.answers, 1, 2)))) for v in votes]
    else:
        cards.append(render(view, note(Refused(Refusal.ALREADY_ENDED, view))))
    for card in cards:
        assert_inert(view, card)
        assert mentioned(card) == []
    shown = "\n".join(plain_texts(cards[0]))
    if len(json.dumps(cards[0])) < MAX_CARD_BYTES // 2:
        # Not cut to fit: every text of the form is there to read as written.
        assert case.form.message.strip() in shown
        for field, value in view.filled_in():
            assert value in shown, (field.title, value)
        if view.waiting and len(json.dumps(cards[1])) < MAX_CARD_BYTES // 2:
            assert told in plain_texts(cards[1])


def test_a_form_link_holding_what_a_uri_cannot_is_sent_percent_encoded() -> None:
    """Found by the property above: Teams refused the whole card of a URL-mode form whose
    link held `<` (an Action.OpenUrl takes a URI only). The button opens the same page, its
    address encoded as a browser sends it; the card shows the link as the agent gave it."""
    url = "https://e.example/<!channel>|%zz é#a#b"
    form = parse_form({"message": "Sign in", "url": url.replace(" ", "")})
    request = Request(
        request_id="form_link",
        questions=(),
        form=form,
        targets=(Target(platform="teams", channel="19:c"),),
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
    )
    card = render(RequestView.of(request))
    check_card(card)
    opened = [a for a in card["actions"] if a["type"] == "Action.OpenUrl"]
    assert [a["url"] for a in opened] == ["https://e.example/%3C!channel%3E%7C%25zz%C3%A9#a%23b"]
    assert url.replace(" ", "") in "\n".join(plain_texts(card))


def test_the_largest_form_teams_shows_fits_in_a_card() -> None:
    """As many fields as a Teams card is given, each as large as a form takes: the card keeps
    within Teams' size limit with every choice on it (a choice's title is not cut to fit)."""
    form = parse_form(largest_form(form_fields_of(TeamsSurface)))
    card = render(RequestView.of(form_request(form, "teams")))
    check_card(card)
    inputs = card_inputs(card).values()
    choices = [c["title"] for i in inputs if i["type"] == "Input.ChoiceSet" for c in i["choices"]]
    assert choices == [c.title for f in form.fields for c in f.choices]


ROCKET = "🚀"
"""A character JSON escapes to 12 bytes (`\\ud83d\\ude80`), as the connector sends it."""


def teams_request(**fields: Any) -> Request:
    return Request(
        request_id="r1",
        targets=(Target(platform="teams", channel="19:c"),),
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        **fields,
    )


def approval(command: str) -> Request:
    """A waiting Bash approval whose command people may change before allowing it."""
    asked = {"command": command}
    questions = permission_questions({"tool_name": "Bash"}, always=None, shown=True)
    return teams_request(
        questions=parse_questions(questions),
        tool=tool_view(ToolUse(name="Bash", input=asked), keep_input=True),
        policy=Policy(allow_changes=True),
    )


def choice_titles(card: dict[str, Any]) -> list[str]:
    inputs = card_inputs(card).values()
    return [c["title"] for i in inputs if i["type"] == "Input.ChoiceSet" for c in i["choices"]]


def left_out(card: dict[str, Any]) -> list[str]:
    """The ids of the inputs whose prefilled text the card says it left out."""
    bodies = [card["body"], *(a["card"]["body"] for a in card.get("actions", []) if "card" in a)]
    pairs = (pair for body in bodies for pair in pairwise(body))
    return [element["id"] for element, after in pairs if after.get("text") == PREFILL_LEFT_OUT]


def test_option_labels_of_wide_characters_are_cut_to_fit() -> None:
    """Four multi-select questions of four options, each label 150 emoji: the choices'
    titles are cut, between characters, each ending with an ellipsis; their values still
    name the options."""
    questions = parse_questions(
        [
            {
                "question": "Pick?",
                "header": f"h{q}",
                "multiSelect": True,
                "options": [{"label": f"{o}" + ROCKET * 150, "description": ""} for o in range(4)],
            }
            for q in range(4)
        ]
    )
    card = render(RequestView.of(teams_request(questions=questions)))
    check_card(card)
    titles = choice_titles(card)
    assert len(titles) == 16
    for o, title in enumerate(titles):
        assert title.startswith(f"{o % 4}{ROCKET}"), title
        assert title.endswith(f"{ROCKET}…"), title
    inputs = card_inputs(card).values()
    assert [c["value"] for i in inputs for c in i.get("choices", [])] == ["0", "1", "2", "3"] * 4


def test_a_change_too_long_for_the_card_is_not_offered() -> None:
    """2,300 emoji are 27 KB as the connector sends them: no field of the card could hold them
    whole, so Edit and allow is not offered (as Slack and Discord offer it only when their
    form holds the call), rather than offered with an empty field to type it all again in."""
    view = RequestView.of(approval("echo " + ROCKET * 2300))
    card = render(view)
    check_card(card)
    assert "changed" not in card_inputs(card)
    assert CHANGE_ACTION not in [action["title"] for action in card["actions"]]
    assert left_out(card) == []
    assert card["body"] == render(unchangeable(view))["body"]


def test_a_change_that_fits_stays_prefilled() -> None:
    command = "echo " + ROCKET * 1000
    card = render(RequestView.of(approval(command)))
    check_card(card)
    assert card_inputs(card)["changed"]["value"] == command
    assert left_out(card) == []


def wide_form() -> Form:
    choices = [{"const": f"c{c}", "title": ROCKET * 75} for c in range(25)]
    properties = {
        f"pick{i}": {"type": "string", "title": f"Pick {i}", "oneOf": choices} for i in range(2)
    }
    schema = {"type": "object", "properties": properties}
    return parse_form({"message": "Choose", "requested_schema": schema})


def test_form_choices_of_wide_characters_are_cut_to_fit() -> None:
    card = render(RequestView.of(teams_request(questions=(), form=wide_form())))
    check_card(card)
    titles = choice_titles(card)
    assert len(titles) == 50
    assert all(t.endswith(f"{ROCKET}…") and t.strip(ROCKET) == "…" for t in titles), titles[0]


def text_form(default: str | None = None) -> Form:
    text: dict[str, Any] = {"type": "string", "title": "Notes", "maxLength": 3000}
    if default is not None:
        text["default"] = default
    properties = {"count": {"type": "integer", "title": "Count"}, "notes": text}
    schema = {"type": "object", "properties": properties}
    return parse_form({"message": "Fill in", "requested_schema": schema})


def test_a_default_too_long_for_the_card_is_not_prefilled_and_the_card_says_so() -> None:
    card = render(RequestView.of(teams_request(questions=(), form=text_form(ROCKET * 2500))))
    check_card(card)
    assert "value" not in card_inputs(card)["f1"]
    assert left_out(card) == ["f1"]


def test_what_was_typed_too_long_for_the_card_is_not_kept_and_the_card_says_so() -> None:
    view = RequestView.of(teams_request(questions=(), form=text_form()))
    typed = {"count": "many", "notes": ROCKET * 2500}
    card = render(view, "Please check", given=typed, problems={"count": "Please write a number"})
    check_card(card)
    assert "value" not in card_inputs(card)["f1"]
    assert left_out(card) == ["f1"]
    kept = render(view, "Please check", given={**typed, "notes": ROCKET * 500})
    check_card(kept)
    assert card_inputs(kept)["f1"]["value"] == ROCKET * 500


LONG = 3 * MAX_RUN
"""Longer than any text a card shows whole, where core sets no limit."""
WIDE_EXAMPLES = settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def longest(draw: st.DrawFn, most: int) -> str:
    return at_most(draw(wide_text()), most, long=True)


def assert_cut_whole(shown: str, original: str) -> None:
    """`shown` is `original`, or its start cut after a whole character, with an ellipsis."""
    if shown != original:
        cut = shown.removesuffix("…")
        assert shown.endswith("…"), shown
        assert original.startswith(cut), (shown, original)
        assert cut_point(original, len(cut)) == len(cut), shown


def assert_fits_and_cut_whole(card: dict[str, Any], originals: list[str]) -> None:
    """The card is one Teams takes, and each text on it cut to fit is the start of one of
    `originals` (each text as asked) up to a whole character, with an ellipsis."""
    check_card(card)
    assert mentioned(card) == []
    for shown in plain_texts(card):
        if shown.endswith("…") and shown not in originals:
            cut = shown.removesuffix("…")
            whole = [o for o in originals if o.startswith(cut)]
            assert whole, shown
            assert_cut_whole(shown, whole[0])


def button_titles(card: dict[str, Any]) -> list[str]:
    return [a["title"] for e in card["body"] if e["type"] == "ActionSet" for a in e["actions"]]


@st.composite
def wide_asks(draw: st.DrawFn) -> Request:
    """As many questions and options as an ask takes (one question for a card answered with
    one click), every text as long as it takes and made of characters JSON escapes to many
    bytes, with every input a card may hold."""
    one = draw(st.booleans())
    questions = [
        {
            "question": longest(draw, LONG),
            "header": f"{draw(wide_text())[:10]}{q}",
            "multiSelect": not one and draw(st.booleans()),
            "options": [
                {"label": f"{o}{longest(draw, LONG)}", "description": longest(draw, LONG)}
                for o in range(MAX_OPTIONS)
            ],
        }
        for q in range(1 if one else MAX_QUESTIONS)
    ]
    policy = Policy(allow_other=draw(st.booleans()), allow_notes=draw(st.booleans()))
    context = longest(draw, MAX_CONTEXT_CHARS)
    return teams_request(questions=parse_questions(questions), policy=policy, context=context)


@WIDE_EXAMPLES
@given(wide_asks(), wide_text())
def test_every_card_of_the_widest_questions_fits(request: Request, said: str) -> None:
    view = RequestView.of(request)
    labels = [o.label for q in view.questions for o in q.options]
    told = note(Refused(Refusal.MISSING_ANSWERS, view))
    assert told is not None
    originals = [*labels, told, request.context or "", said]
    originals += [o.description for q in view.questions for o in q.options]
    originals += [q.question for q in view.questions]
    for card in (render(view), render(view, told)):
        assert_fits_and_cut_whole(card, originals)
        for title, label in zip(choice_titles(card) or button_titles(card), labels, strict=True):
            assert_cut_whole(title, label)
    answered = request.model_copy(
        update={
            "status": Status.ANSWERED,
            "answers": {q.header: q.options[0].label for q in view.questions},
            "answered_by": Person(platform="teams", id="aad-1", name=said),
            "ended_at": request.created_at,
        }
    )
    assert_fits_and_cut_whole(render(RequestView.of(answered)), originals)


@WIDE_EXAMPLES
@given(st.data())
def test_every_edit_and_allow_card_of_the_widest_command_fits(data: st.DataObject) -> None:
    """Edit and allow is on the card prefilled with the whole command, or not at all; and the
    call shown above it is cut no more than on a card without it."""
    size = data.draw(st.integers(MAX_CHANGE_CHARS // 2, MAX_CHANGE_CHARS))
    command = at_most(data.draw(wide_text()), size, long=True)
    view = RequestView.of(approval(command))
    card = render(view)
    assert view.tool is not None
    # The message shows a control character by its code point; the form holds it as asked.
    shown = [part.text for part in view.tool.parts if isinstance(part, Code)]
    assert_fits_and_cut_whole(card, [command, *shown, CHANGE_ACTION])
    inputs = card_inputs(card)
    offered = CHANGE_ACTION in [action["title"] for action in card["actions"]]
    assert offered == ("changed" in inputs)
    assert not offered or inputs["changed"]["value"] == command
    assert left_out(card) == []
    assert card["body"] == render(unchangeable(view))["body"]


def unchangeable(view: RequestView) -> RequestView:
    """`view`'s request as an asker that takes no changes asks it."""
    policy = view.request.policy.model_copy(update={"allow_changes": False})
    return RequestView.of(view.request.model_copy(update={"policy": policy}))


@st.composite
def wide_forms(draw: st.DrawFn) -> tuple[Form, dict[str, object]]:
    """A form of as many fields as Teams shows, every text as long as a form takes and made
    of characters JSON escapes to many bytes, each text field with a default; and what a
    person typed into each field, as long."""
    kinds = st.sampled_from(["text", "choice", "choices", "boolean", "integer"])
    properties: dict[str, Any] = {}
    fields = form_fields_of(TeamsSurface)
    for index, kind in enumerate(draw(st.lists(kinds, min_size=fields, max_size=fields))):
        choices = [
            {"const": f"c{c}", "title": f"{c}{longest(draw, MAX_CHOICE_TITLE_CHARS - 2)}"}
            for c in range(MAX_CHOICES)
        ]
        kinds_of: dict[str, dict[str, Any]] = {
            "text": {"type": "string", "maxLength": MAX_TEXT_CHARS},
            "choice": {"type": "string", "oneOf": choices},
            "choices": {"type": "array", "items": {"type": "string", "oneOf": choices}},
            "boolean": {"type": "boolean"},
            "integer": {"type": "integer"},
        }
        prop = kinds_of[kind]
        if kind == "text":
            prop["default"] = longest(draw, MAX_TEXT_CHARS)
        prop["title"] = longest(draw, MAX_TITLE_CHARS)
        prop["description"] = longest(draw, MAX_DESCRIPTION_CHARS)
        properties[f"f{index}"] = prop
    schema = {"type": "object", "properties": properties}
    form = parse_form({"message": longest(draw, MAX_MESSAGE_CHARS), "requested_schema": schema})
    typed: dict[str, object] = {name: longest(draw, MAX_TEXT_CHARS) for name in properties}
    return form, typed


@WIDE_EXAMPLES
@given(wide_forms())
def test_every_card_of_the_widest_form_fits(case: tuple[Form, dict[str, object]]) -> None:
    form, typed = case
    view = RequestView.of(teams_request(questions=(), form=form))
    titles = [c.title for f in form.fields for c in f.choices]
    problems = {name: "Please write it again" for name in typed}
    refused = Refused(Refusal.BAD_VALUES, view, field_problems=problems, values=typed)
    told = note(refused)
    assert told is not None
    originals = [*titles, form.message.strip(), told, *problems.values()]
    originals += [t for f in form.fields for t in (f.title, f.description.strip())]
    for card in (render(view), render(view, told, given=typed, problems=problems)):
        assert_fits_and_cut_whole(card, originals)
        for title, whole in zip(choice_titles(card), titles, strict=True):
            assert_cut_whole(title, whole)
        for name, element in card_inputs(card).items():
            if element["type"] == "Input.Text" and "value" not in element:
                assert name in left_out(card)


def test_a_reminder_of_the_longest_default_answers_fits() -> None:
    """The deadline's answers, joined, beside twenty people named in emoji: they are cut to
    fit, beneath the nudge and the deadline, and every mention stays on the card."""
    labels = [f"{o}" + ROCKET * LONG for o in range(MAX_OPTIONS)]
    options = [{"label": label, "description": ""} for label in labels]
    questions = parse_questions(
        [{"question": "Pick?", "header": f"h{q}", "options": options} for q in range(4)]
    )
    names = {f"aad-{n}": ROCKET * 20 for n in range(MAX_MENTIONS)}
    policy = Policy(
        answerers=tuple(f"teams:{user}" for user in names),
        timeout_answers={q.header: labels[0] for q in questions},
    )
    expires = datetime(2030, 1, 2, tzinfo=UTC)
    view = RequestView.of(teams_request(questions=questions, policy=policy, expires_at=expires))
    card = reminder_card(view, names)
    check_card(card)
    assert sorted(mentioned(card)) == sorted(names)
    said = [run["text"] for e in card["body"] for run in e.get("inlines", [])]
    assert len(said) == 2
    assert said[1].endswith(f"{ROCKET}…")


NAME_PIECES = st.sampled_from([ROCKET, "漢", "a", " ", "<", ">", "*", "_", "\\", *SHOWN_AS_ONE])


LONG_NAME = st.lists(NAME_PIECES, min_size=100, max_size=300).map("".join)
"""A name of 100 to 300 characters as shown, of up to 12 bytes each as sent."""


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(LONG_NAME, min_size=1, max_size=MAX_MENTIONS), st.booleans())
def test_a_reminder_mentions_as_many_whole_names_as_fit(names_: list[str], long: bool) -> None:
    """Up to twenty answerers named in characters of up to 12 bytes as sent, beside long default
    answers or not: the card fits, its mentions are the first answerers', each tag whole and
    matching its entity exactly, and "and N more" counts the rest."""
    names = {f"aad-{n}": name for n, name in enumerate(names_)}
    labels = [f"{o}" + ROCKET * (LONG if long else 1) for o in range(MAX_OPTIONS)]
    options = [{"label": label, "description": ""} for label in labels]
    questions = parse_questions([{"question": "Pick?", "header": "h", "options": options}])
    policy = Policy(
        answerers=tuple(f"teams:{user}" for user in names),
        timeout_answers={"h": labels[0]},
    )
    expires = datetime(2030, 1, 2, tzinfo=UTC)
    view = RequestView.of(teams_request(questions=questions, policy=policy, expires_at=expires))
    card = reminder_card(view, names)
    check_card(card)
    assert sent_size(card) <= MAX_CARD_BYTES
    entities = card.get("msteams", {}).get("entities", [])
    kept = list(names)[: len(entities)]
    assert mentioned(card) == kept
    assert [e["text"] for e in entities] == [tag_text(names[user]) for user in kept]
    assert [e["mentioned"]["name"] for e in entities] == [names[user] for user in kept]
    lines = [t for t in markdown_texts(card) if t.startswith("⏰")]
    if entities:
        more = len(names) - len(entities)
        tags = " ".join(e["text"] for e in entities)
        assert lines == [f"⏰ {tags} and {more} more" if more else f"⏰ {tags}"]
    else:
        assert lines == []
