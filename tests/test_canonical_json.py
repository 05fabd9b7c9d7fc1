"""The audit chain's canonical JSON is RFC 8785's byte for byte, on its quick path too."""

from __future__ import annotations

import json
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.core.audit_log import canonical, plain

# Text that reaches the edges: control characters, quotes and backslashes, the last BMP
# characters (which JCS orders after astral ones) and astral characters, in keys and values.
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\x00", "\x1f", "\x7f", '"', "\\", "\u2028", "\ue000", "\uffff"]),
        st.sampled_from(["\U0001f600", "\U00010000"]),
    ),
    max_size=8,
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=20,
)


def jcs(value: Any) -> bytes | type[BaseException]:
    try:
        return rfc8785.dumps(value)
    except ValueError as error:
        return type(error)


def ours(value: Any) -> bytes | type[BaseException]:
    try:
        return canonical(value)
    except ValueError as error:
        return type(error)


@settings(max_examples=1000)
@given(JSON)
def test_canonical_json_is_rfc_8785_for_any_value(value: Any) -> None:
    assert ours(value) == jcs(value)


@pytest.mark.parametrize(
    "value",
    [
        {"\uffff": 1, "\U0001f600": 2},  # code point order and UTF-16 order disagree
        {"after_s": 60.0},  # JCS writes 60
        {"big": 2**53},  # beyond what JCS holds
        {"lone": "\ud800"},  # not Unicode
        {"ok": [1, "a\nb", None, True, {"é": "\x01"}]},
    ],
)
def test_the_edges_of_the_quick_path_agree_with_rfc_8785(value: Any) -> None:
    assert ours(value) == jcs(value)


@settings(max_examples=1000)
@given(JSON)
def test_a_plain_value_hashes_as_it_reads_back(value: Any) -> None:
    """An event's data is hashed as it reads back from its stored JSON; a value `plain` says
    reads back the same is hashed as it is, without the round trip."""
    if plain(value):
        assert ours(json.loads(json.dumps(value))) == ours(value)


@pytest.mark.parametrize(
    "value", [{"after_s": 60.0}, {"big": 2**53}, {1: "a"}, ("a", 1.5), {"\U0001f600": 1}]
)
def test_a_value_that_may_read_back_otherwise_is_not_plain(value: Any) -> None:
    assert not plain(value)
