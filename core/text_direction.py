"""The characters that change the direction of the text after them."""

from __future__ import annotations

REORDERING = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The embeddings, overrides and isolates: each sets the direction of the text after it, so a
label holding one reads otherwise than the agent gets it back ("No \\u202eseY" reads "No Yes").
The marks (U+200E, U+200F, U+061C) only nudge the text beside them, and mixed-direction text
uses them, so they are let through."""
