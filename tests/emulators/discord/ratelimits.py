"""Injected HTTP 429s, shaped so discord.py waits and retries rather than giving up; injected
server errors (500, 502, 503...), which it retries or raises as Discord's would be; and injected
refusals (403 Missing Access...), in Discord's error shape."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from aiohttp import web

from .httpkit import ApiError, json_response


def route_regex(pattern: str) -> re.Pattern[str]:
    """`/channels/{channel_id}/messages` → a regex; each `{...}` matches one path segment."""
    pieces = re.split(r"(\{[^}]*\})", pattern)
    body = "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in pieces)
    return re.compile(body)


@dataclass
class _Rule:
    method: str
    pattern: str
    regex: re.Pattern[str]
    remaining: int
    retry_after: float
    is_global: bool
    status: int = 429
    refusal: ApiError | None = None

    def matches(self, method: str, path: str) -> bool:
        return self.method in ("*", method) and self.regex.fullmatch(path) is not None


class RateLimits:
    def __init__(self) -> None:
        self._rules: list[_Rule] = []

    def add(
        self,
        method: str,
        route_pattern: str,
        *,
        times: int,
        retry_after: float = 0.0,
        is_global: bool = False,
        status: int = 429,
    ) -> None:
        if times < 1:
            raise ValueError(f"times must be at least 1, got {times}")
        if status != 429 and status < 500:
            raise ValueError(f"inject 429 or a server error (5xx), got {status}")
        self._rules.append(
            _Rule(
                method.upper(),
                route_pattern,
                route_regex(route_pattern),
                times,
                retry_after,
                is_global,
                status,
            )
        )

    def refuse(self, method: str, route_pattern: str, refusal: ApiError, *, times: int) -> None:
        if times < 1:
            raise ValueError(f"times must be at least 1, got {times}")
        if not 400 <= refusal.status < 500 or refusal.status == 429:
            raise ValueError(f"a refusal is a 4xx other than 429, got {refusal.status}")
        regex = route_regex(route_pattern)
        self._rules.append(
            _Rule(method.upper(), route_pattern, regex, times, 0.0, False, refusal.status, refusal)
        )

    def pending(self) -> int:
        return sum(r.remaining for r in self._rules)

    def take(self, method: str, path: str) -> web.Response | None:
        for rule in self._rules:
            if rule.remaining > 0 and rule.matches(method, path):
                rule.remaining -= 1
                if rule.refusal is not None:
                    return rule.refusal.response()
                return _too_many_requests(rule) if rule.status == 429 else _server_error(rule)
        return None


def _server_error(rule: _Rule) -> web.Response:
    """What Discord's edge answers when it is having trouble: no rate limit headers."""
    return json_response({"message": f"{rule.status}: Server Error", "code": 0}, status=rule.status)


def _too_many_requests(rule: _Rule) -> web.Response:
    headers = {
        "Via": "1.1 google",
        "Retry-After": str(max(1, math.ceil(rule.retry_after))),
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": f"{time.time() + rule.retry_after:.3f}",
        "X-RateLimit-Reset-After": f"{rule.retry_after:.3f}",
        "X-RateLimit-Bucket": "emulated-" + re.sub(r"\W", "", rule.pattern)[:32],
        "X-RateLimit-Scope": "user",
    }
    if rule.is_global:
        headers["X-RateLimit-Global"] = "true"
        headers["X-RateLimit-Scope"] = "global"
    body = {
        "message": "You are being rate limited.",
        "retry_after": rule.retry_after,
        "global": rule.is_global,
    }
    return json_response(body, status=429, headers=headers)
