"""While `askbridge ask` waits at a terminal, one line says who may answer, the votes so far and
the time left, rewritten in place and erased when the answer comes; piped, there is no line."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import os
import re
import struct
import sys
import termios
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest

from askbridge.bots.status_line import CLEAR, StatusLine, on_terminal, status_text
from tests.conftest import waiting_ids
from tests.server_process import ServerProcess
from tests.test_cli import DEPLOY_FLAGS, run_ask
from tests.web_person import answer_on_web

START = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


def waiting(**fields: object) -> dict[str, object]:
    return {
        "status": "waiting",
        "answerers": [],
        "quorum": 1,
        "votes": [],
        "expires_at": (START + timedelta(minutes=10)).isoformat(),
        **fields,
    }


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def screen(written: str) -> list[str]:
    """The lines a terminal shows after `written`: a carriage return goes back to the start of
    the line, ESC [ K erases from the cursor to the end of it."""
    lines, column = [""], 0
    at = 0
    while at < len(written):
        if written.startswith("\x1b[K", at):
            lines[-1] = lines[-1][:column]
            at += 3
            continue
        char = written[at]
        at += 1
        if char == "\r":
            column = 0
        elif char == "\n":
            lines.append("")
            column = 0
        else:
            lines[-1] = lines[-1][:column] + char + lines[-1][column + 1 :]
            column += 1
    return lines


def test_the_line_says_who_may_answer_the_votes_and_the_time_left() -> None:
    assert status_text(waiting(), START) == "waiting for anyone who sees it · 10m 00s left"
    grace_and_lin = waiting(answerers=["web:Grace", "web:Lin"], quorum=2, votes=[{"voter": {}}])
    assert status_text(grace_and_lin, START + timedelta(seconds=61.5)) == (
        "waiting for web:Grace or web:Lin · 1 voted, 2 must agree · 8m 59s left"
    )
    three = waiting(answerers=["slack-group:S0SRE", "slack:U1", "web:Lin"])
    assert status_text(three, START + timedelta(minutes=9, seconds=59, milliseconds=1)) == (
        "waiting for slack-group:S0SRE, slack:U1 or web:Lin · 1s left"
    )
    assert status_text(waiting(expires_at=None), START) == (
        "waiting for anyone who sees it · no deadline"
    )
    far = waiting(expires_at=(START + timedelta(hours=25, minutes=3)).isoformat())
    assert status_text(far, START) == "waiting for anyone who sees it · 25h 03m left"
    assert status_text(waiting(), START + timedelta(hours=1)).endswith(" · 0s left")


def test_the_line_is_rewritten_in_place_as_the_clock_runs_and_erased_at_the_end() -> None:
    out, clock = io.StringIO(), Clock()
    line = StatusLine(out, clock, width=lambda: 100)
    line.show(waiting(answerers=["web:Grace", "web:Lin"], quorum=2))
    clock.now += timedelta(seconds=1)
    line.tick()
    assert out.getvalue().count(CLEAR) == 2
    assert screen(out.getvalue()) == [
        "askbridge: waiting for web:Grace or web:Lin · 0 voted, 2 must agree · 9m 59s left"
    ]
    line.say("askbridge: askbridge at http://127.0.0.1:9 is unreachable; retrying")
    line.show(waiting(answerers=["web:Grace", "web:Lin"], quorum=2, votes=[{"voter": {}}]))
    assert screen(out.getvalue()) == [
        "askbridge: askbridge at http://127.0.0.1:9 is unreachable; retrying",
        "askbridge: waiting for web:Grace or web:Lin · 1 voted, 2 must agree · 9m 59s left",
    ]
    line.close()
    line.tick()
    assert screen(out.getvalue()) == [
        "askbridge: askbridge at http://127.0.0.1:9 is unreachable; retrying",
        "",
    ]


def test_the_line_fits_the_terminal_and_no_name_moves_its_cursor() -> None:
    out = io.StringIO()
    line = StatusLine(out, Clock(), width=lambda: 40)
    line.show(waiting(answerers=["web:Eve\r\x1b[2Jhi\u202e"]))
    [shown] = screen(out.getvalue())
    assert shown == "askbridge: waiting for web:Eve??[2Jhi?…"
    assert len(shown) == 39


@pytest.mark.parametrize(
    ("tty", "term", "shown"),
    [(True, "xterm-256color", True), (True, "dumb", False), (False, "xterm", False)],
)
def test_only_a_terminal_that_can_erase_gets_the_line(tty: bool, term: str, shown: bool) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    assert on_terminal(Stream(), {"TERM": term}) is shown


class Terminal:
    """The controlling side of a pseudo-terminal, read as the process writes to it."""

    def __init__(self, columns: int) -> None:
        self.control, self.device = os.openpty()
        fcntl.ioctl(self.device, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        # Written as sent: no newline becomes CR LF on the way.
        attributes = termios.tcgetattr(self.device)
        attributes[1] &= ~termios.OPOST
        termios.tcsetattr(self.device, termios.TCSANOW, attributes)
        self.written = ""
        self.changed = asyncio.Event()
        self.ended = False
        asyncio.get_running_loop().add_reader(self.control, self._read)

    def _read(self) -> None:
        try:
            chunk = os.read(self.control, 4096)
        except OSError:  # EIO: every writer has closed the device
            chunk = b""
        if not chunk:
            self.ended = True
            asyncio.get_running_loop().remove_reader(self.control)
        self.written += chunk.decode(errors="replace")
        self.changed.set()

    async def shows(self, seen: Callable[[list[str]], bool]) -> list[str]:
        async with asyncio.timeout(30):
            while not seen(screen(self.written)):
                assert not self.ended, f"the terminal closed showing {screen(self.written)}"
                self.changed.clear()
                await self.changed.wait()
        return screen(self.written)

    def close(self) -> None:
        if not self.ended:
            asyncio.get_running_loop().remove_reader(self.control)
        os.close(self.control)


@pytest.fixture
async def terminal() -> AsyncIterator[Terminal]:
    made = Terminal(columns=200)
    yield made
    made.close()


async def ask_at(terminal: Terminal, url: str, *args: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge",
        "ask",
        "--url",
        url,
        *args,
        env={**env, "TERM": "xterm"},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=terminal.device,
    )
    os.close(terminal.device)  # the child holds it; its end closes the terminal
    return process


LIVE = re.compile(
    r"^askbridge: waiting for web:Grace or web:Lin · (\d) voted, 2 must agree · (\d+)m \d\ds left$"
)


async def test_at_a_terminal_the_line_follows_the_votes_and_goes_with_the_answer(
    server: ServerProcess, http: aiohttp.ClientSession, terminal: Terminal, tmp_path: Path
) -> None:
    url = await server.start()
    flags = ("--answerer", "web:Grace", "--answerer", "web:Lin", "--quorum", "2")
    ask = await ask_at(terminal, url, *DEPLOY_FLAGS, *flags, "--timeout", "600")

    def votes(count: str) -> Callable[[list[str]], bool]:
        return lambda lines: bool((found := LIVE.match(lines[-1])) and found[1] == count)

    shown = await terminal.shows(votes("0"))
    request_id = shown[0].split()[2].rstrip(";")
    assert shown[0] == f"askbridge: asked {request_id}; answer at {url}/q/{request_id}"
    live = LIVE.match(shown[-1])
    assert live is not None
    assert int(live[2]) in (9, 10)
    await answer_on_web(http, url, request_id, {"Deploy": ["Approve"]}, name="Grace")
    await terminal.shows(votes("1"))
    await answer_on_web(http, url, request_id, {"Deploy": ["Approve"]}, name="Lin")
    out, _ = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode == 0
    assert json.loads(out) == {"Deploy": "Approve"}
    final = await terminal.shows(lambda _: terminal.ended)
    assert final == [f"askbridge: asked {request_id}; answer at {url}/q/{request_id}", ""]
    assert terminal.written.endswith(CLEAR)


async def test_piped_there_is_no_line(server: ServerProcess, http: aiohttp.ClientSession) -> None:
    url = await server.start()
    flags = ("--answerer", "web:Grace", "--answerer", "web:Lin", "--quorum", "2")
    ask = await run_ask(url, *DEPLOY_FLAGS, *flags, "--request-id", "ask_piped")
    await waiting_ids(http, url)
    for name in ("Grace", "Lin"):
        await answer_on_web(http, url, "ask_piped", {"Deploy": ["Approve"]}, name=name)
    out, err = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode == 0
    assert json.loads(out) == {"Deploy": "Approve"}
    assert err.decode() == f"askbridge: asked ask_piped; answer at {url}/q/ask_piped\n"
