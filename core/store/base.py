"""The store's role protocols, and `Store`, all of them at once: every method that changes state
is one atomic transaction. A part of the service takes only the role it uses (`Posting` its
`Postings`, `MessageUpdates` its `RenderClaims`, `Webhooks` its `Outbox`); the broker never sees
SQL. See ARCHITECTURE.md, "The store's roles".
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from askbridge.core.models import MessageRef, Person, Request, Selections, Status


@dataclass(frozen=True)
class Event:
    """One line of a request's audit trail."""

    request_id: str
    at: datetime
    kind: str
    actor: Person | None = None
    data: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    prev_hash: str = ""
    """The hash of the request's previous event (`core/audit_log.py`); set by the store."""
    hash: str = ""
    """This event's hash, over what an export shows of it and `prev_hash`; set by the store."""


@dataclass(frozen=True)
class Delivery:
    """A webhook to send: the status object of request `request_id`, POSTed to `url`. The store
    writes one in the transaction that ends a request whose policy has a callback_url."""

    delivery_id: str
    request_id: str
    url: str
    created_at: datetime
    attempts: int = 0
    """Attempts made before this one."""


@dataclass(frozen=True)
class Attempt:
    """How one attempt at a delivery went, and what comes next."""

    at: datetime
    result: str
    """delivered, retrying, failed (refused for good) or gave_up (retried for too long)."""
    status: int | None = None
    error: str | None = None
    next_at: datetime | None = None
    """When to try again (result retrying)."""


@dataclass(frozen=True)
class Ending:
    """What `finish` should write when the request is still waiting."""

    status: Status
    at: datetime
    answers: dict[str, str] | None = None
    by: Person | None = None
    changed: dict[str, Any] | None = None
    """The tool input the answers allow instead of the one asked (see `core.changes`)."""
    event_data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Click:
    """A click as it is known when it is delivered again (a platform's retry, to this process
    or another, a browser posting a form twice): by `person`, made at `sent_at` as the platform
    says (Slack's action_ts, Discord's interaction id), or carrying `click_id`, the id of that
    one delivery (a Slack form's trigger_id, the web page's one-use form id). `at`: when it
    is recorded (`prune` forgets it after a while)."""

    person: Person
    at: datetime
    sent_at: datetime | None = None
    click_id: str | None = None


@dataclass(frozen=True)
class Render:
    """A message to bring up to date, held by the claimant: `request` as it was at
    `revision` (see `Store.claim_message`); with `ping`, the people who may answer are still to
    be pinged on this message (a reminder, an escalation step), the request's `pings`th time."""

    request: Request
    revision: int
    pings: int = 0
    ping: bool = False


EVERY_REQUEST = "*"
"""What `listen` reports when changes may have gone unheard: any request may have changed."""


class VoteOutcome(enum.Enum):
    COUNTED = "counted"  # recorded; the request still waits for more matching votes
    DECIDED = "decided"  # this vote reached the quorum and answered the request
    CLOSED = "closed"  # the request had already ended; nothing was recorded
    REPLAYED = "replayed"  # the person has a vote from a newer click; nothing was recorded


class Lifecycle(Protocol):
    """Opening, closing and watching the database: what the service itself calls."""

    async def open(self) -> None:
        """Connect and bring the schema up to date (a one-off command's store refuses an older
        one instead); a schema newer than this askbridge knows is refused (NewerSchema), and
        left as it was."""

    async def close(self) -> None: ...

    async def ping(self) -> None:
        """Raise when the database cannot be reached or does not answer, or NewerSchema when a
        newer askbridge has upgraded its schema since this one opened it (for `/readyz`)."""

    def unavailable(self, error: BaseException) -> str | None:
        """Why `error`, raised by a call of this store, means the database cannot serve for
        now (down, unreachable, full, or held by another process), in words for whoever asked;
        None for an error that says nothing of the kind."""

    async def listen(self, on_change: Callable[[str], Coroutine[Any, Any, None]]) -> None:
        """Call `on_change(request_id)` when another process changes a request (if the store
        can tell), so that waiters on this replica wake for answers given elsewhere.

        `on_change(EVERY_REQUEST)` ("*", never a request id) means changes may have gone
        unheard, for instance while the store was reconnecting: any request may have changed.
        The store keeps listening until `close()`, through lost connections."""


