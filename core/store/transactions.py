"""What each store call does, written once for both databases: a generator that yields its
statements (`sql.Step`) and is sent back each one's result. SQLite runs it in one go on its
connection (`SQLiteStore._write`), PostgreSQL awaits each statement (`PostgresStore._write`);
neither knows what the call means, and a script never sees a connection.

Each store says which scripts run in a transaction; a script is a transaction's whole work.
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Generator, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeAlias, TypeVar

from askbridge.core import audit_log
from askbridge.core.errors import NewerSchema, StartupError
from askbridge.core.models import MessageRef, Person, Request, Selections, Status, Vote
from askbridge.core.store import codec, schema
from askbridge.core.store import queries as q
from askbridge.core.store.base import Attempt, Click, Delivery, Ending, Event, Render
from askbridge.core.store.sql import Query, Step, notify

T = TypeVar("T")
Script: TypeAlias = Generator[Step, Any, T]
Row: TypeAlias = tuple[Any, ...]
SECRET_BYTES = 32
PRUNE_BATCH = 500
"""Requests deleted a transaction by `prune`: a few hundred, so that others get their turn."""

# --- reading ----------------------------------------------------------------------------


def load(request_id: str) -> Script[Request | None]:
    row = yield q.REQUEST.row(request_id=request_id)
    if row is None:
        return None
    found_messages = yield q.MESSAGES.rows(request_id=request_id)
    found_votes = yield q.VOTES.rows(request_id=request_id)
    return codec.load_request(row, messages(found_messages), votes(found_votes))


def load_all(rows: Sequence[Row]) -> Script[list[Request]]:
    """The requests of `rows` (of REQUEST_COLUMNS) with their messages and votes."""
    if not rows:
        return []
    ids = json.dumps([row[0] for row in rows])
    posted: dict[str, list[MessageRef]] = {}
    for found in (yield q.MESSAGES_OF.rows(ids=ids)):
        posted.setdefault(found[0], []).append(codec.load_message(found[1:]))
    cast: dict[str, list[Vote]] = {}
    for found in (yield q.VOTES_OF.rows(ids=ids)):
        cast.setdefault(found[0], []).append(codec.load_vote(found[1:]))
    return [codec.load_request(row, posted.get(row[0], []), cast.get(row[0], [])) for row in rows]


def messages(rows: Iterable[Row]) -> list[MessageRef]:
    """The messages of MESSAGES' rows."""
    return [codec.load_message(row[1:]) for row in rows]


def votes(rows: Iterable[Row]) -> list[Vote]:
    """The votes of VOTES' rows."""
    return [codec.load_vote(row[1:]) for row in rows]


def status(request_id: str) -> Script[Status | None]:
    found = yield q.STATUS.value(request_id=request_id)
    return None if found is None else Status(found)


def draft(request_id: str, person: Person) -> Script[Selections]:
    text = yield q.DRAFT.value(request_id=request_id, person=person.key)
    return codec.load_selections(text)


def get_with_draft(request_id: str, person: Person) -> Script[tuple[Request | None, Selections]]:
    return (yield from load(request_id)), (yield from draft(request_id, person))


def list_requests(
    status: Status | None, limit: int, older_than: str | None
) -> Script[list[Request]]:
    listing = q.LISTING[status is not None, older_than is not None][0]
    state = None if status is None else status.value
    rows = yield listing.rows(status=state, older_than=older_than, limit=limit)
    return (yield from load_all(rows))


def count_requests(status: Status, older_than: str | None) -> Script[int]:
    counting = q.LISTING[True, older_than is not None][1]
    return int((yield counting.value(status=status.value, older_than=older_than)))


def waiting_by_surface() -> Script[dict[str, int]]:
    return {str(surface): int(count) for surface, count in (yield q.WAITING_BY_SURFACE.rows())}


def unposted(limit: int) -> Script[list[Request]]:
    found = []
    for row in (yield q.UNPOSTED.rows(limit=limit)):
        request = yield from load(row[0])
        if request is not None:
            found.append(request)
    return found


def prune(before: float, limit: int) -> Script[int]:
    """Delete up to `limit` requests that ended before `before` with all they left; when
    that was the last of them, the events of requests whose posting failed by then too."""
    found = [row[0] for row in (yield q.PRUNABLE.rows(before=before, limit=limit))]
    ids = json.dumps(found)
    for forget in q.PRUNE.values():
        yield forget.count(ids=ids)
    if len(found) < limit:
        yield q.ORPHANED_EVENTS.count(before=before)
        yield q.CLICKS_BEFORE.count(before=before)
    return len(found)


