"""Running `askbridge serve` as a real child process, for crash and CLI tests."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

# "listening on http://…", or "listening on 0.0.0.0:… (every interface; on this machine http://…)"
# ("every IPv6 interface" for [::]).
LISTENING = re.compile(
    r"listening on (?:\S+ \(every (?:IPv6 )?interface; on this machine )?(http://[^\s)]+)"
)


SERVE = (sys.executable, "-m", "askbridge.bots.cli", "serve")


class ServerProcess:
    def __init__(
        self,
        database: Path,
        env: Mapping[str, str] | None = None,
        *,
        argv: Sequence[str] = SERVE,
        cwd: Path | None = None,
    ) -> None:
        """`argv` other than `askbridge serve` (a shell running `make run`, say) runs in a
        session of its own, and a signal goes to every process of it."""
        self.database = database
        self.env = dict(env or {})
        self.argv = tuple(argv)
        self.cwd = cwd or database.parent
        self.process: asyncio.subprocess.Process | None = None
        self.url = ""
        self.log: list[str] = []
        self._logged = asyncio.Condition()

    async def start(self, port: int = 0) -> str:
        env = {
            **os.environ,
            "ASKBRIDGE_DATABASE_URL": f"sqlite:///{self.database}",
            "ASKBRIDGE_HOST": "127.0.0.1",
            "ASKBRIDGE_PORT": str(port),
            **self.env,
        }
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            env=env,
            cwd=self.cwd,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=self.argv != SERVE,
        )
        assert self.process.stderr is not None
        async with asyncio.timeout(20):
            while True:
                line = (await self.process.stderr.readline()).decode()
                if not line:
                    raise AssertionError("server exited:\n" + "".join(self.log))
                self.log.append(line)
                found = LISTENING.search(line)
                if found:
                    self.url = found.group(1)
                    break
        self._drain = asyncio.create_task(self._read_rest(), name="server-log")
        return self.url

    async def logged(self, *texts: str, timeout_s: float = 30.0) -> str:
        """The first line of the log, from now on or already there, holding one of `texts`."""

        def found() -> str | None:
            return next((line for line in self.log if any(t in line for t in texts)), None)

        async with asyncio.timeout(timeout_s), self._logged:
            await self._logged.wait_for(lambda: found() is not None)
        line = found()
        assert line is not None
        return line

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    async def _read_rest(self) -> None:
        assert self.process is not None
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.log.append(line.decode())
            async with self._logged:
                self._logged.notify_all()

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash or an OOM kill."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()
        await self._drain

    async def died(self, timeout_s: float = 10.0) -> int:
        """Wait for the process to end by itself (a crash point made it kill itself); its
        exit code, negative for a signal."""
        assert self.process is not None
        code = await asyncio.wait_for(self.process.wait(), timeout_s)
        await self._drain
        return code

    async def stop(self, signum: int = signal.SIGTERM) -> int:
        if self.process is None:
            return 0
        if self.process.returncode is not None:
            return self.process.returncode
        if self.argv == SERVE:
            self.process.send_signal(signum)
        else:
            os.killpg(self.process.pid, signum)
        code = await asyncio.wait_for(self.process.wait(), 20)
        await self._drain
        return code
