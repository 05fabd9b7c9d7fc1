"""The seam between the broker and a place where people answer (Slack, Discord, the web page).

The broker holds surfaces; it is not one. A surface renders a `Request` and turns clicks into
broker calls; everything platform-specific stays behind this protocol.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from core.models import MessageRef, Person, Request, Target


class Surface(Protocol):
    platform: str

    def check_target(self, target: Target) -> None:
        """Raise `UnknownTarget` with a fixable message when `target` cannot work here."""

    async def post(self, request: Request, target: Target) -> MessageRef:
        """Show the request to people; raise `SurfaceUnavailable` when the platform is down."""

    async def update(self, request: Request, message: MessageRef) -> None:
        """Make a posted message show the request's current state."""

    async def notify(self, person: Person, message: MessageRef, text: str) -> None:
        """Tell one person something only they see, next to `message`."""


@runtime_checkable
class Reminding(Protocol):
    """A surface that can nudge the answerers of a waiting request (a thread reply, say)."""

    async def remind(self, request: Request, message: MessageRef) -> None: ...
