"""The id codecs: everything a click needs in its action_id (at most 255 characters), everything
a form's submission needs in its private_metadata (at most 3000), errors that say why."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from askbridge.adapters.slack.ids import (
    ACTIONS,
    ActionId,
    BadActionId,
    BadFormMetadata,
    FormMetadata,
)
from askbridge.core.intents import Action

request_ids = st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True)
indices = st.integers(min_value=0, max_value=3)


@st.composite
def action_ids(draw: st.DrawFn) -> ActionId:
    kind = draw(st.sampled_from(ACTIONS))
    request_id = draw(request_ids)
    if kind is Action.PICK:
        return ActionId(request_id, kind, draw(indices), draw(indices))
    if kind in (Action.CHOOSE_ONE, Action.CHOOSE_ANY):
        return ActionId(request_id, kind, draw(indices))
    return ActionId(request_id, kind)


@given(action_ids())
def test_pack_and_unpack_round_trip(action: ActionId) -> None:
    packed = action.pack()
    assert packed.startswith("ab|")
    assert len(packed) <= 255
    assert ActionId.unpack(packed) == action


def test_the_format_is_stable() -> None:
    # Messages already posted carry these; changing the format would orphan them.
    assert ActionId("ask_1", Action.PICK, 0, 2).pack() == "ab|ask_1|pick|0|2"
    assert ActionId("ask_1", Action.CHOOSE_ANY, 1).pack() == "ab|ask_1|check|1"
    assert ActionId("ask_1", Action.SUBMIT).pack() == "ab|ask_1|submit"
    assert ActionId("ask_1", Action.WORDS).pack() == "ab|ask_1|other"
    assert ActionId("ask_1", Action.ADD_NOTE).pack() == "ab|ask_1|note"
    assert ActionId("ask_1", Action.FILL).pack() == "ab|ask_1|fill"
    assert ActionId("ask_1", Action.DECLINE).pack() == "ab|ask_1|decline"
    assert ActionId("ask_1", Action.PICK, 0, 2).choice() == (0, 2)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("approve", "not an askbridge action_id: 'approve'"),
        ("ab|ask_1", "not an askbridge action_id: 'ab|ask_1'"),
        ("xx|ask_1|submit", "not an askbridge action_id: 'xx|ask_1|submit'"),
        ("ab|ask_1|vote|0", "unknown kind 'vote' in action_id 'ab|ask_1|vote|0'"),
        ("ab|ask_1|pick|0", "takes 2 index(es), got 'ab|ask_1|pick|0'"),
        ("ab|ask_1|radio|x", "takes 1 index(es), got 'ab|ask_1|radio|x'"),
        ("ab|ask_1|submit|0", "takes 0 index(es), got 'ab|ask_1|submit|0'"),
        ("ab||submit", "bad action_id 'ab||submit': request_id must be non-empty"),
        ("ab|ask_1|radio|٣", "takes 1 index(es), got 'ab|ask_1|radio|٣'"),
    ],
)
def test_bad_values_are_refused_with_the_value_quoted(value: str, fragment: str) -> None:
    with pytest.raises(BadActionId) as error:
        ActionId.unpack(value)
    assert fragment in str(error.value)


def test_what_cannot_be_packed_is_refused() -> None:
    with pytest.raises(BadActionId, match="free of '\\|', got 'a\\|b'"):
        ActionId("a|b", Action.SUBMIT)
    with pytest.raises(BadActionId, match="'pick' action_id takes 2"):
        ActionId("ask_1", Action.PICK, 0)
    with pytest.raises(BadActionId, match="must not be negative"):
        ActionId("ask_1", Action.CHOOSE_ONE, -1)
    with pytest.raises(BadActionId, match="300 characters; Slack allows 255"):
        ActionId("r" * 290, Action.SUBMIT).pack()
    with pytest.raises(BadActionId, match="names no option"):
        ActionId("ask_1", Action.SUBMIT).choice()


claims = st.fixed_dictionaries(
    {},
    optional={
        "team_id": st.from_regex(r"T[A-Z0-9]{1,10}", fullmatch=True),
        "app_id": st.from_regex(r"A[A-Z0-9]{1,10}", fullmatch=True),
        "thread_ts": st.from_regex(r"\d{10}\.\d{6}", fullmatch=True),
    },
)


@given(
    request_ids,
    st.from_regex(r"[CDG][A-Z0-9]{1,12}", fullmatch=True),
    st.from_regex(r"\d{10}\.\d{6}", fullmatch=True),
    claims,
)
def test_form_metadata_round_trips(
    request_id: str, channel: str, ts: str, claimed: dict[str, str]
) -> None:
    metadata = FormMetadata(request_id, channel, ts, claimed)
    packed = metadata.pack()
    assert len(packed) <= 3000
    assert FormMetadata.unpack(packed) == metadata


def test_form_metadata_format_is_stable() -> None:
    # Forms left open across a restart or an upgrade carry these.
    metadata = FormMetadata("ask_1", "C1", "1700000000.000100", {"team_id": "T1", "app_id": "A1"})
    assert metadata.pack() == (
        '{"v":1,"r":"ask_1","c":"C1","m":"1700000000.000100","t":"T1","a":"A1"}'
    )


@pytest.mark.parametrize(
    "value",
    [None, "", "req-1", "[1]", '{"v":2,"r":"a","c":"C1","m":"1.2"}', '{"v":1,"r":"a","c":"C1"}'],
)
def test_foreign_form_metadata_is_refused_with_the_value_quoted(value: str | None) -> None:
    with pytest.raises(BadFormMetadata) as error:
        FormMetadata.unpack(value)
    assert repr(value)[:20] in str(error.value)


def test_form_metadata_past_slacks_limit_is_refused() -> None:
    with pytest.raises(BadFormMetadata, match="Slack allows 3000"):
        FormMetadata("ask_1", "C1", "1.2", {"thread_ts": "9" * 3000}).pack()
