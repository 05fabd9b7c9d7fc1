"""Which chat platforms are configured, and the hint for those that are not."""

from __future__ import annotations

from bots.runtime import PlatformRuntime
from bots.settings import Settings
from core.broker import Broker

HINTS = {
    "slack": "set SLACK_BOT_TOKEN, plus SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET "
    "(HTTP mode); see the README's 'Set up Slack'",
    "discord": "set DISCORD_BOT_TOKEN; see the README's 'Set up Discord'",
}


def platform_runtimes(settings: Settings, broker: Broker) -> list[PlatformRuntime]:
    """A runtime for every platform whose settings are present."""
    runtimes: list[PlatformRuntime] = []
    return runtimes
