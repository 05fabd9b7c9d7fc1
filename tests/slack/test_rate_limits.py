"""Slack's limit on editing messages (chat.update, Tier 3): a burst of answers on many
messages reaches every agent at once and shows in Slack as fast as Slack allows, never refused."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from askbridge.core.pace import BURST
from tests.conftest import DEPLOY, StartService
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import Mode, ask_body, start_bridge

PER_MINUTE = 600
"""Slack's Tier 3 is about 50 a minute; ten times a second keeps the test short."""
SLACK_BURST = 2 * BURST
"""Slack takes short bursts over its rate; askbridge's own burst stays well inside, so that
calls that left on time but arrive a little early or bunched are still taken."""
MESSAGES = SLACK_BURST + 10


@pytest.mark.serial
@pytest.mark.parametrize(("paced", "refused"), [(str(PER_MINUTE), False), ("0", True)])
async def test_a_burst_of_answers_keeps_under_slacks_edit_limit(
    slack: SlackEmulator,
    mode: Mode,
    start_service: StartService,
    http: aiohttp.ClientSession,
    paced: str,
    refused: bool,
) -> None:
    slack.limit_rate("chat.update", per_minute=PER_MINUTE, burst=SLACK_BURST)
    bridge = await start_bridge(
        slack, mode, start_service, http, ASKBRIDGE_SLACK_UPDATES_PER_MINUTE=paced
    )
    ids = [f"ask_burst_{number}" for number in range(MESSAGES)]
    messages = [await bridge.ask(ask_body(request_id, questions=[DEPLOY])) for request_id in ids]
    person = slack.person("U1")
    clicks = await asyncio.gather(*(person.click_button(m, "Approve") for m in messages))
    for click in clicks:
        click.assert_acked()

    outcomes = await asyncio.gather(*(bridge.outcome(request_id) for request_id in ids))
    assert [o["answers"] for o in outcomes] == [{"Deploy": "Approve"}] * MESSAGES
    finals = await asyncio.gather(
        *(
            slack.wait_for_update(
                m.channel, m.ts, lambda shown: not shown.has_interactive_elements, timeout=15
            )
            for m in messages
        )
    )
    assert all("Answered by <@U1>" in final.visible_text for final in finals)
    statuses = [call.status for call in slack.api_calls if call.method == "chat.update"]
    # Paced, every edit is taken the first time; unpaced, Slack refuses the ones over its limit.
    assert (429 in statuses) is refused, statuses
    assert statuses.count(200) == MESSAGES
