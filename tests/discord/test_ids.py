"""The custom_id codec: one format, read back by discord.py's DynamicItem templates."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askbridge.adapters.discord.ids import (
    BUTTON_TEMPLATE,
    FIELD_TEMPLATE,
    FORM_TEMPLATE,
    MAX_CUSTOM_ID,
    SELECT_TEMPLATE,
    ActionButton,
    BadCustomId,
    ChoiceSelect,
    CustomId,
    unpack,
)
from askbridge.core.broker import REQUEST_ID_PATTERN
from askbridge.core.intents import Action

request_ids = st.from_regex(REQUEST_ID_PATTERN, fullmatch=True)
indices = st.integers(min_value=0, max_value=3)


def every_kind(request_id: str, question: int, option: int) -> list[CustomId]:
    return [
        CustomId.pick(request_id, question, option),
        CustomId.choose(request_id, question),
        CustomId.submit(request_id),
        CustomId.cancel(request_id),
        CustomId.words(request_id),
        CustomId.form(request_id),
        CustomId.typed(request_id, question),
        CustomId.note(request_id),
        CustomId.change(request_id),
        CustomId.changed(request_id),
        CustomId.fill(request_id),
        CustomId.field(request_id, question),
        CustomId.decline(request_id),
    ]


TEMPLATE_OF = {
    Action.PICK: BUTTON_TEMPLATE,
    Action.SUBMIT: BUTTON_TEMPLATE,
    Action.CANCEL: BUTTON_TEMPLATE,
    Action.WORDS: BUTTON_TEMPLATE,
    Action.CHOOSE_ANY: SELECT_TEMPLATE,
    Action.FORM: FORM_TEMPLATE,
    Action.TYPED: FIELD_TEMPLATE,
    Action.NOTE: FIELD_TEMPLATE,
    Action.CHANGE: BUTTON_TEMPLATE,
    Action.CHANGED: FIELD_TEMPLATE,
    Action.FILL: BUTTON_TEMPLATE,
    Action.FIELD: FIELD_TEMPLATE,
    Action.DECLINE: BUTTON_TEMPLATE,
}


@given(request_ids, indices, indices)
def test_every_id_round_trips_within_discords_limit(
    request_id: str, question: int, option: int
) -> None:
    for component in every_kind(request_id, question, option):
        custom_id = component.pack()
        assert len(custom_id) <= MAX_CUSTOM_ID
        assert unpack(custom_id) == component


@given(request_ids, indices, indices)
def test_every_kind_matches_exactly_one_template(
    request_id: str, question: int, option: int
) -> None:
    """discord.py dispatches a click to every template that matches; exactly one must. Form
    submissions and their fields are matched by askbridge itself, apart from clicks."""
    for component in every_kind(request_id, question, option):
        custom_id = component.pack()
        matching = {t for t in set(TEMPLATE_OF.values()) if re.fullmatch(t, custom_id)}
        assert matching == {TEMPLATE_OF[component.action]}, custom_id


def test_the_dynamic_items_use_the_codecs_templates() -> None:
    assert ActionButton.__discord_ui_compiled_template__.pattern == BUTTON_TEMPLATE
    assert ChoiceSelect.__discord_ui_compiled_template__.pattern == SELECT_TEMPLATE


def test_the_format() -> None:
    assert CustomId.pick("ask_db", 0, 1).pack() == "ab:ask_db:o:0:1"
    assert CustomId.choose("ask_db", 1).pack() == "ab:ask_db:m:1"
    assert CustomId.submit("ask.1-x").pack() == "ab:ask.1-x:s"
    assert CustomId.cancel("ask_db").pack() == "ab:ask_db:c"
    assert CustomId.words("ask_db").pack() == "ab:ask_db:w"
    assert CustomId.form("ask_db").pack() == "ab:ask_db:f"
    assert CustomId.typed("ask_db", 3).pack() == "ab:ask_db:t:3"
    assert CustomId.note("ask_db").pack() == "ab:ask_db:n"
    assert CustomId.fill("ask_db").pack() == "ab:ask_db:i"
    assert CustomId.field("ask_db", 4).pack() == "ab:ask_db:v:4"
    assert CustomId.decline("ask_db").pack() == "ab:ask_db:d"
    longest = CustomId.pick("x" * 64, 3, 3).pack()
    assert len(longest) == 73


@pytest.mark.parametrize(
    "custom_id",
    [
        "ab:ask db:s",  # a space is not allowed in a request id
        "qb:ask_db:s",
        "ab:ask_db:o:1",  # an option button names its option
        "ab:ask_db:m",  # a select names its question
        "ab:ask_db:t",  # a question's field names its question
        "ab:ask_db:f:1",  # the form names no question
        "ab:ask_db:x",
        "ab:" + "x" * 65 + ":s",
        "",
    ],
)
def test_ids_askbridge_did_not_make_are_refused_quoting_them(custom_id: str) -> None:
    with pytest.raises(BadCustomId, match=re.escape(repr(custom_id))):
        unpack(custom_id)


def test_ids_that_cannot_be_made_are_refused() -> None:
    with pytest.raises(BadCustomId, match="cannot make a custom_id"):
        CustomId.pick("ask_db", 100, 0).pack()
    with pytest.raises(BadCustomId, match="cannot make a custom_id"):
        CustomId.submit("has:colon").pack()
