"""A click in Slack becomes a broker call, and the broker's answer becomes feedback for the person.

`parse` reads bolt's `body`; `Clicks.on_action` is the one bolt listener: it acknowledges every
action at once (Slack shows a warning after 3 s otherwise) and does the slow work afterwards.
Radio and checkbox changes stay in the person's Slack client until they press Submit, whose
payload carries `state.values` for the whole message. Whoever is not among the request's
answerers is told privately who is; a vote that does not decide the request yet is confirmed
privately, with the count so far.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.slack.action_ids import ActionId, BadActionId, Kind
from adapters.slack.blockkit import StateValues
from adapters.slack.groups import UserGroups
from adapters.slack.render import not_eligible_note, vote_note
from adapters.slack.surface import PLATFORM, SlackSurface
from core.broker import Broker
from core.errors import AskbridgeError, NotEligible, NotFound
from core.models import MessageRef, Person, Request, Selections
from core.policy import may_answer

log = logging.getLogger("askbridge.slack")

NO_LONGER_AVAILABLE = "This question is no longer available."
FAILED = "Something went wrong, so your click was not counted. Please try again."
SHUTDOWN_GRACE_S = 5.0


@dataclass(frozen=True)
class Interaction:
    """One click as askbridge needs it: which element, who, on which message, in which install."""

    action_id: str
    person: Person
    origin: MessageRef
    state: StateValues = field(default_factory=dict)
    response_url: str | None = None


def parse(body: Mapping[str, Any]) -> Interaction:
    """Read a `block_actions` payload; ValueError when it is not a click on a message."""
    if body.get("type") != "block_actions":
        raise ValueError(f"not a block_actions payload (type {body.get('type')!r})")
    actions = body.get("actions")
    user = body.get("user")
    container = body.get("container")
    if not (isinstance(actions, list) and actions and isinstance(actions[0], dict)):
        raise ValueError("block_actions payload without actions")
    if not (isinstance(user, dict) and user.get("id")):
        raise ValueError("block_actions payload without a user")
    if not (
        isinstance(container, dict) and container.get("channel_id") and container.get("message_ts")
    ):
        raise ValueError(f"click outside a message (container {container!r})")
    message = body.get("message")
    thread_ts = message.get("thread_ts") if isinstance(message, dict) else None
    ts = str(container["message_ts"])
    team = body.get("team")
    team_id = str((team.get("id") if isinstance(team, dict) else None) or user.get("team_id") or "")
    # What the click claims about its workspace and app; the broker checks each claim against
    # what was recorded when the message was posted, so a click from another install of the
    # app cannot answer.
    claims: dict[str, Any] = {"team_id": team_id, "app_id": str(body.get("api_app_id") or "")}
    if thread_ts and thread_ts != ts:
        claims["thread_ts"] = thread_ts
    origin = MessageRef(
        platform=PLATFORM, channel=str(container["channel_id"]), message_id=ts, data=claims
    )
    user_id = str(user["id"])
    person = Person(
        platform=PLATFORM, id=user_id, name=str(user.get("username") or user.get("name") or "")
    )
    state = body.get("state")
    values = state.get("values") if isinstance(state, dict) else None
    response_url = body.get("response_url")
    return Interaction(
        action_id=str(actions[0].get("action_id", "")),
        person=person,
        origin=origin,
        state=values if isinstance(values, dict) else {},
        response_url=response_url if isinstance(response_url, str) else None,
    )


def selections(request_id: str, state: StateValues) -> Selections:
    """What the person picked in the message's radio buttons and checkboxes for `request_id`."""
    chosen: Selections = {}
    for elements in state.values():
        if not isinstance(elements, dict):
            continue
        for action_id, entry in elements.items():
            try:
                action = ActionId.unpack(action_id)
            except BadActionId:
                continue
            if action.request_id != request_id or action.kind not in (Kind.RADIO, Kind.CHECK):
                continue
            if not isinstance(entry, dict) or action.question is None:
                continue
            picked: list[Any] = entry.get("selected_options") or [entry.get("selected_option")]
            values = [o.get("value") for o in picked if isinstance(o, dict)]
            indices = {int(v) for v in values if isinstance(v, str) and v.isdecimal()}
            if indices:
                chosen[action.question] = tuple(sorted(indices))
    return chosen


