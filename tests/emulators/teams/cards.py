"""What Teams refuses of an Adaptive Card, checked on every card the emulator receives: a
schema version it renders (Action.Execute from 1.4, nothing past 1.5), element and action
types it knows, input ids given once, at most MAX_ACTIONS actions in a row, a payload within
its size limit (the emulator measures the whole message around it too), and then what the
Adaptive Cards schema refuses (schema.py): the limits are Teams' own, the schema knows none
of them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, tzinfo
from typing import Any

from tests.emulators.teams.schema import schema_errors

MAX_CARD_BYTES = 28 * 1024
MAX_MESSAGE_BYTES = MAX_CARD_BYTES
"""Teams' limit holds for the whole message as sent: the activity, its card and mentions."""
MAX_ACTIONS = 6
ELEMENTS = {
    "TextBlock", "RichTextBlock", "Container", "ColumnSet", "Column", "FactSet", "Image",
    "ActionSet", "Input.ChoiceSet", "Input.Text", "Input.Toggle", "Input.Number",
    "Input.Date", "Input.Time",
}  # fmt: skip
ACTIONS = {"Action.Execute", "Action.Submit", "Action.ShowCard", "Action.OpenUrl"}
AT_TAG = re.compile(r"<at>.*?</at>", re.S)
_INSTANT = r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:?\d{2}))"
FUNCTION = re.compile(
    r"\{\{DATE\("
    + _INSTANT
    + r"(?:, ?(COMPACT|SHORT|LONG))?\)\}\}|\{\{TIME\("
    + _INSTANT
    + r"\)\}\}"
)
"""A date or time function as Adaptive Cards format it (text-features: upper case, no spaces
inside the braces or brackets, an RFC 3339 time with seconds); the Adaptive Cards renderer
formats it in a TextRun's text as in a TextBlock's (`TextFormatters.formatText`)."""
FUNCTION_START = re.compile(r"\{\{(DATE|TIME)\(")
DATE_FORMATS = {None: "%a, %b %-d, %Y", "COMPACT": "%-m/%-d/%Y", "SHORT": "%a, %b %-d, %Y",
                "LONG": "%A, %B %-d, %Y"}  # fmt: skip
"""The days as an en-US reader sees them; a TIME is "9:00 AM"."""
VERSIONS = ("1.0", "1.1", "1.2", "1.3", "1.4", "1.5")


class CardRefused(ValueError):
    pass


def check_card(card: Any) -> None:
    if len(json.dumps(card).encode()) > MAX_CARD_BYTES:
        raise CardRefused(f"the card is over {MAX_CARD_BYTES} bytes")
    _check(card, ids=set())
    if errors := schema_errors(card):
        raise CardRefused(f"the Adaptive Cards schema refuses it: {'; '.join(errors)}")
    _check_mentions(card)
    for text in plain_texts(card, formatted=False):
        _check_functions(text)


def _check_functions(text: str) -> None:
    """Every date or time function in `text` is one Teams formats: one it cannot is shown as
    written, `{{DATE(…)}}` in front of the reader."""
    left = FUNCTION.sub(lambda found: "" if _instant(found) else found[0], text)
    if bad := FUNCTION_START.search(left):
        written = left[bad.start() :][:80]
        raise CardRefused(f"Teams shows this date or time function as written: {written!r}")


def _instant(found: re.Match[str]) -> datetime | None:
    written = found[1] or found[3]
    try:
        return datetime.fromisoformat(written)
    except ValueError:
        return None


def shown(text: str, zone: tzinfo = UTC) -> str:
    """`text` as a reader in `zone` sees it: each date or time function formatted."""

    def formatted(found: re.Match[str]) -> str:
        at = _instant(found)
        if at is None:
            return found[0]
        local = at.astimezone(zone)
        if found[1] is not None:
            return local.strftime(DATE_FORMATS[found[2]])
        return local.strftime("%-I:%M %p")

    return FUNCTION.sub(formatted, text)


