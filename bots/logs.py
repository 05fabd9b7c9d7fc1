"""Logging is configured here and only here; libraries just use named loggers.

Lines carry ISO 8601 times with their zone; `json` writes one object per line with the
request, surface and person a line is about, when the code logging it says so
(`extra={"request_id": …}`). Every secret is scrubbed from both forms.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal

from aiohttp.http_exceptions import HttpProcessingError

from askbridge.bots.surfaces import library_noise, token_shapes

# Tokens of the platforms askbridge talks to, in case one reaches a log line via a library.
TOKEN_PATTERN = re.compile(rf"\b({'|'.join(token_shapes())})")
REDACTED = "[redacted]"
CONTEXT = ("request_id", "surface", "person")
# Warnings the platforms' libraries print about features askbridge does not use.
UNUSED_FEATURES = library_noise()
LogFormat = Literal["text", "json"]


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if len(s) >= 6]

    def filter(self, record: logging.LogRecord) -> bool:
        # The message is formatted once, here: the filter after this one and the formatter
        # read it as it is left (a request's log line is on every click's path).
        record.msg, record.args = self.scrub(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            # Formatters print this cached text instead of formatting the traceback again.
            record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
        return True

    def scrub(self, text: str) -> str:
        cleaned = TOKEN_PATTERN.sub(REDACTED, text)
        for secret in self._secrets:
            cleaned = cleaned.replace(secret, REDACTED)
        return cleaned


class UnusedFeatures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(noise in message for noise in UNUSED_FEATURES)


class RefusedRequests(logging.Filter):
    """aiohttp's server logs each request its parser refuses (a URL over 8190 bytes, raw
    non-ASCII in the query, a Content-Encoding it cannot decode) as an ERROR with a traceback,
    before askbridge sees it; any client can send those, so each is one WARNING line instead,
    saying why."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            why = " ".join(str(error.message).split())
            record.msg, record.args = "%s: %s", (record.getMessage(), why)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


class IsoFormatter(logging.Formatter):
    _second: tuple[int, str, str] = (-1, "", "")
    """The whole second last written: its date and time, and its zone's offset (which changes
    only on a whole second)."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """`record.created` as `datetime.fromtimestamp(…).astimezone().isoformat(timespec=
        "milliseconds")` writes it, with the zone looked up once a second rather than once a
        line (a request's log line is on every click's path)."""
        # Rounded to the microsecond as datetime rounds a timestamp, which may carry into the
        # next second; then cut to the millisecond, as isoformat cuts.
        fraction, whole = math.modf(record.created)
        second, micros = int(whole), round(fraction * 1e6)
        if micros >= 1_000_000:
            second, micros = second + 1, micros - 1_000_000
        cached, day_time, offset = self._second
        if second != cached:
            shown = datetime.fromtimestamp(second, UTC).astimezone().isoformat()
            day_time, offset = shown[:19], shown[19:]
            self._second = (second, day_time, offset)
        return f"{day_time}.{micros // 1000:03d}{offset}"


LINE_BREAKS = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
"""What ends a line, to a terminal or to a tool that reads a log line by line."""


class TextFormatter(IsoFormatter):
    """One line per message: a line break in it (a name, an id, anything a person or an agent
    wrote) is written as its escape, so no text can add a line that looks like the server's
    own. A traceback follows on lines of its own, as always."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        if LINE_BREAKS.search(record.message):
            record.message = LINE_BREAKS.sub(_escape, record.message)
        return super().formatMessage(record)


def _escape(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]


class JsonFormatter(IsoFormatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update({key: str(getattr(record, key)) for key in CONTEXT if hasattr(record, key)})
        if record.exc_info:
            line["error"] = record.exc_text or self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class AccessAtDebug(logging.Filter):
    """aiohttp writes its access log at INFO; askbridge shows it only at DEBUG (one line per
    long-poll), so its lines say DEBUG. Its errors keep their level."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO:
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return True


def lean_records() -> None:
    """Log records without what no line askbridge writes shows: the caller's file, function and
    line, the thread and the process (the logging HOWTO's "Optimization"); finding the caller
    walks the stack, and a request's line is on every click's path (`askbridge serve`)."""
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


def configure_logging(level: str, secrets: Iterable[str] = (), form: LogFormat = "text") -> None:
    handler = logging.StreamHandler()
    if form == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    handler.addFilter(UnusedFeatures())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    # On the logger, not the handler: the record is a warning by the time any handler sees it.
    server = logging.getLogger("aiohttp.server")
    server.filters[:] = [RefusedRequests()]
    root.setLevel(level.upper())
    # The access log is one line per long-poll; keep it for debugging only.
    access = logging.getLogger("askbridge.access")
    access.setLevel(logging.DEBUG if level.upper() == "DEBUG" else logging.WARNING)
    if not any(isinstance(kept, AccessAtDebug) for kept in access.filters):
        access.addFilter(AccessAtDebug())
