"""The real `claude` CLI, run the way the Agent SDK runs it, offline against the fake API.

`claude -p --input-format stream-json --output-format stream-json --permission-prompt-tool
stdio`: the prompt goes in on stdin, every message comes out on stdout, and permission
prompts arrive as `can_use_tool` control requests. They are held, not answered: when a hook
decides first, the CLI withdraws the prompt with a `control_cancel_request`; a test that
expects no decision from the hooks answers the prompt itself, as an SDK host would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CLAUDE_VERSION = "2.1.332"
"""The pinned CLI; .ci/run installs it, and the hook contract was checked against it."""
CLAUDE_ENV = "ASKBRIDGE_TEST_CLAUDE"
CACHE = "$HOME/.cache/askbridge-claude"
INSTALL = f'npm install --prefix "{CACHE}" @anthropic-ai/claude-code@{CLAUDE_VERSION}'
WAIT_S = 30.0

Message = dict[str, Any]


def find_claude() -> Path:
    """The pinned CLI: $ASKBRIDGE_TEST_CLAUDE, else the cache .ci/run installs into. Absent:
    the test is skipped (or fails, when ASKBRIDGE_TEST_CLAUDE names a path that is not it)."""
    named = os.environ.get(CLAUDE_ENV)
    default = Path.home() / ".cache" / "askbridge-claude" / "node_modules" / ".bin" / "claude"
    path = Path(named) if named else default
    if not path.exists():
        if named:
            pytest.fail(f"{CLAUDE_ENV}={named} does not exist; install it with: {INSTALL}")
        pytest.skip(f"the claude CLI {CLAUDE_VERSION} is not installed; run: {INSTALL}")
    shown = subprocess.run(
        [str(path), "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout
    if not shown.startswith(f"{CLAUDE_VERSION} "):
        message = f"{path} is claude {shown.strip()!r}, the tests pin {CLAUDE_VERSION}: {INSTALL}"
        if named:
            pytest.fail(message)
        pytest.skip(message)
    return path


@dataclass(frozen=True)
class Sandbox:
    """A home, config and temp directory of its own, and the project the CLI works in."""

    root: Path

    @classmethod
    def make(cls, root: Path) -> Sandbox:
        for name in ("home", "tmp", "project"):
            (root / name).mkdir(parents=True, exist_ok=True)
        return cls(root)

    @property
    def project(self) -> Path:
        return self.root / "project"

    def env(self, api_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """Nothing of the machine's environment but PATH: no real key, config or proxy."""
        home = self.root / "home"
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "TMPDIR": str(self.root / "tmp"),
            "ANTHROPIC_BASE_URL": api_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_AUTOUPDATER": "1",
            **(extra or {}),
        }


class ClaudeRun:
    """One `claude -p` session as an SDK host drives it."""

    def __init__(self, binary: Path, sandbox: Sandbox, env: Mapping[str, str]) -> None:
        self.binary = binary
        self.sandbox = sandbox
        self.env = dict(env)
        self.messages: list[Message] = []
        self.stderr: list[str] = []
        self._arrived = asyncio.Event()
        self._process: asyncio.subprocess.Process | None = None
        self._readers: list[asyncio.Task[None]] = []

    async def start(
        self, prompt: str, settings: Path | None = None, extra: Sequence[str] = ()
    ) -> None:
        args = [
            str(self.binary),
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-prompt-tool",
            "stdio",
        ]
        if settings is not None:
            args += ["--settings", str(settings)]
        args += extra
        self._process = await asyncio.create_subprocess_exec(
            *args,
            cwd=self.sandbox.project,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=16 * 1024 * 1024,
        )
        self._readers = [
            asyncio.create_task(self._read_stdout(), name="claude-stdout"),
            asyncio.create_task(self._read_stderr(), name="claude-stderr"),
        ]
        user = {"role": "user", "content": prompt}
        await self._send({"type": "user", "message": user, "parent_tool_use_id": None})

    async def _send(self, message: Message) -> None:
        assert self._process is not None
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message).encode() + b"\n")
        await self._process.stdin.drain()

    async def _read_stdout(self) -> None:
        assert self._process is not None
        assert self._process.stdout is not None
        while line := await self._process.stdout.readline():
            if line.strip():
                self.messages.append(json.loads(line))
                self._arrived.set()
        self._arrived.set()

    async def _read_stderr(self) -> None:
        assert self._process is not None
        assert self._process.stderr is not None
        while line := await self._process.stderr.readline():
            self.stderr.append(line.decode(errors="replace"))

    async def wait_for(self, wanted: Callable[[Message], bool]) -> Message:
        """The first message (since the start) for which `wanted` is true."""
        assert self._process is not None
        async with asyncio.timeout(WAIT_S):
            while True:
                self._arrived.clear()
                found = next((m for m in self.messages if wanted(m)), None)
                if found is not None:
                    return found
                if self._readers[0].done():
                    raise AssertionError(f"claude exited:\n{''.join(self.stderr)}")
                await self._arrived.wait()

    async def result(self) -> Message:
        """The session's `result` message: the model has finished its turn."""
        return await self.wait_for(lambda m: m.get("type") == "result")

    async def prompt(self, tool_name: str) -> Message:
        """The first `can_use_tool` control request for `tool_name`."""
        return await self.wait_for(lambda m: prompt_for(m, tool_name))

    def prompts(self, tool_name: str) -> list[Message]:
        return [m for m in self.messages if prompt_for(m, tool_name)]

    def withdrawn(self, prompt: Message) -> bool:
        """The CLI took `prompt` back: a hook decided before the host did."""
        return any(
            m.get("type") == "control_cancel_request"
            and m.get("request_id") == prompt["request_id"]
            for m in self.messages
        )

    async def answer(self, prompt: Message, behavior: str, message: str = "") -> None:
        """Answer a permission prompt as the SDK host's own user would."""
        response: Message = {"behavior": behavior}
        if behavior == "deny":
            response["message"] = message
        else:
            response["updatedInput"] = prompt["request"]["input"]
        await self._send(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": prompt["request_id"],
                    "response": response,
                },
            }
        )

    async def reply(self, request: Message, response: Message) -> None:
        """Answer any control request (an `elicitation`, say) as an SDK host would."""
        reply = {"subtype": "success", "request_id": request["request_id"], "response": response}
        await self._send({"type": "control_response", "response": reply})

    def notices(self) -> list[str]:
        """What hooks told the person at the terminal (their `systemMessage`)."""
        return [
            str(m.get("content"))
            for m in self.messages
            if m.get("type") == "system" and m.get("subtype") == "informational"
        ]

    async def terminate(self) -> int:
        """SIGTERM, as when its user stops it; the exit status."""
        assert self._process is not None
        self._process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(WAIT_S):
            return await self._process.wait()

    async def kill(self) -> int:
        """SIGKILL, as when it crashes or its terminal goes: it stops no hook; the exit status."""
        assert self._process is not None
        self._process.send_signal(signal.SIGKILL)
        async with asyncio.timeout(WAIT_S):
            return await self._process.wait()

    async def stop(self) -> None:
        """End the session: stdin closed, then SIGTERM (which stops its hooks too), then
        SIGKILL."""
        process = self._process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        for signum in (None, signal.SIGTERM, signal.SIGKILL):
            if process.returncode is not None:
                break
            if signum is not None:
                process.send_signal(signum)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await process.wait()
        for reader in self._readers:
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def prompt_for(message: Message, tool_name: str) -> bool:
    request = message.get("request") or {}
    return (
        message.get("type") == "control_request"
        and request.get("subtype") == "can_use_tool"
        and request.get("tool_name") == tool_name
    )
