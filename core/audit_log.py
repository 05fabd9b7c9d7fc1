"""The audit log's hash chain: each event carries the hash of the one before it.

Each event is hashed over the RFC 8785 canonical JSON of its exported shape (`exported`) with
the previous event's hash (the first from `GENESIS`), so `verify` finds a changed, inserted,
reordered or deleted event in an exported file without the server. The stores chain events as
they write them (`link`). Details, and the earlier canonical form: docs/how-to/audit.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import rfc8785

from askbridge.core.clock import iso

GENESIS = "0" * 64
"""What the first event of every request chains from."""
HASHED = ("request_id", "at", "kind", "actor", "data", "prev_hash")
"""The fields of an exported event that its hash covers (not `seq`, which the database assigns
after the hash is made, nor the hash itself)."""


CANONICAL_JSON = "RFC 8785"
"""The canonical JSON the hashes are made over, as an export's header names it."""

_EARLIER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical(value: Any) -> bytes:
    """The RFC 8785 (JCS) canonical JSON of `value`: equal values give equal bytes.
    ValueError (rfc8785's CanonicalizationError) for what JCS cannot hold: NaN, infinities,
    integers beyond 2**53, text that is not Unicode; TypeError for what is not JSON."""
    # Every vote hashes its event on the click's path, and rfc8785 is pure Python (about four
    # times the C encoder's time). For values with no float and no key beyond U+D7FF, JCS and
    # the C encoder's sorted compact form are the same bytes: the same escapes, integers
    # written alike, and key order by code point equals JCS's by UTF-16 unit below the
    # surrogates. Anything else goes to rfc8785.
    if _plain(value):
        try:
            return _EARLIER.encode(value).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: rfc8785 names the error
    return rfc8785.dumps(value)


_SAFE_INT = 2**53 - 1


def _plain(value: Any) -> bool:
    """Whether `value` is JSON whose JCS form the C encoder writes byte for byte."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_SAFE_INT <= value <= _SAFE_INT)
    # Loops rather than all() over generators, and text (most of what an event holds) told
    # without a call: every vote's event is checked on the click's path.
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (key and max(key) >= "\ud800"):
                return False
            if type(item) is not str and not _plain(item):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:  # noqa: SIM110 - a loop: no generator's frame per item
            if type(item) is not str and not _plain(item):
                return False
        return True
    return False


def plain(value: Any) -> bool:
    """Whether `value` is JSON with no float, no integer beyond 2**53 and no key but text
    below U+D800; such a value reads back from its JSON (`json.loads(json.dumps(value))`) as
    one of the same canonical JSON."""
    return _plain(value)


def earlier_canonical(value: Any) -> bytes:
    """The canonical JSON of events hashed before RFC 8785: sorted keys, no spaces, UTF-8."""
    return _EARLIER.encode(value).encode("utf-8")


def actor_fields(platform: str, person_id: str, name: str) -> dict[str, str]:
    """An event's actor as the audit log shows it."""
    return {"platform": platform, "id": person_id, "name": name}


def link(
    request_id: str,
    at: datetime,
    kind: str,
    actor: Mapping[str, str] | None,
    data: Mapping[str, Any],
    prev_hash: str,
) -> str:
    """The hash of an event, as the store writes it: `at` and `data` are taken as they will
    read back (milliseconds; JSON), so that the export of the event verifies."""
    head, tail = link_parts(request_id, at, kind, actor, json.loads(json.dumps(data)))
    return chained(head, prev_hash, tail)


def chained(head: bytes, prev_hash: str, tail: bytes) -> str:
    """The hash of an event cut by `link_parts`, chained from `prev_hash`."""
    # A previous hash is hex (or the genesis), which JSON writes as it is.
    return hashlib.sha256(head + prev_hash.encode() + tail).hexdigest()


def link_parts(
    request_id: str,
    at: datetime,
    kind: str,
    actor: Mapping[str, str] | None,
    data: Mapping[str, Any],
) -> tuple[bytes, bytes]:
    """What `link` hashes, cut where the previous hash goes: the hash of the event is
    SHA-256(head + prev_hash + tail). A store that learns the previous hash only inside its
    transaction (in the database) finishes the hash there, byte for byte the same. `data` is
    taken as it is: as it reads back from JSON."""
    fields = {
        "actor": None if actor is None else dict(actor),
        "at": iso(at),
        "data": data,
        "kind": kind,
    }
    # Keys are sorted: these four come before "prev_hash", and "request_id" after it.
    head = canonical(fields)[:-1] + b',"prev_hash":"'
    tail = b'","request_id":' + canonical(request_id) + b"}"
    return head, tail


