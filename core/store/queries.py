"""Every statement of both stores, written once (see `sql` for how each dialect gets it).

Only what truly differs is given per dialect: the vote (SQLite's statements, PostgreSQL's
`askbridge_vote`), SQLite's IN list against PostgreSQL's array, a lock PostgreSQL takes where
SQLite's writers are serialised already, and the order messages were posted in (SQLite's rowid,
PostgreSQL's identity column).
"""

from __future__ import annotations

from askbridge.core.store.codec import (
    DELIVERY_COLUMNS,
    EVENT_COLUMNS,
    MESSAGE_COLUMNS,
    NEWER_CLICK,
    REQUEST_COLUMNS,
    VOTE_COLUMNS,
)
from askbridge.core.store.sql import Query

# Any constant: PostgreSQL replicas starting together take turns migrating under this lock.
# SQLite's writers are serialised already.
MIGRATION_LOCKS = 0x61736B62
MIGRATION_LOCK = Query(None, postgres="SELECT pg_advisory_xact_lock(:key)")
SCHEMA_TABLE = Query("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER)")
SCHEMA_VERSION = Query("SELECT max(version) FROM schema_version")
# Each PostgreSQL replica names its pooled connections after the schema version it knows and
# the schema it uses (`postgres.NAME`), so that one about to upgrade the schema sees the older
# replicas still using it, which would misread what it writes.
OLDER_REPLICAS = Query(
    None,
    postgres="SELECT string_agg(DISTINCT application_name, ', ') FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
    " AND application_name ~ '^askbridge schema [0-9]+ in '"
    " AND substr(application_name, strpos(application_name, ' in ') + 4) = current_schema()"
    " AND CAST(split_part(application_name, ' ', 3) AS integer) < :known",
)
MIGRATED = Query("INSERT INTO schema_version (version) VALUES (:version)")

# --- requests ---------------------------------------------------------------------------

CREATE = Query(
    "INSERT INTO requests (request_id, questions, targets, context, status, created_at,"
    " expires_at, policy, remind_at, escalate_at, tool, form) VALUES (:request_id,"
    " :questions, :targets, :context, :status, :created_at, :expires_at, :policy, :remind_at,"
    " :escalate_at, :tool, :form)"
    " ON CONFLICT (request_id) DO NOTHING"
)
REQUEST = Query(f"SELECT {REQUEST_COLUMNS} FROM requests WHERE request_id = :request_id")
STATUS = Query("SELECT status FROM requests WHERE request_id = :request_id")
FORGET = {
    table: Query(f"DELETE FROM {table} WHERE request_id = :request_id")
    for table in ("drafts", "votes", "messages", "requests")
}
"""What `discard` deletes of a request, in order (its events stay)."""
WAITING_BY_SURFACE = Query(
    "SELECT json_extract(t.value, '$.platform'), count(DISTINCT r.request_id)"
    " FROM requests r, json_each(r.targets) t WHERE r.status = 'waiting' GROUP BY 1",
    postgres="SELECT t ->> 'platform', count(DISTINCT r.request_id) FROM requests r,"
    " json_array_elements(CAST(r.targets AS json)) t WHERE r.status = 'waiting' GROUP BY 1",
)
"""How many requests wait on each surface (a request posted to two counts under each)."""
FIRST_DELIVERY = Query(
    "INSERT INTO clicks (person, sent_at, click_id, at)"
    " SELECT :person, CAST(:sent_at AS DOUBLE PRECISION), CAST(:click_id AS TEXT),"
    " CAST(:at AS DOUBLE PRECISION)"
    " WHERE NOT EXISTS (SELECT 1 FROM votes WHERE request_id = :request_id"
    " AND person = :person AND sent_at = :sent_at)"
    " ON CONFLICT DO NOTHING"
)
"""Records a click unless it was seen: recorded before (the same person and platform time, or
the same delivery id), or behind the person's vote (1 row)."""
CLICKS_BEFORE = Query("DELETE FROM clicks WHERE at < :before")
PRUNABLE = Query(
    "SELECT request_id FROM requests WHERE status <> 'waiting' AND ended_at < :before"
    " LIMIT :limit FOR UPDATE"
)
ORPHANED_EVENTS = Query(
    "DELETE FROM events WHERE at < :before"
    " AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.request_id = events.request_id)"
)
"""The events of requests whose posting failed (`prune`)."""

_LISTED = "FROM requests WHERE 1 = 1"
_BY_STATUS = " AND status = :status"
_OLDER = (
    " AND (created_at, request_id) <"
    " (SELECT created_at, request_id FROM requests WHERE request_id = :older_than)"
)
LISTING = {
    (status, older): (
        Query(
            f"SELECT {REQUEST_COLUMNS} {_LISTED}{_BY_STATUS * status}{_OLDER * older}"
            " ORDER BY created_at DESC, request_id DESC LIMIT :limit"
        ),
        Query(f"SELECT count(*) {_LISTED}{_BY_STATUS * status}{_OLDER * older}"),
    )
    for status in (False, True)
    for older in (False, True)
}
"""A page of requests and how many there are, by (with a status, after a request)."""

