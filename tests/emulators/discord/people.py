"""Simulated people: find a control by what they see, use it (or fill in and submit the modal
the bot showed them), get a handle on the outcome."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .components import BUTTON, STRING_SELECT, ComponentNotFound, find_button, find_select, walk
from .endpoint import InteractionsEndpoint
from .gateway import Gateway
from .interactions import (
    COMPONENT_INTERACTION,
    MODAL_SUBMIT_INTERACTION,
    InteractionHandle,
    InteractionState,
    build_payload,
    component_data,
)
from .modals import CannotSubmit, Given, submission
from .payloads import Component, InteractionData, InteractionPayload, ModalSubmitData
from .registry import Channel, Registry
from .responses import InteractionResponder
from .snowflakes import SnowflakeFactory
from .store import Message, MessageStore
from .waiting import Pulse


class NothingSent(ComponentNotFound):
    """The person's use of a control would send Discord nothing to deliver."""


class People:
    def __init__(
        self,
        *,
        registry: Registry,
        store: MessageStore,
        snowflakes: SnowflakeFactory,
        gateway: Gateway,
        responder: InteractionResponder,
        endpoint: InteractionsEndpoint,
        pulse: Pulse,
        clock: Callable[[], float],
        application_id: int,
        response_window: float,
        token_lifetime: float,
    ) -> None:
        self._registry = registry
        self._store = store
        self._snowflakes = snowflakes
        self._gateway = gateway
        self._responder = responder
        self._endpoint = endpoint
        self._pulse = pulse
        self._clock = clock
        self._application_id = application_id
        self._response_window = response_window
        self._token_lifetime = token_lifetime
        self.handles: list[InteractionHandle] = []
        self._states: dict[int, InteractionState] = {}
        self._picked: dict[tuple[int, int, str], tuple[int, frozenset[str]]] = {}
        """(person, message, select) -> the message version and what the select shows them."""

    def click(
        self, message: Message | int, user_id: int, label: str, *, row: int | None, nth: int | None
    ) -> InteractionHandle:
        current, channel = self._visible(message, user_id)
        button = find_button(current.components, label, row=row, nth=nth)
        return self._use(current, channel, user_id, button, None)

    def choose(
        self,
        message: Message | int,
        user_id: int,
        labels: Sequence[str],
        *,
        placeholder: str | None,
        select_index: int | None,
    ) -> InteractionHandle:
        current, channel = self._visible(message, user_id)
        select = find_select(current.components, placeholder=placeholder, index=select_index)
        if select["type"] != STRING_SELECT:
            raise ComponentNotFound(
                f"only string selects can be chosen from; got type {select['type']}"
            )
        options: list[dict[str, Any]] = list(select.get("options") or [])
        by_label = {str(o.get("label")): str(o.get("value")) for o in options}
        missing = [label for label in labels if label not in by_label]
        if missing:
            raise ComponentNotFound(
                f"no option(s) {missing} in select {select.get('placeholder')!r}; "
                f"options: {list(by_label)}"
            )
        low, high = int(select.get("min_values", 1)), int(select.get("max_values", 1))
        if not low <= len(labels) <= high or len(set(labels)) != len(labels):
            raise ComponentNotFound(
                f"Discord lets a person pick {low} to {high} distinct options in select "
                f"{select.get('placeholder')!r}, not {list(labels)}"
            )
        values = [by_label[label] for label in labels]
        # The client keeps what a person picked in a select until the message changes; picking
        # what it already shows sends nothing ("working as intended", discord-api-docs#4801).
        key = (user_id, current.id, str(select.get("custom_id")))
        shown = self._picked.get(key)
        if shown is None or shown[0] != current.version:
            shown = (
                current.version,
                frozenset(str(o.get("value")) for o in options if o.get("default")),
            )
        if frozenset(values) == shown[1]:
            raise NothingSent(
                f"select {select.get('placeholder')!r} already shows {list(labels)} to user "
                f"{user_id}; Discord's client sends nothing when the same options are picked "
                "again (until the message changes)"
            )
        self._picked[key] = (current.version, frozenset(values))
        return self._use(current, channel, user_id, select, values)

    def use_custom_id(
        self,
        message: Message | int,
        user_id: int,
        custom_id: str,
        *,
        values: Sequence[str] | None,
    ) -> InteractionHandle:
        current, channel = self._visible(message, user_id)
        for placed in walk(current.components):
            if placed.component.get("custom_id") == custom_id:
                return self._use(current, channel, user_id, placed.component, values)
        raise ComponentNotFound(f"no component with custom_id {custom_id!r}: {current.controls()}")

    def state(self, handle: InteractionHandle) -> InteractionState:
        return self._states[handle.id]

    def _visible(self, message: Message | int, user_id: int) -> tuple[Message, Channel]:
        current = self._store.require(message if isinstance(message, int) else message.id)
        channel = self._registry.channel(current.channel_id)
        check_can_see(self._registry, current, channel, user_id)
        return current, channel

    def submit_modal(
        self, opened: InteractionHandle, values: Mapping[str, Given], user_id: int | None
    ) -> InteractionHandle:
        state = self._states[opened.id]
        modal = state.modal
        if modal is None:
            raise CannotSubmit(f"the bot showed no modal for {opened}")
        submitter = state.user_id if user_id is None else user_id
        if submitter != state.user_id:
            raise CannotSubmit(
                f"modal {modal.title!r} was shown to user {state.user_id}; user {submitter} "
                "never saw it"
            )
        if state.modal_submitted:
            raise CannotSubmit(f"modal {modal.title!r} was already submitted, which closed it")
        data = submission(modal, values)
        state.modal_submitted = True
        message = self._store.require(state.source_message_id)
        channel = self._registry.channel(state.channel_id)
        described = f"submission of modal {modal.title!r} by user {submitter} on {message.id}"
        kind = MODAL_SUBMIT_INTERACTION
        return self._dispatch(message, channel, submitter, data, kind, described, state)

    def _use(
        self,
        message: Message,
        channel: Channel,
        user_id: int,
        component: Component,
        values: Sequence[str] | None,
    ) -> InteractionHandle:
        described = f"{describe_use(component, values)} by user {user_id} on message {message.id}"
        data = component_data(component, values)
        return self._dispatch(message, channel, user_id, data, COMPONENT_INTERACTION, described)

    def _dispatch(
        self,
        message: Message,
        channel: Channel,
        user_id: int,
        data: InteractionData | ModalSubmitData,
        kind: int,
        description: str,
        triggered_by: InteractionState | None = None,
    ) -> InteractionHandle:
        interaction_id = self._snowflakes.next()
        token = "emulated." + secrets.token_urlsafe(48)
        payload: InteractionPayload = build_payload(
            registry=self._registry,
            interaction_id=interaction_id,
            token=token,
            application_id=self._application_id,
            user_id=user_id,
            channel=channel,
            message=message,
            data=data,
            kind=kind,
        )
        now = self._clock()
        state = InteractionState(
            id=interaction_id,
            token=token,
            user_id=user_id,
            channel_id=channel.id,
            guild_id=channel.guild_id,
            source_message_id=message.id,
            custom_id=data["custom_id"],
            description=description,
            payload=payload,
            deadline=now + self._response_window,
            token_expires=now + self._token_lifetime,
            kind=kind,
            triggered_by=triggered_by,
        )
        self._responder.register(state)
        self._states[state.id] = state
        if self._endpoint.active:
            # With an Interactions Endpoint URL set, Discord sends no INTERACTION_CREATE.
            state.over_http = True
            self._endpoint.deliver(state)
        else:
            delivery = self._gateway.dispatch("INTERACTION_CREATE", payload)
            state.delivered_to, state.queued_for = delivery.live, delivery.queued
        handle = InteractionHandle(state, store=self._store, pulse=self._pulse, clock=self._clock)
        self.handles.append(handle)
        return handle


def check_can_see(registry: Registry, message: Message, channel: Channel, user_id: int) -> None:
    """A person can only use components on messages they can see."""
    registry.user(user_id)
    if message.ephemeral_for is not None and message.ephemeral_for != user_id:
        raise ComponentNotFound(
            f"message {message.id} is ephemeral for user {message.ephemeral_for}; "
            f"user {user_id} cannot see it"
        )
    if channel.is_dm and channel.recipient_id != user_id:
        raise ComponentNotFound(
            f"message {message.id} is in the DM with user {channel.recipient_id}; "
            f"user {user_id} cannot see it"
        )
    if channel.guild_id is not None and user_id not in registry.guild(channel.guild_id).members:
        raise ComponentNotFound(
            f"user {user_id} is not a member of guild {channel.guild_id}, so cannot see "
            f"message {message.id}"
        )


def describe_use(component: Component, values: Sequence[str] | None) -> str:
    if component["type"] == BUTTON:
        return f"click on {component.get('label')!r}"
    return f"choice of {list(values or [])} in select {component.get('placeholder')!r}"
