"""How a broken rule of an ask is told: `Problem`s that name where, the rule and the bad value.

Validators raise `broken(...)` / `rule(...)` with their own words; `invalid` is the one place
where pydantic's errors, ours and its own, become the `InvalidQuestion` an agent reads.
"""

from __future__ import annotations

import reprlib
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from askbridge.core.errors import InvalidQuestion, Problem
from askbridge.core.text_direction import REORDERING

# One 422 lists at most this many problems: a body of a thousand bad options gets a short answer.
MAX_PROBLEMS = 20
MAX_URL_CHARS = 2048

_RULES = "askbridge_rules"


def invalid(error: ValidationError, where: str = "") -> InvalidQuestion:
    """The one translation of pydantic's errors into the Problems an agent reads."""
    problems: list[Problem] = []
    for detail in error.errors():
        at = where + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in detail["loc"])
        if detail["type"] == _RULES:
            found: Sequence[Problem] = detail["ctx"]["problems"]
            problems += [Problem((at + p.location).lstrip("."), p.message) for p in found]
            continue
        value = detail.get("input")
        # pydantic reads a text with a length limit as UTF-8 first, and words a lone surrogate
        # as no text at all; it is told as in every other text.
        unicode = detail["type"] == "string_unicode" and isinstance(value, str)
        if unicode and (problem := text_problem(value)) is not None:
            problems.append(Problem(at.lstrip("."), problem))
            continue
        missing = detail["type"] == "missing" or isinstance(value, Mapping)
        got = "" if missing else f", got {shown(value)}"
        problems.append(Problem(at.lstrip("."), f"{detail['msg'].lower()}{got}"))
    if len(problems) > MAX_PROBLEMS:
        more = len(problems) - MAX_PROBLEMS
        problems = [*problems[:MAX_PROBLEMS], Problem("", f"and {more} more not listed here")]
    return InvalidQuestion(problems)


def shown(value: Any) -> str:
    """A bad value as a problem quotes it: its repr, cut short when long or deeply nested."""
    short = reprlib.Repr()
    short.maxstring, short.maxother, short.maxlevel = 80, 80, 3
    return short.repr(value)


def broken(*problems: Problem) -> PydanticCustomError:
    """Problems found in one field, located relative to it ("", "[1].header", ".answers")."""
    return PydanticCustomError(_RULES, "the AskUserQuestion rules", {"problems": problems})


def rule(message: str) -> PydanticCustomError:
    return broken(Problem("", message))


def text_problem(text: str, *, allow_nul: bool = True) -> str | None:
    """Why a text cannot be stored and shown on every platform, or None when it can.
    `allow_nul=False` for the texts that refuse a NUL: an ask's context (PostgreSQL keeps it
    in a text column, which cannot hold one) and a form's texts and values."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"must be valid Unicode text, got a lone surrogate {text[error.start]!r} at "
            f"character {error.start} (half of a UTF-16 pair; send the whole character)"
        )
    if not allow_nul and (at := text.find("\x00")) >= 0:
        return f"must not contain NUL characters, got one at character {at}"
    return None


DIRECTION_MARKS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Characters that reorder the text around them: an address holding one reads otherwise than
it opens (`.../\\u202egpj.exe` shows as `.../exe.jpg`)."""


def reordering_problem(text: str) -> str | None:
    """Why `text` cannot be shown to people as it is: it holds a character that reorders it
    (`REORDERING`); None when it holds none."""
    if REORDERING.isdisjoint(text):
        return None
    at, char = next((i, c) for i, c in enumerate(text) if c in REORDERING)
    return (
        f"must not contain {unicodedata.name(char)} (U+{ord(char):04X}, at character {at}): "
        "it reorders what people read; write the text in the order it is read"
    )


def web_url_problem(raw: Any, *, fetched: bool = False) -> str | None:
    """Why `raw` is not an http(s) URL askbridge may keep and send a person to (a URL-mode
    form's link), or None when it is. It must read as it opens and open somewhere: no control
    character or direction mark anywhere, nothing invisible in its host (a host name's encoding
    may drop it, and the host read would not be the host reached) and a real port. `fetched`:
    askbridge itself sends to it (an ask's callback_url), so nothing invisible anywhere."""
    wanted = f"must be an http:// or https:// URL of at most {MAX_URL_CHARS} characters"
    if not isinstance(raw, str):
        return f"{wanted}, got {shown(raw)}"
    if (problem := text_problem(raw)) is not None:
        return problem
    if len(raw) > MAX_URL_CHARS:
        return f"{wanted}, got {len(raw)} characters"
    if any(c.isspace() for c in raw):
        return f"{wanted}, without spaces, got {shown(raw)}"
    if any(_unread(c, fetched) for c in raw):
        unread = "invisible characters" if fetched else "control characters or direction marks"
        return f"{wanted}, without {unread}, got {shown(raw)}"
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 (reading it checks the port)
    except ValueError as error:
        return f"{wanted}, got {shown(raw)} ({error})"
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return f"{wanted}, got {shown(raw)}"
    if not parts.netloc.isprintable():
        return f"{wanted}, without invisible characters in its host, got {shown(raw)}"
    return None


def _unread(char: str, fetched: bool) -> bool:
    """Whether `char` makes an address read otherwise than it opens (`fetched`: or is invisible)."""
    if fetched:
        return not char.isprintable()
    return unicodedata.category(char) == "Cc" or char in DIRECTION_MARKS


def json_text_problems(value: Any, where: str = "") -> Iterator[Problem]:
    """A problem for each text of a JSON value, key or value at any depth, that is not valid
    Unicode: askbridge keeps and shows the value, and UTF-8 cannot hold such a text."""
    if isinstance(value, str):
        if (problem := text_problem(value)) is not None:
            yield Problem(where, problem)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and (problem := text_problem(key)) is not None:
                yield Problem(where, f"a key {problem}")
                continue
            yield from json_text_problems(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from json_text_problems(item, f"{where}[{index}]")


def texts(where: str, **named: str) -> Iterator[Problem]:
    """A problem for each of the named texts that is not valid Unicode."""
    return _each(where, named, text_problem)


def shown_texts(where: str, **named: str) -> Iterator[Problem]:
    """A problem for each of the named texts, which people read, that is not valid Unicode or
    would not read as the agent wrote it."""
    return _each(where, named, lambda text: text_problem(text) or reordering_problem(text))


def _each(
    where: str, named: Mapping[str, str], problem_of: Callable[[str], str | None]
) -> Iterator[Problem]:
    for name, text in named.items():
        if (problem := problem_of(text)) is not None:
            yield Problem(f"{where}.{name}", problem)
