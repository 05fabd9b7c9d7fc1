"""A command hook that records its input and answers what the test set, to observe the CLI.

Each input is written to `<dir>/input-<n>.json`; the reply is `<dir>/reply.json`, printed as
it is, and the exit status `<dir>/exit` (0 when absent). Run as `python recording_hook.py DIR`.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(folder: Path) -> int:
    given = sys.stdin.read()
    count = len(list(folder.glob("input-*.json")))
    (folder / f"input-{count}.json").write_text(given)
    reply = folder / "reply.json"
    if reply.exists():
        sys.stdout.write(reply.read_text())
    status = folder / "exit"
    return int(status.read_text()) if status.exists() else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
