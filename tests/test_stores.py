"""Every store keeps the same promises; two instances on one database stand for two replicas."""

from __future__ import annotations

import asyncio
import copy
import sqlite3
from datetime import timedelta
from pathlib import Path

import aiohttp
import asyncpg

from askbridge.core.clock import ManualClock
from askbridge.core.models import MessageRef, Person, Policy, Request, Status, Target
from askbridge.core.questions import parse_questions
from askbridge.core.store import Store, open_store
from askbridge.core.store import migrations as sqlite_schema
from askbridge.core.store import postgres_schema as pg_schema
from askbridge.core.store.base import Click, Ending, Event, VoteOutcome
from askbridge.core.tool_view import ToolUse, tool_view
from tests.conftest import DATABASE, StartService
from tests.stores import database_url, postgres_schema
from tests.web_person import answer_on_web

NOW = ManualClock().now()
QUESTIONS = parse_questions(copy.deepcopy(DATABASE["questions"]))
ANSWERS = {"Database": "SQLite", "Features": "Logging"}
LEASE = timedelta(seconds=30)
CLICK_IDS = 15
"""The schema version that lets a click be known by its delivery's id."""


def request(request_id: str, **extra: object) -> Request:
    fields: dict[str, object] = {
        "request_id": request_id,
        "questions": QUESTIONS,
        "targets": (Target(platform="web"),),
        "created_at": NOW,
        **extra,
    }
    return Request.model_validate(fields)


def person(index: int) -> Person:
    return Person(platform="web", id=f"p{index}", name=f"P{index}")


