"""A command hook finds the process it serves past the shells that started it, and hears it end."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from askbridge.bots.host_process import ended, host_pid


def fake_proc(root: Path, processes: dict[int, tuple[str, int]]) -> Path:
    """A /proc with `pid: (comm, ppid)` entries."""
    for pid, (comm, ppid) in processes.items():
        folder = root / str(pid)
        folder.mkdir(parents=True)
        (folder / "comm").write_text(f"{comm}\n")
        (folder / "stat").write_text(f"{pid} ({comm}) S {ppid} 1 1 0 -1\n")
    return root


def test_the_host_is_the_first_ancestor_that_is_not_a_shell(tmp_path: Path) -> None:
    parent = os.getppid()
    proc = fake_proc(tmp_path, {parent: ("sh", 4242), 4242: ("claude (node) x", 77)})
    assert host_pid(proc) == 4242
    direct = fake_proc(tmp_path / "direct", {parent: ("claude", 77)})
    assert host_pid(direct) == parent
    # Shells all the way up, or a parent already gone: nothing to watch.
    only_shells = fake_proc(tmp_path / "shells", {parent: ("sh", 1)})
    assert host_pid(only_shells) is None
    assert host_pid(tmp_path / "empty") is None


@pytest.mark.skipif(sys.platform != "linux", reason="pidfd is Linux's")
async def test_the_end_of_a_process_is_heard_without_polling() -> None:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import sys; sys.stdin.read()", stdin=asyncio.subprocess.PIPE
    )
    watch = asyncio.create_task(ended(child.pid))
    await asyncio.sleep(0)
    assert not watch.done()
    assert child.stdin is not None
    child.stdin.close()
    await child.wait()
    async with asyncio.timeout(10):
        await watch
