"""Settings errors name the variable to fix; logs never carry a token."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from askbridge.bots.logs import IsoFormatter, RedactSecrets, configure_logging
from askbridge.bots.settings import every_interface, local_url, unknown_variables
from tests.conftest import settings_for
from tests.server_process import ServerProcess


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


@pytest.fixture
def zone() -> Iterator[None]:
    saved = os.environ.get("TZ")
    yield
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


@pytest.mark.parametrize("name", ["UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"])
def test_a_log_line_shows_the_time_datetime_shows(zone: None, name: str) -> None:
    """The zone is looked up once a second: a line's time is still the one datetime writes,
    to the millisecond, across a change of the zone's offset and where a timestamp rounds up
    into the next second."""
    os.environ["TZ"] = name
    time.tzset()
    formatter = IsoFormatter()
    record = logging.LogRecord("askbridge.test", logging.INFO, __file__, 1, "m", None, None)
    changes = [1772953200.0, 1793512800.0, 1775314800.0, 1791041400.0]  # New York, Lord Howe 2026
    stamps = [
        change + second + fraction
        for change in changes
        for second in (-2, -1, 0, 1)
        for fraction in (0.0, 0.0004999, 0.0005, 0.9994999, 0.9995, 0.9999994, 0.9999995, 0.9999996)
    ]
    for stamp in stamps:
        record.created = stamp
        expected = (
            datetime.fromtimestamp(stamp, UTC).astimezone().isoformat(timespec="milliseconds")
        )
        assert formatter.formatTime(record) == expected, stamp


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


def test_a_line_break_in_a_message_cannot_start_a_line_of_its_own(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    forged = "bob\n2026-12-07T20:30:00.000+00:00 ERROR   askbridge: FORGED\r\u2028end"
    try:
        configure_logging("info", form="text")
        logging.getLogger("askbridge.requests").info("request ask_1 answered by web:%s", forged)
        try:
            raise ValueError("the traceback keeps its lines")
        except ValueError:
            logging.getLogger("askbridge.test").exception("failed for %s", "a\nb")
    finally:
        root.handlers[:], root.level = saved
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].endswith(
        "askbridge.requests: request ask_1 answered by web:bob\\n2026-12-07T20:30:00.000+00:00 "
        "ERROR   askbridge: FORGED\\r\\u2028end"
    ), lines
    assert lines[1].endswith("askbridge.test: failed for a\\nb"), lines
    assert lines[2:3] == ["Traceback (most recent call last):"], lines
    assert lines[-1] == "ValueError: the traceback keeps its lines", lines


async def test_a_mistyped_variable_in_env_file_is_named_at_start_up(server: ServerProcess) -> None:
    # The server runs in the folder of its database, where it reads `.env`.
    (server.cwd / ".env").write_text("ASKBRIDGE_WEBHOOK_ALOW=127.0.0.1\n")
    await server.start()
    assert any(
        "ASKBRIDGE_WEBHOOK_ALOW is not a setting askbridge reads; did you mean "
        "ASKBRIDGE_WEBHOOK_ALLOW?" in line
        for line in server.log
    ), server.log


async def test_the_access_log_is_logged_at_debug(
    server: ServerProcess, http: aiohttp.ClientSession
) -> None:
    server.env.update({"ASKBRIDGE_LOG_LEVEL": "debug", "ASKBRIDGE_LOG_FORMAT": "json"})
    url = await server.start()
    async with http.get(f"{url}/v1/questions?access-log-probe") as response:
        assert response.status == 200
    # Stopped, the server has written every line.
    assert await server.stop() == 0
    [line] = [json.loads(line) for line in server.log if "access-log-probe" in line]
    assert (line["logger"], line["level"]) == ("askbridge.access", "DEBUG")


async def test_a_mistyped_variable_is_a_json_line_when_the_log_is_json(
    server: ServerProcess,
) -> None:
    server.env.update({"ASKBRIDGE_LOG_FORMAT": "json", "ASKBRIDGE_WEBHOK_SECRET": "x"})
    await server.start()
    [warning] = [json.loads(line) for line in server.log if "ASKBRIDGE_WEBHOK_SECRET" in line]
    assert warning["level"] == "WARNING"
    assert warning["message"] == (
        "ASKBRIDGE_WEBHOK_SECRET is not a setting askbridge reads; did you mean "
        "ASKBRIDGE_WEBHOOK_SECRET?"
    )


@pytest.mark.parametrize(
    ("host", "every", "here"),
    [
        ("0.0.0.0", True, "http://127.0.0.1:8765"),
        ("", True, "http://127.0.0.1:8765"),
        ("::", True, "http://[::1]:8765"),
        ("0:0:0:0:0:0:0:0", True, "http://[::1]:8765"),
        ("127.0.0.1", False, "http://127.0.0.1:8765"),
        ("::1", False, "http://[::1]:8765"),
        ("localhost", False, "http://localhost:8765"),
        ("192.0.2.7", False, "http://192.0.2.7:8765"),
    ],
)
def test_every_interface_of_either_ip_version_is_reached_here_over_its_loopback(
    host: str, every: bool, here: str
) -> None:
    assert every_interface(host) is every
    assert local_url(host, 8765) == here


@pytest.mark.parametrize(
    ("given", "host", "here"),
    [
        ("[::1]", "::1", "http://[::1]:8765"),
        ("[::]", "::", "http://[::1]:8765"),
        ("[x]", "[x]", "http://[x]:8765"),
    ],
)
def test_an_ipv6_host_in_brackets_is_the_address_inside(
    tmp_path: Path, given: str, host: str, here: str
) -> None:
    settings = settings_for(tmp_path, host=given, port=8765)
    assert settings.host == host
    assert settings.server_url == here