class Clicks:
    """The bolt listener for every action, and the broker calls and feedback behind it."""

    def __init__(self, broker: Broker, surface: SlackSurface) -> None:
        self.broker = broker
        self.surface = surface
        self.groups = UserGroups(surface.client, broker.clock)
        self._tasks: set[asyncio.Task[None]] = set()

    async def on_action(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        try:
            interaction = parse(body)
        except ValueError as error:
            log.warning("ignored a Slack action: %s", error)
            return
        try:
            action = ActionId.unpack(interaction.action_id)
        except BadActionId as error:
            log.info("click on an element askbridge does not know: %s", error)
            self._spawn(self._tell(interaction, NO_LONGER_AVAILABLE), "askbridge-slack-unknown")
            return
        if action.kind in (Kind.RADIO, Kind.CHECK):
            return
        name = f"askbridge-slack-{action.kind.value}-{action.request_id}"
        self._spawn(self._act(interaction, action), name)

    async def _act(self, interaction: Interaction, action: ActionId) -> None:
        person, origin, request_id = interaction.person, interaction.origin, action.request_id
        unchecked: tuple[str, ...] = ()
        voted: Request | None = None
        try:
            # Where the click came from is the broker's to check (message, workspace, app);
            # the request is read here only for the answerers a group lookup may concern.
            request = await self.broker.get(request_id)
            person, unchecked = await self._with_groups(person, request)
            if action.kind is Kind.CANCEL:
                await self.broker.cancel(request_id, person, origin)
            elif action.kind is Kind.PICK:
                question, option = action.choice()
                voted = await self.broker.submit(request_id, person, {question: (option,)}, origin)
            else:
                chosen = selections(request_id, interaction.state)
                voted = await self.broker.submit(request_id, person, chosen, origin)
        except NotFound:
            text = NO_LONGER_AVAILABLE
        except NotEligible as error:
            text = not_eligible_note(error.answerers, unchecked)
        except AskbridgeError as error:
            text = str(error)
        except Exception:
            log.exception("handling a %s click on %s failed", action.kind.value, request_id)
            text = FAILED
        else:
            if voted is None or voted.status.is_terminal:
                return
            # A vote toward a quorum: the message shows the tally; the voter learns it counted.
            text = vote_note(voted, person)
        await self._tell(interaction, text)

    async def _with_groups(
        self, person: Person, request: Request
    ) -> tuple[Person, tuple[str, ...]]:
        """`person` with the request's `slack-group:` answerers they are in, and the groups
        that could not be checked; Slack is asked only when the groups could decide."""
        policy = request.policy
        if not policy.answerers or may_answer(policy, person):
            return person, ()
        found = await self.groups.membership(person.id, policy.answerers)
        return person.model_copy(update={"groups": found.groups}), found.unchecked

    async def _tell(self, interaction: Interaction, text: str) -> None:
        """An ephemeral note; through the click's response_url when chat.postEphemeral fails."""
        try:
            await self.surface.notify(interaction.person, interaction.origin, text)
            return
        except Exception as error:
            log.warning("chat.postEphemeral to %s failed: %s", interaction.person.id, error)
        if not interaction.response_url:
            return
        try:
            sent = await AsyncWebhookClient(interaction.response_url).send(
                text=text, response_type="ephemeral", replace_original=False
            )
        except Exception as error:
            log.warning("telling %s through response_url failed: %s", interaction.person.id, error)
            return
        if sent.status_code != 200:
            log.warning(
                "telling %s through response_url failed: HTTP %s %s",
                interaction.person.id,
                sent.status_code,
                sent.body,
            )

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Let clicks already acknowledged finish; cancel what is left after a grace period."""
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=SHUTDOWN_GRACE_S)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
