"""Every setting askbridge reads, from the environment and `.env`; `.env.example` mirrors it.

`Settings` holds askbridge's own (ASKBRIDGE_*) and, nested, one model per platform
(`PlatformSettings`: `SlackSettings`, `DiscordSettings`, `TeamsSettings`, each listed by its
surface's entry in `bots.surfaces`), read from the same environment, `.env` and arguments.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from dotenv import dotenv_values
from pydantic import AliasChoices, BaseModel, Field, PrivateAttr, SecretStr, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from askbridge.bots.client import ClientError, Unreachable
from askbridge.bots.database_place import default_database_url
from askbridge.bots.event_loop import EventLoop
from askbridge.core.ask import MAX_SECONDS
from askbridge.core.callback_guard import AllowList
from askbridge.core.election import CHECK_S
from askbridge.core.escalation import ladder_example, read_ladder
from askbridge.core.hooks.claude_code import (
    DEFAULT_HOOK_TIMEOUT_S,
    MAX_HOOK_TIMEOUT_S,
    MIN_HOOK_TIMEOUT_S,
    HookOptions,
)
from askbridge.core.models import Ladder
from askbridge.core.store.factory import url_passwords
from askbridge.core.surface import SurfaceWords

ENV_FILE = ".env"
EnvFile = Path | str | None
P = TypeVar("P", bound="PlatformSettings")


class PlatformSettings(BaseSettings):
    """One platform's settings. Each field names its variable in full (its validation alias):
    the platforms' SDKs read SLACK_BOT_TOKEN and the like, so askbridge reads the same names."""

    model_config = SettingsConfigDict(env_file=ENV_FILE, env_ignore_empty=True, extra="ignore")


class SlackSettings(PlatformSettings):
    bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN")
    )
    app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN")
    )
    signing_secret: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET")
    )
    api_url: str = Field(
        default="https://slack.com/api/", validation_alias=AliasChoices("SLACK_API_URL")
    )
    # Slack lets an app edit messages about 50 times a minute (chat.update, Tier 3); a burst
    # of clicks on many messages shows over the following minutes. 0: no limit of our own.
    updates_per_minute: float = Field(
        default=50.0, ge=0, validation_alias=AliasChoices("ASKBRIDGE_SLACK_UPDATES_PER_MINUTE")
    )


class DiscordSettings(PlatformSettings):
    bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_BOT_TOKEN")
    )
    api_url: str | None = Field(default=None, validation_alias=AliasChoices("DISCORD_API_URL"))
    gateway_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_GATEWAY_URL")
    )
    public_key: str | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_PUBLIC_KEY")
    )
    # For `askbridge discord invite-url`: the link that adds the bot to a server is the
    # application's, and a pip-installed user makes it before askbridge ever connects. The
    # service only checks it against the token's application.
    application_id: int | None = Field(
        default=None, gt=0, validation_alias=AliasChoices("DISCORD_APPLICATION_ID")
    )


class TeamsSettings(PlatformSettings):
    """Microsoft Teams: the bot's Entra app, and where Microsoft's services are. Every URL
    defaults to Microsoft's public cloud; a sovereign cloud (or an emulator) sets its own."""

    app_id: str | None = Field(default=None, validation_alias=AliasChoices("TEAMS_APP_ID"))
    app_password: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_APP_PASSWORD")
    )
    # Unset: the app is multi-tenant, and takes its tokens from the botframework.com tenant.
    tenant_id: str | None = Field(default=None, validation_alias=AliasChoices("TEAMS_TENANT_ID"))
    # Where the signing keys of Teams' inbound activities are listed (OpenID metadata).
    openid_metadata_url: str = Field(
        default="https://login.botframework.com/v1/.well-known/openidconfiguration",
        validation_alias=AliasChoices("TEAMS_OPENID_METADATA_URL"),
    )
    token_issuer: str = Field(
        default="https://api.botframework.com", validation_alias=AliasChoices("TEAMS_TOKEN_ISSUER")
    )
    # The Entra authority the app's own tokens come from (MSAL's instance discovery is off,
    # so nothing else is asked); unset: login.microsoftonline.com with the tenant.
    token_authority: str | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_TOKEN_AUTHORITY")
    )
    # Your organisation's https:// site, which the Teams app manifest names as the app's
    # developer (`askbridge teams manifest`); askbridge itself never reads it.
    developer_url: str | None = Field(
        default=None, validation_alias=AliasChoices("TEAMS_DEVELOPER_URL")
    )
    token_scope: str = Field(
        default="https://api.botframework.com/.default",
        validation_alias=AliasChoices("TEAMS_TOKEN_SCOPE"),
    )
    # The Bot Connector that new messages to a conversation go to; a click's activity names
    # the one of its own conversation, which answers it from then on.
    service_url: str = Field(
        default="https://smba.trafficmanager.net/teams/",
        validation_alias=AliasChoices("TEAMS_SERVICE_URL"),
    )

    @property
    def authority(self) -> str:
        return self.token_authority or (
            f"https://login.microsoftonline.com/{self.tenant_id or 'botframework.com'}"
        )


