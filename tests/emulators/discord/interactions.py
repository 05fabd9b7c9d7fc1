"""Simulated clicks and modal submissions: the INTERACTION_CREATE payload and a handle to await
the bot's answer."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .modals import Modal
from .payloads import (
    Component,
    InteractionData,
    InteractionPayload,
    JSONObject,
    ModalSubmitData,
    channel_payload,
    member_payload,
    user_payload,
)
from .registry import ALL_PERMISSIONS, Channel, Registry
from .store import Message, MessageStore
from .waiting import Pulse, WaitTimeout

COMPONENT_INTERACTION = 3
MODAL_SUBMIT_INTERACTION = 5
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024
GUILD_CONTEXT = 0
BOT_DM_CONTEXT = 1
GUILD_INSTALL = "0"


class InteractionFailed(AssertionError):
    """What the person would see as "This interaction failed"."""


@dataclass(frozen=True)
class InteractionCallback:
    """The bot's initial response (`POST /interactions/{id}/{token}/callback`)."""

    type: int
    data: JSONObject

    @property
    def flags(self) -> int:
        return int(self.data.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & (1 << 6))

    @property
    def content(self) -> str | None:
        value = self.data.get("content")
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class EndpointReply:
    """What the bot's Interactions Endpoint URL answered to one POST."""

    status: int
    content_type: str
    body: Any
    """The JSON reply, or its text when it is not JSON."""


@dataclass
class InteractionState:
    id: int
    token: str
    user_id: int
    channel_id: int
    guild_id: int | None
    source_message_id: int
    custom_id: str
    description: str
    payload: InteractionPayload
    deadline: float
    token_expires: float
    delivered_to: int = 0
    queued_for: int = 0
    kind: int = COMPONENT_INTERACTION
    triggered_by: InteractionState | None = None
    """For a modal's submission: the click the modal answered."""
    callback: InteractionCallback | None = None
    modal: Modal | None = None
    """The modal the bot answered with (callback type 9), as the person sees it."""
    modal_submitted: bool = False
    original_message_id: int | None = None
    followup_ids: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    over_http: bool = False
    """Delivered to the Interactions Endpoint URL rather than over the gateway."""
    endpoint_reply: EndpointReply | None = None
    forged: str | None = None
    """How its delivery was made to fail verification (`Forgery`), if it was."""
    failed: bool = False
    """The endpoint refused it or answered wrongly: the person sees "interaction failed"."""


