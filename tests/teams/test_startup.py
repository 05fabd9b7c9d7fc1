"""Teams at start-up and in `/readyz`: the app's credentials are tried at once, and a wrong
password fails start-up naming the settings to fix."""

from __future__ import annotations

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.errors import StartupError
from tests.conftest import StartService
from tests.emulators.teams import TeamsEmulator


async def test_readyz_reports_teams(
    teams: TeamsEmulator, bridge: Service, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{bridge.url}/readyz") as response:
        parts = (await response.json())["parts"]
    assert parts["teams"]["ready"] is True
    assert teams.app_id in parts["teams"]["detail"]


async def test_a_wrong_password_fails_startup_naming_the_settings(
    teams: TeamsEmulator, trusted: None, start_service: StartService
) -> None:
    settings = {**teams.settings(), "TEAMS_APP_PASSWORD": "not-the-password"}
    with pytest.raises(StartupError, match="TEAMS_APP_ID and TEAMS_APP_PASSWORD") as refused:
        await start_service(**settings)
    assert "AADSTS7000215" in str(refused.value)
    assert "not-the-password" not in str(refused.value)
    assert teams.token_requests == 1
