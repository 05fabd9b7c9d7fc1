"""What Slack's refusals mean: whether to try again, and what to tell whoever set askbridge up."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError

TRANSIENT_ERRORS = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
# What a Slack error code means for the person setting askbridge up.
POST_HINTS = {
    "channel_not_found": "no such channel, or it is private and the app is not in it "
    "(check the ID; in a private channel type /invite @askbridge)",
    "not_in_channel": "the app is not in this channel (type /invite @askbridge there)",
    "is_archived": "the channel is archived",
    "user_not_found": "no member with this ID in the workspace",
    "cannot_dm_bot": "that member is a bot",
    "user_disabled": "that member's account is deactivated",
    "missing_scope": "the app lacks a permission; reinstall it from adapters/slack/manifest.yaml",
    "invalid_auth": "SLACK_BOT_TOKEN was rejected",
    "token_revoked": "SLACK_BOT_TOKEN was revoked",
    "ratelimited": "Slack is rate limiting the app; try again in a minute",
}


def transient(error: SlackApiError) -> bool:
    """Slack is busy or down (rate limits, server errors), rather than saying no."""
    status = error.response.status_code
    code = error.response.get("error")
    return status == 429 or status >= 500 or code in TRANSIENT_ERRORS


def explain(error: SlackApiError) -> str:
    code = str(error.response.get("error", "unknown_error"))
    hint = POST_HINTS.get(code)
    needed = error.response.get("needed")
    if needed:
        hint = f"{hint} (needs {needed})" if hint else f"needs the {needed} scope"
    return f"{code}: {hint}" if hint else code
