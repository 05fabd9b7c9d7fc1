"""Answering in Discord: one message per request, buttons and selects as DynamicItems."""

from adapters.discord.runtime import DiscordRuntime, invite_url
from adapters.discord.surface import DiscordSurface

__all__ = ["DiscordRuntime", "DiscordSurface", "invite_url"]
