"""Timing marks in a process of the benchmark, for `--stages`: where a click's time goes.

    python -m tests.bench.marks FILE MODULE [ARG…]

runs `python -m MODULE ARG…` with a mark at each library seam that every process of a click
passes through alike (aiohttp's server and client, slack_bolt's dispatch and listener,
slack_sdk's Socket Mode client, the garbage collector), and writes the marks to FILE as JSON
lines when the module returns. A mark is `time.perf_counter()`, one clock for every process
on Linux, so the benchmark lines the processes' marks up with its own clicks. No code of
askbridge's is touched: the same marks land in askbridge, the floor and the emulator, however
askbridge's own click path is built, and a run without `--stages` has none of them.
"""

from __future__ import annotations

import functools
import gc
import importlib
import inspect
import json
import runpy
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from yarl import URL

Mark = tuple[float, str, str]
MARKS: list[Mark] = []
"""Appended to only: a list append and a clock read are all a mark costs the process."""

Describe = Callable[..., str]
OWN = (
    "askbridge.core.broker:Broker.act",
    "askbridge.core.store.sqlite:SQLiteStore.vote",
    "askbridge.core.store.postgres:PostgresStore.vote",
    "askbridge.core.hub:Hub.publish",
)
"""askbridge's steps of a click marked in its own process: the broker's act, the store's
vote, the waiters woken; each a "call" and a "return" mark named by it."""


def around(
    owner: type, name: str, before: str | None, after: str | None, describe: Describe
) -> None:
    """Mark when `owner.name` (a coroutine function) is called and when it returns."""
    original: Callable[..., Awaitable[Any]] = getattr(owner, name)

    @functools.wraps(original)
    async def marked(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            MARKS.append((time.perf_counter(), before, describe(*args, **kwargs)))
        try:
            return await original(*args, **kwargs)
        finally:
            if after is not None:
                MARKS.append((time.perf_counter(), after, describe(*args, **kwargs)))

    setattr(owner, name, marked)


def around_sync(owner: type, name: str, label: str) -> None:
    """Mark when `owner.name` (a plain function) is called and when it returns."""
    original: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(original)
    def marked(*args: Any, **kwargs: Any) -> Any:
        MARKS.append((time.perf_counter(), "call", label))
        try:
            return original(*args, **kwargs)
        finally:
            MARKS.append((time.perf_counter(), "return", label))

    setattr(owner, name, marked)


def request_line(_: object, request: Any, *rest: Any, **named: Any) -> str:
    return f"{request.method} {request.path}"


def client_line(_: object, method: str, url: Any, *rest: Any, **named: Any) -> str:
    return f"{method} {URL(str(url)).path}"


def nothing(*args: Any, **kwargs: Any) -> str:
    return ""


def on_collection(phase: str, info: dict[str, Any]) -> None:
    MARKS.append((time.perf_counter(), f"gc {phase}", f"gen{info['generation']}"))


def install() -> None:
    """The marks; each names the seam in words the benchmark's analysis matches on."""
    from aiohttp import ClientSession, web_app, web_ws
    from slack_bolt.app.async_app import AsyncApp
    from slack_bolt.listener.async_listener import AsyncCustomListener
    from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient

    around(web_app.Application, "_handle", "request in", "request handled", request_line)
    around(ClientSession, "_request", "client call", "client answered", client_line)
    around(web_ws.WebSocketResponse, "send_str", "websocket send", None, nothing)
    around(AsyncBaseSocketModeClient, "enqueue_message", "socket mode in", None, nothing)
    around(AsyncApp, "async_dispatch", "bolt dispatch", None, nothing)
    around(AsyncCustomListener, "run_ack_function", "listener called", None, nothing)
    gc.callbacks.append(on_collection)


def install_own() -> None:
    """Marks around a few of askbridge's own steps of a click, those of `OWN` that exist (its
    code may move on; a step not found is not marked): where its part of the way goes."""
    for where in OWN:
        module_name, _, qualified = where.partition(":")
        owner_name, _, name = qualified.partition(".")
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        owner = getattr(module, owner_name, None)
        function = getattr(owner, name, None)
        if owner is None or function is None:
            continue
        if inspect.iscoroutinefunction(function):
            around(owner, name, "call", "return", lambda *a, _q=qualified, **k: _q)
        else:
            around_sync(owner, name, qualified)


def write(path: Path) -> None:
    with path.open("w") as out:
        for found in MARKS:
            out.write(json.dumps(found) + "\n")


def main() -> None:
    path, module, *args = sys.argv[1:]
    install()
    if module.startswith("askbridge."):
        install_own()
    sys.argv = [module, *args]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        write(Path(path))


if __name__ == "__main__":
    main()
