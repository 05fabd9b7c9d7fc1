"""Settings errors name the variable to fix; logs never carry a token."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from datetime import datetime

import pytest

from askbridge.bots.logs import RedactSecrets, configure_logging
from askbridge.bots.settings import unknown_variables


def test_log_lines_are_scrubbed_of_tokens(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("askbridge.test-redaction")
    redact = RedactSecrets(["agent-api-token-1234"])
    caplog.handler.addFilter(redact)
    try:
        logger.warning("calling with %s", "Bearer agent-api-token-1234")
        logger.warning("slack said %s", "token xoxb-1234-5678-abcdef rejected")
        logger.warning("socket mode with xapp-1-fake-app-token")
    finally:
        caplog.handler.removeFilter(redact)
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "agent-api-token-1234" not in text
    assert "xoxb-" not in text
    assert "xapp-" not in text
    assert text.count("[redacted]") == 3


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ASKBRIDGE_PORT", "abc", "ASKBRIDGE_PORT: Input should be a valid integer"),
        ("ASKBRIDGE_WEB_UI", "maybe", "ASKBRIDGE_WEB_UI: Input should be 'auto', 'on' or 'off'"),
        (
            "ASKBRIDGE_SLACK_UPDATES_PER_MINUTE",
            "abc",
            "ASKBRIDGE_SLACK_UPDATES_PER_MINUTE: Input should be a valid number",
        ),
    ],
)
async def test_a_bad_setting_is_named(name: str, value: str, message: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    serve = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        "serve",
        env={**env, name: value},
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await serve.communicate()
    assert serve.returncode == 2
    assert message in err.decode()


def test_log_lines_carry_iso_times_and_json_carries_context(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        configure_logging("info", ["s3cret-token"], "json")
        logging.getLogger("askbridge.test").info(
            "answered with s3cret-token", extra={"request_id": "ask_1", "surface": "slack"}
        )
        voice = "PyNaCl is not installed, voice will NOT be supported"
        logging.getLogger("discord.client").warning(voice)
        configure_logging("INFO", form="text")
        logging.getLogger("askbridge.test").info("plain")
    finally:
        root.handlers[:], root.level = saved
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    line = json.loads(lines[0])
    assert line["request_id"] == "ask_1"
    assert line["surface"] == "slack"
    assert line["message"] == "answered with [redacted]"
    assert datetime.fromisoformat(line["time"]).tzinfo is not None
    stamp = lines[1].split(" ", 1)[0]
    assert datetime.fromisoformat(stamp).tzinfo is not None
    assert lines[1].endswith("askbridge.test: plain")


def test_a_mistyped_variable_is_named_with_the_closest_setting() -> None:
    environ = {
        "ASKBRIDGE_SLACK_UPDATES_PER_MINUTE": "5",
        "ASKBRIDGE_SLACK_UPDATES_PER_MINUT": "5",
        "ASKBRIDGE_PORT": "1",
        "SLACK_BOT_TOKEN": "xoxb-1",
    }
    assert unknown_variables(environ) == [
        "ASKBRIDGE_SLACK_UPDATES_PER_MINUT is not a setting askbridge reads; did you mean "
        "ASKBRIDGE_SLACK_UPDATES_PER_MINUTE?"
    ]
