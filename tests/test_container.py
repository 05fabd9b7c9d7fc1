"""What can be checked of the image and of compose.yaml without a container runtime (CI has
none): the image's build is reproduced from the Dockerfile's own COPY lines, and `askbridge
serve` runs from the wheel it makes, installed as the image installs it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
import yaml
from pydantic_settings import BaseSettings

from askbridge.bots.settings import Settings, variables
from askbridge.bots.surfaces import platform_settings
from tests.builds import PROJECT, built, copy
from tests.server_process import LISTENING

ROOT = Path(__file__).resolve().parent.parent
INTERPOLATION = re.compile(r"\$\{(\w+)(?::?([-?])([^}]*))?\}")
PINNED = re.compile(r"^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$")


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, arguments = line.strip().partition(" ")
            found.append((keyword.upper(), arguments.strip()))
    return found


def stages() -> list[list[tuple[str, str]]]:
    """The instructions of each stage, from its FROM on."""
    found: list[list[tuple[str, str]]] = []
    for keyword, arguments in instructions():
        if keyword == "FROM":
            found.append([])
        found[-1].append((keyword, arguments))
    return found


def dockerignore() -> list[tuple[bool, re.Pattern[str]]]:
    """.dockerignore's rules in order, as (re-included?, pattern over a context path)."""
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            glob = line.removeprefix("!").strip("/")
            pattern = "".join(
                {"**/": "(.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(
                    token, re.escape(token)
                )
                for token in re.findall(r"\*\*/|\*\*|\*|\?|[^*?]+", glob)
            )
            rules.append((line.startswith("!"), re.compile(pattern)))
    return rules


def sent_to_docker(relative: Path) -> bool:
    """Whether the build context holds this path (a rule that matches a folder holds for all in
    it; the last matching rule decides)."""
    sent = True
    prefixes = [relative, *list(relative.parents)[:-1]]
    for included, pattern in dockerignore():
        if any(pattern.fullmatch(prefix.as_posix()) for prefix in prefixes):
            sent = included
    return sent


def copied(source: Path, target: Path) -> None:
    """`COPY source target`: a folder's contents, symlinks as symlinks, less what the build
    context leaves out."""
    if not source.is_dir():
        copy(source, target)
        return
    for folder, folders, files in os.walk(source):  # into no symlinked folder: Docker neither
        for name in [*folders, *files]:
            path = Path(folder, name)
            if sent_to_docker(path.relative_to(ROOT)) and (path.is_symlink() or path.is_file()):
                copy(path, target / path.relative_to(source))


def build_stage(where: Path) -> Path:
    """The build stage's working folder after its COPY lines, in `where`."""
    [build] = [stage for stage in stages() if stage[0][1].endswith(" AS build")]
    [workdir] = [arguments for keyword, arguments in build if keyword == "WORKDIR"]
    stage = where / workdir.lstrip("/")
    for keyword, arguments in build:
        if keyword == "COPY":
            *sources, target = [word for word in arguments.split() if not word.startswith("--")]
            for source in sources:
                into = stage / target
                if len(sources) > 1 or target.endswith("/"):
                    into = into / Path(source).name
                copied(ROOT / source, into)
    return stage


@pytest.fixture(scope="module")
def image_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel the image's build stage makes, from exactly the files it copies."""
    [run] = [arguments for keyword, arguments in stages()[0] if keyword == "RUN"]
    assert "pip wheel --no-cache-dir --no-deps --wheel-dir /wheels ." in run
    return built(build_stage(tmp_path_factory.mktemp("image")), tmp_path_factory.mktemp("wheels"))


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return loaded


def replicas() -> dict[str, dict[str, Any]]:
    services: dict[str, dict[str, Any]] = compose()["services"]
    return {name: s for name, s in services.items() if s.get("build") == "."}


def setting_names() -> set[str]:
    """Each setting's environment variable, as bots/settings.py reads it (the platforms' too)."""
    models: list[type[BaseSettings]] = [Settings, *platform_settings()]
    return {env for model in models for env in variables(model)}


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
    assert all(base.split("@")[0] == f"python:{python}-slim" for base in bases), bases
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


def test_every_base_image_is_pinned_by_digest() -> None:
    bases = [arguments.split()[0] for keyword, arguments in instructions() if keyword == "FROM"]
    pulled = [s["image"] for s in compose()["services"].values() if "build" not in s]
    assert bases
    assert pulled
    for image in [*bases, *pulled]:
        assert PINNED.match(image), f"{image} is not pinned by digest"
    [base] = set(bases)
    labels = " ".join(arguments for keyword, arguments in stages()[-1] if keyword == "LABEL")
    name, digest = base.split("@")
    assert f'org.opencontainers.image.base.digest="{digest}"' in labels
    assert f'org.opencontainers.image.base.name="docker.io/library/{name}"' in labels


