"""What a request asks to approve, bound to the decision by a digest.

An ask's `subject` (a permission request's tool input, or any JSON object the agent wants
approved) is hashed when the request is created: SHA-256 over its canonical JSON (the audit
log's: sorted keys, no spaces, UTF-8). The decision carries the digest, so the agent can check
that the approval it holds is for exactly what it is about to do (`matches`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from askbridge.core.audit_log import canonical


def subject_sha256(subject: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of `subject`; ValueError/TypeError for what JSON
    cannot hold (NaN, sets…)."""
    return hashlib.sha256(canonical(dict(subject))).hexdigest()
