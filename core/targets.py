"""Reading where a request should go: `"web"`, `"slack:C0123"`, `"discord:@456"`, or an object."""

from __future__ import annotations

from typing import Any

from core.errors import UnknownTarget
from core.models import Target

_THREAD_KEYS = ("thread", "thread_ts", "thread_id")


def parse_target(raw: Any) -> Target:
    if isinstance(raw, Target):
        return raw
    if isinstance(raw, str):
        return _from_text(raw)
    if isinstance(raw, dict):
        return _from_object(raw)
    raise UnknownTarget(
        f"target must be a string such as 'web' or 'slack:C0123', or an object "
        f'such as {{"platform": "slack", "channel": "C0123"}}, got {raw!r}'
    )


def _from_text(text: str) -> Target:
    text = text.strip()
    platform, _, rest = text.partition(":")
    channel, _, thread = rest.partition("/")
    if not platform:
        raise UnknownTarget(f"target {text!r} names no platform; use e.g. 'web' or 'slack:C0123'")
    return Target(platform=platform.lower(), channel=channel, thread=thread or None)


def _from_object(raw: dict[str, Any]) -> Target:
    platform = raw.get("platform")
    if not isinstance(platform, str) or not platform:
        raise UnknownTarget(f"target object needs a 'platform' string, got {raw!r}")
    channel = raw.get("channel", "")
    thread = next((raw[key] for key in _THREAD_KEYS if raw.get(key)), None)
    if not isinstance(channel, str) or not (thread is None or isinstance(thread, str | int)):
        raise UnknownTarget(f"target 'channel' and 'thread' must be strings, got {raw!r}")
    return Target(
        platform=platform.lower(), channel=channel, thread=None if thread is None else str(thread)
    )
