"""Where text may be cut without splitting what a reader sees as one character.

`cut_point` steps back to the start of a letter with its accents, an emoji sequence or a flag:
the rules of Unicode's extended grapheme clusters (UAX #29) that text from agents and people
meets, without Hangul syllable and Indic conjunct rules, where a cut still shows a character.
"""

from __future__ import annotations

import unicodedata

ZWJ = "\u200d"
_MARKS = frozenset({"Mn", "Mc", "Me"})


def _extends(char: str) -> bool:
    """Whether `char` belongs to the character before it."""
    point = ord(char)
    return (
        char == ZWJ
        or 0xFE00 <= point <= 0xFE0F  # variation selectors
        or 0xE0100 <= point <= 0xE01EF
        or 0x1F3FB <= point <= 0x1F3FF  # skin tones
        or 0xE0020 <= point <= 0xE007F  # tags (subdivision flags)
        or unicodedata.category(char) in _MARKS
    )


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def cut_point(text: str, end: int) -> int:
    """The largest index at most `end` where `text` may be cut: not before a combining or
    joining character, not after a zero-width joiner, not between a flag's two halves."""
    end = max(0, min(end, len(text)))
    while 0 < end < len(text) and (_extends(text[end]) or text[end - 1] == ZWJ):
        end -= 1
    if 0 < end < len(text) and _regional(text[end]) and _regional(text[end - 1]):
        start = end
        while start > 0 and _regional(text[start - 1]):
            start -= 1
        if (end - start) % 2:
            end -= 1
    return end
