"""Versioned SQLite schema. Append a new version; never edit one that has shipped.

Timestamps are epoch seconds and JSON is TEXT, as in the PostgreSQL schema
(`core/store/postgres_schema.py`), so both stores share `core/store/codec.py`.
"""

from __future__ import annotations

MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """
            CREATE TABLE requests (
                request_id  TEXT PRIMARY KEY,
                questions   TEXT NOT NULL,
                targets     TEXT NOT NULL,
                context     TEXT,
                status      TEXT NOT NULL,
                created_at  REAL NOT NULL,
                expires_at  REAL,
                ended_at    REAL,
                answers     TEXT,
                ended_by    TEXT
            )
            """,
            # The expiry loop and the waiting list only ever look at waiting requests.
            "CREATE INDEX requests_waiting_expiry ON requests (expires_at)"
            " WHERE status = 'waiting'",
            "CREATE INDEX requests_status_created ON requests (status, created_at)",
            """
            CREATE TABLE messages (
                request_id      TEXT NOT NULL REFERENCES requests (request_id),
                platform        TEXT NOT NULL,
                channel         TEXT NOT NULL,
                message_id      TEXT NOT NULL,
                data            TEXT NOT NULL,
                posted_at       REAL NOT NULL,
                rendered_status TEXT NOT NULL,
                PRIMARY KEY (request_id, platform, channel, message_id)
            )
            """,
            "CREATE INDEX messages_unrendered ON messages (request_id)"
            " WHERE rendered_status = 'waiting'",
            """
            CREATE TABLE drafts (
                request_id  TEXT NOT NULL REFERENCES requests (request_id),
                person      TEXT NOT NULL,
                selections  TEXT NOT NULL,
                updated_at  REAL NOT NULL,
                PRIMARY KEY (request_id, person)
            )
            """,
            """
            CREATE TABLE events (
                seq         INTEGER PRIMARY KEY AUTOINCREMENT,
                request_id  TEXT NOT NULL,
                at          REAL NOT NULL,
                kind        TEXT NOT NULL,
                actor       TEXT,
                data        TEXT NOT NULL
            )
            """,
            "CREATE INDEX events_request ON events (request_id, seq)",
        ),
    ),
    (
        2,
        (
            # Approval policy (answerers, quorum, default answers) as JSON, and reminders.
            "ALTER TABLE requests ADD COLUMN policy TEXT",
            "ALTER TABLE requests ADD COLUMN remind_at REAL",
            "ALTER TABLE requests ADD COLUMN reminded_at REAL",
            "CREATE INDEX requests_waiting_remind ON requests (remind_at)"
            " WHERE status = 'waiting' AND reminded_at IS NULL",
            """
            CREATE TABLE votes (
                request_id  TEXT NOT NULL REFERENCES requests (request_id),
                person      TEXT NOT NULL,
                voter       TEXT NOT NULL,
                answers     TEXT NOT NULL,
                at          REAL NOT NULL,
                PRIMARY KEY (request_id, person)
            )
            """,
            "CREATE INDEX events_at ON events (at)",
        ),
    ),
    (
        3,
        (
            # The platform's time of the click a vote came from: a replayed or redelivered
            # click is never newer than the vote it would overwrite.
            "ALTER TABLE votes ADD COLUMN sent_at REAL",
        ),
    ),
    (
        4,
        (
            # Random secrets the service makes once and every replica shares (the web page's
            # form key), so that nothing signed is invalidated by a restart.
            "CREATE TABLE secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
    (
        5,
        (
            # A voter's notes on their answers, as JSON: header -> note.
            "ALTER TABLE votes ADD COLUMN notes TEXT",
        ),
    ),
    (
        6,
        (
            # When every target of a request had its message recorded. NULL while posting is
            # unfinished: the platform failed, or the process died between storing the request
            # and recording its messages; such a request is posted again. Requests stored
            # before this version were posted when they were created (or were discarded).
            "ALTER TABLE requests ADD COLUMN posted_at REAL",
            "UPDATE requests SET posted_at = created_at",
            "CREATE INDEX requests_unposted ON requests (created_at) WHERE posted_at IS NULL",
            # Which of the request's targets a message was posted for (an index into targets).
            "ALTER TABLE messages ADD COLUMN target INTEGER",
        ),
    ),
    (
        7,
        (
            # The audit log's hash chain (core/audit_log.py): each event's hash and the hash of
            # its request's previous event. Events stored before this version are chained
            # when it is applied, in order (see `chain_unchained`).
            "ALTER TABLE events ADD COLUMN prev_hash TEXT",
            "ALTER TABLE events ADD COLUMN hash TEXT",
            "CREATE INDEX events_unchained ON events (seq) WHERE hash IS NULL",
            # The webhook outbox: one delivery per ended request that has a callback_url,
            # written in the transaction that ends it; `claimed_by` holds it until
            # `claimed_until`, so one process at a time attempts it, and a process that dies
            # leaves it to another once its lease has run out.
            """
            CREATE TABLE deliveries (
                delivery_id   TEXT PRIMARY KEY,
                request_id    TEXT NOT NULL UNIQUE,
                url           TEXT NOT NULL,
                created_at    REAL NOT NULL,
                next_at       REAL NOT NULL,
                attempts      INTEGER NOT NULL DEFAULT 0,
                claimed_by    TEXT,
                claimed_until REAL,
                done_at       REAL,
                result        TEXT
            )
            """,
            "CREATE INDEX deliveries_open ON deliveries (next_at) WHERE done_at IS NULL",
        ),
    ),
    (
        8,
        (
            # Escalation ladders (core/escalation.py): how many steps were taken (each is
            # claimed once by moving this counter from its value), when the next one is due
            # (quiet hours counted) and when the last one was taken.
            "ALTER TABLE requests ADD COLUMN escalation_step INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE requests ADD COLUMN escalate_at REAL",
            "ALTER TABLE requests ADD COLUMN escalated_at REAL",
            "CREATE INDEX requests_waiting_escalate ON requests (escalate_at)"
            " WHERE status = 'waiting'",
        ),
    ),
    (
        9,
        (
            # Keeping messages in step across replicas. Every change a message shows (a vote,
            # an ending) adds one to the request's `revision`; a message records the revision
            # it last showed, and `claimed_by` holds the right to update it until
            # `claimed_until`, so one process at a time renders it, and a process that dies
            # leaves it to another once its lease has run out.
            "ALTER TABLE requests ADD COLUMN revision INTEGER NOT NULL DEFAULT 0",
            "UPDATE requests SET revision = 1 WHERE status <> 'waiting'",
            "ALTER TABLE messages ADD COLUMN rendered_revision INTEGER NOT NULL DEFAULT 0",
            "UPDATE messages SET rendered_revision = 1 WHERE rendered_status <> 'waiting'",
            "ALTER TABLE messages ADD COLUMN claimed_by TEXT",
            "ALTER TABLE messages ADD COLUMN claimed_until REAL",
            "CREATE INDEX messages_claimed ON messages (claimed_by) WHERE claimed_by IS NOT NULL",
        ),
    ),
    (
        10,
        (
            # Pings (reminders, escalation steps that mention) go out with the message updates
            # and their claims: a request counts the pings it asked for, a message those it
            # carried, so a replica that dies before pinging leaves the ping to another.
            "ALTER TABLE requests ADD COLUMN pings INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE messages ADD COLUMN pinged INTEGER NOT NULL DEFAULT 0",
        ),
    ),
    (
        11,
        (
            # The deadline indexes hold only the requests that have the deadline: most have
            # none, and ending a request then writes no page of these three indexes (a vote's
            # commit went from 11 pages to 8).
            "DROP INDEX requests_waiting_expiry",
            "CREATE INDEX requests_waiting_expiry ON requests (expires_at)"
            " WHERE status = 'waiting' AND expires_at IS NOT NULL",
            "DROP INDEX requests_waiting_remind",
            "CREATE INDEX requests_waiting_remind ON requests (remind_at)"
            " WHERE status = 'waiting' AND reminded_at IS NULL AND remind_at IS NOT NULL",
            "DROP INDEX requests_waiting_escalate",
            "CREATE INDEX requests_waiting_escalate ON requests (escalate_at)"
            " WHERE status = 'waiting' AND escalate_at IS NOT NULL",
        ),
    ),
    (
        12,
        (
            # The revision every message of a request shows (the least of theirs; the
            # request's own when it has none), so that looking for stale messages reads only the
            # requests that have one, through this index, instead of every message ever posted.
            "ALTER TABLE requests ADD COLUMN rendered INTEGER NOT NULL DEFAULT 0",
            "UPDATE requests SET rendered = coalesce((SELECT min(m.rendered_revision)"
            " FROM messages m WHERE m.request_id = requests.request_id), revision)",
            "CREATE INDEX requests_unrendered ON requests (request_id) WHERE rendered < revision",
        ),
    ),
    (
        13,
        (
            # The tool call a request asks to approve, as people see it (core/tool_view.py):
            # the diff, the command, the arguments, computed once when the request is made.
            "ALTER TABLE requests ADD COLUMN tool TEXT",
        ),
    ),
    (
        14,
        (
            # Clicks seen, by who and when the platform says they clicked, so that a click
            # delivered again (a retry, another replica) is answered once; a click whose vote
            # was recorded is known by its vote's sent_at. Forgotten after a while (`prune`).
            """
            CREATE TABLE clicks (
                person  TEXT NOT NULL,
                sent_at REAL NOT NULL,
                at      REAL NOT NULL,
                PRIMARY KEY (person, sent_at)
            )
            """,
            "CREATE INDEX clicks_at ON clicks (at)",
        ),
    ),
    (
        15,
        (
            # A click may be known by the id of its delivery (a Slack form's trigger_id, the
            # web page's one-use form id) besides or instead of its platform's time; each is
            # unique. SQLite changes a primary key only by making the table again.
            """
            CREATE TABLE clicks_15 (
                person   TEXT NOT NULL,
                sent_at  REAL,
                click_id TEXT,
                at       REAL NOT NULL
            )
            """,
            "INSERT INTO clicks_15 (person, sent_at, at) SELECT person, sent_at, at FROM clicks",
            "DROP TABLE clicks",
            "ALTER TABLE clicks_15 RENAME TO clicks",
            "CREATE UNIQUE INDEX clicks_sent ON clicks (person, sent_at)",
            "CREATE UNIQUE INDEX clicks_id ON clicks (click_id)",
            "CREATE INDEX clicks_at ON clicks (at)",
        ),
    ),
    (
        16,
        (
            # The typed form a request asks a person to fill in (core/forms.py), as JSON; NULL
            # for questions. A form's values are kept as answers, and a form a person says no
            # to ends with the status 'declined' (its ended_by: who declined).
            "ALTER TABLE requests ADD COLUMN form TEXT",
        ),
    ),
)
