"""Building askbridge's wheel and sdist from copies of the repository, as an installer or an
image build does, without a network (the build uses the setuptools of the running venv)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What a build reads: the package's folders and the files pyproject.toml names.
SOURCES = (
    "pyproject.toml",
    "setup.py",
    "README.md",
    "LICENSE",
    "askbridge",
    "core",
    "adapters",
    "bots",
)
LINKED = ("core", "adapters", "bots")
"""The folders askbridge/ links in."""

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def copy(source: Path, target: Path) -> None:
    """A file or folder as a checkout holds it: symlinks stay symlinks, no bytecode."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir() and not source.is_symlink():
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(source, target, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def checkout(where: Path, leave_out: tuple[str, ...] = ()) -> Path:
    """A copy of what a build reads from the repository, less `leave_out`."""
    for name in SOURCES:
        if name not in leave_out:
            copy(ROOT / name, where / name)
    return where


def build(source: Path, out: Path, *, kind: str = "wheel") -> subprocess.CompletedProcess[str]:
    """Build a wheel (pip wheel) or an sdist (setuptools' PEP 517 hook) of `source` into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    if kind == "wheel":
        command = ["-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out)]
        command.append(str(source))
    else:
        hook = "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])"
        command = ["-c", hook, str(out)]
    return subprocess.run(
        [sys.executable, *command], cwd=source, capture_output=True, text=True, check=False
    )


def built(source: Path, out: Path, *, kind: str = "wheel") -> Path:
    done = build(source, out, kind=kind)
    assert done.returncode == 0, done.stdout + done.stderr
    suffix = "whl" if kind == "wheel" else "tar.gz"
    (path,) = out.glob(f"askbridge-*.{suffix}")
    return path
