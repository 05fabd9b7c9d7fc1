"""The pictures the docs show cannot go stale: what askbridge sends to Slack, Discord and Teams
now is what `make pictures` committed (docs/images/messages.json and teams-*.json)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.docs.pictures import capture
from tests.docs.previews import IMAGES, MESSAGES, TEAMS_CARDS, teams_card_path

STALE = "run make pictures: what askbridge sends changed since the pictures were made"


async def test_the_committed_messages_and_cards_are_what_askbridge_sends_now(
    tmp_path: Path,
) -> None:
    messages, cards = await capture(tmp_path)
    for surface, shown in messages.items():
        committed = json.loads(MESSAGES.read_text())[surface]
        assert set(shown) == set(committed), STALE
        for state, message in shown.items():
            assert message == committed[state], f"{STALE} ({surface} {state})"
    assert set(cards) == set(TEAMS_CARDS)
    for name, card in cards.items():
        assert card == json.loads(teams_card_path(name).read_text()), f"{STALE} (teams {name})"
    kept = {path.name for path in IMAGES.glob("teams-*.json")}
    assert kept == {teams_card_path(name).name for name in TEAMS_CARDS}
