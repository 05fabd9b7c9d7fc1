"""The web page as a surface: posting is storing, since the page reads the broker directly."""

from __future__ import annotations

from askbridge.core.errors import UnknownTarget
from askbridge.core.forms import MAX_FIELDS
from askbridge.core.models import MessageRef, Request, Target


class WebSurface:
    platform = "web"
    answerer_kinds: tuple[str, ...] = ("web",)
    form_fields = MAX_FIELDS
    """A page has no limit of its own."""

    def check_target(self, target: Target) -> None:
        if target.channel or target.thread:
            raise UnknownTarget(f"target {str(target)!r}: the web page takes no channel; use 'web'")

    async def post(self, request: Request, target: Target) -> MessageRef:
        return MessageRef(platform=self.platform, channel="", message_id=request.request_id)

    async def update(self, request: Request, message: MessageRef) -> None:
        """The page renders from the store on every load; nothing to push. A person's feedback
        comes in the HTTP response to their own form."""