def _check_mentions(card: dict[str, Any]) -> None:
    """Each `<at>…</at>` in a TextBlock is a mention with its entity, and each entity's
    text is on the card: Teams shows a tag without one as text, and pings nobody."""
    entities = card.get("msteams", {}).get("entities", [])
    texts = {e.get("text") for e in entities if e.get("type") == "mention"}
    tags = {tag for text in markdown_texts(card) for tag in AT_TAG.findall(text)}
    if tags - texts:
        raise CardRefused(f"mentions without their entity: {sorted(tags - texts)}")
    if texts - tags:
        raise CardRefused(f"entities whose mention is not on the card: {sorted(texts - tags)}")


def mentioned(card: dict[str, Any]) -> list[str]:
    """The ids the card's mentions ping."""
    entities = card.get("msteams", {}).get("entities", [])
    return [e["mentioned"]["id"] for e in entities if e.get("type") == "mention"]


def _check(card: Any, ids: set[str]) -> None:
    if not isinstance(card, dict) or card.get("type") != "AdaptiveCard":
        raise CardRefused("not an AdaptiveCard")
    version = card.get("version")
    if version not in VERSIONS:
        raise CardRefused(f"Teams does not render card version {version!r}")
    for element in _elements(card.get("body", [])):
        kind = element.get("type")
        if kind not in ELEMENTS:
            raise CardRefused(f"unknown element {kind!r}")
        if kind.startswith("Input."):
            input_id = element.get("id")
            if not isinstance(input_id, str) or not input_id or input_id in ids:
                raise CardRefused(f"input id {input_id!r} missing or given twice")
            ids.add(input_id)
        if kind == "RichTextBlock":
            for inline in element.get("inlines", []):
                if not isinstance(inline, dict) or inline.get("type") != "TextRun":
                    raise CardRefused(f"a RichTextBlock holds {inline!r:.80}")
        if kind == "ActionSet":
            _actions(element.get("actions", []), version, ids)
    _actions(card.get("actions", []), version, ids)


def _actions(actions: list[Any], version: str, ids: set[str]) -> None:
    if len(actions) > MAX_ACTIONS:
        raise CardRefused(f"{len(actions)} actions in a row; Teams shows {MAX_ACTIONS}")
    for action in actions:
        kind = action.get("type")
        if kind not in ACTIONS:
            raise CardRefused(f"unknown action {kind!r}")
        if kind == "Action.Execute" and float(version) < 1.4:
            raise CardRefused("Action.Execute needs card version 1.4 or later")
        if kind == "Action.ShowCard":
            _check(action.get("card"), ids)


def _elements(body: list[Any]) -> Iterator[dict[str, Any]]:
    for element in body:
        if not isinstance(element, dict):
            raise CardRefused(f"an element is {element!r:.80}")
        yield element
        yield from _elements(element.get("items", []))
        for column in element.get("columns", []):
            yield column
            yield from _elements(column.get("items", []))


def markdown_texts(card: Any) -> Iterator[str]:
    """The texts of a card that Teams reads as Markdown (TextBlocks, choice titles aside)."""
    if not isinstance(card, dict):
        return
    for element in _elements(card.get("body", [])):
        if element.get("type") == "TextBlock":
            yield str(element.get("text", ""))
    for action in card.get("actions", []):
        if action.get("type") == "Action.ShowCard":
            yield from markdown_texts(action.get("card"))


def plain_texts(card: Any, zone: tzinfo = UTC, *, formatted: bool = True) -> Iterator[str]:
    """Every text a person sees on the card, as shown to a reader in `zone` (the texts with
    their date and time functions as written: `formatted=False`)."""
    if not isinstance(card, dict):
        return
    show = (lambda text: shown(text, zone)) if formatted else str
    for element in _elements(card.get("body", [])):
        if element.get("type") == "TextBlock":
            yield show(str(element.get("text", "")))
        for inline in element.get("inlines", []):
            yield show(str(inline.get("text", "")))
        for choice in element.get("choices", []):
            yield str(choice.get("title", ""))
        for action in element.get("actions", []):
            yield str(action.get("title", ""))
    for action in card.get("actions", []):
        yield str(action.get("title", ""))


def card_inputs(card: Any) -> dict[str, dict[str, Any]]:
    """Every input on a card (those behind a ShowCard too), by id."""
    found: dict[str, dict[str, Any]] = {}
    if not isinstance(card, dict):
        return found
    for element in _elements(card.get("body", [])):
        if str(element.get("type", "")).startswith("Input."):
            found[element["id"]] = element
    for action in card.get("actions", []):
        if action.get("type") == "Action.ShowCard":
            found |= card_inputs(action.get("card"))
    return found