def every_interface(host: str) -> bool:
    """Whether ASKBRIDGE_HOST binds every interface: empty, or the unspecified address of
    IPv4 (0.0.0.0) or of IPv6 (::, which asyncio binds for IPv6 alone)."""
    if not host:
        return True
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def bound(host: str, port: int) -> str:
    """`host` and `port` as an address is written, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def local_url(host: str, port: int) -> str:
    """Where this machine reaches a server bound to `host` and `port`: over loopback, of the
    same IP version, when it binds every interface."""
    if every_interface(host):
        host = "::1" if ":" in host else "127.0.0.1"
    return f"http://{bound(host, port)}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ASKBRIDGE_",
        env_file=ENV_FILE,
        env_ignore_empty=True,
        extra="ignore",
    )

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    api_token: SecretStr | None = None
    # Unset: a file in the per-user data directory (bots/database_place.py), whatever the
    # working directory.
    database_url: str = Field(default_factory=default_database_url)
    sqlite_sync: Literal["normal", "full"] = "normal"
    event_loop: EventLoop = "auto"
    default_target: str = "web"
    default_timeout_s: float | None = Field(default=None, gt=0, le=MAX_SECONDS)
    web_ui: Literal["auto", "on", "off"] = "auto"
    web_secret: SecretStr | None = None
    # Where people reach the web page (http(s)://host[:port][/path]); a chat message that must
    # cut a diff or a command links there, to that request's page only.
    public_url: str | None = None
    max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    idle_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    permission_grace_s: float = Field(default=60.0, ge=0, le=3600)
    retention_days: float | None = Field(default=None, gt=0)
    # How long a replica's claim on updating a message lasts unless renewed: how soon another
    # replica finishes the updates of one that died.
    takeover_s: float = Field(default=15.0, ge=1, le=3600)
    # PostgreSQL replicas: how often a standby tries to take a connection only one replica may
    # hold (a chat gateway), and the holder checks its database connection (a takeover takes
    # about four times this).
    election_check_s: float = Field(default=CHECK_S, ge=0.05, le=60)
    # Signs the webhooks sent to requests' callback_url; unset: callback_url is refused.
    webhook_secret: SecretStr | None = None
    # Hosts and networks (comma-separated: names, addresses, CIDRs) webhooks may go to although
    # they are loopback, private, link-local or otherwise not global; unset: none.
    webhook_allow: str | None = None
    # The escalation ladder (JSON) of requests that set neither escalation nor remind_after_s.
    escalation: str | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["text", "json"] = "text"
    # Only the client and `askbridge ask` read this: where a running server is.
    url: str | None = None
    # Claude Code's hooks: the command hook's defaults, and the HTTP hook's on the server.
    hook_target: str | None = None
    hook_answerers: str | None = None
    hook_quorum: int = Field(default=1, ge=1)
    hook_timeout_s: float = Field(
        default=DEFAULT_HOOK_TIMEOUT_S, ge=MIN_HOOK_TIMEOUT_S, le=MAX_HOOK_TIMEOUT_S
    )
    hook_on_timeout: Literal["ask", "deny"] = "ask"

    _given: tuple[EnvFile, dict[str, Any]] = PrivateAttr(default_factory=lambda: (ENV_FILE, {}))
    _platforms: dict[type[PlatformSettings], PlatformSettings] = PrivateAttr(default_factory=dict)

    def __init__(
        self,
        _env_file: EnvFile = ENV_FILE,
        *,
        platforms: Iterable[type[PlatformSettings]] | None = None,
        **values: Any,
    ) -> None:
        """Read askbridge's settings and those of each platform in `platforms` (by default
        every registered surface's), so that a bad value anywhere fails here, naming its
        variable. `values` may set any of them, a platform's by its variable name."""
        super().__init__(_env_file=_env_file, **values)
        self._given = (_env_file, values)
        if platforms is None:
            from askbridge.bots.surfaces import platform_settings

            platforms = platform_settings()
        for model in platforms:
            self.platform(model)

    def platform(self, model: type[P]) -> P:
        """The settings of one platform, read from the same environment, `.env` and values."""
        found = self._platforms.get(model)
        if not isinstance(found, model):
            env_file, values = self._given
            found = model(_env_file=env_file, **values)
            self._platforms[model] = found
        return found

    @field_validator("host")
    @classmethod
    def _unbracketed(cls, value: str) -> str:
        """An IPv6 address as a URL writes it, `[::1]`, is the address: the brackets are the
        URL's, and nothing binds or resolves them."""
        inner = value[1:-1] if value.startswith("[") and value.endswith("]") else value
        return inner if ":" in inner else value

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        return (
            value.upper()
            if value.lower() in ("debug", "info", "warning", "error")
            else value.lower()
        )

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
            raise ValueError(
                "must be the web page's address, http:// or https:// with a host and no query, "
                f"such as https://askbridge.example.com, got {value!r}"
            )
        if any(c.isspace() or not c.isprintable() for c in value):
            raise ValueError(f"must not contain spaces or control characters, got {value!r}")
        return value.rstrip("/")

    @field_validator("webhook_allow")
    @classmethod
    def _allow_list(cls, value: str | None) -> str | None:
        AllowList.parse(value)
        return value

    @field_validator("escalation")
    @classmethod
    def _ladder(cls, value: str | None) -> str | None:
        if value is not None:
            read_escalation(value)
        return value

    def default_escalation(self) -> Ladder | None:
        """The server's default escalation ladder (ASKBRIDGE_ESCALATION), if it has one."""
        return None if self.escalation is None else read_escalation(self.escalation)

    @property
    def server_url(self) -> str:
        """Where clients reach the server: ASKBRIDGE_URL, else built from host and port."""
        if self.url:
            return self.url.rstrip("/")
        return local_url(self.host, self.port)

    def hook_options(self) -> HookOptions:
        """What a Claude Code hook asks with, unless its flags or URL say otherwise."""
        return HookOptions(
            target=_listed(self.hook_target),
            answerers=_listed(self.hook_answerers),
            quorum=self.hook_quorum,
            timeout_s=self.hook_timeout_s,
            on_timeout=self.hook_on_timeout,
        )

    def secrets(self) -> list[str]:
        """Secret values, so that log output can be scrubbed of them: every `SecretStr` of
        these settings and of each platform's, and the database URL's passwords."""
        models = (self, *self._platforms.values())
        found = [v.get_secret_value() for m in models for v in _secrets(m) if v.get_secret_value()]
        return [*found, *url_passwords(self.database_url)]


