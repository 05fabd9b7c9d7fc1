"""Versioned PostgreSQL schema. Append a new version; never edit one that has shipped.

The same tables as the SQLite schema, in PostgreSQL's types: epoch seconds as double
precision, JSON as text (the shared codec reads both), an identity column for event order.
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
                created_at  DOUBLE PRECISION NOT NULL,
                expires_at  DOUBLE PRECISION,
                ended_at    DOUBLE PRECISION,
                answers     TEXT,
                ended_by    TEXT,
                policy      TEXT,
                remind_at   DOUBLE PRECISION,
                reminded_at DOUBLE PRECISION
            )
            """,
            "CREATE INDEX requests_waiting_expiry ON requests (expires_at)"
            " WHERE status = 'waiting'",
            "CREATE INDEX requests_waiting_remind ON requests (remind_at)"
            " WHERE status = 'waiting' AND reminded_at IS NULL",
            "CREATE INDEX requests_status_created ON requests (status, created_at)",
            """
            CREATE TABLE messages (
                seq             BIGINT GENERATED ALWAYS AS IDENTITY,
                request_id      TEXT NOT NULL REFERENCES requests (request_id),
                platform        TEXT NOT NULL,
                channel         TEXT NOT NULL,
                message_id      TEXT NOT NULL,
                data            TEXT NOT NULL,
                posted_at       DOUBLE PRECISION NOT NULL,
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
                updated_at  DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (request_id, person)
            )
            """,
            """
            CREATE TABLE votes (
                request_id  TEXT NOT NULL REFERENCES requests (request_id),
                person      TEXT NOT NULL,
                voter       TEXT NOT NULL,
                answers     TEXT NOT NULL,
                at          DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (request_id, person)
            )
            """,
            """
            CREATE TABLE events (
                seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                request_id  TEXT NOT NULL,
                at          DOUBLE PRECISION NOT NULL,
                kind        TEXT NOT NULL,
                actor       TEXT,
                data        TEXT NOT NULL
            )
            """,
            "CREATE INDEX events_request ON events (request_id, seq)",
            "CREATE INDEX events_at ON events (at)",
        ),
    ),
    (
        2,
        (
            # The platform's time of the click a vote came from: a replayed or redelivered
            # click is never newer than the vote it would overwrite.
            "ALTER TABLE votes ADD COLUMN sent_at DOUBLE PRECISION",
        ),
    ),
    (
        3,
        (
            # Random secrets the service makes once and every replica shares (the web page's
            # form key), so that nothing signed is invalidated by a restart.
            "CREATE TABLE secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
    (
        4,
        (
            # A voter's notes on their answers, as JSON: header -> note.
            "ALTER TABLE votes ADD COLUMN notes TEXT",
        ),
    ),
    (
        5,
        (
            # When every target of a request had its message recorded. NULL while posting is
            # unfinished: the platform failed, or the process died between storing the request
            # and recording its messages; such a request is posted again. Requests stored
            # before this version were posted when they were created (or were discarded).
            "ALTER TABLE requests ADD COLUMN posted_at DOUBLE PRECISION",
            "UPDATE requests SET posted_at = created_at",
            "CREATE INDEX requests_unposted ON requests (created_at) WHERE posted_at IS NULL",
            # Which of the request's targets a message was posted for (an index into targets).
            "ALTER TABLE messages ADD COLUMN target INTEGER",
        ),
    ),
    (
        6,
        (
            # The audit log's hash chain (core/audit_log.py): each event's hash and the hash of
            # its request's previous event. Events stored before this version are chained
            # when it is applied, in order (see `chain_unchained`).
            "ALTER TABLE events ADD COLUMN prev_hash TEXT",
            "ALTER TABLE events ADD COLUMN hash TEXT",
            "CREATE INDEX events_unchained ON events (seq) WHERE hash IS NULL",
            # The webhook outbox: one delivery per ended request that has a callback_url,
            # written in the transaction that ends it; claimed with FOR UPDATE SKIP LOCKED
            # and held by `claimed_by` until `claimed_until`, so one replica at a time
            # attempts it, and a replica that dies leaves it to another once its lease ends.
            """
            CREATE TABLE deliveries (
                delivery_id   TEXT PRIMARY KEY,
                request_id    TEXT NOT NULL UNIQUE,
                url           TEXT NOT NULL,
                created_at    DOUBLE PRECISION NOT NULL,
                next_at       DOUBLE PRECISION NOT NULL,
                attempts      INTEGER NOT NULL DEFAULT 0,
                claimed_by    TEXT,
                claimed_until DOUBLE PRECISION,
                done_at       DOUBLE PRECISION,
                result        TEXT
            )
            """,
            "CREATE INDEX deliveries_open ON deliveries (next_at) WHERE done_at IS NULL",
        ),
    ),
    (
        7,
        (
            # Escalation ladders (core/escalation.py): how many steps were taken (each is
            # claimed once by moving this counter from its value), when the next one is due
            # (quiet hours counted) and when the last one was taken.
            "ALTER TABLE requests ADD COLUMN escalation_step INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE requests ADD COLUMN escalate_at DOUBLE PRECISION",
            "ALTER TABLE requests ADD COLUMN escalated_at DOUBLE PRECISION",
            "CREATE INDEX requests_waiting_escalate ON requests (escalate_at)"
            " WHERE status = 'waiting'",
        ),
    ),
    (
        8,
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
            "ALTER TABLE messages ADD COLUMN claimed_until DOUBLE PRECISION",
            "CREATE INDEX messages_claimed ON messages (claimed_by) WHERE claimed_by IS NOT NULL",
        ),
    ),
    (
        9,
        (
            # A vote in one statement (one round trip): still waiting? then the vote, its
            # event on the request's hash chain, the tally and, when it decides, the ending,
            # its event, the webhook outbox row and the NOTIFY; it returns the request as it
            # is after. Event hashes are finished here from the previous hash, found under the
            # same per-request lock as elsewhere: the caller hashes each event's canonical
            # JSON up to the previous hash (head) and after it (tail), see
            # `audit_log.link_parts`; an ending's head comes cut where the subject digest
            # goes, which the function takes from the policy. Each change a message shows
            # adds one to the request's revision, as elsewhere. Epoch seconds go out as JSON
            # numbers, exactly.
            """
            CREATE OR REPLACE FUNCTION askbridge_vote(
                p_request_id TEXT, p_person TEXT, p_voter TEXT, p_answers TEXT,
                p_at DOUBLE PRECISION, p_sent_at DOUBLE PRECISION, p_notes TEXT,
                p_quorum INTEGER, p_lock_seed BIGINT, p_genesis TEXT,
                p_vote_data TEXT, p_vote_head BYTEA, p_vote_tail BYTEA,
                p_ended_answers TEXT, p_end_data TEXT, p_end_before BYTEA, p_end_after BYTEA,
                p_end_tail BYTEA,
                p_delivery_id TEXT, p_channel TEXT, p_notice TEXT,
                OUT o_outcome TEXT, OUT o_request JSON, OUT o_messages JSON, OUT o_votes JSON
            ) LANGUAGE plpgsql SET extra_float_digits = 1 AS $body$
            DECLARE
                v_status TEXT;
                v_written INTEGER;
                v_agreeing BIGINT;
                v_prev TEXT;
                v_hash TEXT;
                v_policy TEXT;
                v_digest TEXT;
                v_url TEXT;
            BEGIN
                o_outcome := 'closed';
                SELECT status INTO v_status FROM requests
                    WHERE request_id = p_request_id FOR UPDATE;
                IF v_status = 'waiting' THEN
                    INSERT INTO votes (request_id, person, voter, answers, at, sent_at, notes)
                        VALUES (p_request_id, p_person, p_voter, p_answers, p_at, p_sent_at,
                                p_notes)
                        ON CONFLICT (request_id, person) DO UPDATE SET voter = excluded.voter,
                            answers = excluded.answers, at = excluded.at,
                            sent_at = excluded.sent_at, notes = excluded.notes
                        WHERE excluded.sent_at IS NULL OR votes.sent_at IS NULL
                            OR excluded.sent_at > votes.sent_at;
                    GET DIAGNOSTICS v_written = ROW_COUNT;
                    o_outcome := CASE WHEN v_written = 0 THEN 'replayed' ELSE 'counted' END;
                END IF;
                IF o_outcome = 'counted' THEN
                    PERFORM pg_advisory_xact_lock(
                        hashtextextended(current_schema() || ':' || p_request_id, p_lock_seed));
                    SELECT hash INTO v_prev FROM events WHERE request_id = p_request_id
                        ORDER BY seq DESC LIMIT 1;
                    v_prev := coalesce(nullif(v_prev, ''), p_genesis);
                    v_hash := encode(
                        sha256(p_vote_head || convert_to(v_prev, 'UTF8') || p_vote_tail), 'hex');
                    INSERT INTO events (request_id, at, kind, actor, data, prev_hash, hash)
                        VALUES (p_request_id, p_at, 'vote', p_voter, p_vote_data, v_prev, v_hash);
                    UPDATE requests SET revision = revision + 1
                        WHERE request_id = p_request_id;
                    SELECT count(*) INTO v_agreeing FROM votes
                        WHERE request_id = p_request_id AND answers = p_answers;
                    IF v_agreeing >= p_quorum THEN
                        o_outcome := 'decided';
                        UPDATE requests SET status = 'answered', ended_at = p_at,
                                answers = p_ended_answers, ended_by = p_voter,
                                revision = revision + 1
                            WHERE request_id = p_request_id AND status = 'waiting'
                            RETURNING policy INTO v_policy;
                        -- The digest of what was approved joins the ending's data, after
                        -- its answers (codec.ending_data); it is hex, so it needs no escaping.
                        v_digest := v_policy::json ->> 'subject_sha256';
                        IF v_digest IS NOT NULL AND v_digest !~ '^[0-9a-f]{64}$' THEN
                            RAISE EXCEPTION 'subject_sha256 of % is not a SHA-256', p_request_id;
                        END IF;
                        v_prev := v_hash;
                        v_hash := encode(sha256(
                            p_end_before
                            || CASE WHEN v_digest IS NULL THEN ''::bytea ELSE convert_to(
                                   ',"subject_sha256":"' || v_digest || '"', 'UTF8') END
                            || p_end_after || convert_to(v_prev, 'UTF8') || p_end_tail), 'hex');
                        INSERT INTO events (request_id, at, kind, actor, data, prev_hash, hash)
                            VALUES (p_request_id, p_at, 'answered', p_voter,
                                    CASE WHEN v_digest IS NULL THEN p_end_data
                                    ELSE left(p_end_data, -1) || ', "subject_sha256": "'
                                         || v_digest || '"}' END,
                                    v_prev, v_hash);
                        DELETE FROM drafts WHERE request_id = p_request_id;
                        v_url := v_policy::json ->> 'callback_url';
                        IF v_url IS NOT NULL THEN
                            INSERT INTO deliveries (delivery_id, request_id, url, created_at,
                                                    next_at)
                                VALUES (p_delivery_id, p_request_id, v_url, p_at, p_at)
                                ON CONFLICT DO NOTHING;
                        END IF;
                    END IF;
                    PERFORM pg_notify(p_channel, p_notice);
                END IF;
                SELECT row_to_json(r) INTO o_request FROM requests r
                    WHERE r.request_id = p_request_id;
                SELECT json_agg(json_build_array(platform, channel, message_id, data, target)
                                ORDER BY posted_at, seq)
                    INTO o_messages FROM messages WHERE request_id = p_request_id;
                SELECT json_agg(json_build_array(voter, answers, at, notes) ORDER BY at)
                    INTO o_votes FROM votes WHERE request_id = p_request_id;
            END
            $body$
            """,
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
        12,
        (
            # `askbridge_vote` (version 9) with one update of the request's row where it made
            # two when a vote decides (the revision for the vote, then the ending), and the
            # request it returns taken from that update rather than read again.
            """
            CREATE OR REPLACE FUNCTION askbridge_vote(
                p_request_id TEXT, p_person TEXT, p_voter TEXT, p_answers TEXT,
                p_at DOUBLE PRECISION, p_sent_at DOUBLE PRECISION, p_notes TEXT,
                p_quorum INTEGER, p_lock_seed BIGINT, p_genesis TEXT,
                p_vote_data TEXT, p_vote_head BYTEA, p_vote_tail BYTEA,
                p_ended_answers TEXT, p_end_data TEXT, p_end_before BYTEA, p_end_after BYTEA,
                p_end_tail BYTEA,
                p_delivery_id TEXT, p_channel TEXT, p_notice TEXT,
                OUT o_outcome TEXT, OUT o_request JSON, OUT o_messages JSON, OUT o_votes JSON
            ) LANGUAGE plpgsql SET extra_float_digits = 1 AS $body$
            DECLARE
                v_status TEXT;
                v_written INTEGER;
                v_agreeing BIGINT;
                v_prev TEXT;
                v_hash TEXT;
                v_policy TEXT;
                v_digest TEXT;
                v_url TEXT;
                v_row requests;
            BEGIN
                o_outcome := 'closed';
                SELECT status INTO v_status FROM requests
                    WHERE request_id = p_request_id FOR UPDATE;
                IF v_status = 'waiting' THEN
                    INSERT INTO votes (request_id, person, voter, answers, at, sent_at, notes)
                        VALUES (p_request_id, p_person, p_voter, p_answers, p_at, p_sent_at,
                                p_notes)
                        ON CONFLICT (request_id, person) DO UPDATE SET voter = excluded.voter,
                            answers = excluded.answers, at = excluded.at,
                            sent_at = excluded.sent_at, notes = excluded.notes
                        WHERE excluded.sent_at IS NULL OR votes.sent_at IS NULL
                            OR excluded.sent_at > votes.sent_at;
                    GET DIAGNOSTICS v_written = ROW_COUNT;
                    o_outcome := CASE WHEN v_written = 0 THEN 'replayed' ELSE 'counted' END;
                END IF;
                IF o_outcome = 'counted' THEN
                    PERFORM pg_advisory_xact_lock(
                        hashtextextended(current_schema() || ':' || p_request_id, p_lock_seed));
                    SELECT hash INTO v_prev FROM events WHERE request_id = p_request_id
                        ORDER BY seq DESC LIMIT 1;
                    v_prev := coalesce(nullif(v_prev, ''), p_genesis);
                    v_hash := encode(
                        sha256(p_vote_head || convert_to(v_prev, 'UTF8') || p_vote_tail), 'hex');
                    INSERT INTO events (request_id, at, kind, actor, data, prev_hash, hash)
                        VALUES (p_request_id, p_at, 'vote', p_voter, p_vote_data, v_prev, v_hash);
                    SELECT count(*) INTO v_agreeing FROM votes
                        WHERE request_id = p_request_id AND answers = p_answers;
                    IF v_agreeing < p_quorum THEN
                        UPDATE requests SET revision = revision + 1
                            WHERE request_id = p_request_id RETURNING * INTO v_row;
                    ELSE
                        o_outcome := 'decided';
                        -- The vote's change and the ending's, in one update of the row.
                        UPDATE requests SET status = 'answered', ended_at = p_at,
                                answers = p_ended_answers, ended_by = p_voter,
                                revision = revision + 2
                            WHERE request_id = p_request_id RETURNING * INTO v_row;
                        v_policy := v_row.policy;
                        -- The digest of what was approved joins the ending's data, after
                        -- its answers (codec.ending_data); it is hex, so it needs no escaping.
                        v_digest := v_policy::json ->> 'subject_sha256';
                        IF v_digest IS NOT NULL AND v_digest !~ '^[0-9a-f]{64}$' THEN
                            RAISE EXCEPTION 'subject_sha256 of % is not a SHA-256', p_request_id;
                        END IF;
                        v_prev := v_hash;
                        v_hash := encode(sha256(
                            p_end_before
                            || CASE WHEN v_digest IS NULL THEN ''::bytea ELSE convert_to(
                                   ',"subject_sha256":"' || v_digest || '"', 'UTF8') END
                            || p_end_after || convert_to(v_prev, 'UTF8') || p_end_tail), 'hex');
                        INSERT INTO events (request_id, at, kind, actor, data, prev_hash, hash)
                            VALUES (p_request_id, p_at, 'answered', p_voter,
                                    CASE WHEN v_digest IS NULL THEN p_end_data
                                    ELSE left(p_end_data, -1) || ', "subject_sha256": "'
                                         || v_digest || '"}' END,
                                    v_prev, v_hash);
                        DELETE FROM drafts WHERE request_id = p_request_id;
                        v_url := v_policy::json ->> 'callback_url';
                        IF v_url IS NOT NULL THEN
                            INSERT INTO deliveries (delivery_id, request_id, url, created_at,
                                                    next_at)
                                VALUES (p_delivery_id, p_request_id, v_url, p_at, p_at)
                                ON CONFLICT DO NOTHING;
                        END IF;
                    END IF;
                    PERFORM pg_notify(p_channel, p_notice);
                    o_request := row_to_json(v_row);
                ELSE
                    SELECT row_to_json(r) INTO o_request FROM requests r
                        WHERE r.request_id = p_request_id;
                END IF;
                SELECT json_agg(json_build_array(platform, channel, message_id, data, target)
                                ORDER BY posted_at, seq)
                    INTO o_messages FROM messages WHERE request_id = p_request_id;
                SELECT json_agg(json_build_array(voter, answers, at, notes) ORDER BY at)
                    INTO o_votes FROM votes WHERE request_id = p_request_id;
            END
            $body$
            """,
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
                sent_at DOUBLE PRECISION NOT NULL,
                at      DOUBLE PRECISION NOT NULL,
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
            # unique.
            "ALTER TABLE clicks DROP CONSTRAINT clicks_pkey",
            "ALTER TABLE clicks ALTER COLUMN sent_at DROP NOT NULL",
            "ALTER TABLE clicks ADD COLUMN click_id TEXT",
            "CREATE UNIQUE INDEX clicks_sent ON clicks (person, sent_at)",
            "CREATE UNIQUE INDEX clicks_id ON clicks (click_id)",
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
