"""A card within Teams' size limit, measured as the connector sends it.

The connector sends JSON with every character past ASCII escaped (aiohttp's `json=`): an emoji
takes 12 bytes, a CJK character 6, so a card is measured as sent, and each text is given the
same number of bytes as sent, not of characters: a long line of emoji is cut sooner than as
long a line of Latin letters. A card too large is made to fit, in this order: the longest runs
of text are cut, down to MIN_RUN bytes; then a text prefilled in an input (a form's default,
what a person typed) is left out, the largest first, with a line under its input saying so;
then runs, choice titles, option buttons and input labels are cut together as far as it
takes. Every text is cut between characters as shown, with an ellipsis (`text.cut`); a
choice keeps its value, which names the option.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate

from askbridge.adapters.teams.text import Element, cut, words

MAX_CARD_BYTES = 27 * 1024
"""Teams refuses a message over about 28 KB; the rest of the activity needs a little."""
MIN_RUN = 120
"""The bytes (as sent) a run of text is cut to before a prefilled text is left out."""
SHORTEST = 16
"""The fewest bytes any text is cut to: askbridge's own short runs (" · ", "📝 ") stay whole."""
PREFILL_LEFT_OUT = "Left empty: what this field held is too long to fit on the card."
ELLIPSIS = len(json.dumps("…")) - 2


def sent_size(value: object) -> int:
    return len(json.dumps(value).encode())


def fits(card: Element) -> bool:
    return sent_size(card) <= MAX_CARD_BYTES


@dataclass
class _Text:
    """A text on the card (its element and key), as rendered, and where it may be cut."""

    element: Element
    key: str
    text: str = field(init=False)
    ends: list[int] = field(init=False)
    """The bytes as sent of the text up to and with each character."""

    def __post_init__(self) -> None:
        self.text = self.element[self.key]
        self.ends = list(accumulate(len(json.dumps(c)) - 2 for c in self.text))

    @property
    def size(self) -> int:
        return self.ends[-1] if self.ends else 0

    def cut(self, budget: int) -> None:
        """The text within `budget` bytes as sent, with its ellipsis."""
        if self.size <= budget:
            self.element[self.key] = self.text
        else:
            self.element[self.key] = cut(self.text, bisect_right(self.ends, budget - ELLIPSIS))


def fit(card: Element) -> Element:
    """`card`, changed in place to fit Teams' size limit."""
    if fits(card):
        return card
    runs = [_Text(element, "text") for element in _runs(card)]
    if _cut_to_fit(card, runs, MIN_RUN):
        return card
    for body, element in _prefills(card):
        _leave_out(body, element)
        if _cut_to_fit(card, runs, MIN_RUN):
            return card
    _cut_to_fit(card, [*runs, *_titles(card["body"])], SHORTEST)
    return card


def fits_with_runs_cut(card: Element) -> bool:
    """Whether `card` fits Teams' size limit with its runs of text cut, down to MIN_RUN bytes
    (cut in place when it does): what a card's other texts, which are never cut (a mention),
    must leave room for."""
    return fits(card) or _cut_to_fit(card, [_Text(e, "text") for e in _runs(card)], MIN_RUN)


def _cut_to_fit(card: Element, texts: list[_Text], least: int) -> bool:
    """Whether `card` fits with each of `texts` cut to the same number of bytes, at least
    `least`: cut to the most that fits, else to `least`."""
    most = max((t.size for t in texts), default=least)
    for text in texts:
        text.cut(least)
    if not fits(card):
        return False
    while least < most:
        middle = (least + most + 1) // 2
        for text in texts:
            text.cut(middle)
        if fits(card):
            least = middle
        else:
            most = middle - 1
    for text in texts:
        text.cut(least)
    return True


def _runs(tree: object) -> Iterator[Element]:
    """Every run of text on the card, a confirmation's and an Edit and allow's too."""
    if isinstance(tree, dict):
        if tree.get("type") == "TextRun":
            yield tree
        for value in tree.values():
            yield from _runs(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _runs(item)


def _titles(body: list[Element]) -> Iterator[_Text]:
    """The texts of the body's inputs and option buttons: labels, a toggle's title, each
    choice's title, each option button's title (not a link's)."""
    for element in body:
        kind = str(element.get("type", ""))
        if kind.startswith("Input."):
            yield from (_Text(element, key) for key in ("label", "title") if key in element)
        for choice in element.get("choices", []):
            yield _Text(choice, "title")
        if kind == "ActionSet":
            # A link (to all of a tool call) is never cut: its title says what it opens.
            buttons = [a for a in element["actions"] if a.get("type") != "Action.OpenUrl"]
            yield from (_Text(action, "title") for action in buttons)


def _prefills(card: Element) -> list[tuple[list[Element], Element]]:
    """Each text input prefilled, with the body it is in, the largest first."""
    bodies = [card["body"]]
    bodies += [a["card"]["body"] for a in card.get("actions", []) if "card" in a]
    found = [
        (body, element)
        for body in bodies
        for element in body
        if element.get("type") == "Input.Text" and element.get("value")
    ]
    return sorted(found, key=lambda place: -sent_size(place[1]["value"]))


def _leave_out(body: list[Element], element: Element) -> None:
    element.pop("value")
    at = next(i for i, e in enumerate(body) if e is element)
    body.insert(at + 1, words(PREFILL_LEFT_OUT, subtle=True))
