"""Slack's HTTP deliveries as bolt requests, an interaction's form decoded with yarl (in C)
rather than bolt's `urllib.parse`, which was about a tenth of a click's CPU (see
docs/explanation/speed.md). The raw body, which bolt's signature check reads, is the one Slack
sent, and any other body (or one yarl would read differently) is left to bolt.
"""

from __future__ import annotations

import json

from aiohttp import web
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from yarl import URL

FORM = "application/x-www-form-urlencoded"


async def bolt_request(request: web.Request) -> AsyncBoltRequest:
    """What `slack_bolt.adapter.aiohttp.to_bolt_request` makes of `request`, with an
    interaction's form decoded faster; ValueError for a body that is not what it says."""
    raw = await request.text()
    payload = interaction_payload(raw, request.content_type)
    if payload is None:
        return AsyncBoltRequest(body=raw, query=request.query_string, headers=request.headers)  # type: ignore[arg-type]
    made = AsyncBoltRequest(body="", query=request.query_string, headers=request.headers)  # type: ignore[arg-type]
    made.raw_body = raw
    made.body = json.loads(payload)
    if not isinstance(made.body, dict):
        raise ValueError("an interaction's payload is not a JSON object")
    made.context = build_async_context(AsyncBoltContext({}), made.body)
    return made


def interaction_payload(raw: str, content_type: str) -> str | None:
    """The decoded `payload` field of a form body, as `urllib.parse.parse_qsl` would give it
    (the last one, when there are several); None when bolt should parse the body itself."""
    if content_type != FORM or raw.startswith("{") or "payload" not in raw or not _plain(raw):
        return None
    # `encoded`: the form is percent-encoded already; yarl would otherwise encode it once more
    # before decoding it, a second pass over the whole message (about half of this call).
    found = URL("http://slack.invalid/?" + raw, encoded=True).query.getall("payload", [])
    return found[-1] if found else None


def _plain(raw: str) -> bool:
    """Only the characters a form as Slack sends it is made of: in a URL, a '#' would end the
    query, and spaces and control characters would be cleaned away, not decoded."""
    return raw.isascii() and raw.isprintable() and " " not in raw and "#" not in raw
