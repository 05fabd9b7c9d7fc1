"""The seams between the broker and a place where people answer (a chat platform, the web page).

The broker holds surfaces; it is not one. A surface renders a request and turns clicks into
`Broker.act` calls; a `SurfaceSpec` says how people name its places and people, so that `core`
names no platform itself. See ARCHITECTURE.md, "The rooms".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from askbridge.core.form_schema import FEW_FIELDS
from askbridge.core.models import MessageRef, Person, Request, Target
from askbridge.core.pace import Pace

if TYPE_CHECKING:
    # Only for annotations: the settings (and so the hook and the CLI) read this module's
    # `SurfaceWords` and need not load aiohttp's server.
    from aiohttp import web


@dataclass(frozen=True)
class SurfaceSpec:
    """What a surface is called and how its places and people are written, for the words of
    every help text, validation message and API description that names surfaces."""

    name: str
    """The prefix of its targets and answerer entries: `chat` in `chat:C1`."""
    title: str
    """Its name in prose: "Chat", "a web page"."""
    person: str
    """How an answerer entry names one person: `chat:U…`."""
    targets: tuple[str, ...]
    """Example targets, the plainest first: `chat:C0123`, `chat:C0123/<thread>`."""
    groups: tuple[str, ...] = ()
    """How an answerer entry names a group, one per kind: `chat-team:T…`."""
    channel: str = ""
    """What a target object's `channel` holds here: "C0123 (a channel)"."""
    hint: str = ""
    """How to set it up, for an ask that names it while it is not."""

    @property
    def answerer_kinds(self) -> tuple[str, ...]:
        """The kinds of its answerer entries: the person's, then each group's."""
        return tuple(entry.partition(":")[0] for entry in (self.person, *self.groups))


@dataclass(frozen=True)
class SurfaceWords:
    """Examples and lists worded from the registered surfaces' specs, in their order; with
    none (a model read outside a server), the grammar in general terms."""

    specs: tuple[SurfaceSpec, ...] = ()

    def answerer_entries(self, last: str = "or") -> str:
        """Every way to name someone: "chat:U…, chat-team:T… or web:<name>"."""
        entries = [entry for s in self.specs for entry in (s.person, *s.groups)]
        if not entries:
            return f"<platform>:<person id> {last} <platform>-<kind>:<group id>"
        return _listed(entries, last)

    def people(self) -> str:
        """Every way to name one person: "chat:U…, web:<name>"."""
        return ", ".join(s.person for s in self.specs) or "<platform>:<person id>"

    def titles(self) -> str:
        """The surfaces in prose: "Chat, Talk or a web page"."""
        return _listed([s.title for s in self.specs], "or") or "chat"

    def names(self) -> str:
        """The surfaces' names: "chat, talk or web"."""
        return _listed([s.name for s in self.specs], "or") or "<platform>"

    def targets(self) -> str:
        """Every example target: "'chat:C0123', 'chat:C0123/<thread>', 'web'"."""
        return ", ".join(repr(t) for s in self.specs for t in s.targets) or "'<platform>:<channel>'"

    def channels(self) -> str:
        """What `channel` holds on each surface: "C0123 (Chat), 123 (Talk)"."""
        return ", ".join(f"{s.channel} ({s.title})" for s in self.specs if s.channel) or (
            "the channel, as the platform names it"
        )

    def simple_targets(self) -> tuple[str, ...]:
        """Two example targets for a short message: a bare one, then one with a channel."""
        bare = [t for s in self.specs for t in s.targets if ":" not in t]
        channel = [t for s in self.specs for t in s.targets if ":" in t]
        return (*bare[:1], *(channel[:1] or ["<platform>:<channel>"]))


def _listed(items: Sequence[str], last: str) -> str:
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