async def test_create_is_idempotent_and_reads_back(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    policy = Policy(answerers=("web:P1",), quorum=2, timeout_answers=ANSWERS)
    stored, created = await one.create(request("r1", policy=policy, context="ctx"))
    again, created_again = await two.create(request("r1"))
    assert (created, created_again) == (True, False)
    assert again == stored
    assert stored.policy == policy
    assert stored.context == "ctx"
    assert stored.questions == QUESTIONS
    assert [r.request_id for r in await two.list_requests(Status.WAITING)] == ["r1"]
    assert await one.get("missing") is None


async def test_the_tool_call_shown_reads_back_and_stays_through_a_vote(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    use = ToolUse(name="Bash", input={"command": "make test\nmake lint"}, cwd="/repo")
    await one.create(request("r-tool", tool=tool_view(use)))
    stored = await two.get("r-tool")
    assert stored is not None
    assert stored.tool == tool_view(use)
    decided, outcome = await two.vote("r-tool", person(1), ANSWERS, 1, NOW)
    assert outcome is VoteOutcome.DECIDED
    assert decided.tool == tool_view(use)
    plain, _ = await one.create(request("r-plain"))
    assert plain.tool is None


async def test_one_winner_across_replicas(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    await one.create(request("r2"))
    results = await asyncio.gather(
        one.finish("r2", Ending(Status.ANSWERED, NOW, ANSWERS, person(1))),
        two.finish("r2", Ending(Status.CANCELLED, NOW, by=person(2))),
    )
    assert sorted(won for _, won in results) == [False, True]
    assert results[0][0].status == results[1][0].status


async def test_concurrent_votes_never_miss_the_quorum(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    await one.create(request("r3"))
    results = await asyncio.gather(
        *(
            (one if i % 2 else two).vote("r3", person(i), ANSWERS, 3, NOW + timedelta(seconds=i))
            for i in range(10)
        )
    )
    outcomes = [outcome for _, outcome in results]
    assert outcomes.count(VoteOutcome.DECIDED) == 1
    assert outcomes.count(VoteOutcome.COUNTED) == 2
    assert outcomes.count(VoteOutcome.CLOSED) == 7
    final = await one.get("r3")
    assert final is not None
    assert final.status is Status.ANSWERED
    assert len(final.votes) == 3


async def test_a_changed_vote_replaces_the_old_one(store_replicas: tuple[Store, Store]) -> None:
    one, _ = store_replicas
    await one.create(request("r4"))
    other = {"Database": "PostgreSQL", "Features": "Logging"}
    await one.vote("r4", person(1), other, 2, NOW)
    _, outcome = await one.vote("r4", person(1), ANSWERS, 2, NOW)
    assert outcome is VoteOutcome.COUNTED
    stored, outcome = await one.vote("r4", person(2), ANSWERS, 2, NOW)
    assert outcome is VoteOutcome.DECIDED
    assert stored.answers == ANSWERS
    assert [v.answers for v in stored.votes] == [ANSWERS, ANSWERS]


async def test_deadlines_and_a_single_reminder(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    assert await one.next_deadline() is None
    await one.create(
        request("r5", expires_at=NOW + timedelta(hours=1), remind_at=NOW + timedelta(minutes=5))
    )
    assert await two.next_deadline() == NOW + timedelta(minutes=5)
    assert await two.due_reminders(NOW) == []
    later = NOW + timedelta(minutes=6)
    assert await two.due_reminders(later) == ["r5"]
    claims = await asyncio.gather(one.mark_reminded("r5", later), two.mark_reminded("r5", later))
    assert sorted(claims) == [False, True]
    assert await one.next_deadline() == NOW + timedelta(hours=1)
    assert await one.expired(NOW + timedelta(hours=2)) == ["r5"]


async def test_drafts_messages_rendering_and_the_audit_trail(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    await one.create(request("r6"))
    message = MessageRef(platform="chat", channel="C1", message_id="7", data={"team": "T1"})
    await one.add_message("r6", message, NOW)
    await one.save_draft("r6", person(1), {0: (1,)}, NOW)
    assert await two.save_draft("r6", person(1), {1: (0, 2)}, NOW) == {0: (1,), 1: (0, 2)}
    assert (await two.get_with_draft("r6", person(2)))[1] == {}
    await two.finish("r6", Ending(Status.CANCELLED, NOW + timedelta(seconds=1), by=person(1)))
    [(stale, stale_message)] = await one.unrendered()
    assert stale == "r6"
    assert stale_message == message
    claim = await one.claim_message("r6", message, "one", NOW, NOW + LEASE)
    assert claim is not None
    assert claim.request.status is Status.CANCELLED
    assert await one.mark_rendered("r6", message, "one", claim, NOW + LEASE) is None
    assert await two.unrendered() == []
    events = await two.events("r6")
    assert [e.kind for e in events] == ["created", "posted", "cancelled"]
    assert events[2].actor == person(1)
    assert [e.kind for e in await one.events(since=NOW + timedelta(seconds=1))] == ["cancelled"]


async def test_a_discarded_request_leaves_only_its_audit(
    store_replicas: tuple[Store, Store],
) -> None:
    one, _ = store_replicas
    await one.create(request("r7"))
    await one.discard("r7", NOW, "platform down")
    assert await one.get("r7") is None
    assert [e.kind for e in await one.events("r7")] == ["created", "post_failed"]


async def test_listings_page_newest_first_and_count_what_is_left(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    # Created at the same instant: the id breaks the tie, so pages neither skip nor repeat.
    for name in ("p1", "p2", "p3", "p4", "p5"):
        await one.create(request(name))
    await one.create(request("p9", created_at=NOW - timedelta(seconds=1)))
    await one.finish("p3", Ending(Status.ANSWERED, NOW, ANSWERS, person(1)))

    async def page(older_than: str | None, status: Status | None = Status.WAITING) -> list[str]:
        return [r.request_id for r in await two.list_requests(status, 2, older_than)]

    assert await page(None) == ["p5", "p4"]
    assert await page("p4") == ["p2", "p1"]
    assert await page("p1") == ["p9"]
    assert await page("p9") == []
    # A page may start after a request that has ended since.
    assert await page("p3") == ["p2", "p1"]
    assert await page("p4", status=None) == ["p3", "p2"]
    assert await two.count_requests(Status.WAITING) == 5
    assert await two.count_requests(Status.WAITING, "p4") == 3
    assert await two.count_requests(Status.ANSWERED, "p4") == 1
    assert await two.count_requests(Status.WAITING, "p9") == 0
    # A position that does not exist lists nothing, rather than starting over.
    assert await page("missing") == []
    assert await two.count_requests(Status.WAITING, "missing") == 0


async def test_an_id_no_row_can_have_finds_nothing(store_replicas: tuple[Store, Store]) -> None:
    # PostgreSQL text holds no NUL; a query with one used to fail (a 500 from the API).
    one, _ = store_replicas
    assert await one.get("r\x00") is None
    assert await one.get_with_draft("r\x00", person(1)) == (None, {})
    assert await one.events("r\x00") == []
    assert await one.list_requests(Status.WAITING, 10, older_than="r\x00") == []
    assert await one.count_requests(Status.WAITING, older_than="r\x00") == 0


async def test_a_posting_left_unfinished_is_listed_until_it_is_marked_finished(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    await one.create(request("r8"))
    await one.create(request("r9"))
    message = MessageRef(platform="chat", channel="C1", message_id="8", target=0)
    await one.add_message("r8", message, NOW)
    assert sorted(r.request_id for r in await two.unposted()) == ["r8", "r9"]
    stored = await two.get("r8")
    assert stored is not None
    assert (stored.messages, stored.posted_at) == ((message,), None)
    await two.mark_posted("r8", NOW)
    assert [r.request_id for r in await one.unposted()] == ["r9"]
    posted = await one.get("r8")
    assert posted is not None
    assert posted.posted_at == NOW


async def test_one_task_or_replica_at_a_time_may_post_a_request(
    store_replicas: tuple[Store, Store], store_url: str
) -> None:
    one, two = store_replicas
    # One process owns a SQLite file: its other "replica" is the same process.
    other = one if store_url.startswith("sqlite") else two
    async with one.posting("r10") as mine:
        assert mine
        async with one.posting("r10") as again, other.posting("r10") as elsewhere:
            assert (again, elsewhere) == (False, False)
        async with other.posting("r11") as unrelated:
            assert unrelated
    async with other.posting("r10") as after:
        assert after


async def test_postgres_replicas_hear_each_others_changes(tmp_path: Path) -> None:
    async with database_url("postgres", tmp_path) as url:
        one, two = open_store(url), open_store(url)
        await one.open()
        await two.open()
        heard: asyncio.Queue[str] = asyncio.Queue()

        async def on_change(request_id: str) -> None:
            await heard.put(request_id)

        try:
            await two.listen(on_change)
            await one.create(request("r8"))
            assert await asyncio.wait_for(heard.get(), 10) == "r8"
            await one.vote("r8", person(1), ANSWERS, 1, NOW)
            assert await asyncio.wait_for(heard.get(), 10) == "r8"
            # A replica does not hear itself: its own waiters were woken directly.
            await two.finish("r8", Ending(Status.WITHDRAWN, NOW))
            await one.create(request("r9"))
            assert await asyncio.wait_for(heard.get(), 10) == "r9"
        finally:
            await one.close()
            await two.close()


async def test_deployments_in_two_schemas_do_not_hear_each_other() -> None:
    async with postgres_schema() as ours, postgres_schema() as theirs:
        listening, writer, stranger = open_store(ours), open_store(ours), open_store(theirs)
        for store in (listening, writer, stranger):
            await store.open()
        heard: asyncio.Queue[str] = asyncio.Queue()

        async def on_change(request_id: str) -> None:
            await heard.put(request_id)

        try:
            await listening.listen(on_change)
            await stranger.create(request("r_theirs"))
            # NOTIFYs reach a listener in commit order: had the stranger's been heard, it
            # would come first.
            await writer.create(request("r_ours"))
            assert await asyncio.wait_for(heard.get(), 10) == "r_ours"
        finally:
            for store in (listening, writer, stranger):
                await store.close()


async def test_two_servers_on_one_postgres_database(
    start_service: StartService, tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    """An agent long-polls one replica; the answer is given on the other."""
    async with database_url("postgres", tmp_path) as url:
        first = await start_service(database_url=url)
        second = await start_service(database_url=url)
        async with http.post(f"{first.url}/v1/questions", json=DATABASE) as response:
            assert response.status == 201
        poll = asyncio.create_task(http.get(f"{first.url}/v1/questions/ask_db?wait=30"))
        picks = {"Database": ["PostgreSQL"], "Features": ["Caching", "Metrics"]}
        status, _ = await answer_on_web(http, second.url, "ask_db", picks)
        assert status == 200
        async with await asyncio.wait_for(poll, 20) as response:
            final = await response.json()
        assert final["status"] == "answered"
        assert final["answers"] == {"Database": "PostgreSQL", "Features": "Caching, Metrics"}
        await first.stop()
        await second.stop()


async def test_status_alone_is_what_a_waiting_agent_reads(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    assert await one.status("r_status") is None
    await one.create(request("r_status"))
    assert await two.status("r_status") is Status.WAITING
    await one.finish("r_status", Ending(Status.WITHDRAWN, NOW))
    assert await two.status("r_status") is Status.WITHDRAWN


async def test_one_replica_at_a_time_updates_a_message(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    await one.create(request("r20"))
    message = MessageRef(platform="chat", channel="C1", message_id="20", data={})
    await one.add_message("r20", message, NOW)
    # Nothing has changed since it was posted: nothing to claim.
    assert await one.claim_message("r20", message, "one", NOW, NOW + LEASE) is None

    await two.vote("r20", person(1), ANSWERS, 2, NOW)
    claims = await asyncio.gather(
        one.claim_message("r20", message, "one", NOW, NOW + LEASE),
        two.claim_message("r20", message, "two", NOW, NOW + LEASE),
    )
    [held] = [c for c in claims if c is not None]
    holder, other = (one, "two") if claims[0] is not None else (two, "one")
    owner = "one" if holder is one else "two"
    assert [v.person for v in held.request.votes] == [person(1)]
    assert await one.unrendered(NOW) == []
    assert [request_id for request_id, _ in await one.unrendered()] == ["r20"]

    # A vote while the holder renders: the other replica cannot claim; the holder is handed
    # the newer state when it reports what it showed, and lets go after showing that.
    decided, _ = await one.vote("r20", person(2), ANSWERS, 2, NOW)
    assert decided.status is Status.ANSWERED
    assert await two.claim_message("r20", message, other, NOW, NOW + LEASE) is None
    newer = await holder.mark_rendered("r20", message, owner, held, NOW + LEASE)
    assert newer is not None
    assert newer.request.status is Status.ANSWERED
    assert newer.revision > held.revision
    assert await holder.mark_rendered("r20", message, owner, newer, NOW + LEASE) is None
    assert await one.unrendered() == []
    assert await two.claim_message("r20", message, other, NOW, NOW + LEASE) is None


async def test_a_ping_is_carried_once_per_message(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    await one.create(request("r23"))
    first = MessageRef(platform="chat", channel="C1", message_id="23", data={})
    await one.add_message("r23", first, NOW)
    assert await two.mark_reminded("r23", NOW)
    held = await one.claim_message("r23", first, "one", NOW, NOW + LEASE)
    assert held is not None
    assert held.ping
    assert await one.mark_rendered("r23", first, "one", held, NOW + LEASE) is None
    # A message posted later (an escalation's new channel) still has the ping to carry; the
    # first one, after a vote, only its new state.
    later = MessageRef(platform="chat", channel="C2", message_id="23b", data={})
    await one.add_message("r23", later, NOW)
    await two.vote("r23", person(1), ANSWERS, 2, NOW)
    again = await two.claim_message("r23", first, "two", NOW, NOW + LEASE)
    assert again is not None
    assert not again.ping
    fresh = await two.claim_message("r23", later, "two", NOW, NOW + LEASE)
    assert fresh is not None
    assert fresh.ping


async def test_a_dead_replicas_message_claims_run_out(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    await one.create(request("r21"))
    message = MessageRef(platform="chat", channel="C1", message_id="21", data={})
    await one.add_message("r21", message, NOW)
    await one.finish("r21", Ending(Status.CANCELLED, NOW, by=person(1)))
    stale = await one.claim_message("r21", message, "dead", NOW, NOW + LEASE)
    assert stale is not None
    # Renewed by its holder, the claim keeps others out past its first lease.
    assert await one.renew_claims("dead", NOW + 2 * LEASE) == 1
    later = NOW + LEASE + timedelta(seconds=1)
    assert await two.unrendered(later) == []
    assert await two.claim_message("r21", message, "two", later, later + LEASE) is None

    # Then the holder stops renewing: once its lease is over, the sweep finds the message
    # and another replica takes it; the old holder's report no longer counts.
    end = NOW + 2 * LEASE + timedelta(seconds=1)
    assert [request_id for request_id, _ in await two.unrendered(end)] == ["r21"]
    taken = await two.claim_message("r21", message, "two", end, end + LEASE)
    assert taken is not None
    assert taken.request.status is Status.CANCELLED
    assert await one.mark_rendered("r21", message, "dead", stale, end + LEASE) is None
    assert [request_id for request_id, _ in await two.unrendered()] == ["r21"]
    assert await two.mark_rendered("r21", message, "two", taken, end + LEASE) is None
    assert await two.unrendered() == []


async def test_claims_are_let_go_on_a_clean_shutdown(store_replicas: tuple[Store, Store]) -> None:
    one, two = store_replicas
    await one.create(request("r22"))
    message = MessageRef(platform="chat", channel="C1", message_id="22", data={})
    await one.add_message("r22", message, NOW)
    await one.vote("r22", person(1), ANSWERS, 2, NOW)
    assert await one.claim_message("r22", message, "one", NOW, NOW + LEASE) is not None
    await one.release_claims("one")
    assert await one.renew_claims("one", NOW + LEASE) == 0
    assert [request_id for request_id, _ in await two.unrendered(NOW)] == ["r22"]
    assert await two.claim_message("r22", message, "two", NOW, NOW + LEASE) is not None


async def test_a_message_posted_after_its_request_moved_on_is_stale_until_shown(
    store_replicas: tuple[Store, Store],
) -> None:
    """As when an escalation step posts to a new place after the request changed: the sweep
    finds the new message (and only it) until it shows the request's revision."""
    one, two = store_replicas
    await one.create(request("r30"))
    first = MessageRef(platform="chat", channel="C1", message_id="30.1")
    await one.add_message("r30", first, NOW)
    await one.finish("r30", Ending(Status.EXPIRED, NOW))
    claim = await one.claim_message("r30", first, "one", NOW, NOW + LEASE)
    assert claim is not None
    assert await one.mark_rendered("r30", first, "one", claim, NOW + LEASE) is None
    assert await two.unrendered() == []
    later = MessageRef(platform="chat", channel="C2", message_id="30.2")
    await two.add_message("r30", later, NOW)
    assert await one.unrendered() == [("r30", later)]
    claim = await two.claim_message("r30", later, "two", NOW, NOW + LEASE)
    assert claim is not None
    assert await two.mark_rendered("r30", later, "two", claim, NOW + LEASE) is None
    assert await one.unrendered() == []


async def test_a_click_is_recorded_in_the_write_it_decides(
    store_replicas: tuple[Store, Store],
) -> None:
    """A Cancel's click and its ending, a denial's click and its event, a form's click and its
    vote: each pair in one write, so a click seen before writes nothing, on any replica."""
    one, two = store_replicas
    await one.create(request("r-click"))
    cancel = Click(person(1), NOW, sent_at=NOW - timedelta(seconds=1))
    ending = Ending(Status.CANCELLED, NOW, by=person(1))
    finished = await one.finish_click("r-click", ending, cancel)
    assert finished is not None
    assert finished[0].status is Status.CANCELLED
    assert finished[1], "this click ended it"
    assert await two.finish_click("r-click", ending, cancel) is None
    assert await two.first_delivery("r-click", cancel) is False

    await one.create(request("r-deny"))
    denied = Event("r-deny", NOW, "denied", person(2))
    stranger = Click(person(2), NOW, sent_at=NOW)
    assert await one.deny(denied, stranger) is True
    assert await two.deny(denied, stranger) is False
    assert await one.deny(denied, None) is True
    assert [e.kind for e in await two.events("r-deny")].count("denied") == 2

    await one.create(request("r-form", policy=Policy(quorum=2)))
    _, counted = await one.vote("r-form", person(1), ANSWERS, 2, NOW, click_id="form-1")
    _, again = await two.vote("r-form", person(1), ANSWERS, 2, NOW, click_id="form-1")
    assert (counted, again) == (VoteOutcome.COUNTED, VoteOutcome.REPLAYED)
    assert [e.kind for e in await one.events("r-form")].count("vote") == 1
    # One id is one click: whoever posts it again, and whatever it does.
    assert await one.first_delivery("r-form", Click(person(2), NOW, click_id="form-1")) is False
    _, other = await two.vote("r-form", person(1), ANSWERS, 2, NOW, click_id="form-2")
    assert other is VoteOutcome.COUNTED


async def test_clicks_seen_before_the_delivery_ids_came_are_still_known(store_url: str) -> None:
    """Schema version 15 makes the clicks table again (SQLite) or changes its key (PostgreSQL):
    a click recorded under version 14 is still known when it is delivered again."""
    sent_at = NOW - timedelta(seconds=3)
    row = (person(1).key, sent_at.timestamp(), NOW.timestamp())
    if store_url.startswith("sqlite"):
        db = sqlite3.connect(store_url.removeprefix("sqlite:///"))
        db.execute("CREATE TABLE schema_version (version INTEGER)")
        for version, statements in sqlite_schema.MIGRATIONS:
            if version < CLICK_IDS:
                for statement in statements:
                    db.execute(statement)
                db.execute("INSERT INTO schema_version VALUES (?)", (version,))
        db.execute("INSERT INTO clicks (person, sent_at, at) VALUES (?, ?, ?)", row)
        db.commit()
        db.close()
    else:
        pg = await asyncpg.connect(store_url)
        try:
            await pg.execute("CREATE TABLE schema_version (version INTEGER)")
            for version, statements in pg_schema.MIGRATIONS:
                if version < CLICK_IDS:
                    for statement in statements:
                        await pg.execute(statement)
                    await pg.execute("INSERT INTO schema_version VALUES ($1)", version)
            await pg.execute("INSERT INTO clicks (person, sent_at, at) VALUES ($1, $2, $3)", *row)
        finally:
            await pg.close()
    store = open_store(store_url)
    await store.open()
    try:
        await store.create(request("r-old"))
        assert not await store.first_delivery("r-old", Click(person(1), NOW, sent_at=sent_at))
        assert await store.first_delivery("r-old", Click(person(1), NOW, click_id="new"))
        assert await store.first_delivery("r-old", Click(person(2), NOW, sent_at=sent_at))
    finally:
        await store.close()


async def test_votes_agree_only_when_they_allow_the_same_changed_input(
    store_replicas: tuple[Store, Store],
) -> None:
    one, two = store_replicas
    await one.create(request("r-changed"))
    changed = {"command": "make test", "n": 1}
    _, first = await one.vote("r-changed", person(1), ANSWERS, 2, NOW, changed=changed)
    _, plain = await two.vote("r-changed", person(2), ANSWERS, 2, NOW)
    other = {"command": "make lint", "n": 1}
    _, third = await one.vote("r-changed", person(3), ANSWERS, 2, NOW, changed=other)
    assert (first, plain, third) == (VoteOutcome.COUNTED,) * 3
    # The same input, its keys in another order: the same answer.
    same = {"n": 1, "command": "make test"}
    decided, outcome = await two.vote("r-changed", person(4), ANSWERS, 2, NOW, changed=same)
    assert outcome is VoteOutcome.DECIDED
    assert decided.answers == ANSWERS
    assert decided.approved_input == changed
    stored = await one.get("r-changed")
    assert stored is not None
    assert stored.answers == ANSWERS
    assert stored.approved_input == changed
    assert [v.changed for v in stored.votes] == [changed, None, other, changed]
    assert all(v.answers == ANSWERS for v in stored.votes)
