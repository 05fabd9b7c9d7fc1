"""What the Bot Connector answers to a card's update, as the broker's retries read it: when to
try again (429), Teams busy or down (an outage, which the updates waiting on Teams wait out),
or Teams refusing that one card (`MessageRefused`: Teams is up)."""

from __future__ import annotations

from datetime import UTC, datetime

import aiohttp
import pytest

from askbridge.bots.service import Service
from askbridge.core.errors import MessageRefused, RetryLater
from askbridge.core.models import Request, Target
from askbridge.core.questions import parse_questions
from tests.conftest import DEPLOY
from tests.emulators.teams import TeamsEmulator
from tests.teams.conftest import ALICE


async def test_teams_refusing_the_card_is_told_apart_from_teams_being_down(
    teams: TeamsEmulator, bridge: Service
) -> None:
    surface = next(r.surface for r in bridge.runtimes if r.surface.platform == "teams")
    conversation = teams.add_conversation(ALICE)
    request = Request(
        request_id="ask_r",
        questions=parse_questions([DEPLOY]),
        targets=(Target(platform="teams", channel=conversation),),
        created_at=datetime.now(UTC),
    )
    message = await surface.post(request, request.targets[0])

    teams.updates_to_fail.append((503, "ServiceUnavailable"))
    with pytest.raises(aiohttp.ClientResponseError) as down:
        await surface.update(request, message)
    assert down.value.status == 503
    teams.updates_to_refuse.append(7)
    with pytest.raises(RetryLater) as later:
        await surface.update(request, message)
    assert later.value.after_s == 7

    teams.updates_to_fail.append((403, "BotNotInConversationRoster"))
    with pytest.raises(MessageRefused, match="403"):
        await surface.update(request, message)
    assert teams.update_statuses == [503, 429, 403]
