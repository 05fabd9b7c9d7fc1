"""Which chat platforms are configured, and the hint for those that are not."""

from __future__ import annotations

from pydantic import SecretStr

from askbridge.bots.settings import Settings
from askbridge.core.broker import Broker
from askbridge.core.election import seat_for
from askbridge.core.metrics import Metrics
from askbridge.core.surface import PlatformRuntime

HINTS = {
    "slack": "set SLACK_BOT_TOKEN, plus SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET "
    "(HTTP mode); see the README's 'Set up Slack'",
    "discord": "set DISCORD_BOT_TOKEN; see the README's 'Set up Discord'",
}


def platform_runtimes(
    settings: Settings, broker: Broker, metrics: Metrics
) -> list[PlatformRuntime]:
    """A runtime for every platform whose settings are present. Each platform's SDK is
    imported only when it is configured: discord.py alone takes a tenth of a second."""
    runtimes: list[PlatformRuntime] = []
    if settings.slack_bot_token is not None:
        from askbridge.adapters.slack import SlackConfig, SlackRuntime

        slack = SlackConfig(
            bot_token=settings.slack_bot_token.get_secret_value(),
            app_token=_secret(settings.slack_app_token),
            signing_secret=_secret(settings.slack_signing_secret),
            api_url=settings.slack_api_url,
            updates_per_minute=settings.slack_updates_per_minute or None,
        )
        runtimes.append(SlackRuntime(broker, slack, metrics))
    if settings.discord_bot_token is not None:
        from askbridge.adapters.discord import DiscordRuntime

        runtimes.append(
            DiscordRuntime(
                broker,
                token=settings.discord_bot_token.get_secret_value(),
                api_url=settings.discord_api_url,
                gateway_url=settings.discord_gateway_url,
                public_key=settings.discord_public_key,
                metrics=metrics,
                seat=seat_for(settings.database_url, "discord-gateway"),
                election_check_s=settings.election_check_s,
            )
        )
    return runtimes


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None
