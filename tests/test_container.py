"""What can be checked of the image and of compose.yaml without a container runtime (CI has
none, so the image itself is never built here)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from askbridge.bots.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
INTERPOLATION = re.compile(r"\$\{(\w+)(?::?([-?])([^}]*))?\}")


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, arguments = line.strip().partition(" ")
            found.append((keyword.upper(), arguments.strip()))
    return found


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return loaded


def replicas() -> dict[str, dict[str, Any]]:
    services: dict[str, dict[str, Any]] = compose()["services"]
    return {name: s for name, s in services.items() if s.get("build") == "."}


def setting_names() -> set[str]:
    """Each setting's environment variable, as bots/settings.py reads it."""
    names: set[str] = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        env = alias.choices[0] if alias is not None else f"ASKBRIDGE_{name.upper()}"  # type: ignore[union-attr]
        names.add(str(env))
    return names


def resolved(value: object) -> str:
    """A compose value as it is when no variable is set: `${VAR:-default}` is the default."""
    return INTERPOLATION.sub(lambda m: m[3] if m[2] == "-" else "", str(value))


def test_compose_runs_two_replicas_of_the_image() -> None:
    assert sorted(replicas()) == ["askbridge-1", "askbridge-2"]
    ports = [p for service in replicas().values() for p in service["ports"]]
    assert len({p.rsplit(":", 1)[0] for p in ports}) == 2, "each replica on a port of its own"


def test_every_setting_compose_sets_is_a_setting_and_in_env_example() -> None:
    known = setting_names()
    example = (ROOT / ".env.example").read_text()
    for name, service in replicas().items():
        for variable in service["environment"]:
            assert variable in known, f"{name} sets {variable}, which bots/settings.py ignores"
            assert f"\n{variable}=" in example or f"\n# {variable}=" in example, variable


def test_the_replicas_share_the_compose_postgres_database(monkeypatch: pytest.MonkeyPatch) -> None:
    services = compose()["services"]
    postgres = services["postgres"]["environment"]
    urls = {resolved(s["environment"]["ASKBRIDGE_DATABASE_URL"]) for s in replicas().values()}
    [url] = urls
    parts = urlsplit(url)
    assert (parts.scheme, parts.hostname, parts.port) == ("postgresql", "postgres", 5432)
    assert parts.username == postgres["POSTGRES_USER"]
    assert parts.password == resolved(postgres["POSTGRES_PASSWORD"])
    assert parts.path == f"/{postgres['POSTGRES_DB']}"
    for service in replicas().values():
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        # What the replica's environment makes of the settings, with a token given.
        for variable, value in service["environment"].items():
            monkeypatch.setenv(variable, resolved(value))
        monkeypatch.setenv("ASKBRIDGE_API_TOKEN", "a-token")
        settings = Settings(_env_file=None)
        assert settings.database_url == url
        assert settings.host == "0.0.0.0"


def test_compose_asks_for_the_api_token_it_cannot_start_without() -> None:
    for service in replicas().values():
        token = service["environment"]["ASKBRIDGE_API_TOKEN"]
        assert token.startswith("${ASKBRIDGE_API_TOKEN:?"), "compose must refuse to run without"


def test_the_image_runs_the_documented_command() -> None:
    [command] = [json.loads(args) for keyword, args in instructions() if keyword == "CMD"]
    assert command == ["askbridge", "serve"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "askbridge" in scripts
    assert "askbridge serve" in (ROOT / "README.md").read_text()
    assert "$(BIN)/askbridge serve" in (ROOT / "Makefile").read_text()


def test_the_image_is_slim_unprivileged_and_checks_healthz() -> None:
    found = instructions()
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    python = required.removeprefix(">=")
    bases = [args.split()[0] for keyword, args in found if keyword == "FROM"]
    assert bases
    assert all(base == f"python:{python}-slim" for base in bases), bases
    [user] = [args for keyword, args in found if keyword == "USER"]
    assert user not in ("root", "0")
    [check] = [args for keyword, args in found if keyword == "HEALTHCHECK"]
    assert "/healthz" in check
    environment = " ".join(args for keyword, args in found if keyword == "ENV")
    assert "ASKBRIDGE_DATABASE_URL=" in environment, "a default the environment overrides"
    for secret in ("TOKEN", "SECRET", "PASSWORD"):
        assert secret not in environment, "no secret is baked into the image"
    for keyword, args in found:
        if keyword == "COPY" and not args.startswith("--from"):
            for source in args.split()[:-1]:
                assert (ROOT / source).exists(), source
