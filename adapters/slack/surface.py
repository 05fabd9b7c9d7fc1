"""Slack as a surface: post a request to a channel, DM or thread; update it; tell one person;
open the answer form for one person; remind the answerers in the message's thread."""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.slack.blockkit import Block, MessagePayload, ModalView
from adapters.slack.groups import UserGroups
from adapters.slack.render import answerers_line, render
from adapters.slack.richtext import Line, Span, When, block, mrkdwn, section
from core.errors import RetryLater, SurfaceUnavailable, UnknownTarget
from core.models import MessageRef, Person, Request, Status, Target
from core.surface import Membership
from core.view import RequestView, given

log = logging.getLogger("askbridge.slack")

PLATFORM = "slack"
CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]+")
MEMBER_ID = re.compile(r"[UW][A-Z0-9]+")
THREAD_TS = re.compile(r"\d+\.\d+")
LINK_TS = re.compile(r"p(\d{10})(\d{6})")
# The block_id suffix of a waiting message posted before the suffix was kept in its data.
FIRST_REV = "0"
EXAMPLES = (
    "slack:C0123456789 (a channel), slack:U0123456789 (a DM with that member) or "
    "slack:C0123456789/1700000000.000100 (a thread)"
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


@dataclass(frozen=True)
class Install:
    """Who askbridge is in Slack, as `auth.test` said at startup."""

    team_id: str
    team: str
    bot_user_id: str
    bot_name: str
    app_id: str | None = None


class SlackSurface:
    platform = PLATFORM
    answerer_kinds: tuple[str, ...] = ("slack", "slack-group")

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        self.install: Install | None = None
        """Set by `SlackRuntime.start` once `auth.test` has answered."""
        self.groups = UserGroups(client)

    def check_target(self, target: Target) -> None:
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

    async def post(self, request: Request, target: Target) -> MessageRef:
        channel = target.channel
        try:
            if MEMBER_ID.fullmatch(channel):
                opened = await self.client.conversations_open(users=channel)
                channel = opened["channel"]["id"]
            rev = new_rev()
            payload = render(RequestView.of(request), rev)
            response = await self.client.chat_postMessage(
                channel=channel,
                text=payload["text"],
                blocks=_json(payload),
                thread_ts=target.thread,
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as error:
            raise SurfaceUnavailable(
                f"Slack refused the message to {target}: {_explain(error)}"
            ) from error
        except (aiohttp.ClientError, TimeoutError) as error:
            raise SurfaceUnavailable(
                f"could not reach Slack at {self.client.base_url} ({type(error).__name__}: "
                f"{error}); check the network and SLACK_API_URL"
            ) from error
        message: dict[str, Any] = response.get("message") or {}
        data: dict[str, Any] = {
            "team_id": message.get("team") or (self.install.team_id if self.install else None),
            "app_id": message.get("app_id") or (self.install.app_id if self.install else None),
            # Kept for every render while the request waits: see `update`.
            "rev": rev,
        }
        if target.thread:
            data["thread_ts"] = target.thread
        ref = MessageRef(
            platform=PLATFORM,
            channel=response["channel"],
            message_id=response["ts"],
            data={k: v for k, v in data.items() if v},
        )
        log.info(
            "posted %s to %s as %s/%s", request.request_id, target, ref.channel, ref.message_id
        )
        return ref

    async def update(self, request: Request, message: MessageRef) -> None:
        """Show the request's current state; raises on failure so that the broker retries.

        While the request waits (a new vote in the tally), the block_ids stay those it was
        posted with: Slack would otherwise clear everyone's unsubmitted choices. The final
        render gets new ones, so that no client carries a choice into it.
        """
        waiting = request.status is Status.WAITING
        rev = str(message.data.get("rev") or FIRST_REV) if waiting else new_rev()
        payload = render(RequestView.of(request), rev)
        try:
            await self.client.chat_update(
                channel=message.channel,
                ts=message.message_id,
                text=payload["text"],
                blocks=_json(payload),
            )
        except SlackApiError as error:
            if error.response.status_code == 429:
                wait = error.response.headers.get("Retry-After", "1")
                raise RetryLater(float(wait), "Slack's chat.update") from error
            raise

    async def tell(
        self, person: Person, message: MessageRef, line: Line, response_url: str | None = None
    ) -> None:
        """A note only `person` sees, next to `message`; through the click's `response_url`
        when chat.postEphemeral fails. Never raises: a lost note must not lose a click."""
        if person.platform != PLATFORM:
            return
        text, blocks = mrkdwn(line), _note_blocks(line)
        try:
            await self.client.chat_postEphemeral(
                channel=message.channel,
                user=person.id,
                text=text,
                blocks=blocks,
                thread_ts=message.data.get("thread_ts"),
            )
            return
        except Exception as error:
            log.warning("chat.postEphemeral to %s failed: %s", person.id, error)
        if not response_url:
            return
        try:
            sent = await AsyncWebhookClient(response_url).send(
                text=text, blocks=blocks, response_type="ephemeral", replace_original=False
            )
        except Exception as error:
            log.warning("telling %s through response_url failed: %s", person.id, error)
            return
        if sent.status_code != 200:
            log.warning(
                "telling %s through response_url failed: HTTP %s %s",
                person.id,
                sent.status_code,
                sent.body,
            )

    async def open_form(self, trigger_id: str, form: ModalView) -> None:
        """Open `form` for the person whose click carried `trigger_id`; Slack takes a trigger
        once, within 3 seconds of the click. Raises when Slack refuses."""
        await self.client.views_open(trigger_id=trigger_id, view=cast("dict[str, Any]", form))

    async def membership(self, person: Person, entries: Sequence[str], now: datetime) -> Membership:
        """The `slack-group:` answerers `person` is in, asked of Slack (kept for a minute)."""
        return await self.groups.membership(person.id, entries, now)

    async def remind(self, request: Request, message: MessageRef) -> None:
        """A reply in the message's thread (or in the thread it was posted in) that mentions
        the people who may answer; the broker sends it once."""
        line = reminder_line(RequestView.of(request))
        await self.client.chat_postMessage(
            channel=message.channel,
            thread_ts=message.data.get("thread_ts") or message.message_id,
            text=mrkdwn(line),
            blocks=_note_blocks(line),
            unfurl_links=False,
            unfurl_media=False,
        )


def reminder_line(view: RequestView) -> Line:
    """A nudge to the people who may answer (everyone when anyone may)."""
    line: Line = [Span(":bell: ")]
    if view.answerers:
        line += [*answerers_line(view.answerers), Span(": this question is still waiting for you.")]
    else:
        line.append(Span("Reminder: this question is still waiting for an answer."))
    if view.needs_votes:
        line.append(
            Span(f" It needs {view.quorum} matching votes; the most so far is {view.best_count}.")
        )
    if view.deadline is not None:
        if view.default_answers is not None:
            default = given(view.default_answers)
            line += [Span(" If nobody decides by "), When(view.deadline)]
            line.append(Span(f", the answer will be {default}."))
        else:
            line += [Span(" It expires "), When(view.deadline), Span(".")]
    return line


def _note_blocks(line: Line) -> list[dict[str, Any]]:
    note: Block = block("ab-note", [section(line)])
    return cast("list[dict[str, Any]]", [note])


def _json(payload: MessagePayload) -> list[dict[str, Any]]:
    # The SDK types blocks as plain dicts; ours are TypedDicts of the same JSON.
    return cast("list[dict[str, Any]]", payload["blocks"])


def new_rev() -> str:
    """A fresh suffix for block_ids, so that no render reuses the last one's."""
    return secrets.token_hex(4)


def _explain(error: SlackApiError) -> str:
    code = str(error.response.get("error", "unknown_error"))
    hint = POST_HINTS.get(code)
    needed = error.response.get("needed")
    if needed:
        hint = f"{hint} (needs {needed})" if hint else f"needs the {needed} scope"
    return f"{code}: {hint}" if hint else code