# --- requests and posting ---------------------------------------------------------------


def create(request: Request) -> Script[tuple[Request, bool]]:
    created = yield q.CREATE.count(
        request_id=request.request_id,
        questions=codec.dump_questions(request.questions),
        targets=codec.dump_targets(request.targets),
        context=request.context,
        status=request.status.value,
        created_at=codec.epoch(request.created_at),
        expires_at=codec.epoch(request.expires_at),
        policy=request.policy.model_dump_json(),
        remind_at=codec.epoch(request.remind_at),
        escalate_at=codec.epoch(request.escalate_at),
        tool=codec.dump_tool(request.tool),
        form=codec.dump_form(request.form),
    )
    if created:
        yield from add_events(Event(request.request_id, request.created_at, "created"))
        yield notify(request.request_id)
    stored = yield from load(request.request_id)
    assert stored is not None
    return stored, created == 1


def discard(request_id: str, at: datetime, reason: str) -> Script[None]:
    for forget in q.FORGET.values():
        yield forget.count(request_id=request_id)
    yield from add_events(Event(request_id, at, "post_failed", data={"error": reason}))


def add_message(request_id: str, message: MessageRef, at: datetime) -> Script[None]:
    added = yield q.ADD_MESSAGE.count(
        request_id=request_id,
        platform=message.platform,
        channel=message.channel,
        message_id=message.message_id,
        data=json.dumps(message.data),
        posted_at=codec.epoch(at),
        target=message.target,
    )
    if added:
        yield q.STALE.count(request_id=request_id)
    where = {
        "platform": message.platform,
        "channel": message.channel,
        "message_id": message.message_id,
    }
    yield from add_events(Event(request_id, at, "posted", data=where))


def mark_posted(request_id: str, at: datetime) -> Script[None]:
    yield q.MARK_POSTED.count(request_id=request_id, at=codec.epoch(at))


# --- drafts and endings -----------------------------------------------------------------


def first_delivery(request_id: str, click: Click) -> Script[bool]:
    seen = yield q.FIRST_DELIVERY.count(
        request_id=request_id,
        person=click.person.key,
        sent_at=codec.epoch(click.sent_at),
        click_id=click.click_id,
        at=codec.epoch(click.at),
    )
    return bool(seen)


def finish_click(
    request_id: str, ending: Ending, click: Click
) -> Script[tuple[Request, bool] | None]:
    if not (yield from first_delivery(request_id, click)):
        return None
    return (yield from finish(request_id, ending))


def deny(event: Event, click: Click | None) -> Script[bool]:
    if click is not None and not (yield from first_delivery(event.request_id, click)):
        return False
    yield from add_events(event)
    return True


def save_draft(
    request_id: str, person: Person, selections: Selections, at: datetime
) -> Script[Selections]:
    yield q.DRAFT_LOCK.value(request_id=request_id)
    saved = yield from draft(request_id, person)
    saved.update(selections)
    yield q.SAVE_DRAFT.count(
        request_id=request_id,
        person=person.key,
        selections=codec.dump_selections(saved),
        at=codec.epoch(at),
    )
    return saved


def finish(request_id: str, ending: Ending) -> Script[tuple[Request, bool]]:
    won = (yield from end(request_id, ending)) is not None
    if won:
        yield notify(request_id)
    stored = yield from load(request_id)
    if stored is None:
        raise KeyError(request_id)
    return stored, won


def end(
    request_id: str, ending: Ending, cause: Event | None = None, head: str | None = None
) -> Script[Row | None]:
    """End a waiting request: the request's row as the ending left it, or None when it was
    not waiting. `cause` (the vote that decided it) is written with the ending's event,
    before it in the chain, whose head is `head` when the caller has read it."""
    row: Row | None = yield q.END.row(
        status=ending.status.value,
        at=codec.epoch(ending.at),
        answers=None
        if ending.answers is None
        else codec.dump_answers(ending.answers, ending.changed, sort=False),
        by=codec.dump_person(ending.by),
        request_id=request_id,
    )
    if row is None:
        return None
    policy = row[codec.REQUEST_COLUMNS_POLICY]
    data = codec.ending_data(ending, policy)
    event = Event(request_id, ending.at, ending.status.value, ending.by, data)
    yield from add_events(*filter(None, (cause, event)), prev=head)
    yield q.FORGET["drafts"].count(request_id=request_id)
    url = codec.callback_url(policy)
    if url is not None:
        delivery_id = f"dlv_{uuid.uuid4().hex}"
        at = codec.epoch(ending.at)
        yield q.DELIVERY.count(delivery_id=delivery_id, request_id=request_id, url=url, at=at)
    return row


