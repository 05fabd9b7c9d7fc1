"""Rules of the codebase that are cheaper to check than to review."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLATFORM_SDKS = ("slack_bolt", "slack_sdk", "discord")


def python_files(*folders: str) -> list[Path]:
    return [path for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))]


def test_tests_never_sleep_to_wait_for_something() -> None:
    # sleep(0) only yields to the event loop; any other sleep is a guess at how long to wait.
    sleeping = re.compile(
        r"\b(time|asyncio)\.sleep\((?!0\))|\bfrom (time|asyncio) import .*\bsleep\b"
    )
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in python_files("tests")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if sleeping.search(line) and path.name != "test_hygiene.py"
    ]
    assert offenders == [], "wait on an event, a future or a long-poll instead"


def test_core_imports_no_platform_sdk() -> None:
    offenders = []
    for path in python_files("core"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(ROOT)} imports {name}"
                for name in names
                if name.split(".")[0] in PLATFORM_SDKS
                or name.startswith(("askbridge.adapters", "askbridge.bots"))
            ]
    assert offenders == []


def test_code_imports_itself_through_the_installed_package() -> None:
    # `core.x` and `askbridge.core.x` would be two copies of one module with two sets of state.
    bare = re.compile(r"^\s*(from|import) (core|adapters|bots)\b", re.MULTILINE)
    offenders = [
        str(path.relative_to(ROOT))
        for path in python_files("core", "adapters", "bots", "tests")
        if bare.search(path.read_text())
    ]
    assert offenders == [], "import askbridge.core, askbridge.adapters or askbridge.bots"


def test_every_setting_is_in_env_example() -> None:
    from pydantic_settings import BaseSettings

    from askbridge.bots.settings import Settings, variables
    from askbridge.bots.surfaces import platform_settings

    example = (ROOT / ".env.example").read_text()
    models: list[type[BaseSettings]] = [Settings, *platform_settings()]
    names = [env for model in models for env in variables(model)]
    assert "SLACK_BOT_TOKEN" in names
    assert "ASKBRIDGE_SLACK_UPDATES_PER_MINUTE" in names
    for env in names:
        assert f"\n{env}=" in example or f"\n# {env}=" in example, f"{env} missing"