class InteractionHandle:
    """One simulated use of a component; await `response()` for the bot's answer."""

    def __init__(
        self,
        state: InteractionState,
        *,
        store: MessageStore,
        pulse: Pulse,
        clock: Callable[[], float],
    ) -> None:
        self._state = state
        self._store = store
        self._pulse = pulse
        self._clock = clock

    @property
    def id(self) -> int:
        return self._state.id

    @property
    def token(self) -> str:
        return self._state.token

    @property
    def user_id(self) -> int:
        return self._state.user_id

    @property
    def custom_id(self) -> str:
        return self._state.custom_id

    @property
    def payload(self) -> InteractionPayload:
        return self._state.payload

    @property
    def delivered_to(self) -> int:
        """How many connected gateway sessions the INTERACTION_CREATE went to."""
        return self._state.delivered_to

    @property
    def queued_for(self) -> int:
        """How many disconnected sessions hold it for a RESUME."""
        return self._state.queued_for

    @property
    def callback(self) -> InteractionCallback | None:
        return self._state.callback

    @property
    def forged(self) -> str | None:
        """How the emulator made its delivery fail verification, if it was told to."""
        return self._state.forged

    @property
    def endpoint_reply(self) -> EndpointReply | None:
        """In HTTP interactions mode, what the bot's endpoint answered to the POST."""
        return self._state.endpoint_reply

    @property
    def refused(self) -> list[str]:
        """Responses the emulator refused (late, duplicate, invalid)."""
        return list(self._state.refused)

    @property
    def original(self) -> Message | None:
        """The response message (types 4/5) or the clicked message (types 6/7)."""
        if self._state.original_message_id is None:
            return None
        return self._store.get(self._state.original_message_id)

    @property
    def followups(self) -> list[Message]:
        found = (self._store.get(i) for i in self._state.followup_ids)
        return [m for m in found if m is not None]

    async def response(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 -- test-facing; asyncio.timeout inside
    ) -> InteractionCallback:
        """The initial response, or InteractionFailed once Discord's 3 s window has passed."""
        left = max(0.0, self._state.deadline - self._clock())
        wait = left if timeout is None else min(timeout, left)

        def answered() -> InteractionCallback | None:
            if self._state.callback is None and self._state.failed:
                raise InteractionFailed(f"This interaction failed: {self._failure()}")
            return self._state.callback

        try:
            return await self._pulse.wait_for(answered, seconds=wait, describe=self._failure)
        except WaitTimeout:
            raise InteractionFailed(f"This interaction failed: {self._failure()}") from None

    async def modal(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 -- test-facing; asyncio.timeout inside
    ) -> Modal:
        """The modal the bot answered with; AssertionError if it answered otherwise."""
        callback = await self.response(timeout)
        if self._state.modal is None:
            raise AssertionError(f"the bot answered with type {callback.type}, not a modal: {self}")
        return self._state.modal

    async def wait_for_ephemeral(
        self,
        contains: str | None = None,
        *,
        timeout: float = 5.0,  # noqa: ASYNC109 -- test-facing; asyncio.timeout inside
    ) -> Message:
        """An ephemeral message from this interaction (response or followup) showing `contains`."""

        def check() -> Message | None:
            ids = [self._state.original_message_id, *self._state.followup_ids]
            for message_id in ids:
                message = self._store.get(message_id) if message_id is not None else None
                if (
                    message is not None
                    and message.is_ephemeral
                    and not message.is_loading
                    and (contains is None or contains in message.text)
                ):
                    return message
            return None

        return await self._pulse.wait_for(
            check, seconds=timeout, describe=lambda: f"no ephemeral with {contains!r}; {self}"
        )

    def _failure(self) -> str:
        parts = [f"no response to the {self._state.description} within the 3 s window"]
        live, queued = self._state.delivered_to, self._state.queued_for
        if self._state.over_http:
            reply = self._state.endpoint_reply
            got = f"{reply.status} {reply.body!r}" if reply is not None else "no reply"
            parts.append(f"POSTed to the Interactions Endpoint URL, which answered {got}")
        elif live == 0 and queued == 0:
            parts.append("no gateway session existed to receive INTERACTION_CREATE")
        else:
            parts.append(
                f"INTERACTION_CREATE went to {live} connected session(s) and was queued "
                f"for {queued} disconnected one(s)"
            )
        if self._state.refused:
            parts.append("refused responses: " + "; ".join(self._state.refused))
        return ", ".join(parts)

    def __str__(self) -> str:
        callback = self._state.callback
        answer = f"callback type {callback.type}" if callback else "no callback"
        followups = [m.text for m in self.followups]
        return f"interaction {self.id} ({self._state.description}): {answer}, followups {followups}"


def component_data(component: Component, values: Sequence[str] | None) -> InteractionData:
    """The `data` of a click on `component` (a choice of `values` in a select)."""
    data = InteractionData(custom_id=str(component["custom_id"]), component_type=component["type"])
    if isinstance(component.get("id"), int):
        data["id"] = component["id"]
    if values is not None:
        data["values"] = list(values)
    return data


def build_payload(
    *,
    registry: Registry,
    interaction_id: int,
    token: str,
    application_id: int,
    user_id: int,
    channel: Channel,
    message: Message,
    data: InteractionData | ModalSubmitData,
    kind: int = COMPONENT_INTERACTION,
) -> InteractionPayload:
    """An INTERACTION_CREATE: a click (`kind` 3) on `message`, or the submission (5) of a modal
    opened from it."""
    payload = InteractionPayload(
        id=str(interaction_id),
        application_id=str(application_id),
        type=kind,
        token=token,
        version=1,
        attachment_size_limit=ATTACHMENT_SIZE_LIMIT,
        data=data,
        channel=channel_payload(registry, channel),
        channel_id=str(channel.id),
        message=copy.deepcopy(message.payload),
        app_permissions=str(ALL_PERMISSIONS),
        locale="en-US",
        entitlements=[],
        authorizing_integration_owners={},
        context=GUILD_CONTEXT,
    )
    if channel.guild_id is not None:
        guild = registry.guild(channel.guild_id)
        member = member_payload(registry, registry.member(guild.id, user_id))
        member["permissions"] = str(registry.permissions(guild.id, user_id))
        payload["guild_id"] = str(guild.id)
        payload["guild"] = {"id": str(guild.id), "locale": "en-US", "features": []}
        payload["guild_locale"] = "en-US"
        payload["member"] = member
        payload["authorizing_integration_owners"] = {GUILD_INSTALL: str(guild.id)}
    else:
        payload["user"] = user_payload(registry.user(user_id))
        payload["authorizing_integration_owners"] = {GUILD_INSTALL: "0"}
        payload["context"] = BOT_DM_CONTEXT
    return payload
