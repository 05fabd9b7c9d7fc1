"""The smallest surface on the real seam, for broker tests: posting and updating succeed."""

from __future__ import annotations

from askbridge.core.models import MessageRef, Request, Target


class Chat:
    platform = "chat"
    answerer_kinds: tuple[str, ...] = ("chat",)

    def check_target(self, target: Target) -> None:
        pass

    async def post(self, request: Request, target: Target) -> MessageRef:
        return MessageRef(platform="chat", channel="C1", message_id=request.request_id)

    async def update(self, request: Request, message: MessageRef) -> None:
        pass