class Reading(Protocol):
    """Reading one request: what every role that acts on a request needs."""

    async def get(self, request_id: str) -> Request | None: ...

    async def status(self, request_id: str) -> Status | None:
        """Only the request's status (None: no such request): what a waiting agent holds."""


class Requests(Reading, Protocol):
    """Making, listing and forgetting requests (the agent API, retention)."""

    async def create(self, request: Request) -> tuple[Request, bool]:
        """Insert `request` unless its id exists; return the stored one and whether it is new."""

    async def list_requests(
        self, status: Status | None = None, limit: int = 100, older_than: str | None = None
    ) -> list[Request]:
        """Requests newest first (by creation, then id); with `older_than` (a request id), only
        those listed after that request: the next page. An unknown `older_than` lists none."""

    async def count_requests(self, status: Status, older_than: str | None = None) -> int:
        """How many requests `list_requests(status, older_than=older_than)` would list without
        a limit."""

    async def waiting_by_surface(self) -> dict[str, int]:
        """How many requests wait now on each platform they were posted to (a request posted
        to two counts under each); a platform with none is left out."""

    async def prune(self, ended_before: datetime) -> int:
        """Delete requests that ended before `ended_before`, with their votes, drafts, messages
        and audit events (and the events of requests whose posting failed by then); never a
        waiting request. Returns how many requests went."""


class Answers(Protocol):
    """What a click writes: a draft, a vote, an ending."""

    async def get_with_draft(
        self, request_id: str, person: Person
    ) -> tuple[Request | None, Selections]:
        """The request and `person`'s draft of it, in one read."""

    async def save_draft(
        self, request_id: str, person: Person, selections: Selections, at: datetime
    ) -> Selections:
        """Merge `selections` into the person's draft and return the whole draft."""

    async def vote(
        self,
        request_id: str,
        person: Person,
        answers: dict[str, str],
        quorum: int,
        at: datetime,
        sent_at: datetime | None = None,
        notes: Mapping[str, str] | None = None,
        click_id: str | None = None,
        changed: Mapping[str, Any] | None = None,
    ) -> tuple[Request, VoteOutcome]:
        """Record (or change) a person's vote, with their `notes` (header -> note) and the input
        it allows instead of the one asked (`changed`); answer the request once `quorum`
        votes agree, which votes with the same answers do only when they allow the same input.

        `sent_at` is when the platform says the click happened: a vote from a click no newer
        than the one behind the person's recorded vote (a replay, a redelivery) is ignored.
        `click_id` is the id of the click's delivery: recorded with the vote, in the same
        transaction, and a vote whose click was seen before is REPLAYED, nothing written.
        """

    async def first_delivery(self, request_id: str, click: Click) -> bool:
        """Whether this is the first time `click` is seen, by any process: False once it was
        recorded here before or is behind the person's vote on the request. Records it."""

    async def finish(self, request_id: str, ending: Ending) -> tuple[Request, bool]:
        """Move a waiting request to a terminal state; return the request and whether we won.
        A compare-and-set on `status = 'waiting'`: when two people submit at the same moment,
        on any process or replica, exactly one wins."""

    async def finish_click(
        self, request_id: str, ending: Ending, click: Click
    ) -> tuple[Request, bool] | None:
        """`finish`, for a click that ends the request (a Cancel), with the click recorded in
        the same transaction: None when it was seen before (see `first_delivery`), and
        nothing is written. A crash before it commits leaves neither, so the click delivered
        again still ends the request."""

    async def deny(self, event: Event, click: Click | None) -> bool:
        """Add `event` (a click refused for who made it) to the trail, with `click` recorded
        in the same transaction; False when the click was seen before, and nothing is
        written."""


class Postings(Reading, Protocol):
    """Posting a request's messages, once, and finishing a posting a crash left (`Posting`)."""

    async def add_message(self, request_id: str, message: MessageRef, at: datetime) -> None:
        """Record a message posted for the request (for its target `message.target`)."""

    async def mark_posted(self, request_id: str, at: datetime) -> None:
        """Every target of the request has its message: it needs no more posting."""

    async def unposted(self, limit: int = 100) -> list[Request]:
        """Requests whose posting was never finished, oldest first; those that have ended
        since may still have a message that was posted but not recorded."""

    def posting(self, request_id: str) -> AbstractAsyncContextManager[bool]:
        """Hold the right to post `request_id`'s messages: the context gives True when this
        task has it, False when another task or replica holds it. It is let go on exit, and
        when the process holding it dies, so that a request is never posted twice at once
        and a crash never leaves it unpostable."""

    async def discard(self, request_id: str, at: datetime, reason: str) -> None:
        """Forget a request that was never shown to anyone (its posting failed)."""


