"""What a request asks to approve, bound to the decision by a digest.

An ask's `subject` (a permission request's tool input, an object or a text, or any JSON object
the agent wants approved) is hashed when the request is created: SHA-256 over its RFC 8785
canonical JSON (the audit log's). The decision carries the digest, so the agent can check
that the approval it holds is for exactly what it is about to do (`matches`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from askbridge.core.audit_log import canonical, earlier_canonical

Subject = Mapping[str, Any] | str
"""What an approval is about: a JSON object, or a text (a tool input that is one string)."""


def subject_sha256(subject: Subject) -> str:
    """SHA-256 (hex) of the canonical JSON of `subject` (a text's is the JSON string, in
    quotes); ValueError/TypeError for what JCS cannot hold (NaN, integers beyond 2**53, sets…)."""
    value = subject if isinstance(subject, str) else dict(subject)
    return hashlib.sha256(canonical(value)).hexdigest()


def earlier_subject_sha256(subject: Subject) -> str | None:
    """The digest a request made before RFC 8785 carries for `subject` (objects only)."""
    if isinstance(subject, str):
        return None
    try:
        return hashlib.sha256(earlier_canonical(dict(subject))).hexdigest()
    except (TypeError, ValueError):
        return None
