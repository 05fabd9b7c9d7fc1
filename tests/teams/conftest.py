"""A Teams emulator with a conversation and two people, and askbridge pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from askbridge.bots.service import Service
from tests.conftest import StartService
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.emulator import Person

ALICE = Person("aad-alice", "Alice")
BOB = Person("aad-bob", "Bob")


@pytest.fixture
async def teams(tmp_path: Path) -> AsyncIterator[TeamsEmulator]:
    async with TeamsEmulator(tmp_path) as emulator:
        yield emulator


@pytest.fixture
def trusted(teams: TeamsEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """MSAL (through requests) trusts the emulated authority's certificate, as it would a
    real authority's through the system's."""
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(teams.cert))


@pytest.fixture
async def bridge(teams: TeamsEmulator, trusted: None, start_service: StartService) -> Service:
    return await start_service(**teams.settings())


def actions(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every Action.Execute on a card, by title (those behind a ShowCard too)."""
    found: dict[str, dict[str, Any]] = {}
    for element in card.get("body", []):
        for action in element.get("actions", []):
            found[action["title"]] = action
    for action in card.get("actions", []):
        if action["type"] == "Action.ShowCard":
            found |= actions(action["card"])
        else:
            found[action["title"]] = action
    return found
