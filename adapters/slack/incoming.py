"""Slack's HTTP deliveries as bolt requests, an interaction's form decoded with yarl (in C)
rather than bolt's `urllib.parse`, which was about a tenth of a click's CPU (see
docs/explanation/speed.md). The raw body, which the signature check reads, is the one Slack
sent.

Anyone can reach the endpoint, and bolt reads a body before it checks the signature, assuming
the shape Slack gives it, and logs the body of a request whose signature is wrong: so the
signature is checked here, with slack_sdk's verifier as bolt checks it, before the body is read
as anything (bolt's own check is off), and the body is handed to bolt only when it is an
interaction askbridge takes, shaped as bolt reads one (ValueError otherwise). A Socket Mode
envelope's payload is held to the same shape (`socket_request`) before bolt reads it.
"""

from __future__ import annotations

import re
import reprlib
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_internals import build_async_context
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier
from yarl import URL

from askbridge.adapters.slack.ids import FILL_CALLBACK_ID, FORM_CALLBACK_ID
from askbridge.core.api.errors import parse_json

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
TIMESTAMP = "X-Slack-Request-Timestamp"
SIGNATURE = "X-Slack-Signature"
SECONDS = re.compile(r"[0-9]{1,15}")
"""A timestamp bolt's `int()` reads: ASCII digits, far fewer than Python's 4300-digit limit."""
STALE_S = 5 * 60
"""How far from now slack_sdk's verifier lets a request's timestamp be."""
CALLBACK_IDS = (FORM_CALLBACK_ID, FILL_CALLBACK_ID)


def header_problem(headers: Mapping[str, str]) -> str | None:
    """Why the request cannot be signed by Slack, from its headers alone, or None: they are
    missing, or bolt could not compare them (it would fail with a 500)."""
    timestamp, signature = headers.get(TIMESTAMP), headers.get(SIGNATURE)
    if timestamp is None or signature is None:
        return f"unsigned request: {SIGNATURE} and {TIMESTAMP} are required"
    if SECONDS.fullmatch(timestamp) is None:
        return f"{TIMESTAMP} is not a number of seconds"
    if not signature.isascii():
        return f"{SIGNATURE} is not a signature"
    return None


def signature_problem(
    verifier: SignatureVerifier, raw: bytes, headers: Mapping[str, str]
) -> str | None:
    """Why `raw` was not signed by Slack a moment ago, or None; for headers `header_problem`
    found no fault with. It names the fault only, never the body (it may hold tokens or what
    people typed)."""
    timestamp, signature = headers[TIMESTAMP], headers[SIGNATURE]
    if verifier.is_valid(raw, timestamp, signature):
        return None
    if abs(time.time() - int(timestamp)) > STALE_S:
        return f"{TIMESTAMP} is more than five minutes away from now"
    return f"{SIGNATURE} is not the body's signature with SLACK_SIGNING_SECRET"


def bolt_request(request: web.Request, raw: bytes) -> AsyncBoltRequest:
    """What `slack_bolt.adapter.aiohttp.to_bolt_request` makes of `request`, whose body is
    `raw`; ValueError, saying why, for a body that is not an interaction askbridge takes."""
    # Slack sends UTF-8; a charset the headers name is not looked up (an unknown one fails).
    text = raw.decode()
    body = parse_json(_payload(text, request.content_type))
    made = AsyncBoltRequest(body="", query=request.query_string, headers=request.headers)  # type: ignore[arg-type]
    made.raw_body = text
    return _shaped(made, body)


def socket_request(payload: object) -> AsyncBoltRequest:
    """What bolt's Socket Mode handler makes of an envelope's `payload`; ValueError, saying
    why, for a payload that is not an interaction askbridge takes."""
    made = AsyncBoltRequest(body={}, mode="socket_mode")
    return _shaped(made, payload)


def _shaped(made: AsyncBoltRequest, body: object) -> AsyncBoltRequest:
    """`made`, carrying `body` once it is shaped as bolt reads an interaction askbridge takes."""
    if not isinstance(body, dict):
        raise ValueError("the payload is not a JSON object")
    problem = unreadable(body)
    if problem is not None:
        raise ValueError(problem)
    made.body = body
    try:
        made.context = build_async_context(AsyncBoltContext({}), body)
    except (AttributeError, LookupError, TypeError) as error:
        # bolt reads who and where from the ids as Slack sends them.
        raise ValueError(f"its ids are not as Slack sends them ({error})") from None
    return made


def unreadable(body: Mapping[str, Any]) -> str | None:
    """Why `body` is no click or form that bolt can match to askbridge's listeners, or None:
    bolt reads the first action's id, and a view's type and callback id, as Slack sends them;
    every action has a listener, and only askbridge's forms do."""
    kind = body.get("type")
    if kind == "block_actions":
        actions = body.get("actions")
        if isinstance(actions, list) and actions and _has_action_id(actions[0]):
            return None
        return "a click's actions are not a list of actions, each with an action_id"
    if kind == "view_submission":
        view = body.get("view")
        if (
            isinstance(view, dict)
            and view.get("type") == "modal"
            and view.get("callback_id") in CALLBACK_IDS
        ):
            return None
        return "a form's view is not a modal of askbridge's, with its callback_id"
    # reprlib: a type of any size or shape is named in a few dozen characters.
    named = reprlib.repr(kind)
    return f"askbridge takes clicks (block_actions) and forms (view_submission), not {named}"


def _has_action_id(action: object) -> bool:
    return isinstance(action, dict) and isinstance(action.get("action_id"), str)


def _payload(raw: str, content_type: str) -> str:
    """The JSON text of the body, found as bolt's `parse_body` finds it."""
    if content_type == JSON or raw.startswith("{"):
        return raw
    found = interaction_payload(raw, content_type)
    if found is None:
        fields = parse_qsl(raw, keep_blank_values=True)
        found = next((value for key, value in reversed(fields) if key == "payload"), None)
    if found is None:
        raise ValueError("the body is neither JSON nor a form with a payload field")
    return found


def interaction_payload(raw: str, content_type: str) -> str | None:
    """The decoded `payload` field of a form body, as `urllib.parse.parse_qsl` would give it
    (the last one, when there are several); None when it must be read the slow way."""
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
