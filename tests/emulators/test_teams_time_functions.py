"""The Teams emulator reads Adaptive Cards' date and time functions as Teams does: a well-formed
one is shown in the reader's zone, in a TextBlock as in a TextRun; a card holding one Teams
would show as written is refused."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from tests.emulators.teams.cards import CardRefused, check_card, plain_texts

AT = "2030-01-01T01:00:00Z"


def card(text: str) -> dict[str, object]:
    return {
        "type": "AdaptiveCard",
        "version": "1.5",
        "body": [
            {"type": "TextBlock", "text": text, "wrap": True},
            {"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": text}]},
        ],
    }


def test_a_function_is_shown_in_the_readers_zone() -> None:
    shown = card(f"by {{{{DATE({AT}, SHORT)}}}} {{{{TIME({AT})}}}} ({{{{DATE({AT}, COMPACT)}}}})")
    check_card(shown)
    assert list(plain_texts(shown, ZoneInfo("Asia/Tokyo"))) == 2 * [
        "by Tue, Jan 1, 2030 10:00 AM (1/1/2030)"
    ]
    assert list(plain_texts(shown)) == 2 * ["by Tue, Jan 1, 2030 1:00 AM (1/1/2030)"]


@pytest.mark.parametrize(
    "written",
    [
        "{{DATE(2030-13-01T01:00:00Z, SHORT)}}",
        "{{DATE(2030-01-01T01:00Z, SHORT)}}",
        "{{DATE(2030-01-01T01:00:00Z,  SHORT)}}",
        "{{DATE(2030-01-01T01:00:00Z, short)}}",
        "{{TIME(2030-01-01T01:00:00Z, SHORT)}}",
    ],
)
def test_a_function_teams_would_show_as_written_is_refused(written: str) -> None:
    with pytest.raises(CardRefused, match="as written"):
        check_card(card(written))


def test_braces_that_start_no_function_are_text() -> None:
    written = "{{ DATE(2030-01-01T01:00:00Z) }} {\u2060{DATE(2030-13-01T01:00:00Z)}}"
    check_card(card(written))
    assert list(plain_texts(card(written))) == [written, written]
