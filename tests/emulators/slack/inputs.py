"""Slack's rules for a modal's typed inputs (number, date, date and time, time, email, URL, and
the selection limits of multi-selects), as its API checks them when a view is opened and as its
client checks what a person enters before a submission is sent.

From the Block Kit element reference (docs.slack.dev/reference/block-kit/block-elements):
`number_input` requires `is_decimal_allowed`, and takes `min_value`, `max_value` and
`initial_value` as strings holding numbers (whole ones unless decimals are allowed);
`datepicker` takes `initial_date` as YYYY-MM-DD, `timepicker` `initial_time` as HH:mm,
`datetimepicker` `initial_date_time` as a UNIX timestamp in seconds (at most ten digits);
a multi-select's `max_selected_items` is at least 1.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from .problems import Problems, is_int
from .types import JSONDict, StateEntry

MULTI_SELECT_LIMITED = frozenset(
    {
        "multi_static_select",
        "multi_external_select",
        "multi_users_select",
        "multi_conversations_select",
        "multi_channels_select",
    }
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d")
_NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)")
_WHOLE = re.compile(r"-?\d+")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
MAX_TIMESTAMP = 9_999_999_999


def check_element(kind: str, element: dict[str, Any], pointer: str, problems: Problems) -> None:
    """What Slack refuses in one typed input element of `kind`."""
    if kind == "number_input":
        _number_input(element, pointer, problems)
    elif kind == "datepicker" and "initial_date" in element:
        if not is_date(element["initial_date"]):
            problems.fail("initial_date must be a date as YYYY-MM-DD", f"{pointer}/initial_date")
    elif kind == "timepicker" and "initial_time" in element:
        initial = element["initial_time"]
        if not (isinstance(initial, str) and _TIME.fullmatch(initial)):
            problems.fail("initial_time must be a time as HH:mm", f"{pointer}/initial_time")
    elif kind == "datetimepicker" and "initial_date_time" in element:
        initial = element["initial_date_time"]
        if not is_int(initial) or not 0 <= initial <= MAX_TIMESTAMP:
            problems.fail(
                "initial_date_time must be a UNIX timestamp in seconds (an integer of at most "
                "10 digits)",
                f"{pointer}/initial_date_time",
            )
    elif kind in ("email_text_input", "url_text_input") and not isinstance(
        element.get("initial_value", ""), str
    ):
        problems.fail("initial_value must be a string", f"{pointer}/initial_value")
    if kind in MULTI_SELECT_LIMITED and "max_selected_items" in element:
        most = element["max_selected_items"]
        if not is_int(most) or most < 1:
            problems.fail(
                "max_selected_items must be an integer of at least 1",
                f"{pointer}/max_selected_items",
            )
        elif len(element.get("initial_options") or []) > most:
            problems.fail(
                f"initial_options holds more than max_selected_items ({most})",
                f"{pointer}/initial_options",
            )


def _number_input(element: dict[str, Any], pointer: str, problems: Problems) -> None:
    decimals = element.get("is_decimal_allowed")
    if "is_decimal_allowed" not in element:
        problems.fail("missing required field: is_decimal_allowed", pointer)
    elif not isinstance(decimals, bool):
        problems.fail("must be a boolean", f"{pointer}/is_decimal_allowed")
    bounds: dict[str, Decimal] = {}
    for key in ("min_value", "max_value", "initial_value"):
        if key not in element:
            continue
        number = number_of(element[key], decimals=decimals is True)
        if number is None:
            wanted = "a number" if decimals is True else "a whole number (is_decimal_allowed false)"
            problems.fail(f"{key} must be a string holding {wanted}", f"{pointer}/{key}")
        else:
            bounds[key] = number
    low, high = bounds.get("min_value"), bounds.get("max_value")
    if low is not None and high is not None and low > high:
        problems.fail("min_value must not be greater than max_value", f"{pointer}/min_value")
    initial = bounds.get("initial_value")
    if initial is not None and (
        (low is not None and initial < low) or (high is not None and initial > high)
    ):
        problems.fail("initial_value must be between min_value and max_value", pointer)


def number_of(value: object, *, decimals: bool) -> Decimal | None:
    """A number_input's number as Slack reads the string: digits, a sign, and a point only
    when decimals are allowed."""
    if not isinstance(value, str) or not (_NUMBER if decimals else _WHOLE).fullmatch(value):
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        return None


def is_date(value: object) -> bool:
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


# ---- what Slack's client checks before it sends a submission --------------------------------


def client_problem(element: JSONDict, entry: StateEntry) -> str | None:
    """What Slack's client says under a typed input whose entry it will not send: a number
    that is not one, or outside the input's bounds; an email address or URL that is not one;
    more options than a multi-select takes."""
    kind = element.get("type")
    most = element.get("max_selected_items")
    if isinstance(most, int) and len(entry.get("selected_options") or []) > most:
        return f"Please select up to {most} options."
    value = entry.get("value")
    if not isinstance(value, str) or not value:
        return None
    if kind == "number_input":
        decimals = element.get("is_decimal_allowed") is True
        number = number_of(value.strip(), decimals=decimals)
        if number is None:
            return "Please enter a number." if decimals else "Please enter a whole number."
        low = number_of(element.get("min_value"), decimals=decimals)
        high = number_of(element.get("max_value"), decimals=decimals)
        if low is not None and number < low:
            return f"Please enter a number of at least {low}."
        if high is not None and number > high:
            return f"Please enter a number of at most {high}."
    if kind == "email_text_input" and not _EMAIL.fullmatch(value.strip()):
        return "Please enter a valid email address."
    if kind == "url_text_input":
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return "Please enter a valid URL."
    return None
