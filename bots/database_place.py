"""Where askbridge keeps its SQLite database when ASKBRIDGE_DATABASE_URL is unset: a file in the
per-user data directory (platformdirs: $XDG_DATA_HOME/askbridge, else ~/.local/share/askbridge
on Linux; ~/Library/Application Support/askbridge on macOS), the same file from whatever
directory askbridge runs in. Start-up names a database the earlier default left in the working
directory.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs

from askbridge.core.store.factory import SQLITE_PREFIX

FILE_NAME = "askbridge.db"


def default_database_path() -> Path:
    return platformdirs.user_data_path("askbridge", appauthor=False) / FILE_NAME


def default_database_url() -> str:
    return f"{SQLITE_PREFIX}{default_database_path()}"


def sqlite_path(url: str) -> Path | None:
    """The file of a `sqlite:///` URL (relative to the working directory unless it starts
    with a fourth slash); None for any other database."""
    if not url.startswith(SQLITE_PREFIX):
        return None
    return Path(url[len(SQLITE_PREFIX) :] or FILE_NAME)


def earlier_database(folder: Path) -> Path | None:
    """The database the earlier default made in `folder`, if there is one and it is not the
    default's own file."""
    found = folder / FILE_NAME
    if not found.is_file():
        return None
    try:
        if found.samefile(default_database_path()):
            return None
    except OSError:
        pass  # no file at the default place: the two differ
    return found.absolute()


def earlier_database_warning(folder: Path) -> str | None:
    """What to tell someone whose database, made by the earlier default, is in `folder`."""
    earlier = earlier_database(folder)
    if earlier is None:
        return None
    return (
        f"{earlier} looks like a database of an earlier askbridge, which kept it in the "
        f"working directory; ASKBRIDGE_DATABASE_URL is unset, so askbridge uses "
        f"{default_database_path()} instead. To go on with the earlier file, set "
        f"ASKBRIDGE_DATABASE_URL=sqlite:///{earlier} (or move it, with its -wal and -shm "
        "files, to the new place while askbridge is stopped)"
    )
