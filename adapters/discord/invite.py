"""The link that adds askbridge's bot to a server, asking for exactly what the bot needs."""

from __future__ import annotations

import discord

PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    send_messages_in_threads=True,
    read_message_history=True,
)
"""Exactly what the bot needs: see channels, post in them and in their threads, and find its
own messages again (editing its own messages needs nothing more)."""


def invite_url(application_id: int) -> str:
    # Only the bot scope: askbridge registers no slash commands (applications.commands).
    return discord.utils.oauth_url(application_id, permissions=PERMISSIONS, scopes=("bot",))
