"""Modals: the trigger ids interactions hand out, `views.open`, the views on each person's
screen, and what the app's answer to a `view_submission` does to them.

A trigger id works once, within 3 seconds of the interaction that carried it. A submission
first passes the checks of Slack's own client (a required input left empty, text outside
`min_length`/`max_length`: nothing is sent, the modal shows why); then the app answers with a
`response_action` that keeps the modal open with errors, replaces it, or closes it.
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .blocks import text_of, visible_text
from .delivery import Delivery
from .inputs import client_problem
from .interaction import VALUE_INPUTS, ClientState, Target, targets
from .types import Block, JSONDict, StateEntry
from .validation import validate_view
from .workspace import Workspace

TRIGGER_TTL_S = 3.0
REQUIRED = "Please complete this required field."


@dataclass
class Trigger:
    id: str
    user: str
    issued_at: float
    used: bool = False


@dataclass
class OpenView:
    """A modal as one person sees it: every version the app gave it, what they typed and
    chose, the errors the app put on its inputs, and whether it is closed."""

    id: str
    user: str
    versions: list[JSONDict]
    hashes: list[str]
    errors: dict[str, str] = field(default_factory=dict)
    """block_id -> the error shown under that input (the app's `response_action: errors`)."""
    closed: bool = False
    state: ClientState = field(default_factory=ClientState)

    @property
    def view(self) -> JSONDict:
        """The view as the app last gave it."""
        return self.versions[-1]

    @property
    def blocks(self) -> list[Block]:
        blocks = self.view.get("blocks")
        return blocks if isinstance(blocks, list) else []

    @property
    def title(self) -> str:
        return text_of(self.view.get("title"))

    @property
    def submit_label(self) -> str | None:
        """The submit button's text; None when the view has none (nothing to submit)."""
        return text_of(self.view.get("submit")) or None

    @property
    def callback_id(self) -> str:
        return str(self.view.get("callback_id") or "")

    @property
    def private_metadata(self) -> str:
        return str(self.view.get("private_metadata") or "")

    @property
    def visible_text(self) -> str:
        """The title, then the blocks as a person reads them (labels, hints, options)."""
        return "\n".join(x for x in (self.title, visible_text("", self.blocks)) if x)

    def inputs(self) -> list[Target]:
        """The input elements, top to bottom, each with the text around it (its label)."""
        input_ids = {b.get("block_id") for b in self.blocks if b.get("type") == "input"}
        return [t for t in targets(self.blocks) if t.block_id in input_ids]

    def find_input(self, name: str, kinds: frozenset[str]) -> Target:
        """The one input of `kinds` whose block_id or label mentions `name`."""
        fields = [t for t in self.inputs() if t.type in kinds]
        found = [t for t in fields if t.matches(name)]
        if len(found) == 1:
            return found[0]
        problem = "No input" if not found else f"{len(found)} inputs"
        shown = [f"{t.type} {t.block_id}: {_label(self, t)!r}" for t in fields]
        raise AssertionError(
            f"{problem} of {sorted(kinds)} labelled {name!r} in view {self.id} "
            f"({self.title!r}). Inputs: {shown or 'none'}"
        )

    def client_errors(self) -> dict[str, str]:
        """What Slack's client says before it sends a submission: required inputs left empty,
        text outside the input's length limits, numbers, email addresses and URLs that are
        not ones (or numbers out of the input's bounds), more options than a multi-select
        takes."""
        optional = {b.get("block_id") for b in self.blocks if b.get("optional") is True}
        found: dict[str, str] = {}
        for target in self.inputs():
            entry = self.state.entry(target)
            if entry is None or entry_is_empty(entry):
                if target.block_id not in optional:
                    found[target.block_id] = REQUIRED
            elif target.type == "plain_text_input":
                problem = _length_problem(target.element, str(entry.get("value") or ""))
                if problem:
                    found[target.block_id] = problem
            elif problem := client_problem(target.element, entry):
                found[target.block_id] = problem
        return found

    def value(self, name: str) -> str | None:
        """What a text input holds now (its initial value until the person types)."""
        entry = self.state.entry(self.find_input(name, VALUE_INPUTS))
        return None if entry is None else entry.get("value")


def _label(view: OpenView, target: Target) -> str:
    block = next(b for b in view.blocks if b.get("block_id") == target.block_id)
    return text_of(block.get("label"))


@dataclass(frozen=True)
class ViewSubmission:
    """One press of a modal's submit button and what came of it."""

    view: OpenView
    delivery: Delivery | None
    """None when Slack's own client refused to send it (see `errors`)."""
    errors: Mapping[str, str] = field(default_factory=dict)
    """block_id -> the error the modal showed under that input afterwards: Slack's client's
    when nothing was sent, else the app's (`response_action: errors`)."""
    closed: bool = False
    """The press closed the modal."""
    response: JSONDict | None = None
    """The app's answer: `{"response_action": ...}`, or None for a plain acknowledgement."""
    problems: tuple[str, ...] = ()
    """What Slack would refuse in the app's answer (unknown block_ids, an invalid view)."""

    def assert_sent(self) -> ViewSubmission:
        if self.delivery is None:
            raise AssertionError(f"Slack's client did not send it: {dict(self.errors)}")
        self.delivery.assert_acked()
        if self.problems:
            raise AssertionError(f"Slack refused the app's answer: {list(self.problems)}")
        return self


def _length_problem(element: JSONDict, text: str) -> str | None:
    most = element.get("max_length")
    least = element.get("min_length")
    if isinstance(most, int) and len(text) > most:
        return f"Must be {most} characters or fewer (this is {len(text)})."
    if isinstance(least, int) and len(text) < least:
        return f"Must be at least {least} characters."
    return None


@dataclass
class Views:
    workspace: Workspace
    clock: Callable[[], float]
    triggers: dict[str, Trigger] = field(default_factory=dict)
    opened: list[OpenView] = field(default_factory=list)
    """Every view ever opened, oldest first."""

    # ---- triggers ------------------------------------------------------------------------------

    def issue_trigger(self, user: str) -> str:
        """A trigger id for an interaction by `user`, as Slack puts in every payload."""
        now = self.clock()
        trigger_id = f"{int(now)}.{secrets.randbelow(10**9)}.{secrets.token_hex(16)}"
        self.triggers[trigger_id] = Trigger(trigger_id, user, now)
        return trigger_id

    def trigger(self, trigger_id: object) -> Trigger | None:
        return self.triggers.get(trigger_id) if isinstance(trigger_id, str) else None

    def expired(self, trigger: Trigger) -> bool:
        return self.clock() - trigger.issued_at > TRIGGER_TTL_S

    # ---- views ---------------------------------------------------------------------------------

    async def open(self, trigger: Trigger, view: JSONDict) -> OpenView:
        trigger.used = True
        opened = OpenView(f"V{secrets.token_hex(5).upper()}", trigger.user, [], [])
        self._show(opened, view)
        self.opened.append(opened)
        await self.workspace.notify()
        return opened

    async def update(self, opened: OpenView, view: JSONDict) -> None:
        """`views.update`: the new view replaces the old, as a new version."""
        self._show(opened, view)
        await self.workspace.notify()

    def find(self, view_id: object, external_id: object) -> OpenView | None:
        for opened in self.opened:
            if view_id is not None and opened.id == view_id:
                return opened
            if external_id is not None and opened.view.get("external_id") == external_id:
                return opened
        return None

    def of(self, user: str) -> list[OpenView]:
        return [v for v in self.opened if v.user == user]

    def to_slack(self, opened: OpenView) -> JSONDict:
        """The view object of API responses and `view_submission` payloads."""
        identity = self.workspace.identity
        view = copy.deepcopy(opened.view)
        return {
            "id": opened.id,
            "team_id": identity.team_id,
            "type": view.get("type", "modal"),
            "title": view.get("title"),
            "submit": view.get("submit"),
            "close": view.get("close"),
            "blocks": view.get("blocks", []),
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
            "external_id": view.get("external_id", ""),
            "state": opened.state.state_values(opened.blocks),
            "hash": opened.hashes[-1],
            "clear_on_close": bool(view.get("clear_on_close", False)),
            "notify_on_close": bool(view.get("notify_on_close", False)),
            "previous_view_id": None,
            "root_view_id": opened.id,
            "app_id": identity.app_id,
            "app_installed_team_id": identity.team_id,
            "bot_id": identity.bot_id,
        }

    def _show(self, opened: OpenView, view: JSONDict) -> None:
        shown = copy.deepcopy(view)
        for block in shown.get("blocks") or []:
            if isinstance(block, dict):
                block.setdefault("block_id", secrets.token_urlsafe(4))
        opened.versions.append(shown)
        opened.hashes.append(f"{int(self.clock())}.{secrets.token_hex(4)}")
        opened.errors = {}
        opened.state = ClientState()

    async def respond(self, opened: OpenView, response: JSONDict | None) -> tuple[str, ...]:
        """Apply the app's answer to a submission; what Slack would refuse in it."""
        action = None if response is None else response.get("response_action")
        problems: list[str] = []
        if action is None:
            opened.closed = True
        elif action == "errors":
            problems = self._errors(opened, response)
        elif action == "update":
            view = response.get("view") if response else None
            problems = validate_view(view)
            if not problems and isinstance(view, dict):
                self._show(opened, view)
        elif action == "clear":
            for view in self.of(opened.user):
                view.closed = True
        else:
            problems = [f"response_action {action!r} is not one the emulator knows"]
        await self.workspace.notify()
        return tuple(problems)

    @staticmethod
    def _errors(opened: OpenView, response: JSONDict | None) -> list[str]:
        errors = response.get("errors") if response else None
        if not isinstance(errors, dict) or not errors:
            return ["response_action errors needs a non-empty `errors` object"]
        inputs = {b.get("block_id") for b in opened.blocks if b.get("type") == "input"}
        problems = [
            f"errors names {key!r}, which is not the block_id of an input block"
            for key in errors
            if key not in inputs
        ]
        problems += [f"the error for {k!r} is not a string" for k, v in errors.items() if not v]
        if not problems:
            opened.errors = {str(k): str(v) for k, v in errors.items()}
        return problems


def answer_of(delivery: Delivery) -> JSONDict | None:
    """What the app answered a view_submission with: the Socket Mode ack's `payload`, or the
    JSON body of the HTTP response; None for a plain acknowledgement."""
    if delivery.via == "socket":
        payload = (delivery.ack or {}).get("payload")
        return payload if isinstance(payload, dict) and payload else None
    if not delivery.body:
        return None
    try:
        body: Any = json.loads(delivery.body)
    except json.JSONDecodeError:
        return None
    return body if isinstance(body, dict) and body else None


def entry_is_empty(entry: StateEntry) -> bool:
    """Nothing typed or chosen (Slack's client counts spaces as something typed)."""
    return not (
        entry.get("value")
        or entry.get("selected_option")
        or entry.get("selected_options")
        or entry.get("selected_date")
        or entry.get("selected_time")
        or entry.get("selected_date_time") is not None
    )
