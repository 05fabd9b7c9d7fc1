"""Why a click did not count: the one list of reasons, which `core.policy` decides some of and
`Broker.act` the rest, and which every surface words once."""

from __future__ import annotations

import enum


class Refusal(enum.StrEnum):
    UNKNOWN_REQUEST = "unknown_request"
    FOREIGN_MESSAGE = "foreign_message"
    ALREADY_ENDED = "already_ended"
    NOT_ANSWERER = "not_answerer"
    MISSING_ANSWERS = "missing_answers"
    BAD_TEXT = "bad_text"
    """What the person typed cannot be taken (empty, too long, or not allowed): see
    `problems`."""
    BAD_VALUES = "bad_values"
    """A typed form's values do not fit its fields: see `Refused.field_problems`."""
    SELF_APPROVAL = "self_approval"
    """The person is the request's requester, and it has no_self_approval."""
    REPLAYED = "replayed"
    """The person's vote came from a newer click: this one is a replay or a redelivery."""