def event_hash(event: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of the HASHED fields of an exported event."""
    return hashlib.sha256(canonical({name: event.get(name) for name in HASHED})).hexdigest()


def earlier_event_hash(event: Mapping[str, Any]) -> str:
    """As `event_hash`, over the canonical JSON of events hashed before RFC 8785."""
    hashed = {name: event.get(name) for name in HASHED}
    return hashlib.sha256(earlier_canonical(hashed)).hexdigest()


def _hash_holds(event: Mapping[str, Any], claimed: Any) -> tuple[bool, bool]:
    """Whether `claimed` is the event's hash, and whether only in the earlier canonical form."""
    try:
        if claimed == event_hash(event):
            return True, False
    except ValueError:
        pass  # a value JCS cannot hold (a huge integer) may still be an earlier event's
    try:
        return claimed == earlier_event_hash(event), True
    except ValueError:
        return False, False


@dataclass(frozen=True)
class Broken:
    """The first link that does not hold: the file's line (from 1), its request, and why."""

    line: int
    request_id: str | None
    reason: str

    def __str__(self) -> str:
        request = f" (request {self.request_id})" if self.request_id else ""
        return f"line {self.line}{request}: {self.reason}"


@dataclass(frozen=True)
class Verified:
    events: int
    requests: int
    partial: int
    """Requests whose first exported event does not chain from GENESIS: the export began after
    their first event (`--since`), so their chain is checked from that event on."""
    earlier: int = 0
    """Events whose hash holds only over the canonical JSON used before RFC 8785."""


HEADER = "askbridge_audit_export"
"""The key of an export's first line, which says how it was filtered."""
END = "askbridge_audit_export_end"
"""The key of an export's last line, which counts its events: a file cut short, or with a
line deleted, does not match it."""


def verify(lines: Iterable[str]) -> Verified | Broken:
    """Check every request's chain in an export (JSON lines, oldest first); the first broken
    link, or a summary when every link holds.

    The first line is the export's header; without `since` in it, every request's first event
    must chain from GENESIS, so that deleting a request's first event is found too. The last
    line counts the events, so that a file cut short is found."""
    heads: dict[str, str] = {}
    partial = earlier = 0
    header: Mapping[str, Any] | None = None
    end: Any = None
    count = 0
    number = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError as error:
            return Broken(number, None, f"not JSON ({error})")
        if not isinstance(event, dict):
            return Broken(number, None, "not a JSON object")
        if end is not None:
            return Broken(number, None, "a line after the export's end line")
        if header is not None and END in event:
            end = event[END]
            if not isinstance(end, dict) or end.get("events") != count:
                return Broken(
                    number,
                    None,
                    f"the end line counts {_events(end)}, the file has {count}: "
                    "lines were deleted or added",
                )
            continue
        if header is None:
            if not isinstance(event.get(HEADER), dict):
                why = f"the first line must be the export's header ({HEADER})"
                return Broken(number, None, why)
            header = event[HEADER]
            continue
        request_id = event.get("request_id")
        if not isinstance(request_id, str):
            return Broken(number, None, "no request_id")
        prev, claimed = event.get("prev_hash"), event.get("hash")
        if request_id in heads:
            if prev != heads[request_id]:
                return Broken(
                    number,
                    request_id,
                    "prev_hash is not the hash of the request's previous event: an event "
                    "before this one was deleted, added or reordered",
                )
        elif prev != GENESIS:
            if not header.get("since"):
                return Broken(
                    number,
                    request_id,
                    "the request's first event does not chain from the genesis hash: its "
                    "earlier events are missing",
                )
            partial += 1
        holds, in_earlier_form = _hash_holds(event, claimed)
        if not holds:
            return Broken(number, request_id, "the event does not match its hash: it was changed")
        earlier += in_earlier_form
        heads[request_id] = str(claimed)
        count += 1
    if header is None:
        return Broken(1, None, "the file is empty; an export starts with its header")
    if end is None:
        return Broken(number + 1, None, f"the export is cut short: no end line ({END})")
    return Verified(events=count, requests=len(heads), partial=partial, earlier=earlier)


def _events(end: Any) -> str:
    counted = end.get("events") if isinstance(end, dict) else None
    return f"{counted} events" if isinstance(counted, int) else "no events"
