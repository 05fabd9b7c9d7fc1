"""Whether `make dev`'s install still links every module of the source tree.

`make dev` is a strict editable install: build/__editable__.* links each file, so a module added
since then is missing there. Tests that start askbridge in a process of its own (the CLI, the
hooks, the MCP server) import it through those links, and would fail on an ImportError far from
its cause; the test session stops first and says what to run.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Each folder of the source tree and where its files are in the folder of links.
FOLDERS = {
    "askbridge": "askbridge",
    "core": "askbridge/core",
    "adapters": "askbridge/adapters",
    "bots": "askbridge/bots",
}


def linked_tree(site_packages: Path) -> Path | None:
    """The folder of links a strict editable install of askbridge put on the path, if any."""
    for pth in site_packages.glob("__editable__.askbridge-*.pth"):
        entry = pth.read_text().strip()
        if not entry.startswith("import ") and Path(entry, "askbridge").is_dir():
            return Path(entry)
    return None


def unlinked_modules(root: Path, tree: Path) -> list[str]:
    """The modules of the source tree that the folder of links lacks."""
    missing = []
    for folder, installed in FOLDERS.items():
        for module in sorted((root / folder).rglob("*.py")):
            relative = module.relative_to(root / folder)
            if not (tree / installed / relative).exists():
                missing.append(f"{folder}/{relative}")
    return missing


def stale_install_message() -> str | None:
    tree = linked_tree(Path(sysconfig.get_path("purelib")))
    if tree is None:
        return None
    missing = unlinked_modules(ROOT, tree)
    if not missing:
        return None
    return (
        f"the editable install in {tree} lacks {', '.join(missing[:5])}"
        f"{' and more' if len(missing) > 5 else ''}: run `make dev` to link new modules"
    )
