"""The wheel and the sdist hold one package, `askbridge`, as real files; its client runs without
the server's dependencies; type checkers in another project read its types through `make dev`'s
install."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import askbridge
from tests.builds import LINKED, PROJECT, ROOT, build, built, checkout
from tests.editable import linked_tree, unlinked_modules

SERVER_ONLY = ("slack_bolt", "slack_sdk", "discord", "asyncpg", "prometheus_client", "mcp")
PARTS = (
    "__init__.py",
    "__main__.py",
    "py.typed",
    "client.py",
    "core/broker.py",
    "core/store/sqlite.py",
    "adapters/slack/manifest.yaml",
    "adapters/web/static/live.js",
    "adapters/web/templates/form.html",
    "bots/cli.py",
)
"""Files of the installed package that a wheel without some part would lack."""

# The pyright the tests run, from npm; .ci/run installs the same version.
PYRIGHT_VERSION = "1.1.414"
PYRIGHT = Path(
    os.environ.get(
        "ASKBRIDGE_TEST_PYRIGHT",
        Path.home() / ".cache/askbridge-pyright/node_modules/.bin/pyright",
    )
)

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

# An agent's code in another project: one call as the client's types allow, one they refuse.
AGENT = """\
from askbridge.client import AskbridgeClient


async def ask() -> str:
    async with AskbridgeClient("http://127.0.0.1:8765", token=None) as client:
        response = await client.ask([], target="web", timeout_s=600)
        await client.ask([], timeout_s="ten minutes")
        return response.request_id
"""
WRONG_LINE = 7


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = checkout(tmp_path_factory.mktemp("checkout"))
    return built(source, tmp_path_factory.mktemp("sdist"), kind="sdist")


@pytest.fixture(scope="module")
def wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the sdist, as an installer given the sdist builds it."""
    unpacked = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (source,) = unpacked.iterdir()
    return built(source, tmp_path_factory.mktemp("wheel"))


def test_the_sdist_holds_the_real_files(sdist: Path) -> None:
    with tarfile.open(sdist) as archive:
        members = {member.name.split("/", 1)[1]: member for member in archive.getmembers()[1:]}
    links = [name for name, member in members.items() if member.issym() or member.islnk()]
    assert links == [], "an sdist unpacked where symlinks do not work would lack them"
    for name in ("setup.py", "pyproject.toml", "askbridge/py.typed", "core/broker.py"):
        assert members[name].isfile(), name
    assert members["adapters/slack/manifest.yaml"].size > 0


def test_the_wheel_installs_one_namespaced_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names if not name.startswith("askbridge-")}
    assert top_level == {"askbridge"}
    for part in PARTS:
        assert f"askbridge/{part}" in names
    assert len(names) == len(set(names)), "no file twice"
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert (
        "askbridge = askbridge.bots.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
    )


