"""Slack as a surface: post a request to a channel, DM or thread; update it; tell one person;
open the answer form for one person; remind the answerers in the message's thread."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from askbridge.adapters.slack.addresses import MEMBER_ID, check_target
from askbridge.adapters.slack.blockkit import Block, MessagePayload, ModalView
from askbridge.adapters.slack.controls import waiting_rev
from askbridge.adapters.slack.groups import UserGroups
from askbridge.adapters.slack.notes import reminder_line
from askbridge.adapters.slack.refusals import explain, transient
from askbridge.adapters.slack.render import render
from askbridge.adapters.slack.text import Line, block, mrkdwn, section
from askbridge.core.errors import AskbridgeError, MessageRefused, RetryLater, SurfaceUnavailable
from askbridge.core.forms import MAX_FIELDS
from askbridge.core.models import MessageRef, Person, Request, Status, Target
from askbridge.core.pace import Pace
from askbridge.core.surface import Membership
from askbridge.core.view import RequestView

log = logging.getLogger("askbridge.slack")

PLATFORM = "slack"
# The block_id suffix of a waiting message posted before the suffix was kept in its data.
FIRST_REV = "0"
# Looking for a message posted but not recorded: from how long before the request was created
# (clocks differ), in pages of how many messages, and how many pages at most.
FIND_SINCE_S = 300.0
FIND_PAGE_SIZE = 200
FIND_PAGES = 10


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
    form_fields = MAX_FIELDS
    """Ten of the largest fields a form takes fit in a modal (11 of its 100 blocks)."""

    def __init__(self, client: AsyncWebClient, update_pace: Pace | None = None) -> None:
        self.client = client
        self.update_pace = update_pace
        self.install: Install | None = None
        """Set by `SlackRuntime.start` once `auth.test` has answered."""
        self.groups = UserGroups(client)

    def check_target(self, target: Target) -> None:
        check_target(target)

    async def post(self, request: Request, target: Target) -> MessageRef:
        try:
            channel = await self._channel(target)
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
                f"Slack refused the message to {target}: {explain(error)}"
            ) from error
        except (aiohttp.ClientError, TimeoutError) as error:
            raise SurfaceUnavailable(
                f"could not reach Slack at {self.client.base_url} ({type(error).__name__}: "
                f"{error}); check the network and SLACK_API_URL"
            ) from error
        message = response.get("message") or {}
        ref = self._ref(response["channel"], response["ts"], message, rev, target)
        log.info(
            "posted %s to %s as %s/%s", request.request_id, target, ref.channel, ref.message_id
        )
        return ref

    async def find(self, request: Request, target: Target) -> MessageRef | None:
        """The waiting message of `request` in `target` that the app posted from a little
        before the request was created on, by the action_ids that name it; the channel's
        history (a thread's replies) is read, which needs the *:history scopes."""
        oldest = f"{request.created_at.timestamp() - FIND_SINCE_S:.6f}"
        bot = self.install.bot_user_id if self.install else None
        try:
            channel = await self._channel(target)
            cursor = None
            for _ in range(FIND_PAGES):
                page = await self._history(channel, target.thread, oldest, cursor)
                for message in page.get("messages") or []:
                    rev = waiting_rev(message.get("blocks"), request.request_id)
                    if rev is not None and (bot is None or message.get("user") == bot):
                        return self._ref(channel, str(message["ts"]), message, rev, target)
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    break
        except SlackApiError as error:
            if transient(error):
                raise SurfaceUnavailable(
                    f"Slack could not list the messages of {target}: {explain(error)}"
                ) from error
            # Slack will not let the app look (a missing scope; a public channel it posts in
            # without being a member): posting again beats never posting.
            log.warning(
                "cannot look in %s for a message of %s that askbridge may have posted without "
                "recording it (%s); posting it again. With the channels:history, groups:history "
                "and im:history scopes (adapters/slack/manifest.yaml), and the app in the "
                "channel, it can look.",
                target,
                request.request_id,
                explain(error),
            )
        except (aiohttp.ClientError, TimeoutError) as error:
            raise SurfaceUnavailable(f"could not reach Slack at {self.client.base_url}") from error
        return None

    async def _channel(self, target: Target) -> str:
        """The channel id of a target: a member's DM is opened (the same one every time)."""
        if MEMBER_ID.fullmatch(target.channel):
            opened = await self.client.conversations_open(users=target.channel)
            return str(opened["channel"]["id"])
        return target.channel

    async def _history(
        self, channel: str, thread: str | None, oldest: str, cursor: str | None
    ) -> dict[str, Any]:
        if thread:
            page = await self.client.conversations_replies(
                channel=channel, ts=thread, oldest=oldest, cursor=cursor, limit=FIND_PAGE_SIZE
            )
        else:
            page = await self.client.conversations_history(
                channel=channel, oldest=oldest, cursor=cursor, limit=FIND_PAGE_SIZE
            )
        return cast("dict[str, Any]", page.data)

    def _ref(
        self, channel: str, ts: str, message: dict[str, Any], rev: str, target: Target
    ) -> MessageRef:
        """What askbridge keeps of a message it posted (or found) in `channel`."""
        data: dict[str, Any] = {
            "team_id": message.get("team") or (self.install.team_id if self.install else None),
            "app_id": message.get("app_id") or (self.install.app_id if self.install else None),
            # Kept for every render while the request waits: see `update`.
            "rev": rev,
        }
        if target.thread:
            data["thread_ts"] = target.thread
        return MessageRef(
            platform=PLATFORM,
            channel=channel,
            message_id=ts,
            data={k: v for k, v in data.items() if v},
        )

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
            meaning = _for_retries(error, "chat.update", message)
            if meaning is None:
                raise
            raise meaning from error

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
            sent = await AsyncWebhookClient(response_url, session=self.client.session).send(
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
        try:
            await self.client.chat_postMessage(
                channel=message.channel,
                thread_ts=message.data.get("thread_ts") or message.message_id,
                text=mrkdwn(line),
                blocks=_note_blocks(line),
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as error:
            meaning = _for_retries(error, "chat.postMessage", message)
            if meaning is None:
                raise
            raise meaning from error


def _for_retries(error: SlackApiError, method: str, message: MessageRef) -> AskbridgeError | None:
    """What Slack's error on a call about a posted message tells its retries: when to try
    again (429), or that Slack answered and refused this one message (a deleted message, an
    archived channel); None when Slack is busy or down, an outage."""
    if error.response.status_code == 429:
        wait = error.response.headers.get("Retry-After", "1")
        return RetryLater(float(wait), f"Slack's {method}")
    if transient(error):
        return None
    return MessageRefused(
        f"Slack refused {method} for message {message.message_id} in {message.channel}: "
        f"{explain(error)}"
    )


def _note_blocks(line: Line) -> list[dict[str, Any]]:
    note: Block = block("ab-note", [section(line)])
    return cast("list[dict[str, Any]]", [note])


def _json(payload: MessagePayload) -> list[dict[str, Any]]:
    # The SDK types blocks as plain dicts; ours are TypedDicts of the same JSON.
    return cast("list[dict[str, Any]]", payload["blocks"])


def new_rev() -> str:
    """A fresh suffix for block_ids, so that no render reuses the last one's."""
    return secrets.token_hex(4)
