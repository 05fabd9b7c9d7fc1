"""`POST /v1/hooks/claude-code`: Claude Code's HTTP hook, answered in this process.

The body is the hook input; the response is the hook output, so a settings file needs only
this URL (and the token as a header). The query string may set what the command hook takes
as flags: `target`, `answerer`, `quorum`, `timeout` (the hook's own timeout in seconds) and
`on_timeout` (ask or deny); the server's ASKBRIDGE_HOOK_* settings are the defaults.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from multidict import MultiMapping

from askbridge.core.api.app import read_json_object
from askbridge.core.api.errors import error_response
from askbridge.core.api.keys import BROKER
from askbridge.core.api.status import StatusObject
from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.errors import AskbridgeError
from askbridge.core.hooks.claude_code import CLAUDE_CODE_PATH, BadHookInput, HookOptions
from askbridge.core.hooks.flow import Unavailable, output_for, read_hook

log = logging.getLogger("askbridge.hooks")

HOOK_DEFAULTS: web.AppKey[HookOptions] = web.AppKey("hook_defaults", HookOptions)


def add_hook_routes(app: web.Application, defaults: HookOptions) -> None:
    app[HOOK_DEFAULTS] = defaults
    app.router.add_post(CLAUDE_CODE_PATH, claude_code_hook)


async def claude_code_hook(request: web.Request) -> web.Response:
    try:
        options = options_from_query(request.query, request.app[HOOK_DEFAULTS])
    except ValueError as error:
        return error_response(400, str(error))
    raw = await read_json_object(request)
    try:
        hooked = read_hook(raw)
    except BadHookInput as error:
        return error_response(400, str(error))
    output, _ = await output_for(hooked, options, BrokerAsking(request.app[BROKER]))
    return web.json_response(output.json_object())


QUERY_FIELDS = {
    "target": "target",
    "answerer": "answerers",
    "answerers": "answerers",
    "quorum": "quorum",
    "timeout": "timeout_s",
    "on_timeout": "on_timeout",
}


def options_from_query(query: MultiMapping[str], defaults: HookOptions) -> HookOptions:
    """The defaults with what the query string sets; ValueError naming a bad parameter."""
    unknown = sorted(set(query) - set(QUERY_FIELDS))
    if unknown:
        known = ", ".join(sorted(QUERY_FIELDS))
        raise ValueError(f"unknown query parameter {unknown[0]!r}; known: {known}")
    given: dict[str, Any] = {}
    for name, field in QUERY_FIELDS.items():
        values = [v for value in query.getall(name, []) for v in value.split(",") if v.strip()]
        if not values:
            continue
        if field in ("target", "answerers"):
            given[field] = [*given.get(field, ()), *(v.strip() for v in values)]
        else:
            given[field] = values[-1].strip()
    return defaults.updated(given)


class BrokerAsking:
    """The broker of this process, as a hook's `Asking`."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    async def ask(self, ask: Ask) -> dict[str, Any]:
        try:
            request, _ = await self.broker.ask(ask)
        except AskbridgeError as error:
            raise Unavailable(str(error)) from error
        return StatusObject.of(request).model_dump(mode="json")

    async def wait(self, request_id: str, seconds: float) -> dict[str, Any]:
        if self.broker.closed:
            raise Unavailable("askbridge is shutting down")
        found = await self.broker.wait(request_id, seconds)
        return StatusObject.of(found).model_dump(mode="json")

    async def withdraw(self, request_id: str) -> None:
        try:
            await self.broker.withdraw(request_id)
        except AskbridgeError as error:
            log.info("did not withdraw %s: %s", request_id, error)