# --- deadlines --------------------------------------------------------------------------


def ids(found: Step) -> Script[list[str]]:
    """The request ids `found` lists."""
    return [row[0] for row in (yield found)]


def value(found: Step) -> Script[Any]:
    return (yield found)


def mark_reminded(request_id: str, at: datetime) -> Script[bool]:
    claimed: int = yield q.MARK_REMINDED.count(request_id=request_id, at=codec.epoch(at))
    if claimed:
        yield from add_events(Event(request_id, at, "reminder"))
    return claimed == 1


def escalate(request_id: str, step: int, at: datetime, next_at: datetime | None) -> Script[bool]:
    row = yield q.ESCALATION.row(request_id=request_id, step=step)
    found = None if row is None else codec.escalated(row[0], row[1], step)
    if found is None:
        return False
    taken, targets = found
    yield q.ESCALATE.count(
        request_id=request_id,
        step=step,
        at=codec.epoch(at),
        next_at=codec.epoch(next_at),
        mention=int(taken.mention),
        targets=targets,
    )
    yield from add_events(
        Event(request_id, at, "escalated", data=codec.escalation_data(step, taken))
    )
    yield notify(request_id)
    return True


# --- rendering --------------------------------------------------------------------------


def unrendered(now: datetime | None) -> Script[list[tuple[str, MessageRef]]]:
    yield q.UNSHOWN.count()
    rows = yield q.UNRENDERED.rows(now=codec.epoch(now))
    return [(row[0], codec.load_message(row[1:])) for row in rows]


def _key(request_id: str, message: MessageRef) -> dict[str, str]:
    return {
        "request_id": request_id,
        "platform": message.platform,
        "channel": message.channel,
        "message_id": message.message_id,
    }


def claim_message(
    request_id: str, message: MessageRef, owner: str, now: datetime, until: datetime
) -> Script[Render | None]:
    revision = yield q.REVISION_SHARED.value(request_id=request_id)
    claimed = yield q.CLAIM_MESSAGE.count(
        **_key(request_id, message),
        owner=owner,
        until=codec.epoch(until),
        now=codec.epoch(now),
        revision=revision,
    )
    return (yield from render(request_id, message, revision)) if claimed else None


def mark_rendered(
    request_id: str, message: MessageRef, owner: str, rendered: Render, until: datetime
) -> Script[Render | None]:
    revision = yield q.REVISION.value(request_id=request_id)
    newer = revision is not None and revision > rendered.revision
    held = yield q.RENDERED.count(
        **_key(request_id, message),
        owner=owner,
        keeper=owner if newer else None,
        status=rendered.request.status.value,
        revision=rendered.revision,
        until=codec.epoch(until) if newer else None,
        pings=rendered.pings,
    )
    yield q.SHOWN.count(request_id=request_id)
    if not (newer and held):
        return None
    return (yield from render(request_id, message, revision))


def render(request_id: str, message: MessageRef, revision: int) -> Script[Render | None]:
    counts = yield q.PINGS.row(**_key(request_id, message))
    request = yield from load(request_id)
    if counts is None or request is None:
        return None
    pings, pinged = counts
    return Render(request, revision, pings, ping=pinged < pings)


def renew_claims(owner: str, until: datetime) -> Script[int]:
    return int((yield q.RENEW_CLAIMS.count(owner=owner, until=codec.epoch(until))))


def release_claims(owner: str) -> Script[None]:
    yield q.RELEASE_CLAIMS.count(owner=owner)


# --- audit ------------------------------------------------------------------------------


