"""The surface registry: every place where people answer, in one table.

An entry says how the surface's places and people are written (`SurfaceSpec`), which settings
it reads, and how its runtime is made once they are set. A new surface is its folder under
`adapters/`, a settings model and one entry here. See ARCHITECTURE.md, "The rooms".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import SecretStr

from askbridge.bots.settings import (
    DiscordSettings,
    PlatformSettings,
    Settings,
    SlackSettings,
    TeamsSettings,
)
from askbridge.core.errors import StartupError
from askbridge.core.surface import PlatformRuntime, SurfaceSpec, SurfaceWords

if TYPE_CHECKING:
    from askbridge.core.broker import Broker
    from askbridge.core.metrics import Metrics

P = TypeVar("P", bound=PlatformSettings)


@dataclass(frozen=True)
class Wiring:
    """What a runtime factory may use besides its platform's settings."""

    settings: Settings
    broker: Broker
    metrics: Metrics


@dataclass(frozen=True)
class SetupCommand:
    """`askbridge <surface> <name>`: something a setup step needs, printed from the installed
    package, so nobody needs the repository to set a surface up."""

    name: str
    help: str
    files: Callable[[], dict[str, bytes]]
    """What it makes, the file it prints first; it reads the settings it needs itself, and
    raises StartupError naming one that is missing."""
    package: bool = False
    """It takes `--zip FILE`: every file in one archive (an app package) instead."""


@dataclass(frozen=True)
class SurfaceEntry(Generic[P]):
    spec: SurfaceSpec
    settings: type[P] | None = None
    """Its settings model; None for a surface that has none (the web page)."""
    runtime: Callable[[P, Wiring], PlatformRuntime | None] | None = None
    """Its runtime from its settings, or None when they do not set it up (no token)."""
    token_shapes: tuple[str, ...] = ()
    """Regular expressions of its tokens, scrubbed from every log line, set up or not."""
    library_noise: tuple[str, ...] = ()
    """Warnings its libraries log about features askbridge does not use (left out of logs)."""
    setup: tuple[SetupCommand, ...] = ()
    """Its `askbridge <name> ...` commands; one named `manifest` is also `askbridge
    <name>-manifest`, as it was first called."""

    def make_runtime(self, wiring: Wiring) -> PlatformRuntime | None:
        if self.settings is None or self.runtime is None:
            return None
        return self.runtime(wiring.settings.platform(self.settings), wiring)


def _slack(settings: SlackSettings, wiring: Wiring) -> PlatformRuntime | None:
    if settings.bot_token is None:
        return None
    # Each platform's SDK is imported only when it is configured: discord.py alone takes a
    # tenth of a second.
    from askbridge.adapters.slack import SlackConfig, SlackRuntime

    config = SlackConfig(
        bot_token=settings.bot_token.get_secret_value(),
        app_token=_secret(settings.app_token),
        signing_secret=_secret(settings.signing_secret),
        api_url=settings.api_url,
        updates_per_minute=settings.updates_per_minute or None,
    )
    return SlackRuntime(wiring.broker, config, wiring.metrics)


def _discord(settings: DiscordSettings, wiring: Wiring) -> PlatformRuntime | None:
    if settings.bot_token is None:
        return None
    from askbridge.adapters.discord import DiscordRuntime
    from askbridge.core.election import seat_for

    return DiscordRuntime(
        wiring.broker,
        token=settings.bot_token.get_secret_value(),
        api_url=settings.api_url,
        gateway_url=settings.gateway_url,
        public_key=settings.public_key,
        metrics=wiring.metrics,
        seat=seat_for(wiring.settings.database_url, "discord-gateway"),
        election_check_s=wiring.settings.election_check_s,
        application_id=settings.application_id,
    )


def _teams(settings: TeamsSettings, wiring: Wiring) -> PlatformRuntime | None:
    if settings.app_id is None or settings.app_password is None:
        return None
    from askbridge.adapters.teams import TeamsConfig, TeamsRuntime

    config = TeamsConfig(
        app_id=settings.app_id,
        password=settings.app_password.get_secret_value(),
        authority=settings.authority,
        scope=settings.token_scope,
        openid_metadata_url=settings.openid_metadata_url,
        issuer=settings.token_issuer,
        service_url=settings.service_url,
        tenant_id=settings.tenant_id,
    )
    return TeamsRuntime(wiring.broker, config)


def _teams_package(settings: TeamsSettings) -> dict[str, bytes]:
    from askbridge.adapters.teams.manifest import package

    return package(settings.app_id, settings.developer_url)


