"""Slack's Socket Mode envelopes, each payload held to the shape the HTTP endpoint holds a body
to (`incoming.socket_request`) before bolt reads it.

bolt's own handler hands every envelope to bolt, which assumes the shape Slack gives it: a payload
of another shape failed inside bolt or slack_sdk, logged a traceback and was never acknowledged,
so Slack sent it again. Here such an envelope is acknowledged, as its HTTP twin gets a 400, and
logged once as a warning that says why and leaves the payload out (it may hold people's text).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.adapter.socket_mode.async_internals import send_async_response
from slack_bolt.app.async_app import AsyncApp
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from askbridge.adapters.slack.incoming import socket_request

log = logging.getLogger("askbridge.slack")


class SocketModeHandler(AsyncSocketModeHandler):
    """bolt's Socket Mode handler, reading each envelope as it comes off the socket: slack_sdk
    would build its request first, and fail on a payload that is not an object."""

    def __init__(self, app: AsyncApp, app_token: str) -> None:
        super().__init__(app, app_token=app_token)
        self.client.socket_mode_request_listeners.clear()
        self.client.message_listeners.append(self._on_message)  # type: ignore[arg-type]

    async def _on_message(
        self, client: SocketModeClient, message: dict[str, Any], raw: str | None
    ) -> None:
        envelope_id = message.get("envelope_id")
        if not isinstance(envelope_id, str):
            # Slack's greeting; a disconnect never reaches the listeners.
            return
        started = time.time()
        try:
            request = socket_request(message.get("payload"))
        except ValueError as error:
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=envelope_id))
            log.warning(
                "ignored a Socket Mode envelope: not a Slack interaction askbridge takes: %s", error
            )
            return
        response = await self.app.async_dispatch(request)
        # bolt's own reply: the acknowledgement, with the response a form's listener gave.
        envelope = SocketModeRequest(str(message.get("type")), envelope_id, payload={})
        await send_async_response(client, envelope, response, started)