# The messages and votes of one request, and of a page of them.
_IDS_SQLITE = "IN (SELECT value FROM json_each(:ids))"
_IDS_POSTGRES = "IN (SELECT json_array_elements_text(CAST(:ids AS json)))"
_MESSAGES = f"SELECT request_id, {MESSAGE_COLUMNS} FROM messages WHERE request_id"
MESSAGES = Query(
    f"{_MESSAGES} = :request_id ORDER BY posted_at, rowid",
    postgres=f"{_MESSAGES} = :request_id ORDER BY posted_at, seq",
)
MESSAGES_OF = Query(
    f"{_MESSAGES} {_IDS_SQLITE} ORDER BY posted_at, rowid",
    postgres=f"{_MESSAGES} {_IDS_POSTGRES} ORDER BY posted_at, seq",
)
_VOTES = f"SELECT request_id, {VOTE_COLUMNS} FROM votes WHERE request_id"
VOTES = Query(f"{_VOTES} = :request_id ORDER BY at")
VOTES_OF = Query(
    f"{_VOTES} {_IDS_SQLITE} ORDER BY at", postgres=f"{_VOTES} {_IDS_POSTGRES} ORDER BY at"
)

PRUNE = {
    table: Query(
        f"DELETE FROM {table} WHERE request_id {_IDS_SQLITE}",
        postgres=f"DELETE FROM {table} WHERE request_id {_IDS_POSTGRES}",
    )
    for table in ("drafts", "votes", "messages", "events", "deliveries", "requests")
}
"""What `prune` deletes of the requests it prunes, in order."""

# --- posting ----------------------------------------------------------------------------

ADD_MESSAGE = Query(
    "INSERT INTO messages (request_id, platform, channel, message_id, data, posted_at,"
    " rendered_status, target) VALUES (:request_id, :platform, :channel, :message_id, :data,"
    " :posted_at, 'waiting', :target) ON CONFLICT DO NOTHING"
)
# A message starts at revision 0: if the request has moved on, it is stale.
STALE = Query("UPDATE requests SET rendered = 0 WHERE request_id = :request_id AND rendered > 0")
MARK_POSTED = Query(
    "UPDATE requests SET posted_at = :at WHERE request_id = :request_id AND posted_at IS NULL"
)
UNPOSTED = Query(
    "SELECT request_id FROM requests WHERE posted_at IS NULL ORDER BY created_at LIMIT :limit"
)

# --- drafts, votes, endings -------------------------------------------------------------

DRAFT = Query("SELECT selections FROM drafts WHERE request_id = :request_id AND person = :person")
# The row lock keeps two quick clicks of one person from losing either choice.
DRAFT_LOCK = Query(
    None, postgres="SELECT 1 FROM requests WHERE request_id = :request_id FOR UPDATE"
)
SAVE_DRAFT = Query(
    "INSERT INTO drafts (request_id, person, selections, updated_at)"
    " VALUES (:request_id, :person, :selections, :at) ON CONFLICT (request_id, person)"
    " DO UPDATE SET selections = excluded.selections, updated_at = excluded.updated_at"
)
VOTE = Query(
    "INSERT INTO votes (request_id, person, voter, answers, at, sent_at, notes)"
    " SELECT :request_id, :person, :voter, :answers, :at, :sent_at, :notes"
    " WHERE EXISTS (SELECT 1 FROM requests WHERE request_id = :request_id"
    " AND status = 'waiting') ON CONFLICT (request_id, person) DO UPDATE SET"
    " voter = excluded.voter, answers = excluded.answers, at = excluded.at,"
    f" sent_at = excluded.sent_at, notes = excluded.notes WHERE {NEWER_CLICK}",
    postgres="SELECT o_outcome, o_request, o_messages, o_votes FROM askbridge_vote(:request_id,"
    " :person, :voter, :answers, :at, :sent_at, :notes, :quorum, :event_locks, :genesis,"
    " :vote_data, :vote_head, :vote_tail, :answers_json, :end_data, :end_before, :end_after,"
    " :end_tail, :delivery_id, :channel, :payload)",
)
"""SQLite: the vote, if the request waits and no newer click's vote is recorded. PostgreSQL:
the whole click in one statement (schema version 9)."""
# The request's votes, the new one among them, and the head of its audit chain, in one read.
COUNT_VOTES = Query(
    "SELECT (SELECT hash FROM events WHERE request_id = :request_id ORDER BY seq DESC LIMIT 1),"
    f" {VOTE_COLUMNS} FROM votes WHERE request_id = :request_id ORDER BY at"
)
COUNTED = Query(
    "UPDATE requests SET revision = revision + 1 WHERE request_id = :request_id"
    f" RETURNING {REQUEST_COLUMNS}"
)
END = Query(
    "UPDATE requests SET status = :status, ended_at = :at, answers = :answers,"
    " ended_by = :by, revision = revision + 1"
    f" WHERE request_id = :request_id AND status = 'waiting' RETURNING {REQUEST_COLUMNS}"
)
DELIVERY = Query(
    "INSERT INTO deliveries (delivery_id, request_id, url, created_at, next_at)"
    " VALUES (:delivery_id, :request_id, :url, :at, :at) ON CONFLICT DO NOTHING"
)