class Surface(Protocol):
    platform: str
    answerer_kinds: tuple[str, ...]
    """The answerer entry kinds this surface can check: a person (`chat`), a group
    (`chat-team`), as its `SurfaceSpec` names them."""

    def check_target(self, target: Target) -> None:
        """Raise `UnknownTarget` with a fixable message when `target` cannot work here."""

    async def post(self, request: Request, target: Target) -> MessageRef:
        """Show the request to people; raise `SurfaceUnavailable` when the platform is down."""

    async def update(self, request: Request, message: MessageRef) -> None:
        """Make a posted message show the request's current state. Raise `MessageRefused`
        when the platform answers and refuses this message, `RetryLater` when it asks to
        wait; any other failure counts as the platform's outage (`core/outages.py`)."""


@runtime_checkable
class Reminding(Protocol):
    """A surface that can nudge the answerers of a waiting request (a thread reply, say)."""

    async def remind(self, request: Request, message: MessageRef) -> None: ...


class Paced(Protocol):
    """A surface whose platform limits how often its messages may be edited: updates take
    turns (`update_pace`), and a burst of them goes out over the following minutes."""

    update_pace: Pace | None


def form_fields_of(surface: object) -> int:
    """How many fields a form shown on `surface` may have: its `form_fields` where it says,
    else `FEW_FIELDS`, which every surface shows. Read as an attribute, as `pace_of` reads."""
    fields = getattr(surface, "form_fields", FEW_FIELDS)
    return fields if isinstance(fields, int) else FEW_FIELDS


def pace_of(surface: Surface) -> Pace | None:
    """The surface's pace, if it is `Paced`. Read as an attribute: `isinstance` against a
    protocol checks each of its members on every call (about 20 µs on Python 3.11), and every
    message update asks."""
    pace = getattr(surface, "update_pace", None)
    return pace if isinstance(pace, Pace) else None


@runtime_checkable
class Finding(Protocol):
    """A surface that can look for a message it posted without askbridge recording it (the
    process died between the platform's answer and the store), so that posting the request
    again adopts that message instead of leaving it answerable-looking but dead."""

    async def find(self, request: Request, target: Target) -> MessageRef | None:
        """The message posted for `request` at `target` that still shows its buttons, or
        None when there is none; raise when the platform cannot be asked just now."""


@dataclass(frozen=True)
class Membership:
    groups: tuple[str, ...]
    """The group answerer entries (`<platform>-<kind>:<id>`) the person is in."""
    unchecked: tuple[str, ...] = ()
    """Group entries the platform could not tell about just now."""


@runtime_checkable
class GroupDirectory(Protocol):
    """A surface whose groups (a chat platform's user groups, say) are looked up when a click
    needs them.

    The broker asks only when a person's own id does not make them an answerer and the
    request names groups of their platform.
    """

    async def membership(self, person: Person, entries: Sequence[str], now: datetime) -> Membership:
        """The entries `person` is in; `now` is the broker's time, for anything kept a while."""


@dataclass(frozen=True)
class Readiness:
    """Whether a part askbridge needs works right now, in words for whoever runs askbridge."""

    ready: bool
    detail: str


class PlatformRuntime(Protocol):
    """What a chat platform brings to the service besides its Surface: connections to open
    and close, and perhaps routes on the shared HTTP server."""

    @property
    def surface(self) -> Surface: ...

    @property
    def signed_paths(self) -> tuple[str, ...]:
        """Routes this runtime mounts whose requests the platform signs (and it verifies)."""

    def mount(self, app: web.Application) -> None:
        """Add routes (e.g. a platform's HTTP events endpoint) before the server starts."""

    async def start(self) -> str:
        """Connect; return one line for the log saying what is connected and how to reach it.

        Raise StartupError naming the setting to fix when the platform refuses us.
        """

    async def ready(self) -> Readiness:
        """Whether the platform's connection works now (for `/readyz`); never raises."""

    async def stop_listening(self) -> None:
        """Take no more clicks; those already taken still reach the broker (and get their
        notes) before this returns. Posting and updating messages still work."""

    async def stop(self) -> None:
        """Close every connection to the platform (after `stop_listening`, once the broker
        has finished the message updates it had in hand)."""
