"""The Python client for the agent API: `from askbridge.client import AskbridgeClient`.

Importing it loads the question models and aiohttp, never a chat platform's SDK or a database
driver, so an agent's environment can use it without the server's dependencies.
"""

from askbridge.bots.client import (
    REPLY_WITHIN_S,
    AskbridgeClient,
    ClientError,
    Ended,
    Expired,
    FormAnswer,
    Interrupted,
    InvalidRequest,
    Unanswered,
    Unreachable,
    Withdrawn,
    subject_matches,
)

__all__ = [
    "REPLY_WITHIN_S",
    "AskbridgeClient",
    "ClientError",
    "Ended",
    "Expired",
    "FormAnswer",
    "Interrupted",
    "InvalidRequest",
    "Unanswered",
    "Unreachable",
    "Withdrawn",
    "subject_matches",
]
