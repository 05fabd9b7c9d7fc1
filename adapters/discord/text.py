"""Keeping texts inside Discord's limits: shorten with an ellipsis, longest texts first."""

from __future__ import annotations

from collections.abc import Sequence

ELLIPSIS = "…"


def shorten(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and an ellipsis."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    return text[: limit - 1].rstrip() + ELLIPSIS


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
