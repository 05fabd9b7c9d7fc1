"""The Teams emulator refuses what Teams would not render: a version it does not know,
Action.Execute before 1.4, an input id given twice, too many actions, an oversized card, and
whatever the Adaptive Cards schema refuses (a wrong value type, a missing required property, an
unknown enum value or property), however deep in the card."""

from __future__ import annotations

from typing import Any

import pytest

from tests.emulators.teams.cards import MAX_CARD_BYTES, CardRefused, check_card


def card(version: str = "1.5", **fields: Any) -> dict[str, Any]:
    return {"type": "AdaptiveCard", "version": version, "body": [], **fields}


EXECUTE = {"type": "Action.Execute", "title": "Go", "verb": "go"}
CHOICE = {"type": "Input.ChoiceSet", "id": "q0", "choices": []}


def test_a_plain_card_passes() -> None:
    check_card(card(body=[CHOICE], actions=[EXECUTE]))


@pytest.mark.parametrize(
    ("refused", "why"),
    [
        (card("1.6"), "does not render"),
        (card("1.3", actions=[EXECUTE]), "needs card version 1.4"),
        (card(body=[CHOICE, CHOICE]), "given twice"),
        (card(actions=[EXECUTE] * 7), "actions in a row"),
        (card(body=[{"type": "Markdown", "text": "x"}]), "unknown element"),
        (card(body=[{"type": "RichTextBlock", "inlines": ["**x**"]}]), "RichTextBlock holds"),
        (card(body=[{"type": "TextBlock", "text": "x" * MAX_CARD_BYTES}]), "bytes"),
    ],
)
def test_what_teams_refuses_is_refused(refused: dict[str, Any], why: str) -> None:
    with pytest.raises(CardRefused, match=why):
        check_card(refused)


def test_teams_own_extension_passes() -> None:
    mention = {
        "type": "mention",
        "text": "<at>Ada</at>",
        "mentioned": {"id": "29:1", "name": "Ada"},
    }
    check_card(
        card(
            body=[{"type": "TextBlock", "text": "<at>Ada</at>, a question"}],
            msteams={"entities": [mention]},
        )
    )


def show_card(*body: dict[str, Any]) -> dict[str, Any]:
    return card(actions=[{"type": "Action.ShowCard", "title": "More", "card": card(body=[*body])}])


@pytest.mark.parametrize(
    ("refused", "why"),
    [
        (card(body=[{**CHOICE, "isMultiSelect": "yes"}]), '/isMultiSelect: "yes" is not of type'),
        (card(actions=[{**EXECUTE, "verb": 1}]), "/actions/0/verb: 1 is not of type"),
        (
            card(body=[{**CHOICE, "choices": [{"title": "Yes"}]}]),
            '/body/0/choices/0: "value" is a required property',
        ),
        (card(body=[{"type": "TextBlock"}]), '"text" is a required property'),
        (card(actions=[{"type": "Action.OpenUrl", "title": "Go"}]), '"url" is a required'),
        (
            card(body=[{"type": "TextBlock", "text": "x", "style": "loud"}]),
            '/body/0/style: "loud" is not one of',
        ),
        (card(actions=[{**EXECUTE, "style": "danger"}]), '"danger" is not one of'),
        (card(body=[{**CHOICE, "isMultiselect": True}]), "'isMultiselect' was unexpected"),
        (card(msteam={}), "'msteam' was unexpected"),
        (
            card(body=[{"type": "Container", "items": [{**CHOICE, "isRequired": "no"}]}]),
            "/body/0/items/0/isRequired",
        ),
        (show_card({"type": "TextBlock", "text": "x", "wrap": "yes"}), "/card/body/0/wrap"),
    ],
)
def test_what_the_schema_refuses_is_refused(refused: dict[str, Any], why: str) -> None:
    with pytest.raises(CardRefused, match="schema refuses") as refusal:
        check_card(refused)
    assert why in str(refusal.value)
