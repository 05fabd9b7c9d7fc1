"""The wheel installs one package, `askbridge`, and its client runs without the server's
dependencies."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER_ONLY = ("slack_bolt", "slack_sdk", "discord", "asyncpg", "prometheus_client", "mcp")

# Runs in a fresh interpreter that sees the unpacked wheel and refuses to import any of
# SERVER_ONLY, as an agent's environment without them would.
CLIENT_WITHOUT_SERVER = """
import importlib.abc, sys
sys.path.insert(0, sys.argv[1])
blocked = tuple(sys.argv[2].split(","))

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, NotInstalled())
from askbridge.client import AskbridgeClient, Interrupted, subject_matches
import askbridge
assert askbridge.__file__.startswith(sys.argv[1]), askbridge.__file__
print(AskbridgeClient.__module__)
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("askbridge-*.whl")
    return built


def test_the_wheel_installs_one_namespaced_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names if not name.startswith("askbridge-")}
    assert top_level == {"askbridge"}
    for part in (
        "core/broker.py",
        "adapters/slack/manifest.yaml",
        "adapters/web/static/live.js",
        "adapters/web/templates/form.html",
        "bots/cli.py",
        "client.py",
    ):
        assert f"askbridge/{part}" in names
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert (
        "askbridge = askbridge.bots.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    )


def test_the_client_imports_without_the_server_dependencies(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path)
    done = subprocess.run(
        [sys.executable, "-I", "-c", CLIENT_WITHOUT_SERVER, str(tmp_path), ",".join(SERVER_ONLY)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "askbridge.bots.client"
