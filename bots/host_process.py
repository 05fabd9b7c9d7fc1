"""The process a command hook serves, and the moment it ends.

Claude Code runs each command hook through `sh -c`, in a process group of its own: when
Claude Code is killed, or its terminal goes, nothing stops the hook, which would wait until
its deadline with the question still open. The hook watches the first of its ancestors that is
not a shell (Claude Code) through a Linux pidfd, which becomes readable when that process
ends: no polling. Elsewhere nothing is watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ash", "ksh", "busybox"})
"""What a hook command may be started through; the host is the process above them."""
MAX_SHELLS = 3


def host_pid(proc: Path = Path("/proc")) -> int | None:
    """The process that started this one, past any shells; None when it cannot be told
    (not Linux, or the parent is gone already: then init, pid 1, stands in for it)."""
    pid = os.getppid()
    for _ in range(MAX_SHELLS + 1):
        if pid <= 1:
            return None
        try:
            name = (proc / str(pid) / "comm").read_text().strip()
            if name not in SHELLS:
                return pid
            # /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses.
            stat = (proc / str(pid) / "stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    return None


async def ended(pid: int) -> None:
    """Return once process `pid` has ended (at once when it already has); wait forever when
    this system cannot tell."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (OSError, AttributeError):
        await asyncio.Event().wait()
        return
    loop = asyncio.get_running_loop()
    gone = asyncio.Event()
    loop.add_reader(descriptor, gone.set)
    try:
        await gone.wait()
    finally:
        loop.remove_reader(descriptor)
        with contextlib.suppress(OSError):
            os.close(descriptor)
