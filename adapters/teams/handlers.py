"""The Teams listeners' work: a delivery to `/teams/messages` has its token checked
(`tokens`), then goes through the SDK's CloudAdapter to `on_turn`; a press on a card becomes one
`Broker.act` call, answered with the card as the person who pressed now sees it (the broker
replaces the message for everyone through the connector). See ARCHITECTURE.md."""

from __future__ import annotations

import asyncio
import logging
import warnings
from typing import Any

from aiohttp import web
from microsoft_agents.activity import Activity, ActivityTypes, InvokeResponse
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.authorization import ClaimsIdentity
from pydantic import ValidationError

from askbridge.adapters.teams.clicks import ACTION_INVOKE, read_click
from askbridge.adapters.teams.ids import FILL, BadPress, Press, read_press
from askbridge.adapters.teams.members import Members
from askbridge.adapters.teams.notes import note
from askbridge.adapters.teams.render import CONTENT_TYPE, render
from askbridge.adapters.teams.tokens import TokenCheck, Unauthorized
from askbridge.core.api.errors import error_response, parse_json
from askbridge.core.api.reading import read_body
from askbridge.core.broker import Broker
from askbridge.core.errors import NotFound
from askbridge.core.forms import Form
from askbridge.core.intents import Refusal, Refused
from askbridge.core.view import NO_LONGER_AVAILABLE

log = logging.getLogger("askbridge.teams")

PATH = "/teams/messages"
MESSAGE = "application/vnd.microsoft.activity.message"


class Deliveries:
    """`/teams/messages`: what the Bot Connector delivers, checked, to the SDK and `on_turn`."""

    def __init__(
        self, broker: Broker, adapter: CloudAdapter, check: TokenCheck, members: Members
    ) -> None:
        self._broker = broker
        self._members = members
        self._adapter = adapter
        self._check = check
        self._handling: set[asyncio.Task[object]] = set()
        self._listening = True

    async def drain(self) -> None:
        """Take no more deliveries; those being handled finish first."""
        self._listening = False
        if self._handling:
            await asyncio.gather(*self._handling, return_exceptions=True)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if not self._listening:
            return web.json_response({"error": "askbridge is shutting down"}, status=503)
        task = asyncio.current_task()
        assert task is not None
        self._handling.add(task)
        try:
            return await self._verified(request)
        finally:
            self._handling.discard(task)

    async def _verified(self, request: web.Request) -> web.StreamResponse:
        # The token first: nothing of a stranger's body is read.
        try:
            token = await self._check.token(request.headers.get("Authorization"))
        except Unauthorized as why:
            return _refused(why)
        activity = await _activity(request)
        if isinstance(activity, web.Response):
            return activity
        try:
            claims = token.claims_for(
                str(activity.get("channelId") or ""), str(activity.get("serviceUrl") or "")
            )
        except Unauthorized as why:
            return _refused(why)
        with warnings.catch_warnings():
            # The SDK reads the verified claims from the request under this string key.
            warnings.simplefilter("ignore", web.NotAppKeyWarning)
            request["claims_identity"] = ClaimsIdentity(claims, authentication_type="Bearer")
        if not isinstance(activity.get("recipient"), dict):
            # The SDK reads the activity without it, then fails on the answer, which goes back
            # to the bot the activity names.
            return _unreadable("recipient: Teams names the bot each activity is for")
        try:
            response = await self._adapter.process(request, self)
        except ValidationError as error:
            # Signed by the connector, so only a change in Teams' format lands here; the SDK
            # reads the activity before any turn (a turn's own failures go to `turn_failed`).
            return _unreadable(_first_problem(error))
        return response if response is not None else web.Response(status=202)

    async def on_turn(self, context: TurnContext) -> None:
        """The SDK's agent: a press on a card answers with the card as the person now sees
        it; every other activity (a message to the bot, its installation) needs nothing."""
        activity = context.activity
        if activity.type != ActivityTypes.invoke or activity.name != ACTION_INVOKE:
            return
        try:
            press = read_press(activity.value)
            click = read_click(activity, press, await self._form(press))
        except BadPress as error:
            log.warning("a press on a Teams card that askbridge cannot read: %s", error)
            await _answer(context, _message(NO_LONGER_AVAILABLE))
            return
        # The activity's id is the press's: a delivery of it again (the connector retrying,
        # to this replica or another) is known and counts once.
        outcome = await self._broker.act(
            click.request_id,
            click.person,
            click.intent,
            click.origin,
            click_id=activity.id or None,
        )
        # The names kept of the conversation's members: a press waits on no lookup.
        conversation = activity.conversation.id if activity.conversation is not None else ""
        names = self._members.known(conversation)
        said = note(outcome, names)
        if outcome.view is None:
            await _answer(context, _message(said or NO_LONGER_AVAILABLE))
        elif isinstance(outcome, Refused) and outcome.reason is Refusal.BAD_VALUES:
            # The form again, as the person left it, each refused field saying why.
            card = render(
                outcome.view,
                said,
                given=outcome.values,
                problems=outcome.field_problems,
                names=names,
            )
            await _answer(context, _card(card))
        else:
            # Only the person who pressed sees this card; everyone else sees the message the
            # broker replaces through the connector.
            await _answer(context, _card(render(outcome.view, said, names=names)))

    async def _form(self, press: Press) -> Form | None:
        """The typed form a press on Submit fills in: its inputs are read against it."""
        if press.verb != FILL:
            return None
        try:
            return (await self._broker.get(press.request_id)).form
        except NotFound:
            return None


async def turn_failed(context: TurnContext, error: Exception) -> None:
    """In place of the SDK's default, which prints the exception and tells it to the person."""
    # `%s`: an HTTP error's repr holds the request's headers, and so the bot's token.
    log.error("a Teams activity failed: %s: %s", type(error).__name__, error)


def _first_problem(error: ValidationError) -> str:
    problem = error.errors()[0]
    where = ".".join(str(step) for step in problem["loc"]) or "the activity"
    return f"{where}: {problem['msg']}"


def _unreadable(problem: str) -> web.Response:
    log.warning("could not read an activity: %s", problem)
    return error_response(400, f"not an activity Teams would send: {problem}")


def _refused(why: Unauthorized) -> web.Response:
    log.warning("refused a request to %s: %s", PATH, why)
    return error_response(401, "unauthorized")


async def _activity(request: web.Request) -> dict[str, Any] | web.Response:
    """The activity the body holds, or the 400 that says why it holds none."""
    try:
        body = parse_json(await read_body(request))
    except ValueError as error:
        return error_response(400, f"the body is not JSON: {error}")
    if not isinstance(body, dict):
        return error_response(400, "the body is not an activity (a JSON object)")
    return body


def _card(card: dict[str, object]) -> dict[str, object]:
    return {"statusCode": 200, "type": CONTENT_TYPE, "value": card}


def _message(text: str) -> dict[str, object]:
    return {"statusCode": 200, "type": MESSAGE, "value": text}


async def _answer(context: TurnContext, body: dict[str, object]) -> None:
    await context.send_activity(
        Activity(type=ActivityTypes.invoke_response, value=InvokeResponse(status=200, body=body))
    )
