"""Teams as a surface: post a request's card to a conversation the bot is in, and replace it
as the request changes, through the Bot Connector with the app's own token."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping

import aiohttp
from microsoft_agents.activity import (
    Activity,
    ActivityTypes,
    ChannelAccount,
    ConversationAccount,
    ConversationParameters,
)
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.connector import ConnectorClientBase
from microsoft_agents.hosting.core.connector.teams import TeamsConnectorClient

from askbridge.adapters.teams.clicks import PLATFORM
from askbridge.adapters.teams.credentials import AppCredentials
from askbridge.adapters.teams.members import Members
from askbridge.adapters.teams.mentions import reminder_card
from askbridge.adapters.teams.render import attachment, render
from askbridge.core.errors import MessageRefused, RetryLater, SurfaceUnavailable, UnknownTarget
from askbridge.core.forms import FEW_FIELDS
from askbridge.core.models import MessageRef, Request, Target
from askbridge.core.retry import is_refusal
from askbridge.core.view import RequestView

log = logging.getLogger("askbridge.teams")

CHANNEL_ID = "msteams"
CONVERSATION = re.compile(r"[^\s/]{1,500}")
TARGET_HELP = (
    "use 'teams:<conversation id>' (a channel, group chat or personal chat the bot was added "
    "to; its id is in the chat's link, e.g. 19:…@thread.tacv2), or 'teams:@<Entra user id>' "
    "for a personal chat with someone who has the app"
)
CHANNEL_THREADS = ("@thread.tacv2", "@thread.skype")
"""How a team channel's id ends: a reply goes to its message's thread there."""
SERVICE_URL = "service_url"
"""The key in a message's `data` of the Bot Connector that holds it."""