def _secrets(model: BaseModel) -> Iterator[SecretStr]:
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, SecretStr):
            yield value
        elif isinstance(value, BaseModel):
            yield from _secrets(value)


def variables(model: type[BaseSettings]) -> list[str]:
    """The environment variable of each of a settings model's fields."""
    prefix = str(model.model_config.get("env_prefix", ""))
    names = []
    for name, field in model.model_fields.items():
        alias = field.validation_alias
        names.append(
            str(alias.choices[0]) if isinstance(alias, AliasChoices) else prefix + name.upper()
        )
    return names


def read_escalation(text: str) -> Ladder:
    """A ladder from ASKBRIDGE_ESCALATION's JSON; ValueError says what is wrong with it."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        example = ladder_example(_registered_words())
        raise ValueError(f"must be JSON such as {example}: {error}") from None
    try:
        return read_ladder(raw, _registered_words())
    except PydanticCustomError as error:
        problems = (error.context or {}).get("problems", ())
        raise ValueError("; ".join(str(p) for p in problems) or error.message()) from None


def _listed(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def _registered_words() -> SurfaceWords:
    from askbridge.bots.surfaces import surface_words

    return surface_words()


def with_where_to_set(error: ClientError) -> str:
    """A client's error as a command that reads the settings tells it: when the server is
    unreachable, which setting says where it is; when it refused the token, which one holds
    it (the client itself reads neither)."""
    if isinstance(error, Unreachable):
        return f"{error} Set ASKBRIDGE_URL (or --url) to where it is"
    if error.status == 401:
        return (
            f"{error}; set ASKBRIDGE_API_TOKEN to the server's token where this runs (its "
            "environment, or .env in its working directory)"
        )
    return str(error)


def given_names(environ: Mapping[str, str], env_file: EnvFile = ENV_FILE) -> set[str]:
    """The names of the variables set in the environment and in `env_file`: the settings are
    read from both, so a typo in either would otherwise be ignored in silence."""
    names = set(environ)
    if env_file is not None and Path(env_file).is_file():
        names.update(dotenv_values(env_file, encoding="utf-8"))
    return names


def unknown_variables(
    names: Iterable[str], platforms: Iterable[type[PlatformSettings]] | None = None
) -> list[str]:
    """A warning for each ASKBRIDGE_* variable askbridge does not read, naming the closest
    one it does: a typo would otherwise be ignored in silence."""
    if platforms is None:
        from askbridge.bots.surfaces import platform_settings

        platforms = platform_settings()
    prefix = str(Settings.model_config.get("env_prefix", ""))
    models: list[type[BaseSettings]] = [Settings, *platforms]
    known = [name for model in models for name in variables(model)]
    warnings = []
    for name in sorted(set(names)):
        if not name.startswith(prefix) or name in known or name.startswith(f"{prefix}TEST_"):
            continue
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.append(f"{name} is not a setting askbridge reads{hint}")
    return warnings