def add_events(*events: Event, prev: str | None = None) -> Script[str]:
    """Append `events`, in order, to their request's hash chain, in one statement, and return
    the last hash; `prev`: the chain's head, when the caller has read it."""
    request_id = events[0].request_id
    if prev is None:
        yield q.CHAIN_LOCK.value(request_id=request_id, seed=q.EVENT_LOCKS)
        prev = (yield q.CHAIN_HEAD.value(request_id=request_id)) or audit_log.GENESIS
    params: dict[str, Any] = {}
    for index, event in enumerate(events):
        at, actor, data, digest = codec.event_row(event, prev)
        values = (event.request_id, at, event.kind, actor, data, prev, digest)
        for name, value in zip(q.EVENT_FIELDS, values, strict=True):
            params[f"{name}_{index}"] = value
        prev = digest
    yield q.ADD_EVENTS[len(events)].count(**params)
    assert prev is not None
    return prev


def events(
    request_id: str | None, since: datetime | None, limit: int, until: datetime | None, after: int
) -> Script[list[Event]]:
    rows = yield q.EVENTS[request_id is not None].rows(
        since=codec.epoch(since) if since else 0.0,
        after=after,
        until=codec.epoch(until),
        request_id=request_id,
        limit=limit,
    )
    return [codec.load_event(row) for row in rows]


def migrate(
    migrations: Sequence[tuple[int, Iterable[str]]], *, upgrade: bool = True
) -> Script[None]:
    """Bring the schema up to date: the `migrations` (version, statements) newer than the
    stored version, in order, then the events stored before the audit log had hashes.

    A schema newer than the last of `migrations` is refused, and so is an older one when not
    `upgrade` (a one-off command): the caller rolls back, so nothing is written."""
    yield q.MIGRATION_LOCK.value(key=q.MIGRATION_LOCKS)
    yield q.SCHEMA_TABLE.run()
    current = (yield q.SCHEMA_VERSION.value()) or 0
    known = migrations[-1][0]
    if current > known:
        raise NewerSchema(schema.too_new(current, known))
    if current < known and not upgrade:
        raise StartupError(schema.too_old(current, known))
    if 0 < current < known:
        older = yield q.OLDER_REPLICAS.value(known=known)
        if older:
            raise StartupError(schema.older_replicas(older, current, known))
    for version, statements in migrations:
        if version > current:
            for statement in statements:
                yield Query.verbatim(statement).run()
            yield q.MIGRATED.run(version=version)
    yield from chain_unchained()


def schema_known(known: int) -> Script[None]:
    """Whether the schema is still one this askbridge knows, as it runs: a newer replica may
    have upgraded it since (NewerSchema)."""
    current = (yield q.SCHEMA_VERSION.value()) or 0
    if current > known:
        raise NewerSchema(schema.upgraded_meanwhile(current, known))


def chain_unchained() -> Script[None]:
    """Chain the events stored before the audit log had hashes, in order (once: the version
    that added the hashes is applied in the same transaction)."""
    heads: dict[str, str] = {}
    for row in (yield q.UNCHAINED.rows()):
        event = codec.load_event(row)
        prev = heads.get(event.request_id)
        if prev is None:
            found = yield q.CHAINED_BEFORE.value(request_id=event.request_id, seq=event.seq)
            prev = found or audit_log.GENESIS
        digest = codec.event_row(event, prev)[3]
        yield q.CHAIN.count(prev=prev, hash=digest, seq=event.seq)
        heads[event.request_id] = digest


def secret(name: str) -> Script[bytes]:
    yield q.ADD_SECRET.count(name=name, value=secrets.token_hex(SECRET_BYTES))
    return bytes.fromhex(str((yield q.SECRET.value(name=name))))


# --- webhooks ---------------------------------------------------------------------------


def claim_deliveries(
    owner: str, now: datetime, lease_until: datetime, limit: int
) -> Script[list[Delivery]]:
    rows = yield q.CLAIM_DELIVERIES.rows(
        owner=owner, lease_until=codec.epoch(lease_until), now=codec.epoch(now), limit=limit
    )
    return [codec.load_delivery(row) for row in rows]


def record_attempt(delivery: Delivery, owner: str, attempt: Attempt) -> Script[bool]:
    held: int = yield q.RECORD_ATTEMPT.count(
        next_at=codec.epoch(attempt.next_at),
        done_at=None if attempt.next_at is not None else codec.epoch(attempt.at),
        result=attempt.result,
        delivery_id=delivery.delivery_id,
        owner=owner,
    )
    data = codec.attempt_data(delivery, attempt)
    yield from add_events(Event(delivery.request_id, attempt.at, "webhook", data=data))
    yield notify(delivery.request_id)
    return held == 1


def next_delivery() -> Script[datetime | None]:
    return codec.from_epoch((yield q.NEXT_DELIVERY.value()))
