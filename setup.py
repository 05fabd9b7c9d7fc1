"""Maps the repository's top-level folders onto the one installed package, `askbridge`.

core/, adapters/ and bots/ become askbridge.core, askbridge.adapters and askbridge.bots here,
not through askbridge/'s symlinks (those serve the source tree: the tests, mypy), so a wheel
and an sdist hold the real files and an editable install links them, in a checkout without
symlinks too. A folder that is missing or is no package stops the build, where it would
otherwise leave its part out of the wheel. The rest of the build is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

# Each package of the top level and the folder that holds it.
FOLDERS = {
    "askbridge": "askbridge",
    "askbridge.core": "core",
    "askbridge.adapters": "adapters",
    "askbridge.bots": "bots",
}


def packages() -> list[str]:
    """Every package to build, from the folders; stops the build if one holds no package."""
    found = []
    for package, folder in FOLDERS.items():
        if not Path(folder, "__init__.py").is_file():
            raise SystemExit(
                f"cannot build askbridge: {folder}/__init__.py is missing, so the wheel would "
                f"lack {package}. Build from the whole repository (an image build copies "
                f"{', '.join(FOLDERS.values())})."
            )
        # askbridge/ links the other folders in; they are mapped here instead.
        prefix = f"{package}."
        linked = [name.removeprefix(prefix) for name in FOLDERS if name.startswith(prefix)]
        below = find_packages(folder, exclude=[*linked, *(f"{name}.*" for name in linked)])
        found += [package, *(f"{package}.{sub}" for sub in below)]
    return found


setup(packages=packages(), package_dir=FOLDERS)
