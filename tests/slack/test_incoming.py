"""An interaction's form body, decoded by yarl, reads exactly as bolt's own parsing reads it:
for every payload Slack could send, and for bodies no one should send (or it is left to bolt)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlencode

from hypothesis import given, settings
from hypothesis import strategies as st
from slack_bolt.request.internals import parse_body

from askbridge.adapters.slack.incoming import FORM, interaction_payload
from tests.hostile import HOSTILE

texts = st.one_of(st.text(), st.sampled_from(HOSTILE), st.text(alphabet="%+&=;#?/ \n\\\"'2BFaz"))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500)
@given(st.dictionaries(texts, json_values, max_size=6), st.lists(st.tuples(texts, texts)))
def test_a_form_as_slack_sends_it_reads_as_bolt_reads_it(
    payload: dict[str, Any], others: list[tuple[str, str]]
) -> None:
    body = urlencode([*others, ("payload", json.dumps(payload, separators=(",", ":")))])
    found = interaction_payload(body, FORM)
    assert found is not None
    assert json.loads(found) == parse_body(body, FORM) == payload


PIECES = (
    *("payload", "=", "&", ";", "+", " ", "%", "%2", "%2B", "%26", "%3D", "%C3", "%A9", "%zz"),
    *("%F0%9F%98%80", "é", "😀", "x", "\n", "{", "#", "?", "/"),
    # Characters a form should not hold unescaped, and escapes of "%" itself.
    *("%%", "%25", "%ff", "%00", "\\", "|", "`", "'", '"', "<", "[", "~"),
)
fragments = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=500)
@given(fragments, fragments)
def test_any_form_body_reads_as_bolt_reads_it_or_is_left_to_bolt(before: str, after: str) -> None:
    raw = f"{before}payload={after}"
    found = interaction_payload(raw, FORM)
    if any(c in raw for c in "# \né😀") or raw.startswith("{"):
        assert found is None
        return
    values = [value for key, value in parse_qsl(raw, keep_blank_values=True) if key == "payload"]
    assert found == (values[-1] if values else None), (raw, found, values)


def test_bodies_that_are_not_an_interaction_form_are_left_to_bolt() -> None:
    assert interaction_payload('{"payload": 1}', FORM) is None
    assert interaction_payload("payload=%7B%7D", "application/json") is None
    assert interaction_payload("command=%2Fdeploy&text=payload", FORM) is None
    assert interaction_payload("payload=%7B%7D#x", FORM) is None
