"""A simulated person clicking in Slack: finds things by their visible text and sends exactly
the `block_actions` payload Slack would, one per click, tick or choice."""

from __future__ import annotations

import copy
import secrets
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .delivery import Delivery, Tamper, Via
from .interaction import (
    ClientState,
    Target,
    button_action,
    choice_action,
    find_button,
    find_option,
    options_of,
)
from .types import ActionPayload, BlockActionsPayload, JSONDict, StateValues
from .workspace import Message, User

if TYPE_CHECKING:
    from .emulator import SlackEmulator


class Person:
    """Acts on the newest version of a message unless `stale=True` (a client not yet refreshed).

    Every method returns the `Delivery` of what it sent; whether the app acknowledged it is in
    `delivery.acked` (use `delivery.assert_acked()`), and unacknowledged ones also land in
    `emulator.unacked`.
    """

    def __init__(self, emulator: SlackEmulator, user: User) -> None:
        self._emulator = emulator
        self.user = user

    @property
    def id(self) -> str:
        return self.user.id

    def __repr__(self) -> str:
        return f"Person({self.user.id!r}, {self.user.name!r})"

    # ---- what the person sees ----------------------------------------------------------------

    def sees(self, message: Message) -> Message:
        """The version of `message` now on this person's screen."""
        latest = self._emulator.workspace.latest(message.channel, message.ts)
        if latest is None:
            raise AssertionError(f"{self} cannot see message {message.channel}/{message.ts}")
        if latest.deleted:
            raise AssertionError(
                f"{self} cannot act on message {message.channel}/{message.ts}: it was deleted"
            )
        return latest

    def selections(self, message: Message) -> StateValues:
        """The `state.values` this person's next click on `message` would carry."""
        shown = self.sees(message)
        return self._state(shown).state_values(shown.blocks)

    # ---- actions -----------------------------------------------------------------------------

    async def click_button(
        self,
        message: Message,
        label: str,
        *,
        hint: str | None = None,
        via: Via | None = None,
        tamper: Tamper = "none",
        stale: bool = False,
    ) -> Delivery:
        """Click the button labelled `label`; a `confirm` dialog is accepted (and recorded)."""
        shown = message if stale else self.sees(message)
        target = find_button(shown, label, hint)
        action = button_action(target, self._emulator.action_ts())
        delivery = await self._send(shown, action, via, tamper)
        confirm = target.element.get("confirm")
        return replace(delivery, confirm=copy.deepcopy(confirm)) if confirm else delivery

    async def choose_radio(
        self,
        message: Message,
        label: str,
        *,
        hint: str | None = None,
        via: Via | None = None,
        tamper: Tamper = "none",
        stale: bool = False,
    ) -> Delivery:
        """Select the radio button labelled `label` (`hint` narrows to one question)."""
        return await self._choose(message, label, "radio_buttons", hint, via, tamper, stale)

    async def choose_menu_option(
        self,
        message: Message,
        label: str,
        *,
        hint: str | None = None,
        via: Via | None = None,
        tamper: Tamper = "none",
        stale: bool = False,
    ) -> Delivery:
        """Pick `label` in a `static_select` menu."""
        return await self._choose(message, label, "static_select", hint, via, tamper, stale)

    async def toggle_checkbox(
        self,
        message: Message,
        label: str,
        *,
        hint: str | None = None,
        via: Via | None = None,
        tamper: Tamper = "none",
        stale: bool = False,
    ) -> Delivery:
        """One click on the checkbox labelled `label`: ticks it, or unticks it if ticked."""
        shown = message if stale else self.sees(message)
        target, option = find_option(shown, label, frozenset({"checkboxes"}), hint)
        state = self._state(shown)
        ticked = {o.get("value") for o in state.selected(target)}
        ticked ^= {option.get("value")}
        in_order = [o for o in options_of(target.element) if o.get("value") in ticked]
        entry = state.choose(target, in_order)
        action = choice_action(target, entry, self._emulator.action_ts())
        return await self._send(shown, action, via, tamper)

    async def tick_checkboxes(
        self,
        message: Message,
        labels: Sequence[str],
        *,
        hint: str | None = None,
        via: Via | None = None,
        tamper: Tamper = "none",
    ) -> list[Delivery]:
        """Tick each unticked box in turn; every tick is its own `block_actions`."""
        return await self._set_boxes(message, labels, True, hint, via, tamper)

    async def untick_checkboxes(
        self,
        message: Message,
        labels: Sequence[str],
        *,
        hint: str | None = None,
        via: Via | None = None,
        tamper: Tamper = "none",
    ) -> list[Delivery]:
        return await self._set_boxes(message, labels, False, hint, via, tamper)

    # ---- internals ---------------------------------------------------------------------------

    def _state(self, message: Message) -> ClientState:
        return self._emulator.client_states.of(self.user.id, message)

    def _is_ticked(self, message: Message, target: Target, option: JSONDict) -> bool:
        values = {o.get("value") for o in self._state(message).selected(target)}
        return option.get("value") in values

    async def _set_boxes(
        self,
        message: Message,
        labels: Sequence[str],
        ticked: bool,
        hint: str | None,
        via: Via | None,
        tamper: Tamper,
    ) -> list[Delivery]:
        deliveries = []
        for label in labels:
            shown = self.sees(message)
            target, option = find_option(shown, label, frozenset({"checkboxes"}), hint)
            if self._is_ticked(shown, target, option) == ticked:
                state = "already ticked" if ticked else "not ticked"
                raise AssertionError(f"{self}: checkbox {label!r} is {state} in {target.block_id}")
            toggle = self.toggle_checkbox(message, label, hint=hint, via=via, tamper=tamper)
            deliveries.append(await toggle)
        return deliveries

    async def _choose(
        self,
        message: Message,
        label: str,
        kind: str,
        hint: str | None,
        via: Via | None,
        tamper: Tamper,
        stale: bool,
    ) -> Delivery:
        shown = message if stale else self.sees(message)
        target, option = find_option(shown, label, frozenset({kind}), hint)
        entry = self._state(shown).choose(target, [option])
        action = choice_action(target, entry, self._emulator.action_ts())
        return await self._send(shown, action, via, tamper)

    async def _send(
        self, shown: Message, action: ActionPayload, via: Via | None, tamper: Tamper
    ) -> Delivery:
        payload = self._payload(shown, action)
        return await self._emulator.deliver(dict(payload), via=via, tamper=tamper)

    def _payload(self, shown: Message, action: ActionPayload) -> BlockActionsPayload:
        emulator = self._emulator
        identity = emulator.identity
        channel = emulator.workspace.channels[shown.channel]
        trigger_id = f"{int(emulator.clock())}.{secrets.randbelow(10**9)}.{secrets.token_hex(16)}"
        return {
            "type": "block_actions",
            "user": {
                "id": self.user.id,
                "username": self.user.name,
                "name": self.user.name,
                "team_id": self.user.team_id,
            },
            "api_app_id": identity.app_id,
            "token": identity.verification_token,
            "container": {
                "type": "message",
                "message_ts": shown.ts,
                "channel_id": shown.channel,
                "is_ephemeral": False,
            },
            "trigger_id": trigger_id,
            "team": {"id": identity.team_id, "domain": identity.team_domain},
            "enterprise": None,
            "is_enterprise_install": False,
            "channel": {"id": channel.id, "name": channel.name},
            "message": shown.to_slack(),
            "state": self._state(shown).state_values(shown.blocks),
            "response_url": emulator.response_urls.create(self.user.id, shown.channel, shown.ts),
            "actions": [action],
        }
