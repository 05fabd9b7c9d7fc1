"""Logging is configured here and only here; libraries just use named loggers."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

# Tokens of the platforms askbridge talks to, in case one reaches a log line via a library.
TOKEN_PATTERN = re.compile(r"\b(xox[abpr]-[\w-]+|xapp-[\w-]+)")
REDACTED = "[redacted]"


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if len(s) >= 6]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = TOKEN_PATTERN.sub(REDACTED, message)
        for secret in self._secrets:
            cleaned = cleaned.replace(secret, REDACTED)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def configure_logging(level: str, secrets: Iterable[str] = ()) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
    )
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The access log is one line per long-poll; keep it for debugging only.
    logging.getLogger("askbridge.access").setLevel(
        logging.DEBUG if level == "DEBUG" else logging.WARNING
    )