# --- deadlines --------------------------------------------------------------------------

# The deadline queries name their partial indexes: without statistics SQLite's planner
# takes the status index and reads every waiting request instead.
NEXT_DEADLINE = Query(
    "SELECT min(at) FROM ("
    " SELECT min(expires_at) AS at FROM requests INDEXED BY requests_waiting_expiry"
    " WHERE status = 'waiting' AND expires_at IS NOT NULL"
    " UNION ALL SELECT min(remind_at) FROM requests INDEXED BY requests_waiting_remind"
    " WHERE status = 'waiting' AND reminded_at IS NULL AND remind_at IS NOT NULL"
    " UNION ALL SELECT min(escalate_at) FROM requests INDEXED BY requests_waiting_escalate"
    " WHERE status = 'waiting' AND escalate_at IS NOT NULL) AS due"
)
EXPIRED = Query(
    "SELECT request_id FROM requests INDEXED BY requests_waiting_expiry"
    " WHERE status = 'waiting' AND expires_at <= :now ORDER BY expires_at LIMIT :limit"
)
DUE_REMINDERS = Query(
    "SELECT request_id FROM requests INDEXED BY requests_waiting_remind"
    " WHERE status = 'waiting' AND reminded_at IS NULL AND remind_at <= :now"
    " ORDER BY remind_at LIMIT :limit"
)
DUE_ESCALATIONS = Query(
    "SELECT request_id FROM requests INDEXED BY requests_waiting_escalate"
    " WHERE status = 'waiting' AND escalate_at <= :now ORDER BY escalate_at LIMIT :limit"
)
MARK_REMINDED = Query(
    "UPDATE requests SET reminded_at = :at, pings = pings + 1, revision = revision + 1"
    " WHERE request_id = :request_id AND status = 'waiting' AND reminded_at IS NULL"
)
ESCALATION = Query(
    "SELECT policy, targets FROM requests WHERE request_id = :request_id"
    " AND status = 'waiting' AND escalation_step = :step FOR UPDATE"
)
ESCALATE = Query(
    "UPDATE requests SET escalation_step = :step + 1, escalated_at = :at,"
    " escalate_at = :next_at, revision = revision + 1, pings = pings + :mention,"
    " targets = coalesce(:targets, targets),"
    " posted_at = CASE WHEN CAST(:targets AS text) IS NULL THEN posted_at END"
    " WHERE request_id = :request_id AND status = 'waiting' AND escalation_step = :step"
)

# --- rendering --------------------------------------------------------------------------

# A request that changed without ever being posted has nothing to show it.
UNSHOWN = Query(
    "UPDATE requests INDEXED BY requests_unrendered SET rendered = revision"
    " WHERE rendered < revision AND NOT EXISTS"
    " (SELECT 1 FROM messages m WHERE m.request_id = requests.request_id)",
    postgres=None,
)
# Only the requests with a stale message, from their index: a full scan of the messages took
# 9 ms per 20,000 on SQLite's event loop thread, every sweep.
UNRENDERED = Query(
    "SELECT m.request_id, m.platform, m.channel, m.message_id, m.data, m.target"
    " FROM requests r INDEXED BY requests_unrendered"
    " JOIN messages m ON m.request_id = r.request_id"
    " WHERE r.rendered < r.revision AND m.rendered_revision < r.revision"
    " AND (CAST(:now AS double precision) IS NULL"
    " OR m.claimed_until IS NULL OR m.claimed_until <= :now)"
)
# The share lock holds back votes until the request is read with its revision.
REVISION_SHARED = Query("SELECT revision FROM requests WHERE request_id = :request_id FOR SHARE")
# Not a share lock: the request's `rendered` may be written next, and two renders of its
# messages that both held a share lock would deadlock on that.
REVISION = Query("SELECT revision FROM requests WHERE request_id = :request_id FOR NO KEY UPDATE")
_MESSAGE = (
    "request_id = :request_id AND platform = :platform AND channel = :channel"
    " AND message_id = :message_id"
)
CLAIM_MESSAGE = Query(
    "UPDATE messages SET claimed_by = :owner, claimed_until = :until"
    f" WHERE {_MESSAGE} AND (claimed_by IS NULL OR claimed_by = :owner"
    " OR claimed_until <= :now) AND rendered_revision < :revision"
)
RENDERED = Query(
    "UPDATE messages SET rendered_status = :status,"
    " rendered_revision = greatest(rendered_revision, :revision),"
    " pinged = greatest(pinged, :pings), claimed_by = :keeper, claimed_until = :until"
    f" WHERE {_MESSAGE} AND claimed_by = :owner"
)
SHOWN = Query(
    "UPDATE requests SET rendered = coalesce((SELECT min(rendered_revision) FROM messages"
    " WHERE request_id = :request_id), revision)"
    " WHERE request_id = :request_id AND rendered < revision"
)
PINGS = Query(
    "SELECT r.pings, m.pinged FROM messages m JOIN requests r ON r.request_id = m.request_id"
    f" WHERE m.{_MESSAGE.replace(' AND ', ' AND m.')}"
)
RENEW_CLAIMS = Query("UPDATE messages SET claimed_until = :until WHERE claimed_by = :owner")
RELEASE_CLAIMS = Query(
    "UPDATE messages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = :owner"
)