def _discord_invite() -> dict[str, bytes]:
    settings = DiscordSettings()
    if settings.application_id is None:
        raise StartupError(
            "set DISCORD_APPLICATION_ID to the application's ID (Developer Portal: your "
            "application, General Information, Application ID)"
        )
    from askbridge.adapters.discord.invite import invite_url

    return {"invite-url": f"{invite_url(settings.application_id)}\n".encode()}


def _secret(value: SecretStr | None) -> str | None:
    return (value.get_secret_value() or None) if value is not None else None


SLACK = SurfaceEntry(
    SurfaceSpec(
        name="slack",
        title="Slack",
        person="slack:U…",
        groups=("slack-group:S…",),
        targets=("slack:C0123", "slack:C0123/<thread ts>"),
        channel="C0123 / U0123",
        hint="set SLACK_BOT_TOKEN, plus SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET "
        "(HTTP mode); see docs/tutorials/slack.md",
    ),
    SlackSettings,
    _slack,
    token_shapes=(r"xox[abpr]-[\w-]+", r"xapp-[\w-]+"),
    # bolt noticing SLACK_BOT_TOKEN in the environment beside the client askbridge gives it.
    library_noise=("As you gave `client` as well, `token` will be unused.",),
    setup=(
        SetupCommand(
            "manifest",
            "print the Slack app manifest to create askbridge's app from (docs/tutorials/slack.md)",
            lambda: {
                "manifest.yaml": resources.files("askbridge.adapters.slack")
                .joinpath("manifest.yaml")
                .read_bytes()
            },
            package=True,
        ),
    ),
)
DISCORD = SurfaceEntry(
    SurfaceSpec(
        name="discord",
        title="Discord",
        person="discord:@<user id>",
        groups=("discord-role:<role id>",),
        targets=("discord:123", "discord:@456"),
        channel="123 or @456",
        hint="set DISCORD_BOT_TOKEN; see docs/tutorials/discord.md",
    ),
    DiscordSettings,
    _discord,
    library_noise=("voice will NOT be supported",),
    setup=(
        SetupCommand(
            "invite-url",
            "print the link that adds the bot to a server, with exactly the permissions it "
            "needs (DISCORD_APPLICATION_ID; docs/tutorials/discord.md)",
            _discord_invite,
        ),
    ),
)
TEAMS = SurfaceEntry(
    SurfaceSpec(
        name="teams",
        title="Microsoft Teams",
        person="teams:<Entra user id>",
        targets=("teams:<conversation id>", "teams:@<Entra user id>"),
        channel="<conversation id>",
        hint="set TEAMS_APP_ID and TEAMS_APP_PASSWORD; see docs/tutorials/teams.md",
    ),
    TeamsSettings,
    _teams,
    # The Bot Connector's and Entra's tokens are JWTs.
    token_shapes=(r"eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*",),
    # The SDK's traceback for an activity it cannot read; askbridge answers 400 and logs one
    # line of its own (adapters/teams/handlers.py).
    library_noise=("Validation error for Activity",),
    setup=(
        SetupCommand(
            "manifest",
            "print the Teams app manifest to create askbridge's app from (docs/tutorials/teams.md)",
            lambda: _teams_package(TeamsSettings()),
            package=True,
        ),
    ),
)
WEB: SurfaceEntry[Any] = SurfaceEntry(
    SurfaceSpec(
        name="web",
        title="a web page",
        person="web:<name>",
        targets=("web",),
        hint="the web page is off; set ASKBRIDGE_WEB_UI=on to serve it",
    )
)
"""The page askbridge serves itself; `Service` mounts it (ASKBRIDGE_WEB_UI), so its entry only
words it."""

SURFACES: tuple[SurfaceEntry[Any], ...] = (SLACK, DISCORD, TEAMS, WEB)
"""Every surface, in the order help texts and messages name them."""


def platform_settings(
    surfaces: Sequence[SurfaceEntry[Any]] = SURFACES,
) -> tuple[type[PlatformSettings], ...]:
    """The settings models of `surfaces`."""
    return tuple(entry.settings for entry in surfaces if entry.settings is not None)


def surface_words(surfaces: Sequence[SurfaceEntry[Any]] = SURFACES) -> SurfaceWords:
    """The words of help texts and messages about `surfaces`."""
    return SurfaceWords(tuple(entry.spec for entry in surfaces))


def token_shapes(surfaces: Sequence[SurfaceEntry[Any]] = SURFACES) -> tuple[str, ...]:
    """The shapes of every surface's tokens (regular expressions)."""
    return tuple(shape for entry in surfaces for shape in entry.token_shapes)


def library_noise(surfaces: Sequence[SurfaceEntry[Any]] = SURFACES) -> tuple[str, ...]:
    """The warnings of every surface's libraries that askbridge's logs leave out."""
    return tuple(noise for entry in surfaces for noise in entry.library_noise)
