"""Child processes of the benchmark: start one, learn its address, read its memory, stop it."""

from __future__ import annotations

import asyncio
import ctypes
import os
import re
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on (http://\S+)")
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
PR_SET_PDEATHSIG = 1
OWN_SETTINGS = ("ASKBRIDGE_", "SLACK_", "DISCORD_")
"""Settings from the shell are not inherited: every child gets exactly what it is given."""


class Child:
    """`python -m <module> <args>`, ready once it writes `listening on http://…` to stderr.

    The kernel sends it SIGTERM when this process dies, so that none outlives a benchmark
    that crashed."""

    def __init__(
        self, module: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> None:
        self.command = [sys.executable, "-m", module, *args]
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(OWN_SETTINGS)}
        if module.startswith("tests."):
            # Our own children run from any folder: tests/ is not installed.
            inherited["PYTHONPATH"] = os.pathsep.join(
                [str(ROOT), *filter(None, [inherited.get("PYTHONPATH")])]
            )
        self.env = {**inherited, **(env or {})}
        self.process: asyncio.subprocess.Process | None = None
        self.url = ""
        self.log: list[str] = []
        self._drain: asyncio.Task[None] | None = None

    async def start(self, cwd: Path | None = None) -> str:
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            env=self.env,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            preexec_fn=die_with_parent,
        )
        self.url = await ready_url(self.process, self.log)
        self._drain = asyncio.create_task(drain(self.process, self.log), name="child-log")
        return self.url

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def rss_bytes(self) -> int:
        return rss_bytes(self.pid)

    async def stop(self) -> None:
        process = self.process
        if process is None or process.returncode is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
        if self._drain is not None:
            await self._drain


async def ready_url(process: asyncio.subprocess.Process, log: list[str]) -> str:
    """The address a child announces on stderr; an error with its output if it dies first."""
    assert process.stderr is not None
    async with asyncio.timeout(START_TIMEOUT_S):
        while True:
            line = (await process.stderr.readline()).decode()
            if not line:
                await process.wait()
                raise RuntimeError(
                    f"child exited with {process.returncode} before listening:\n" + "".join(log)
                )
            log.append(line)
            found = LISTENING.search(line)
            if found:
                return found.group(1)


async def drain(process: asyncio.subprocess.Process, log: list[str]) -> None:
    """Keep reading a child's stderr so that it never blocks on a full pipe; keep the tail."""
    assert process.stderr is not None
    while line := await process.stderr.readline():
        log.append(line.decode())
        del log[:-200]


def die_with_parent() -> None:
    """In the forked child, before exec: ask Linux for SIGTERM when the parent goes away."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def cpu_seconds(pid: int | None) -> float:
    """User and system CPU time a process has used so far, from /proc (Linux); 0 for None."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    # After the command name: state is field 3, utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_bytes(pid: int) -> int:
    """Resident memory of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


async def until_told_to_stop() -> None:
    """In a child: return on SIGTERM (also sent when the parent dies) or SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()


async def serve_until_told_to_stop(app: web.Application, name: str) -> None:
    """In a child: serve `app` on a free port of 127.0.0.1, say where (as `Child` reads it),
    and return once told to stop, the server closed."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    sys.stderr.write(f"{name} listening on http://127.0.0.1:{port}\n")
    sys.stderr.flush()
    try:
        await until_told_to_stop()
    finally:
        await runner.cleanup()