# --- audit ------------------------------------------------------------------------------

# PostgreSQL: a lock per request (taken last, after any row lock) keeps two transactions from
# both chaining onto the same previous event. SQLite's writers are serialised already.
CHAIN_LOCK = Query(
    None,
    postgres="SELECT pg_advisory_xact_lock("
    "hashtextextended(current_schema() || ':' || :request_id, :seed))",
)
CHAIN_HEAD = Query(
    "SELECT hash FROM events WHERE request_id = :request_id ORDER BY seq DESC LIMIT 1"
)
EVENT_LOCKS = 0x61736B65
"""The seed of those per-request locks (`askbridge_vote` takes them too)."""
EVENT_FIELDS = ("request_id", "at", "kind", "actor", "data", "prev", "hash")
"""An event's parameters in ADD_EVENTS, each numbered by the event (`at_0`, `at_1`)."""
ADD_EVENTS = {
    count: Query(
        "INSERT INTO events (request_id, at, kind, actor, data, prev_hash, hash) VALUES "
        + ", ".join(
            "(" + ", ".join(f":{name}_{index}" for name in EVENT_FIELDS) + ")"
            for index in range(count)
        )
    )
    for count in (1, 2)
}
"""Events appended in one statement, by how many: a deciding vote writes two."""
_EVENTS = (
    f"SELECT {EVENT_COLUMNS} FROM events WHERE at >= :since AND seq > :after"
    " AND (CAST(:until AS double precision) IS NULL OR at < :until)"
)
EVENTS = {
    False: Query(f"{_EVENTS} ORDER BY seq LIMIT :limit"),
    True: Query(f"{_EVENTS} AND request_id = :request_id ORDER BY seq LIMIT :limit"),
}
"""Audit events, of every request or (True) of one."""
UNCHAINED = Query(f"SELECT {EVENT_COLUMNS} FROM events WHERE hash IS NULL ORDER BY seq")
CHAINED_BEFORE = Query(
    "SELECT hash FROM events WHERE request_id = :request_id AND hash IS NOT NULL"
    " AND seq < :seq ORDER BY seq DESC LIMIT 1"
)
CHAIN = Query("UPDATE events SET prev_hash = :prev, hash = :hash WHERE seq = :seq")
ADD_SECRET = Query(
    "INSERT INTO secrets (name, value) VALUES (:name, :value) ON CONFLICT DO NOTHING"
)
SECRET = Query("SELECT value FROM secrets WHERE name = :name")

# --- webhooks ---------------------------------------------------------------------------

CLAIM_DELIVERIES = Query(
    "UPDATE deliveries SET claimed_by = :owner, claimed_until = :lease_until"
    " WHERE delivery_id IN (SELECT delivery_id FROM deliveries"
    " WHERE done_at IS NULL AND next_at <= :now"
    " AND (claimed_until IS NULL OR claimed_until <= :now)"
    " ORDER BY next_at LIMIT :limit FOR UPDATE SKIP LOCKED)"
    f" RETURNING {DELIVERY_COLUMNS}"
)
RECORD_ATTEMPT = Query(
    "UPDATE deliveries SET attempts = attempts + 1, claimed_by = NULL, claimed_until = NULL,"
    " next_at = coalesce(:next_at, next_at), done_at = :done_at, result = :result"
    " WHERE delivery_id = :delivery_id AND claimed_by = :owner AND done_at IS NULL"
)
NEXT_DELIVERY = Query(
    "SELECT min(greatest(next_at, coalesce(claimed_until, 0))) FROM deliveries"
    " WHERE done_at IS NULL"
)
