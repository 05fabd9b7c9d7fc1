"""`askbridge ask --file` with a typed form: its content printed typed, a decline its own exit
status. The server's real clock runs the deadline that ends each form."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from askbridge.bots.cli import EXIT_DECLINED
from tests.server_process import ServerProcess
from tests.test_cli import run_ask, started
from tests.test_forms_api import SCHEMA

__all__ = ["started"]


async def ask_form(
    server: ServerProcess, tmp_path: Path, on_timeout: object
) -> tuple[int, str, str]:
    request = tmp_path / "form.json"
    body = {
        "form": {"message": "Which ticket?", "requested_schema": SCHEMA},
        "timeout_s": 0.2,
        "on_timeout": on_timeout,
    }
    request.write_text(json.dumps(body))
    ask = await run_ask(server.url, "--file", str(request))
    out, err = await asyncio.wait_for(ask.communicate(), 30)
    assert ask.returncode is not None
    return ask.returncode, out.decode(), err.decode()


async def test_a_form_answered_prints_its_typed_content(
    started: ServerProcess, tmp_path: Path
) -> None:
    content = {"ticket": 42, "urgent": True, "due": "2027-02-01"}
    code, out, err = await ask_form(started, tmp_path, {"content": content})
    assert code == 0, err
    assert json.loads(out) == content


async def test_a_declined_form_exits_7(started: ServerProcess, tmp_path: Path) -> None:
    code, out, err = await ask_form(started, tmp_path, "decline")
    assert code == EXIT_DECLINED == 7
    final = json.loads(out)
    assert (final["status"], final["action"]) == ("declined", "decline")
    assert "declined by the deadline" in err


async def test_a_form_that_does_not_fit_exits_2(started: ServerProcess, tmp_path: Path) -> None:
    code, _, err = await ask_form(started, tmp_path, {"content": {"ticket": 0}})
    assert code == 2
    assert "The form was rejected" in err
    assert "on_timeout.content.ticket: must be at least 1, got 0" in err
