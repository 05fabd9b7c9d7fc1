"""A typed form through the broker, on SQLite and PostgreSQL alike: kept with its request,
answered as a vote (quorum, no-self-approval, deadlines as for questions), declined, audited."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from askbridge.core.ask import Ask
from askbridge.core.broker import Broker
from askbridge.core.clock import ManualClock
from askbridge.core.intents import Counted, Decided, Decline, Fill, Refusal, Refused
from askbridge.core.models import Person, Status
from askbridge.core.store import Store, open_store
from askbridge.core.view import RequestView, State
from tests.test_broker import ChatSurface

ADA = Person(platform="chat", id="U1", name="Ada")
GRACE = Person(platform="chat", id="U2", name="Grace")
CAROL = Person(platform="chat", id="U3", name="Carol")

FORM: dict[str, Any] = {
    "message": "Release details",
    "requested_schema": {
        "type": "object",
        "properties": {
            "version": {"type": "string", "title": "Version", "minLength": 1},
            "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 9},
            "canary": {"type": "boolean", "title": "Canary", "default": True},
            "region": {
                "type": "string",
                "title": "Region",
                "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "US"}],
            },
        },
        "required": ["version", "replicas"],
    },
}


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    opened = open_store(store_url)
    await opened.open()
    yield opened
    await opened.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def broker(store: Store, clock: ManualClock) -> AsyncIterator[Broker]:
    made = Broker(store, clock=clock, default_target="chat:C1", render_backoff_s=(0, 0))
    made.add_surface(ChatSurface())
    yield made
    await made.stop(grace_s=5)


async def ask(broker: Broker, **extra: Any) -> str:
    request, created = await broker.ask(Ask.parse({"form": FORM, **extra}))
    assert created
    return request.request_id


async def test_the_form_is_kept_with_its_request_and_its_values_come_back_typed(
    broker: Broker, store: Store
) -> None:
    request_id = await ask(broker, request_id="rel_1")
    stored = await store.get(request_id)
    assert stored is not None
    assert stored.questions == ()
    assert stored.form == Ask.parse({"form": FORM}).form
    assert stored.form is not None
    assert stored.form.defaults() == {"canary": True}
    # Asked again with the same form: the same request; with another form: a conflict.
    again, created = await broker.ask(Ask.parse({"form": FORM, "request_id": "rel_1"}))
    assert not created
    assert again.request_id == request_id

    values = {"version": "v2.1", "replicas": "3", "canary": False, "region": "eu"}
    outcome = await broker.act(request_id, ADA, Fill(values))
    assert isinstance(outcome, Decided)
    fresh = await store.get(request_id)
    assert fresh is not None
    assert fresh.status is Status.ANSWERED
    assert fresh.answers == {
        "version": '"v2.1"',
        "replicas": "3",
        "canary": "false",
        "region": '"eu"',
    }

    view = RequestView.of(fresh)
    assert view.content == {"version": "v2.1", "replicas": 3, "canary": False, "region": "eu"}
    assert [(f.title, shown) for f, shown in view.filled_in()] == [
        ("Version", "v2.1"),
        ("Replicas", "3"),
        ("Canary", "No"),
        ("Region", "Europe"),
    ]
    events = await store.events(request_id)
    vote = next(e for e in events if e.kind == "vote")
    assert vote.actor == ADA
    assert vote.data["answers"] == fresh.answers


async def test_a_quorum_of_two_needs_two_people_giving_equal_values(
    broker: Broker, store: Store
) -> None:
    request_id = await ask(broker, quorum=2)
    first = await broker.act(request_id, ADA, Fill({"version": "v1", "replicas": "2"}))
    assert isinstance(first, Counted)
    assert first.receipt.matching == 1
    unequal = await broker.act(request_id, GRACE, Fill({"version": "v1", "replicas": "3"}))
    assert isinstance(unequal, Counted)
    assert unequal.receipt.matching == 1
    # The same values, given as another surface's inputs give them.
    equal = await broker.act(request_id, CAROL, Fill({"version": "v1", "replicas": 2}))
    assert isinstance(equal, Decided)
    assert equal.view.deciders == (ADA, CAROL)
    # A yes/no nobody touched is its default, as an untouched box gives it.
    assert equal.view.content == {"version": "v1", "replicas": 2, "canary": True}
    assert [row.count for row in equal.view.tally] == [2, 1]
    assert equal.view.summary(equal.view.tally[1].answers) == (
        "Version: v1; Replicas: 3; Canary: Yes"
    )


async def test_refused_values_record_nothing(broker: Broker, store: Store) -> None:
    request_id = await ask(broker)
    refused = await broker.act(
        request_id, ADA, Fill({"version": "", "replicas": "12", "region": "mars"})
    )
    assert isinstance(refused, Refused)
    assert refused.reason is Refusal.BAD_VALUES
    assert refused.field_problems == {
        "replicas": "must be at most 9, got 12",
        "region": "must be one of 'eu', 'us', got 'mars'",
        "version": "is required",
    }
    assert refused.view is not None
    assert refused.view.waiting
    stored = await store.get(request_id)
    assert stored is not None
    assert stored.votes == ()
    assert [e.kind for e in await store.events(request_id)] == ["created", "posted"]


async def test_decline_ends_the_request_and_names_who_declined(
    broker: Broker, store: Store
) -> None:
    request_id = await ask(broker, quorum=2)
    await broker.act(request_id, ADA, Fill({"version": "v1", "replicas": "2"}))
    declined = await broker.act(request_id, GRACE, Decline())
    assert isinstance(declined, Decided)
    stored = await store.get(request_id)
    assert stored is not None
    assert stored.status is Status.DECLINED
    assert stored.declined_by == GRACE
    assert stored.cancelled_by is None
    assert stored.answers is None
    view = declined.view
    assert view.state is State.DECLINED
    assert view.deciders == (GRACE,)
    assert view.content == {}
    events = await store.events(request_id)
    assert [(e.kind, e.actor) for e in events][-1] == ("declined", GRACE)
    assert await store.list_requests(Status.DECLINED) == [stored]
    assert await store.count_requests(Status.DECLINED) == 1


async def test_the_requester_may_neither_fill_in_nor_decline_their_own_form(
    broker: Broker,
) -> None:
    request_id = await ask(
        broker, requested_by="chat:U1", no_self_approval=True, answerers=["chat:U1", "chat:U2"]
    )
    for intent in (Fill({"version": "v1", "replicas": "1"}), Decline()):
        refused = await broker.act(request_id, ADA, intent)
        assert isinstance(refused, Refused)
        assert refused.reason is Refusal.SELF_APPROVAL
    stranger = Person(platform="chat", id="U7", name="Eve")
    refused = await broker.act(request_id, stranger, Fill({"version": "v1", "replicas": "1"}))
    assert isinstance(refused, Refused)
    assert refused.reason is Refusal.NOT_ANSWERER
    assert isinstance(await broker.act(request_id, GRACE, Decline()), Decided)


async def test_the_deadline_gives_the_default_content(
    broker: Broker, store: Store, clock: ManualClock
) -> None:
    request_id = await ask(
        broker, timeout_s=60, on_timeout={"content": {"version": "v0", "replicas": 1}}
    )
    await clock.advance(61)
    assert await broker.expire_due() == 1
    stored = await store.get(request_id)
    assert stored is not None
    assert stored.status is Status.ANSWERED
    assert stored.decided_by_timeout

    view = RequestView.of(stored)
    assert view.state is State.DECIDED_BY_TIMEOUT
    assert view.content == {"version": "v0", "replicas": 1}


async def test_the_deadline_can_decline_or_expire_the_form(
    broker: Broker, store: Store, clock: ManualClock
) -> None:
    declined = await ask(broker, timeout_s=60, on_timeout="decline")
    expired = await ask(broker, timeout_s=60)
    await clock.advance(61)
    assert await broker.expire_due() == 2
    no = await store.get(declined)
    assert no is not None
    assert no.status is Status.DECLINED
    assert no.declined_by is None
    assert no.decided_by_timeout

    assert RequestView.of(no).heading.startswith("Declined at the deadline")
    events = await store.events(declined)
    assert (events[-1].kind, events[-1].data) == ("declined", {"decided_by": "timeout"})
    gone = await store.get(expired)
    assert gone is not None
    assert gone.status is Status.EXPIRED


async def test_an_escalation_step_opens_the_form_to_its_answerers(
    broker: Broker, store: Store, clock: ManualClock
) -> None:
    request_id = await ask(
        broker,
        answerers=["chat:U1"],
        escalation=[{"after_s": 60, "answerers": ["chat:U2"], "mention": False}],
    )
    refused = await broker.act(request_id, GRACE, Decline())
    assert isinstance(refused, Refused)
    assert refused.reason is Refusal.NOT_ANSWERER
    await clock.advance(61)
    await broker.expire_due()
    stored = await store.get(request_id)
    assert stored is not None
    assert stored.escalation_step == 1
    late = await broker.act(request_id, ADA, Fill({"version": "v1", "replicas": "1"}))
    assert isinstance(late, Refused)
    assert late.reason is Refusal.NOT_ANSWERER
    filled = await broker.act(request_id, GRACE, Fill({"version": "v1", "replicas": "1"}))
    assert isinstance(filled, Decided)
    assert filled.view.deciders == (GRACE,)
