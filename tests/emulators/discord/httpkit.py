"""HTTP plumbing: exact JSON responses, Discord error bodies, request bodies."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from .payloads import JSONObject


def json_response(
    data: object, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    """JSON with a Content-Type of exactly `application/json` (discord.py checks equality)."""
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(body=json.dumps(data).encode(), status=status, headers=all_headers)


class ApiError(Exception):
    """An error response in Discord's shape: `{"code", "message", "errors"?}`."""

    def __init__(self, status: int, code: int, message: str, errors: JSONObject | None = None):
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def response(self) -> web.Response:
        body: JSONObject = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = self.errors
        return json_response(body, status=self.status)


def unknown(what: str, code: int) -> ApiError:
    return ApiError(404, code, f"Unknown {what}")


UNKNOWN_CHANNEL = 10003
UNKNOWN_MESSAGE = 10008
UNKNOWN_USER = 10013
UNKNOWN_WEBHOOK = 10015
UNKNOWN_INTERACTION = 10062


async def read_body(request: web.Request) -> Any:
    """The JSON body, from `application/json` or the `payload_json` part of a multipart form."""
    if not request.body_exists:
        return None
    if request.content_type == "multipart/form-data":
        form = await request.post()
        raw = form.get("payload_json")
        if raw is None:
            return {}
        if isinstance(raw, str | bytes | bytearray):
            return json.loads(raw)
        return json.loads(raw.file.read())
    text = await request.text()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ApiError(400, 50109, "The request body contains invalid JSON.") from exc


def require_object(body: Any) -> JSONObject:
    if not isinstance(body, dict):
        raise ApiError(
            400,
            50035,
            "Invalid Form Body",
            {
                "_errors": [
                    {
                        "code": "DICT_TYPE_CONVERT",
                        "message": "Only dictionaries may be used in a DictType",
                    }
                ]
            },
        )
    return body
