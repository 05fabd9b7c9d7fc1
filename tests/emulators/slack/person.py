"""A simulated person clicking in Slack: finds things by their visible text and sends exactly
the `block_actions` payload Slack would, one per click, tick or choice."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .blocks import text_of
from .delivery import Delivery, Tamper, Via
from .interaction import (
    MULTI_CHOICE,
    PICKERS,
    SINGLE_CHOICE,
    VALUE_INPUTS,
    ClientState,
    Target,
    button_action,
    choice_action,
    find_button,
    find_option,
    options_of,
)
from .types import (
    ActionPayload,
    BlockActionsPayload,
    JSONDict,
    StateValues,
    UserRef,
    ViewSubmissionPayload,
)
from .views import OpenView, ViewSubmission, answer_of
from .workspace import Message, User

if TYPE_CHECKING:
    from .emulator import SlackEmulator


class NothingSent(AssertionError):
    """What the person did would not make Slack's client send the app anything."""


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

    # ---- modals ------------------------------------------------------------------------------

    async def submit_view(
        self,
        view: OpenView,
        *,
        text: Mapping[str, str] | None = None,
        choose: Mapping[str, Sequence[str]] | None = None,
        pick: Mapping[str, str | int | None] | None = None,
        via: Via | None = None,
        tamper: Tamper = "none",
        client_checks: bool = True,
    ) -> ViewSubmission:
        """Type into the modal's text inputs (numbers, email addresses and URLs too), choose
        in its radio buttons, checkboxes and menus (`[]` clears them), and `pick` in its date
        pickers (YYYY-MM-DD), time pickers (HH:mm) and date-and-time pickers (UNIX seconds),
        each named by a word of its label or its block_id; then press its submit button.

        Inputs not named keep what they hold. Slack's client checks the inputs first and sends
        nothing when a required one is empty or text breaks a length limit; `client_checks=
        False` sends what was typed anyway, to test the app's own checks. The app's answer is
        applied to `view` (errors shown, view replaced, or closed)."""
        if view.closed:
            raise AssertionError(f"{self} cannot submit view {view.id}: it is closed")
        if view.user != self.user.id:
            raise AssertionError(f"{self} cannot submit view {view.id}: it is {view.user}'s")
        if view.submit_label is None:
            raise AssertionError(f"view {view.id} ({view.title!r}) has no submit button")
        for name, value in (text or {}).items():
            view.state.type_text(view.find_input(name, VALUE_INPUTS), value)
        for name, labels in (choose or {}).items():
            target = view.find_input(name, SINGLE_CHOICE | MULTI_CHOICE)
            view.state.choose(target, _options(target, labels))
        for name, picked in (pick or {}).items():
            view.state.pick(view.find_input(name, frozenset(PICKERS)), picked)
        problems = view.client_errors() if client_checks else {}
        if problems:
            return ViewSubmission(view, None, errors=problems)
        payload = self._submission(view)
        delivery = await self._emulator.deliver(dict(payload), via=via, tamper=tamper)
        if not delivery.acked:
            return ViewSubmission(view, delivery, errors=dict(view.errors))
        answer = answer_of(delivery)
        refused = await self._emulator.views.respond(view, answer)
        return ViewSubmission(
            view,
            delivery,
            errors=dict(view.errors),
            closed=view.closed,
            response=answer,
            problems=refused,
        )

    def _submission(self, view: OpenView) -> ViewSubmissionPayload:
        emulator = self._emulator
        identity = emulator.identity
        return {
            "type": "view_submission",
            "team": {"id": identity.team_id, "domain": identity.team_domain},
            "user": self._user_ref(),
            "api_app_id": identity.app_id,
            "token": identity.verification_token,
            "trigger_id": emulator.views.issue_trigger(self.user.id),
            "view": emulator.views.to_slack(view),
            "response_urls": [],
            "is_enterprise_install": False,
            "enterprise": None,
        }

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
        state = self._state(shown)
        if kind == "radio_buttons" and not stale and option in state.selected(target):
            raise NothingSent(
                f"{self}: radio button {label!r} in {target.block_id} is already selected; "
                "selecting it again changes nothing, and Slack's client sends nothing"
            )
        entry = state.choose(target, [option])
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
        return {
            "type": "block_actions",
            "user": self._user_ref(),
            "api_app_id": identity.app_id,
            "token": identity.verification_token,
            "container": {
                "type": "message",
                "message_ts": shown.ts,
                "channel_id": shown.channel,
                "is_ephemeral": False,
            },
            "trigger_id": emulator.views.issue_trigger(self.user.id),
            "team": {"id": identity.team_id, "domain": identity.team_domain},
            "enterprise": None,
            "is_enterprise_install": False,
            "channel": {"id": channel.id, "name": channel.name},
            "message": shown.to_slack(),
            "state": self._state(shown).state_values(shown.blocks),
            "response_url": emulator.response_urls.create(self.user.id, shown.channel, shown.ts),
            "actions": [action],
        }

    def _user_ref(self) -> UserRef:
        user = self.user
        return {"id": user.id, "username": user.name, "name": user.name, "team_id": user.team_id}


def _options(target: Target, labels: Sequence[str]) -> list[JSONDict]:
    by_label = {text_of(o.get("text")).strip(): o for o in options_of(target.element)}
    missing = [label for label in labels if label.strip() not in by_label]
    if missing:
        raise AssertionError(
            f"No option labelled {missing!r} in {target.type} {target.block_id}; "
            f"options: {sorted(by_label)}"
        )
    chosen = {label.strip() for label in labels}
    return [o for label, o in by_label.items() if label in chosen]
