"""Answering in Discord: one message per request, buttons and selects as DynamicItems."""

from askbridge.adapters.discord.invite import invite_url
from askbridge.adapters.discord.runtime import DiscordRuntime
from askbridge.adapters.discord.surface import DiscordSurface

__all__ = ["DiscordRuntime", "DiscordSurface", "invite_url"]