class TeamsSurface:
    platform = PLATFORM
    answerer_kinds: tuple[str, ...] = (PLATFORM,)
    form_fields = FEW_FIELDS
    """Five of the largest fields a form takes (25 long choices each) make a card of about 21 KB;
    ten would exceed Teams' 28 KB, and a choice's title is not cut to fit."""

    def __init__(
        self,
        adapter: CloudAdapter,
        credentials: AppCredentials,
        *,
        app_id: str,
        service_url: str,
        tenant_id: str | None,
        members: Members,
    ) -> None:
        self._adapter = adapter
        self._members = members
        self._credentials = credentials
        self._app_id = app_id
        self._service_url = service_url
        self._tenant_id = tenant_id

    def check_target(self, target: Target) -> None:
        if not CONVERSATION.fullmatch(target.channel or "") or target.thread:
            raise UnknownTarget(
                f"target {str(target)!r} is not a Teams conversation; {TARGET_HELP}"
            )
        if target.channel.startswith("@") and not self._tenant_id:
            raise UnknownTarget(
                f"target {str(target)!r}: a personal chat is started in the bot's tenant; "
                "set TEAMS_TENANT_ID"
            )

    async def post(self, request: Request, target: Target) -> MessageRef:
        self.check_target(target)
        view = RequestView.of(request)
        sent: list[str] = []

        async def send(context: TurnContext) -> None:
            names = await self._names(context, view)
            card = render(view, names=names)
            activity = Activity(type=ActivityTypes.message, attachments=[attachment(card)])
            response = await context.send_activity(activity)
            if response is not None and response.id:
                sent.append(response.id)

        try:
            conversation = target.channel
            if conversation.startswith("@"):
                conversation = await self._personal(conversation[1:])
            await self._in(conversation, self._service_url, send)
        except aiohttp.ClientResponseError as error:
            raise SurfaceUnavailable(
                f"the Bot Connector refused a message to {str(target)!r}: {error.status} "
                f"{error.message[:200]}; is the bot installed in that conversation?"
            ) from error
        except (aiohttp.ClientError, TimeoutError) as error:
            raise SurfaceUnavailable(f"could not reach the Bot Connector: {error!r}") from error
        if not sent:
            raise SurfaceUnavailable(f"the Bot Connector gave no message id for {target}")
        return MessageRef(
            platform=PLATFORM,
            channel=conversation,
            message_id=sent[0],
            data={SERVICE_URL: self._service_url},
        )

    async def update(self, request: Request, message: MessageRef) -> None:
        """Replace the card for everyone; a 429 becomes RetryLater with Teams' Retry-After, and
        another 4xx MessageRefused: the Bot Connector answered, and will not take this card."""
        view = RequestView.of(request)

        async def replace(context: TurnContext) -> None:
            card = render(view, names=await self._names(context, view))
            await context.update_activity(
                Activity(
                    type=ActivityTypes.message,
                    id=message.message_id,
                    attachments=[attachment(card)],
                )
            )

        service_url = str(message.data.get(SERVICE_URL) or self._service_url)
        try:
            await self._in(message.channel, service_url, replace)
        except aiohttp.ClientResponseError as error:
            if error.status == 429:
                wait = error.headers.get("Retry-After", "1") if error.headers else "1"
                raise RetryLater(_seconds(wait), "Teams' Bot Connector") from error
            if error.status == 404:
                log.info("the Teams message of %s is gone; not updating it", request.request_id)
                return
            if not is_refusal(error.status):
                raise
            raise MessageRefused(
                f"the Bot Connector refused to replace message {message.message_id} in "
                f"{message.channel}: {error.status}"
            ) from error

    async def remind(self, request: Request, message: MessageRef) -> None:
        """A reply to the card (in a channel, in its thread) that mentions the Teams people
        who may answer, as Teams names them."""
        view = RequestView.of(request)
        conversation = message.channel
        if conversation.endswith(CHANNEL_THREADS):
            conversation = f"{conversation};messageid={message.message_id}"

        async def nudge(context: TurnContext) -> None:
            # One not in this conversation is named in the sentence, not mentioned.
            card = reminder_card(view, await self._names(context, view))
            await context.send_activity(
                Activity(type=ActivityTypes.message, attachments=[attachment(card)])
            )

        service_url = str(message.data.get(SERVICE_URL) or self._service_url)
        try:
            await self._in(conversation, service_url, nudge)
        except aiohttp.ClientResponseError as error:
            if error.status == 429:
                wait = error.headers.get("Retry-After", "1") if error.headers else "1"
                raise RetryLater(_seconds(wait), "Teams' Bot Connector") from error
            failure = MessageRefused if is_refusal(error.status) else SurfaceUnavailable
            raise failure(
                f"could not remind the answerers of {request.request_id} in {message.channel}: "
                f"the Bot Connector said {error.status}"
            ) from error

    async def _names(self, context: TurnContext, view: RequestView) -> Mapping[str, str | None]:
        """The Teams answerers' names in the turn's conversation (`Members`); a card posted,
        replaced or a reminder sent, never before a vote is recorded."""
        if not view.waiting:
            return {}
        # The SDK keys the services of a turn by their abstract types.
        connector = context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]
        assert connector is not None, "a proactive turn always has its connector"
        conversation = context.activity.conversation
        assert conversation is not None, "a proactive turn is in its conversation"
        return await self._members.look_up(connector, conversation.id, view.answerers)

    async def _personal(self, user: str) -> str:
        """Start (or find: Teams keeps one per person) the bot's personal chat with `user`, an
        Entra id; the chat's id. Its own connector client, closed after (the SDK's
        create_conversation leaves the one it makes open)."""
        parameters = ConversationParameters(
            is_group=False,
            agent=ChannelAccount(id=self._app_id),
            members=[ChannelAccount(id=user)],
            tenant_id=self._tenant_id,
            channel_data={"tenant": {"id": self._tenant_id}},
        )
        client = TeamsConnectorClient(
            endpoint=self._service_url, token=await self._credentials.token()
        )
        try:
            started = await client.conversations.create_conversation(parameters)
        finally:
            await client.close()
        if not started.id:
            raise SurfaceUnavailable(f"Teams started no chat with {user}")
        return started.id

    async def _in(
        self, conversation: str, service_url: str, act: Callable[[TurnContext], Awaitable[None]]
    ) -> None:
        """Run `act` in the conversation, as the SDK runs a proactive turn."""
        reference = Activity(
            type=ActivityTypes.event,
            name="ContinueConversation",
            channel_id=CHANNEL_ID,
            service_url=service_url,
            conversation=ConversationAccount(id=conversation),
            recipient=ChannelAccount(id=self._app_id),
        )
        await _raising(
            lambda turn: self._adapter.continue_conversation(self._app_id, reference, turn), act
        )


async def _raising(
    run: Callable[[Callable[[TurnContext], Awaitable[None]]], Awaitable[object]],
    act: Callable[[TurnContext], Awaitable[None]],
) -> None:
    """`run(act)`, raising what `act` raised: the SDK hands a turn's exception to its
    turn-error handler and returns, and the broker must know that a post or update failed."""
    failed: list[Exception] = []

    async def turn(context: TurnContext) -> None:
        try:
            await act(context)
        except Exception as error:
            failed.append(error)

    await run(turn)
    if failed:
        raise failed[0]


def _seconds(value: str) -> float:
    try:
        return max(0.0, float(value))
    except ValueError:
        return 1.0
