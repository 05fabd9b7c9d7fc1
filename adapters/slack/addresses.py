"""Where a Slack message can go: a channel, a member's DM or a thread, by ID."""

from __future__ import annotations

import re

from askbridge.core.errors import UnknownTarget
from askbridge.core.models import Target

CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]+")
MEMBER_ID = re.compile(r"[UW][A-Z0-9]+")
THREAD_TS = re.compile(r"\d+\.\d+")
LINK_TS = re.compile(r"p(\d{10})(\d{6})")
EXAMPLES = (
    "slack:C0123456789 (a channel), slack:U0123456789 (a DM with that member) or "
    "slack:C0123456789/1700000000.000100 (a thread)"
)


def check_target(target: Target) -> None:
    """Refuse a target that cannot name a Slack conversation, saying what would."""
    channel, shown = target.channel, str(target)
    if not channel:
        raise UnknownTarget(f"target {shown!r} names no Slack channel; use {EXAMPLES}")
    if channel.startswith("@"):
        raise UnknownTarget(
            f"target {shown!r}: use the member ID, not the name (in Slack: open their "
            "profile, ⋮ → Copy member ID, e.g. U0123456789)"
        )
    if channel.startswith("#") or channel.islower():
        raise UnknownTarget(
            f"target {shown!r}: use the channel's ID, not its name (in Slack: click the "
            "channel name; the ID is at the bottom of About, e.g. C0123456789)"
        )
    if not (CHANNEL_ID.fullmatch(channel) or MEMBER_ID.fullmatch(channel)):
        raise UnknownTarget(
            f"target {shown!r}: {channel!r} is not a Slack channel ID (C…, G…, D…) or "
            f"member ID (U…, W…); use {EXAMPLES}"
        )
    thread = target.thread
    if thread is not None and not THREAD_TS.fullmatch(thread):
        link = LINK_TS.fullmatch(thread)
        hint = f"; from a link's {thread!r} use {link[1]}.{link[2]}" if link else ""
        raise UnknownTarget(
            f"target {shown!r}: the thread must be the parent message's ts, such as "
            f"1700000000.000100{hint}"
        )