def associated_inputs(card: Any, action: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The inputs a press on `action` sends, as Teams sends them (Adaptive Cards
    `associatedInputs: auto`): every input of the card the action is on and of the cards that
    card is within, not those behind another ShowCard; none for an action with
    `associatedInputs: none`. An action not on the card is a mistake of the test (ValueError):
    no client can press it."""
    path = _cards_to(card, action)
    if path is None:
        raise ValueError(f"the action {action.get('title')!r} is not on the card")
    if action.get("associatedInputs") == "none":
        return {}
    return {
        element["id"]: element
        for holder in path
        for element in _elements(holder.get("body", []))
        if str(element.get("type", "")).startswith("Input.")
    }


def sent_values(
    associated: dict[str, dict[str, Any]], changed: Mapping[str, str]
) -> dict[str, str]:
    """What a press sends of its `associated` inputs: each with what the person `changed` it
    to, else the value the card gave it (a toggle its valueOff, the rest empty). Naming an
    input the press does not send is a mistake of the test (ValueError): no client can."""
    if unsent := set(changed) - set(associated):
        raise ValueError(f"the press does not send {sorted(unsent)}")
    return {key: changed.get(key, _shown_value(element)) for key, element in associated.items()}


def on_card(card: Any, action: dict[str, Any]) -> bool:
    """Whether `action` is on `card` (behind a ShowCard too)."""
    return _cards_to(card, action) is not None


def _shown_value(element: dict[str, Any]) -> str:
    """The value an input holds as the card gave it, as a press sends it: text."""
    if element["type"] == "Input.Toggle":
        on, off = element.get("valueOn", "true"), element.get("valueOff", "false")
        return str(on if element.get("value") == on else off)
    value = element.get("value")
    return "" if value is None else str(value)


def _cards_to(card: Any, action: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The cards from `card` down to the one `action` is on (its body's or its own actions),
    or None when it is on none of them."""
    if not isinstance(card, dict):
        return None
    shown = [a for element in _elements(card.get("body", [])) for a in element.get("actions", [])]
    shown += card.get("actions", [])
    if any(a is action for a in shown) or action in shown:
        return [card]
    for held in shown:
        if held.get("type") == "Action.ShowCard":
            inner = _cards_to(held.get("card"), action)
            if inner is not None:
                return [card, *inner]
    return None


def client_refusal(associated: dict[str, dict[str, Any]], sent: Mapping[str, str]) -> str | None:
    """What the Teams client says instead of sending a press (Adaptive Cards input
    validation, from 1.3: required inputs, a number's bounds, a text's length, a choice among
    the choices, a date as a date) of the inputs it sends, or None when it sends it."""
    for input_id, value in sent.items():
        element = associated[input_id]
        kind = element["type"]
        if element.get("isRequired") and value == "":
            return f"{input_id} is required"
        if value == "":
            continue
        if kind == "Input.Number":
            try:
                number = float(value)
            except ValueError:
                return f"{input_id}: {value!r} is not a number"
            if "min" in element and number < element["min"]:
                return f"{input_id}: below its min"
            if "max" in element and number > element["max"]:
                return f"{input_id}: above its max"
        if kind == "Input.Text" and len(value) > element.get("maxLength", 10**9):
            return f"{input_id}: longer than its maxLength"
        if kind == "Input.ChoiceSet":
            known = {c["value"] for c in element.get("choices", [])}
            picks = value.split(",") if element.get("isMultiSelect") else [value]
            if not set(picks) <= known:
                return f"{input_id}: {value!r} is not among its choices"
        if kind == "Input.Toggle" and value not in (
            element.get("valueOn", "true"),
            element.get("valueOff", "false"),
        ):
            return f"{input_id}: {value!r} is neither of the toggle's values"
        if kind == "Input.Date" and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return f"{input_id}: {value!r} is not a date"
        if kind == "Input.Time" and not re.fullmatch(r"\d{2}:\d{2}", value):
            return f"{input_id}: {value!r} is not a time"
    return None
