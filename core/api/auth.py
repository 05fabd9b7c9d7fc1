"""Bearer-token check for the agent API, and the loopback rule that protects an open server."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from askbridge.core.api.errors import error_response

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Guard = Callable[[web.Request], web.StreamResponse | None]
"""A check a request must pass: the refusal, or None to let it through. Guards are run by one
middleware (`core.api.app.api_middlewares`), not each as a middleware of its own: every
middleware is a frame that each waiting long-poll holds."""
PROTECTED_PREFIX = "/v1/"
PROTECTED_PATHS = ("/metrics",)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def require_token(token: str | None) -> Guard:
    expected = f"Bearer {token}".encode() if token else None

    def check(request: web.Request) -> web.StreamResponse | None:
        if expected is not None and _protected(request.path):
            given = request.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                hint = "send 'Authorization: Bearer <ASKBRIDGE_API_TOKEN>'"
                response = error_response(401, f"missing or wrong API token: {hint}")
                response.headers["WWW-Authenticate"] = 'Bearer realm="askbridge"'
                return response
        return None

    return check


def _protected(path: str) -> bool:
    return path.startswith(PROTECTED_PREFIX) or path in PROTECTED_PATHS


def loopback_hosts_only(signed_paths: tuple[str, ...] = ()) -> Guard:
    """Refuse requests whose Host header is not a loopback name.

    A server on 127.0.0.1 without a token trusts whoever can reach it; checking Host stops a
    web page elsewhere from reaching it through DNS rebinding. Paths whose every request is
    signed by a platform (its events endpoint) need no such trust and may come through a
    tunnel.
    """

    def check(request: web.Request) -> web.StreamResponse | None:
        if request.path in signed_paths:
            return None
        host = request.host.rsplit(":", 1)[0] if not request.host.endswith("]") else request.host
        if not is_loopback(host):
            return error_response(403, f"host {request.host!r} is not a loopback address")
        return None

    return check


def same_origin_only(signed_paths: tuple[str, ...] = ()) -> Guard:
    """Refuse what a web page on another site makes a browser send.

    Browsers name the page's origin in `Origin` on every cross-site POST and WebSocket
    handshake (and say `Sec-Fetch-Site: cross-site`); agents, the CLI and the client send
    neither. A JSON route also takes only `application/json`, which a page on another site
    cannot send without a CORS preflight that askbridge never grants.
    """

    def check(request: web.Request) -> web.StreamResponse | None:
        if request.path in signed_paths:
            return None
        origin = request.headers.get("Origin")
        if origin is not None and not _same_origin(origin, request.host):
            return error_response(403, f"requests from {origin!r} are not accepted")
        if request.headers.get("Sec-Fetch-Site") == "cross-site":
            return error_response(403, "cross-site requests are not accepted")
        if (
            request.path.startswith(PROTECTED_PREFIX)
            and request.method in ("POST", "PUT", "PATCH")
            and request.match_info.http_exception is None
            and request.content_type != "application/json"
        ):
            return error_response(
                415, f"send the body as application/json, not {request.content_type!r}"
            )
        return None

    return check


def _same_origin(origin: str, host: str) -> bool:
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()