class Deadlines(Protocol):
    """Expiry, reminders and escalation steps, each claimed once by any replica."""

    async def next_deadline(self) -> datetime | None:
        """The earliest expiry, pending reminder or escalation step among waiting requests."""

    async def expired(self, now: datetime, limit: int = 100) -> list[str]:
        """Ids of waiting requests whose deadline has passed."""

    async def due_reminders(self, now: datetime, limit: int = 100) -> list[str]: ...

    async def mark_reminded(self, request_id: str, at: datetime) -> bool:
        """Claim a request's one reminder; False when it was already sent (by any replica)."""

    async def due_escalations(self, now: datetime, limit: int = 100) -> list[str]:
        """Ids of waiting requests whose next escalation step is due."""

    async def escalate(
        self, request_id: str, step: int, at: datetime, next_at: datetime | None
    ) -> bool:
        """Claim step `step` (from 0) of the request's escalation ladder: True when it was
        the next step and the request still waits (then the step is recorded as taken at
        `at` with an audit event, the step's target is added to the request's targets to
        be posted, and the next step is due at `next_at`); False when any process took it
        already."""


class RenderClaims(Protocol):
    """Who brings which message up to date (`MessageUpdates`), with leases that run out."""

    async def unrendered(self, now: datetime | None = None) -> list[tuple[str, MessageRef]]:
        """Messages (with their request's id) whose last render does not show their request's
        current revision; with `now`, only those that nobody holds (or whose holder's lease
        ran out by `now`). The requests are not read: whoever claims a message reads its."""

    async def claim_message(
        self, request_id: str, message: MessageRef, owner: str, now: datetime, until: datetime
    ) -> Render | None:
        """Take the right to update `message` for `owner` until `until`, if it shows an older
        revision than its request's and nobody else holds it (or their lease ran out by
        `now`): the request to render, read in the same transaction. None: there is nothing
        to do, or another process is doing it (and will see every newer revision)."""

    async def mark_rendered(
        self, request_id: str, message: MessageRef, owner: str, rendered: Render, until: datetime
    ) -> Render | None:
        """`owner` showed `rendered` on `message`. If the request has changed since, `owner`
        keeps the claim (until `until`) and gets the newer state to render; otherwise the
        claim is let go and None returned (also when `owner` no longer held it)."""

    async def renew_claims(self, owner: str, until: datetime) -> int:
        """Extend every message claim `owner` holds to `until`; how many it holds."""

    async def release_claims(self, owner: str) -> None:
        """Let go of every message claim `owner` holds (a clean shutdown)."""


class Outbox(Reading, Protocol):
    """The webhook outbox (`Webhooks`): deliveries claimed with a lease, attempts recorded."""

    async def claim_deliveries(
        self, owner: str, now: datetime, lease_until: datetime, limit: int
    ) -> list[Delivery]:
        """Take up to `limit` deliveries that are due and that nobody holds (or whose holder's
        lease ran out) for `owner` until `lease_until`; no other process gets them meanwhile."""

    async def record_attempt(self, delivery: Delivery, owner: str, attempt: Attempt) -> bool:
        """Record an attempt in the request's audit trail and, if `owner` still holds the
        delivery, schedule the next one or close it, letting go of it; whether it still held
        it."""

    async def next_delivery(self) -> datetime | None:
        """When the earliest open delivery is due or its holder's lease ends."""


class Audit(Protocol):
    """The audit trail, and the secrets that sign what leaves it."""

    async def add_event(self, event: Event) -> None: ...

    async def events(
        self,
        request_id: str | None = None,
        since: datetime | None = None,
        limit: int = 1000,
        *,
        until: datetime | None = None,
        after: int = 0,
    ) -> list[Event]:
        """Audit events in order (by `seq`), for one request or all of them: at or after
        `since`, before `until`, and with a `seq` above `after` (the next page)."""

    async def secret(self, name: str) -> bytes:
        """A random 32-byte secret kept under `name`, made on first use; the same for every
        replica on this store and after every restart."""


class Store(
    Lifecycle, Requests, Answers, Postings, Deadlines, RenderClaims, Outbox, Audit, Protocol
):
    """Every role at once: what the broker holds. Each part of it takes only its role."""
