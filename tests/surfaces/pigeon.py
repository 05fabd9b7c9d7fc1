"""Pigeon post: a surface defined here, outside `adapters/`, to show that a new surface is one
registry entry, one settings model and its own code. Its messages are kept in memory (the
loft) and its clicks come over HTTP (`POST /pigeon/clicks`) to the broker, as a platform's
interactions reach a real adapter."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web
from pydantic import AliasChoices, Field, SecretStr

from askbridge.bots.settings import PlatformSettings
from askbridge.bots.surfaces import SurfaceEntry, Wiring
from askbridge.core.broker import Broker
from askbridge.core.errors import UnknownTarget
from askbridge.core.intents import Cancel, Counted, Decided, Intent, Outcome, Refused, Submit
from askbridge.core.models import MessageRef, Person, Request, Target
from askbridge.core.surface import PlatformRuntime, Readiness, Surface, SurfaceSpec

CLICKS_PATH = "/pigeon/clicks"


class PigeonSettings(PlatformSettings):
    loft: str | None = Field(default=None, validation_alias=AliasChoices("PIGEON_LOFT"))
    ring_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PIGEON_RING_KEY")
    )


class Loft:
    """Every message posted, as last shown: message id -> the request."""

    def __init__(self) -> None:
        self.shown: dict[str, Request] = {}
        self._changed = asyncio.Condition()

    async def show(self, message_id: str, request: Request) -> None:
        async with self._changed:
            self.shown[message_id] = request
            self._changed.notify_all()

    async def wait_for(self, message_id: str, holds: Callable[[Request], bool]) -> Request:
        async with asyncio.timeout(10), self._changed:
            await self._changed.wait_for(
                lambda: message_id in self.shown and holds(self.shown[message_id])
            )
            return self.shown[message_id]


class PigeonSurface:
    platform = "pigeon"
    answerer_kinds: tuple[str, ...] = ("pigeon", "pigeon-flock")

    def __init__(self, loft: Loft, home: str) -> None:
        self.loft = loft
        self.home = home

    def check_target(self, target: Target) -> None:
        if target.channel != self.home:
            raise UnknownTarget(f"target {str(target)!r}: pigeons fly to {self.home!r} only")

    async def post(self, request: Request, target: Target) -> MessageRef:
        message_id = f"{request.request_id}@{target.channel}"
        await self.loft.show(message_id, request)
        return MessageRef(platform=self.platform, channel=target.channel, message_id=message_id)

    async def update(self, request: Request, message: MessageRef) -> None:
        await self.loft.show(message.message_id, request)


class PigeonRuntime:
    def __init__(self, broker: Broker, settings: PigeonSettings, loft: Loft) -> None:
        assert settings.loft is not None
        self._broker = broker
        self._surface = PigeonSurface(loft, settings.loft)

    @property
    def surface(self) -> Surface:
        return self._surface

    @property
    def signed_paths(self) -> tuple[str, ...]:
        return ()

    def mount(self, app: web.Application) -> None:
        app.router.add_post(CLICKS_PATH, self._click)

    async def start(self) -> str:
        return f"pigeon post: flying to {self._surface.home}"

    async def ready(self) -> Readiness:
        return Readiness(True, "the loft is open")

    async def stop_listening(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def _click(self, request: web.Request) -> web.Response:
        """`{request_id, message_id, ring, name, pick: <option> | "cancel"}`: a person's click
        on a posted message, to the broker as a real adapter sends it."""
        body: dict[str, Any] = await request.json()
        person = Person(platform="pigeon", id=body["ring"], name=body["name"])
        origin = MessageRef(
            platform="pigeon", channel=self._surface.home, message_id=body["message_id"]
        )
        pick = body["pick"]
        intent: Intent = Cancel() if pick == "cancel" else Submit({0: (int(pick),)})
        outcome = await self._broker.act(body["request_id"], person, intent, origin)
        return web.json_response({"outcome": _said(outcome)})


def _said(outcome: Outcome) -> str:
    if isinstance(outcome, Refused):
        return f"refused: {outcome.reason}"
    if isinstance(outcome, Decided):
        return "decided"
    if isinstance(outcome, Counted):
        return "counted"
    return type(outcome).__name__


def pigeon_entry(loft: Loft) -> SurfaceEntry[PigeonSettings]:
    """The registry entry, its messages kept in `loft`."""

    def runtime(settings: PigeonSettings, wiring: Wiring) -> PlatformRuntime | None:
        if settings.loft is None:
            return None
        return PigeonRuntime(wiring.broker, settings, loft)

    spec = SurfaceSpec(
        name="pigeon",
        title="Pigeon post",
        person="pigeon:<ring>",
        groups=("pigeon-flock:<flock>",),
        targets=("pigeon:<loft>",),
        channel="<loft>",
        hint="set PIGEON_LOFT to the loft the pigeons fly to",
    )
    return SurfaceEntry(spec, PigeonSettings, runtime)