def test_the_wheel_says_its_version_and_that_it_is_typed_and_posix_only(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    metadata = email.message_from_bytes(
        archive.read(f"askbridge-{PROJECT['version']}.dist-info/METADATA")
    )
    assert metadata["Version"] == PROJECT["version"]
    classifiers = metadata.get_all("Classifier", [])
    assert "Typing :: Typed" in classifiers
    assert "Operating System :: POSIX" in classifiers
    assert metadata["Author"] == "The askbridge authors"
    assert "human-in-the-loop" in metadata["Keywords"].split(",")


def test_the_client_imports_without_the_server_dependencies(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path)
    done = subprocess.run(
        [sys.executable, "-I", "-c", CLIENT_WITHOUT_SERVER, str(tmp_path), ",".join(SERVER_ONLY)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "askbridge.bots.client"


def test_a_checkout_without_symlinks_builds_the_whole_package(tmp_path: Path) -> None:
    # What git writes for askbridge/'s links where it cannot make symlinks (core.symlinks=false):
    # small files holding the target.
    source = checkout(tmp_path / "checkout")
    for part in LINKED:
        (source / "askbridge" / part).unlink()
        (source / "askbridge" / part).write_text(f"../{part}")
    names = zipfile.ZipFile(built(source, tmp_path / "out")).namelist()
    for part in PARTS:
        assert f"askbridge/{part}" in names


@pytest.mark.parametrize("missing", [*LINKED, "askbridge"])
def test_a_build_without_a_part_of_the_package_fails_and_says_which(
    tmp_path: Path, missing: str
) -> None:
    source = checkout(tmp_path / "checkout", leave_out=(missing,))
    done = build(source, tmp_path / "out")
    assert done.returncode != 0
    assert f"{missing}/__init__.py is missing" in done.stdout + done.stderr
    assert not list((tmp_path / "out").glob("*.whl"))


def test_python_m_askbridge_is_the_askbridge_command() -> None:
    command = Path(sys.executable).with_name("askbridge")
    shown = [
        subprocess.run([*run, "--version"], capture_output=True, text=True, check=True).stdout
        for run in ([sys.executable, "-m", "askbridge"], [str(command)])
    ]
    assert shown == [f"askbridge {PROJECT['version']}\n"] * 2
    assert askbridge.__version__ == PROJECT["version"]


def another_project(tmp_path: Path) -> Path:
    """A project outside the repository that uses the client as an agent would."""
    project = tmp_path / "agent"
    project.mkdir()
    (project / "agent.py").write_text(AGENT)
    return project


def test_mypy_in_another_project_checks_calls_against_the_client(tmp_path: Path) -> None:
    project = another_project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "agent.py"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    hint = "; is askbridge installed by make dev (a strict editable install)?"
    assert len(errors) == 1, done.stdout + hint
    assert errors[0].startswith(f'agent.py:{WRONG_LINE}: error: Argument "timeout_s"')
    assert errors[0].endswith('expected "float | None"  [arg-type]')


def pyright() -> Path:
    install = (
        f'npm install --prefix "{PYRIGHT.parents[2]}" pyright@{PYRIGHT_VERSION}'
        " (or set ASKBRIDGE_TEST_PYRIGHT)"
    )
    if not PYRIGHT.exists():
        message = f"pyright {PYRIGHT_VERSION} is not installed; run: {install}"
        if os.environ.get("CI"):
            pytest.fail(message + "; .ci/run installs it")
        pytest.skip(message)
    shown = subprocess.run([PYRIGHT, "--version"], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == f"pyright {PYRIGHT_VERSION}", f"the tests pin it: {install}"
    return PYRIGHT


def test_pyright_in_another_project_checks_calls_against_the_client(tmp_path: Path) -> None:
    project = another_project(tmp_path)
    done = subprocess.run(
        [pyright(), "--pythonpath", sys.executable, "agent.py"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    errors = [line.strip() for line in done.stdout.splitlines() if " - error: " in line]
    assert len(errors) == 1, done.stdout
    assert errors[0].startswith(f"{project / 'agent.py'}:{WRONG_LINE}:")
    assert 'parameter "timeout_s" of type "float | None"' in errors[0]


def test_ci_installs_the_pyright_the_tests_pin() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert f"\nPYRIGHT_VERSION={PYRIGHT_VERSION}\n" in script


def test_a_module_added_after_make_dev_is_named(tmp_path: Path) -> None:
    site_packages = tmp_path / "site-packages"
    site_packages.mkdir()
    tree = tmp_path / "build" / "__editable__.askbridge-0-py3-none-any"
    (tree / "askbridge" / "core").mkdir(parents=True)
    (site_packages / "__editable__.askbridge-0.pth").write_text(f"{tree}\n")
    assert linked_tree(site_packages) == tree
    source = tmp_path / "checkout"
    for folder in ("askbridge", "core", "adapters", "bots"):
        (source / folder).mkdir(parents=True)
    for module in ("askbridge/client.py", "core/broker.py", "core/refusals.py"):
        (source / module).write_text("")
    (tree / "askbridge" / "client.py").symlink_to(source / "askbridge" / "client.py")
    (tree / "askbridge" / "core" / "broker.py").symlink_to(source / "core" / "broker.py")
    assert unlinked_modules(source, tree) == ["core/refusals.py"]


def test_the_default_editable_install_has_no_folder_of_links(tmp_path: Path) -> None:
    (tmp_path / "__editable__.askbridge-0.pth").write_text("import __editable___finder\n")
    assert linked_tree(tmp_path) is None


def test_make_install_prints_no_warning_box(tmp_path: Path) -> None:
    source = checkout(tmp_path / "checkout")
    shutil.copy2(ROOT / "Makefile", source / "Makefile")
    venv = tmp_path / "venv"

    def make(target: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["make", target, f"VENV={venv}", f"PYTHON={sys.executable}"],
            cwd=source,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    made = make(f"{venv}/bin/python")  # the venv, with pip upgraded as make does
    assert made.returncode == 0, made.stderr
    # The venv sees the test run's packages, so the install needs askbridge's own build only.
    [site_packages] = (venv / "lib").glob("python3*/site-packages")
    (site_packages / "running.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = make("install")
    assert done.returncode == 0, done.stderr
    assert "!!" not in done.stderr, done.stderr
    assert linked_tree(site_packages) is not None
