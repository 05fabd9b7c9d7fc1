"""Keeping texts inside Discord's limits: shorten with an ellipsis, longest texts first.

Shortening never leaves a code block open: a cut inside a ``` fence closes the fence, or
everything after it (the option list, say) would be swallowed into the code block.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

ELLIPSIS = "…"
FENCE = "```"
CLOSE_FENCE = "\n" + FENCE


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and an ellipsis."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    cut = text[: limit - 1].rstrip()
    if not is_inside_fence(cut):
        return cut + ELLIPSIS
    # Make room for the closing fence; the shorter cut may have lost the opening one.
    cut = text[: max(0, limit - 1 - len(CLOSE_FENCE))].rstrip()
    if not is_inside_fence(cut):
        return cut + ELLIPSIS
    return cut + ELLIPSIS + CLOSE_FENCE


def is_inside_fence(text: str) -> bool:
    """Whether `text` ends inside a ``` code block (an odd number of fences)."""
    return text.count(FENCE) % 2 == 1


def fit(texts: Sequence[str], budget: int) -> list[str]:
    """Shorten the longest texts, as little as possible, until they fit in `budget` together.

    Short texts stay whole: every text is cut to one common length, the largest that fits.
    """
    if sum(len(t) for t in texts) <= budget:
        return list(texts)
    low, high = 0, max(len(t) for t in texts)
    while low < high:
        cap = (low + high + 1) // 2
        if sum(min(len(t), cap) for t in texts) <= budget:
            low = cap
        else:
            high = cap - 1
    return [shorten(t, low) for t in texts]


def join_within(items: Iterable[str], limit: int, separator: str = ", ") -> str:
    """The items joined, as many whole ones as fit in `limit`, then "and N more".

    Items are never cut, so a mention (`<@123>`) is never left half written.
    """
    items = list(items)
    # The length of the first `count` items joined, for every count.
    lengths = [0]
    for index, item in enumerate(items):
        lengths.append(lengths[-1] + len(item) + (len(separator) if index else 0))
    for count in range(len(items), 0, -1):
        rest = len(items) - count
        tail = f" and {rest} more" if rest else ""
        if lengths[count] + len(tail) <= limit:
            return separator.join(items[:count]) + tail
    return shorten(f"{len(items)} people", limit) if items else ""


def close_fences(text: str) -> str:
    """`text` with a ``` code block it leaves open closed, so what follows it stays text."""
    return text + CLOSE_FENCE if is_inside_fence(text) else text
