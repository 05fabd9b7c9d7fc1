"""Getting an interaction to the app: signed HTTP POSTs (honest or tampered), or Socket Mode."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Self
from urllib.parse import urlencode

import aiohttp

from .types import JSONDict

Via = Literal["socket", "http"]
Tamper = Literal["none", "forged_signature", "stale_timestamp", "unsigned"]

STALE_BY_SECONDS = 10 * 60
SLACK_USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"


@dataclass(frozen=True)
class Delivery:
    """What happened to one payload Slack sent to the app."""

    via: Via
    payload: JSONDict
    acked: bool
    """Socket Mode: the ack came within the timeout. HTTP: a 200 came within the timeout."""
    elapsed: float
    status: int | None = None
    body: str | None = None
    ack: JSONDict | None = None
    envelope_id: str | None = None
    request_body: bytes | None = None
    request_headers: dict[str, str] | None = None
    error: str | None = None
    confirm: JSONDict | None = None
    """The `confirm` dialog the person accepted before this click, if the button had one."""
    envelope_type: str = "interactive"

    def assert_acked(self) -> Self:
        if not self.acked:
            action = (self.payload.get("actions") or [{}])[0]
            view = self.payload.get("view") or {}
            what = action.get("action_id") or view.get("callback_id")
            raise AssertionError(
                f"The app did not acknowledge {self.payload.get('type')} "
                f"{what!r} over {self.via}: status={self.status} "
                f"error={self.error!r} body={self.body!r}"
            )
        return self


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`v0=` + HMAC-SHA256(secret, "v0:{timestamp}:{body}"), as Slack signs its requests."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def encode_body(payload: Mapping[str, Any], envelope_type: str) -> tuple[bytes, str]:
    """Interactions travel as a form field `payload=<json>`; Events API requests as raw JSON."""
    if envelope_type == "events_api":
        return json.dumps(payload).encode(), "application/json"
    body = urlencode({"payload": json.dumps(payload, separators=(",", ":"))})
    return body.encode(), "application/x-www-form-urlencoded"


def signed_headers(
    secret: str, body: bytes, content_type: str, now: float, tamper: Tamper
) -> dict[str, str]:
    timestamp = str(int(now) - (STALE_BY_SECONDS if tamper == "stale_timestamp" else 0))
    headers = {"Content-Type": content_type, "User-Agent": SLACK_USER_AGENT}
    if tamper == "unsigned":
        return headers
    key = "forged-" + secret if tamper == "forged_signature" else secret
    headers["X-Slack-Request-Timestamp"] = timestamp
    headers["X-Slack-Signature"] = signature(key, timestamp, body)
    return headers


@dataclass
class HttpDeliverer:
    session: aiohttp.ClientSession
    timeout: float

    async def post(
        self,
        url: str,
        payload: JSONDict,
        body: bytes,
        headers: dict[str, str],
        envelope_type: str = "interactive",
    ) -> Delivery:
        started = time.monotonic()
        try:
            async with self.session.post(
                url,
                data=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            ) as response:
                text = await response.text()
            status: int | None = response.status
            error = None if response.status == 200 else f"HTTP {response.status}"
        except TimeoutError:
            status, text, error = None, None, "no response within the timeout"
        except aiohttp.ClientError as failure:
            status, text, error = None, None, f"{type(failure).__name__}: {failure}"
        return Delivery(
            via="http",
            payload=payload,
            acked=status == 200,
            elapsed=time.monotonic() - started,
            status=status,
            body=text,
            request_body=body,
            request_headers=headers,
            error=error,
            envelope_type=envelope_type,
        )