def test_the_image_says_what_it_is_in_oci_labels() -> None:
    labels = " ".join(arguments for keyword, arguments in stages()[-1] if keyword == "LABEL")
    assert 'org.opencontainers.image.title="askbridge"' in labels
    assert f'org.opencontainers.image.version="{PROJECT["version"]}"' in labels
    assert f'org.opencontainers.image.licenses="{PROJECT["license"]}"' in labels


def test_the_final_image_holds_no_pip() -> None:
    *_, final = stages()
    runs = " ".join(arguments for keyword, arguments in final if keyword == "RUN")
    assert "pip install" not in runs, "the build stage installs; the final stage copies"
    assert "pip uninstall --yes --quiet pip" in runs
    [build_run] = [arguments for keyword, arguments in stages()[0] if keyword == "RUN"]
    assert "python -m venv --without-pip /opt/askbridge" in build_run
    assert ("COPY", "--from=build /opt/askbridge /opt/askbridge") in final


def test_the_image_wheel_holds_the_package(image_wheel: Path) -> None:
    import zipfile

    names = zipfile.ZipFile(image_wheel).namelist()
    for part in ("core/broker.py", "bots/cli.py", "adapters/web/static/live.js", "py.typed"):
        assert f"askbridge/{part}" in names


@pytest.fixture(scope="module")
def image_venv(image_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment without pip holding the image's wheel, as the build stage makes
    /opt/askbridge. Its dependencies come from this environment (the image fetches them from
    PyPI); askbridge itself only from the wheel."""
    venv = tmp_path_factory.mktemp("opt") / "askbridge"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    install: list[str | Path] = ["install", "-q", "--no-deps", "--no-index", image_wheel]
    subprocess.run([sys.executable, "-m", "pip", "--python", python, *install], check=True)
    own = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dependencies = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    (Path(own) / "dependencies.pth").write_text("\n".join(sorted(dependencies)) + "\n")
    return venv


def in_venv(venv: Path, code: str) -> str:
    done = subprocess.run(
        [venv / "bin" / "python", "-I", "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_image_environment_runs_askbridge_from_the_wheel(image_venv: Path) -> None:
    found = in_venv(image_venv, "import askbridge.core.broker as m; print(m.__file__)")
    assert Path(found).is_relative_to(image_venv)
    assert not Path(found).is_symlink()
    shown = subprocess.run(
        [image_venv / "bin" / "python", "-I", "-m", "askbridge", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == f"askbridge {PROJECT['version']}"


def test_the_image_environment_prints_the_slack_manifest(image_venv: Path) -> None:
    # The Slack tutorial pastes it; in a container there is no checkout to take it from.
    shown = subprocess.run(
        [image_venv / "bin" / "askbridge", "slack-manifest"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    )
    assert shown.stdout == (ROOT / "adapters" / "slack" / "manifest.yaml").read_text()


@pytest.fixture
async def image_server(image_venv: Path, tmp_path: Path) -> AsyncIterator[str]:
    """`askbridge serve` as the image's CMD runs it, from the image's environment."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("ASKBRIDGE_", "SLACK_", "DISCORD_", "PYTHON"))
    }
    env |= {
        "ASKBRIDGE_HOST": "127.0.0.1",
        "ASKBRIDGE_PORT": "0",
        "ASKBRIDGE_DATABASE_URL": f"sqlite:///{tmp_path / 'askbridge.db'}",
    }
    [command] = [json.loads(args) for keyword, args in instructions() if keyword == "CMD"]
    process = await asyncio.create_subprocess_exec(
        image_venv / "bin" / command[0],
        *command[1:],
        env=env,
        cwd=tmp_path,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    log: list[str] = []
    try:
        async with asyncio.timeout(30):
            while not (
                found := LISTENING.search(line := (await process.stderr.readline()).decode())
            ):
                assert line, "askbridge serve exited:\n" + "".join(log)
                log.append(line)
        yield found.group(1)
    finally:
        process.terminate()
        await process.wait()


async def test_askbridge_serves_from_the_image_wheel(image_server: str) -> None:
    static = ROOT / "adapters" / "web" / "static"
    async with aiohttp.ClientSession(image_server) as http:
        async with http.get("/healthz") as response:
            assert response.status == 200
        async with http.get("/") as response:
            assert response.status == 200
            assert response.content_type == "text/html"
        for name in ("live.js", "style.css"):
            async with http.get(f"/web/{name}") as response:
                assert response.status == 200
                assert await response.text() == (static / name).read_text()
