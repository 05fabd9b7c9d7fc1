"""What Slack answers to an update or a reminder, as the broker's retries read it: when to try
again (429), Slack busy or down (an outage, which the updates waiting on Slack wait out), or
Slack refusing that one message (`MessageRefused`: Slack is up)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from askbridge.adapters.slack.surface import SlackSurface
from askbridge.core.errors import MessageRefused, RetryLater
from askbridge.core.models import MessageRef, Request, Target
from askbridge.core.questions import parse_questions
from tests.conftest import DEPLOY
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL


@pytest.fixture
def surface(slack: SlackEmulator) -> SlackSurface:
    # No retry handlers: each answer of Slack's reaches the surface as it is.
    return SlackSurface(AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url))


def deploy() -> Request:
    return Request(
        request_id="ask_r",
        questions=parse_questions([DEPLOY]),
        targets=(Target(platform="slack", channel=CHANNEL),),
        created_at=datetime.now(UTC),
    )


async def test_slack_refusing_the_message_is_told_apart_from_slack_being_down(
    slack: SlackEmulator, surface: SlackSurface
) -> None:
    request = deploy()
    message = await surface.post(request, request.targets[0])

    slack.fail_next("chat.update", 503)
    with pytest.raises(SlackApiError) as down:
        await surface.update(request, message)
    assert down.value.response.status_code == 503
    slack.fail_next("chat.update", 200, error="internal_error")
    with pytest.raises(SlackApiError):
        await surface.update(request, message)
    slack.fail_next("chat.update", 429, retry_after=7)
    with pytest.raises(RetryLater) as later:
        await surface.update(request, message)
    assert later.value.after_s == 7

    slack.fail_next("chat.update", 200, error="cant_update_message")
    with pytest.raises(MessageRefused, match="cant_update_message"):
        await surface.update(request, message)
    gone = message.model_copy(update={"message_id": "1.000001"})
    with pytest.raises(MessageRefused, match="message_not_found"):
        await surface.update(request, gone)
    elsewhere = MessageRef(platform="slack", channel="C0NOWHERE", message_id=message.message_id)
    with pytest.raises(MessageRefused, match="channel_not_found"):
        await surface.remind(request, elsewhere)
