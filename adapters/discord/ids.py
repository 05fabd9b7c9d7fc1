"""The one format of askbridge's Discord `custom_id`s, and the templates that read them back.

    ab:<request_id>:o:<question>:<option>   a button for one option of a single-select question
    ab:<request_id>:m:<question>            the string select of a multi-select question
    ab:<request_id>:s                       Submit
    ab:<request_id>:c                       Cancel

discord.py's `DynamicItem` matches these templates against every click, so a message posted
before a restart keeps working: a click needs nothing but its `custom_id` and the store.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from core.broker import REQUEST_ID_PATTERN

PREFIX = "ab"
MAX_CUSTOM_ID = 100
"""Discord's limit for a component's custom_id."""

_REQUEST = rf"(?P<request_id>{REQUEST_ID_PATTERN.pattern})"
_INDEX = r"\d{1,2}"

BUTTON_TEMPLATE = (
    rf"{PREFIX}:{_REQUEST}:"
    rf"(?:(?P<control>[sc])|o:(?P<question>{_INDEX}):(?P<option>{_INDEX}))"
)
"""Buttons: an option of a single-select question, Submit or Cancel."""

SELECT_TEMPLATE = rf"{PREFIX}:{_REQUEST}:m:(?P<question>{_INDEX})"
"""The string select of a multi-select question."""

_TEMPLATES = (re.compile(BUTTON_TEMPLATE), re.compile(SELECT_TEMPLATE))


class Action(enum.StrEnum):
    CHOOSE = "o"
    PICK = "m"
    SUBMIT = "s"
    CANCEL = "c"


class BadComponentId(ValueError):
    """A custom_id that askbridge did not make, or cannot make."""


@dataclass(frozen=True)
class ComponentId:
    """What a component stands for; `pack()` is its custom_id."""

    request_id: str
    action: Action
    question: int | None = None
    option: int | None = None

    @classmethod
    def choose(cls, request_id: str, question: int, option: int) -> ComponentId:
        return cls(request_id, Action.CHOOSE, question, option)

    @classmethod
    def pick(cls, request_id: str, question: int) -> ComponentId:
        return cls(request_id, Action.PICK, question)

    @classmethod
    def submit(cls, request_id: str) -> ComponentId:
        return cls(request_id, Action.SUBMIT)

    @classmethod
    def cancel(cls, request_id: str) -> ComponentId:
        return cls(request_id, Action.CANCEL)

    def pack(self) -> str:
        parts = [PREFIX, self.request_id, self.action.value]
        parts += [str(i) for i in (self.question, self.option) if i is not None]
        custom_id = ":".join(parts)
        try:
            readable = unpack(custom_id) == self
        except BadComponentId:
            readable = False
        if not readable:
            raise BadComponentId(
                f"cannot make a custom_id for {self!r}: {custom_id!r} would not read back as it"
            )
        return custom_id

    @classmethod
    def from_match(cls, match: re.Match[str]) -> ComponentId:
        """The id a template match stands for (the match of BUTTON_ or SELECT_TEMPLATE)."""
        groups = match.groupdict()
        request_id = groups["request_id"]
        question = int(groups["question"]) if groups.get("question") is not None else None
        if groups.get("control") is not None:
            return cls(request_id, Action(groups["control"]))
        if groups.get("option") is not None:
            assert question is not None
            return cls.choose(request_id, question, int(groups["option"]))
        if question is None:
            raise BadComponentId(f"{match.string!r} names no question")
        return cls.pick(request_id, question)


def unpack(custom_id: str) -> ComponentId:
    """The ComponentId of a custom_id, or BadComponentId quoting it."""
    if len(custom_id) <= MAX_CUSTOM_ID:
        for template in _TEMPLATES:
            match = template.fullmatch(custom_id)
            if match is not None:
                return ComponentId.from_match(match)
    raise BadComponentId(
        f"{custom_id!r} is not an askbridge custom_id; expected "
        "'ab:<request_id>:o:<question>:<option>', 'ab:<request_id>:m:<question>', "
        "'ab:<request_id>:s' or 'ab:<request_id>:c'"
    )
