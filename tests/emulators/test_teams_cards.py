"""The Teams emulator refuses what Teams would not render: a version it does not know,
Action.Execute before 1.4, an input id given twice, too many actions, an oversized card."""

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
