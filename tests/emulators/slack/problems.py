"""What Slack objects to in a payload, one line each, in Slack's own error shape:
`<what is wrong> [json-pointer:/blocks/<i>/...]`, so a failing test points at the field."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any


class Problems:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def fail(self, what: str, pointer: str) -> None:
        self.errors.append(f"{what} [json-pointer:{pointer}]")

    def max_length(self, value: object, limit: int, pointer: str) -> None:
        if isinstance(value, str) and len(value) > limit:
            self.fail(f"must be less than {limit + 1} characters (got {len(value)})", pointer)

    def non_empty_text(self, value: object, pointer: str) -> bool:
        """A string with something to read in it; whitespace alone counts as empty."""
        if not isinstance(value, str):
            self.fail("must be a string", pointer)
            return False
        if not value.strip():
            blank = " (it holds only whitespace)" if value else ""
            self.fail(f"must be more than 0 characters{blank}", pointer)
            return False
        return True

    def only_fields(self, obj: Mapping[str, Any], allowed: Collection[str], pointer: str) -> None:
        for key in obj:
            if key not in allowed:
                self.fail(f"invalid additional property: {key}", pointer)

    def boolean(self, obj: Mapping[str, Any], key: str, pointer: str) -> None:
        if key in obj and not isinstance(obj[key], bool):
            self.fail("must be a boolean", f"{pointer}/{key}")

    def array(self, value: object, pointer: str, *, low: int, high: int) -> list[Any]:
        """`value` as a list when it is an array of `low` to `high` items; else a failure."""
        if not isinstance(value, list):
            self.fail("must be an array", pointer)
            return []
        if len(value) < low:
            self.fail(f"must provide at least {low} item{'s' if low > 1 else ''}", pointer)
        elif len(value) > high:
            self.fail(f"must be less than {high + 1} items (got {len(value)})", pointer)
        return value


def is_int(value: object) -> bool:
    """An integer in JSON: `True` is not one."""
    return isinstance(value, int) and not isinstance(value, bool)
