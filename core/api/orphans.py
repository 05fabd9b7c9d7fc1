"""Permission prompts whose agent went away: withdrawn after a grace period, unless the agent
comes back and asks the same again.

A `PermissionRequest` carries no id, so a reconnecting agent can only send the same prompt
again: a prompt left by a closed connection is kept for `grace_s` under its `digest`, taken
over by a connection that sends it again, and otherwise withdrawn.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from typing import Any

from askbridge.core.broker import Broker
from askbridge.core.errors import AlreadyEnded, NotFound

log = logging.getLogger("askbridge.agent")

GRACE_S = 60.0


def digest(prompt: dict[str, Any]) -> str:
    """What a permission prompt asks, as a key: the same prompt sent again has the same one."""
    shown = {key: prompt.get(key) for key in ("tool_name", "action", "input", "details")}
    return hashlib.sha256(json.dumps(shown, sort_keys=True, default=str).encode()).hexdigest()


class Orphans:
    def __init__(self, broker: Broker, grace_s: float = GRACE_S) -> None:
        self._broker = broker
        self._grace_s = grace_s
        self._left: dict[str, tuple[str, asyncio.Task[None]]] = {}

    def adopt(self, key: str) -> str | None:
        """The request id of a prompt left with this key, now taken over; None if none."""
        left = self._left.pop(key, None)
        if left is None:
            return None
        request_id, withdrawal = left
        withdrawal.cancel()
        log.info("a reconnected agent took over permission prompt %s", request_id)
        return request_id

    def leave(self, key: str, request_id: str) -> None:
        """The connection waiting on `request_id` closed: withdraw it after the grace period."""
        withdrawal = asyncio.create_task(
            self._withdraw_later(key, request_id), name=f"askbridge-orphan-{request_id}"
        )
        self._left[key] = (request_id, withdrawal)

    async def _withdraw_later(self, key: str, request_id: str) -> None:
        await asyncio.sleep(self._grace_s)
        self._left.pop(key, None)
        try:
            await self._broker.withdraw(request_id)
        except (AlreadyEnded, NotFound):
            return
        log.info("withdrew permission prompt %s: its agent did not come back", request_id)

    async def close(self) -> None:
        tasks = [task for _, task in self._left.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._left.clear()
