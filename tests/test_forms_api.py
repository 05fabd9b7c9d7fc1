"""A typed form asked over the agent API: its values come back typed in the status object, the
long-poll and webhooks; a person can decline it, which is not a cancel."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import aiohttp

from askbridge.bots.service import Service
from askbridge.core import audit_log
from askbridge.core.intents import (
    Cancel,
    Counted,
    Decided,
    Decline,
    Fill,
    Intent,
    Pick,
    Refusal,
    Refused,
    Submit,
)
from askbridge.core.models import Person
from tests.conftest import StartService
from tests.docs.commands import doc_command
from tests.test_doc_commands import ran
from tests.test_webhooks import SAME_MACHINE, receiver

ADA = Person(platform="web", id="Ada", name="Ada")
GRACE = Person(platform="web", id="Grace", name="Grace")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ticket": {"type": "integer", "title": "Ticket", "minimum": 1, "maximum": 99999},
        "urgent": {"type": "boolean", "title": "Urgent"},
        "due": {"type": "string", "format": "date", "title": "Due"},
        "amount": {"type": "number", "title": "Amount", "minimum": 0},
        "teams": {
            "type": "array",
            "title": "Teams",
            "items": {"type": "string", "enum": ["ops", "db", "web"]},
        },
    },
    "required": ["ticket", "urgent"],
}


def form_ask(request_id: str = "form_1", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "request_id": request_id,
        "form": {"message": "Which ticket is this for?", "requested_schema": SCHEMA},
    }
    body.update(extra)
    return body


async def post(http: aiohttp.ClientSession, service: Service, body: Any) -> tuple[int, Any]:
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        return response.status, await response.json()


async def status(http: aiohttp.ClientSession, service: Service, request_id: str) -> Any:
    async with http.get(f"{service.url}/v1/questions/{request_id}") as response:
        assert response.status == 200
        return await response.json()


async def test_a_form_is_answered_with_typed_values(
    service: Service, http: aiohttp.ClientSession
) -> None:
    code, created = await post(http, service, form_ask())
    assert code == 201, created
    assert created["status"] == "waiting"
    assert created["questions"] == []
    assert created["form"] == {"message": "Which ticket is this for?", "requested_schema": SCHEMA}
    assert "action" not in created
    assert "content" not in created

    poll = asyncio.create_task(http.get(f"{service.url}/v1/questions/form_1?wait=30"))
    # As a surface's inputs give them: typed text, a checkbox's bool, a date picker's text.
    values = {"ticket": "4711", "urgent": False, "due": "2026-12-24", "amount": "12.50"}
    outcome = await service.broker.act("form_1", ADA, Fill(values))
    assert isinstance(outcome, Decided)
    assert outcome.view.content == {
        "ticket": 4711,
        "urgent": False,
        "due": "2026-12-24",
        "amount": 12.5,
    }
    async with await poll as response:
        final = await response.json()
    assert final["status"] == "answered"
    assert final["action"] == "accept"
    assert final["content"] == {
        "ticket": 4711,
        "urgent": False,
        "due": "2026-12-24",
        "amount": 12.5,
    }
    assert type(final["content"]["ticket"]) is int
    assert final["content"]["urgent"] is False
    assert final["answered_by"]["name"] == "Ada"
    assert "answers_by_question" not in final
    assert "error" not in final
    assert final["votes"][0]["content"] == final["content"]


async def test_values_that_do_not_fit_are_refused_and_nothing_is_recorded(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await post(http, service, form_ask())
    outcome = await service.broker.act(
        "form_1", ADA, Fill({"ticket": "0", "urgent": "maybe", "teams": ["qa"]})
    )
    assert isinstance(outcome, Refused)
    assert outcome.reason is Refusal.BAD_VALUES
    assert set(outcome.field_problems) == {"ticket", "urgent", "teams"}
    assert "at least 1" in outcome.field_problems["ticket"]
    assert outcome.values == {"ticket": "0", "urgent": "maybe", "teams": ["qa"]}
    missing = await service.broker.act("form_1", ADA, Fill({"urgent": True}))
    assert isinstance(missing, Refused)
    assert missing.field_problems == {"ticket": "is required"}
    found = await status(http, service, "form_1")
    assert found["status"] == "waiting"
    assert found["votes"] == []


async def test_decline_tells_the_agent_no_and_cancel_interrupts_it(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await post(http, service, form_ask("form_no"))
    await post(http, service, form_ask("form_stop"))
    declined = await service.broker.act("form_no", GRACE, Decline())
    assert isinstance(declined, Decided)
    assert declined.view.deciders == (GRACE,)
    assert declined.view.heading.format(deciders="Grace").startswith("Declined by Grace")
    cancelled = await service.broker.act("form_stop", GRACE, Cancel())
    assert isinstance(cancelled, Decided)

    no = await status(http, service, "form_no")
    assert (no["status"], no["action"], no["error"]) == ("declined", "decline", "Declined")
    assert no["declined_by"]["name"] == "Grace"
    assert "content" not in no
    assert "cancelled_by" not in no
    stop = await status(http, service, "form_stop")
    assert (stop["status"], stop["action"], stop["error"]) == ("cancelled", "cancel", "Interrupted")
    assert stop["cancelled_by"]["name"] == "Grace"

    late = await service.broker.act("form_no", ADA, Fill({"ticket": "1", "urgent": True}))
    assert isinstance(late, Refused)
    assert late.reason is Refusal.ALREADY_ENDED

    async with http.get(f"{service.url}/v1/questions/form_no/events") as response:
        trail = (await response.json())["events"]
    kinds = [(e["kind"], (e["actor"] or {}).get("name")) for e in trail]
    assert ("declined", "Grace") in kinds
    async with http.get(f"{service.url}/v1/questions?status=declined") as response:
        listed = [q["request_id"] for q in (await response.json())["questions"]]
    assert listed == ["form_no"]


async def test_a_quorum_counts_equal_values_as_one_answer(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await post(http, service, form_ask(quorum=2))
    first = await service.broker.act("form_1", ADA, Fill({"ticket": "7", "urgent": "yes"}))
    assert isinstance(first, Counted)
    assert first.receipt.answers == {"Ticket": "7", "Urgent": "Yes"}
    # Unequal values: another answer, still waiting.
    other = await service.broker.act("form_1", GRACE, Fill({"ticket": "8", "urgent": True}))
    assert isinstance(other, Counted)
    # The same values, typed another way ("7.0" is not a whole number's text; "+7" is 7).
    carol = Person(platform="web", id="Carol", name="Carol")
    agreed = await service.broker.act("form_1", carol, Fill({"ticket": " +7 ", "urgent": True}))
    assert isinstance(agreed, Decided)
    assert agreed.view.deciders == (ADA, carol)
    final = await status(http, service, "form_1")
    assert final["content"] == {"ticket": 7, "urgent": True}
    assert len(final["votes"]) == 3


async def test_clicks_of_the_other_kind_are_foreign(
    service: Service, http: aiohttp.ClientSession
) -> None:
    await post(http, service, form_ask())
    intents: list[Intent] = [Pick(0, 0), Submit()]
    for intent in intents:
        refused = await service.broker.act("form_1", ADA, intent)
        assert isinstance(refused, Refused)
        assert refused.reason is Refusal.FOREIGN_MESSAGE
    body = {
        "request_id": "q_1",
        "questions": [
            {
                "question": "Ship?",
                "header": "Ship",
                "options": [{"label": "Yes"}, {"label": "No"}],
            }
        ],
    }
    assert (await post(http, service, body))[0] == 201
    intents = [Fill({}), Decline()]
    for intent in intents:
        refused = await service.broker.act("q_1", ADA, intent)
        assert isinstance(refused, Refused)
        assert refused.reason is Refusal.FOREIGN_MESSAGE


async def test_the_forms_page_asks_as_shown(
    service: Service, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    command = doc_command("docs/how-to/forms.md", "curl -s http://127.0.0.1:8765/v1/questions -H")
    created = json.loads(await ran(command.replace("http://127.0.0.1:8765", service.url), tmp_path))
    assert created["status"] == "waiting", created
    assert created["on_timeout"] == "decline"
    values = {"ticket": "4711", "window": "2026-12-24", "urgent": False, "regions": ["us", "eu"]}
    outcome = await service.broker.act("deploy-4711", ADA, Fill(values))
    assert isinstance(outcome, Decided)
    final = await status(http, service, "deploy-4711")
    assert final["content"] == {
        "ticket": 4711,
        "window": "2026-12-24",
        "urgent": False,
        "regions": ["eu", "us"],
    }


async def test_the_webhook_carries_the_same_typed_content_and_the_audit_export_verifies(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    secret = "whsec_" + base64.b64encode(b"forms-webhook-secret-0123456789ab").decode()
    service = await start_service(webhook_secret=secret, webhook_allow=SAME_MACHINE)
    async with receiver([200]) as hook:
        code, _ = await post(http, service, form_ask(callback_url=hook.url, quorum=2))
        assert code == 201
        await service.broker.act("form_1", ADA, Fill({"ticket": "5", "urgent": True}))
        await service.broker.act("form_1", GRACE, Fill({"ticket": "5", "urgent": "yes"}))
        hit = await hook.next()
    delivered = json.loads(hit.body)
    polled = await status(http, service, "form_1")
    assert delivered == polled
    assert (delivered["action"], delivered["content"]) == ("accept", {"ticket": 5, "urgent": True})
    await post(http, service, form_ask("form_no"))
    await service.broker.act("form_no", GRACE, Decline())
    async with http.get(f"{service.url}/v1/audit/export") as response:
        lines = (await response.text()).splitlines()
    verified = audit_log.verify(lines)
    assert isinstance(verified, audit_log.Verified), verified


async def test_annotations_are_kept_as_sent_and_must_be_plain_json(
    service: Service, http: aiohttp.ClientSession
) -> None:
    annotated = {**SCHEMA, "$comment": "asked by <@U1>", "title": "Ticket form"}
    code, created = await post(
        http, service, {"form": {"message": "Which?", "requested_schema": annotated}}
    )
    assert code == 201, created
    assert created["form"]["requested_schema"] == annotated
    # A lone surrogate, as JSON can carry it escaped: refused, never a server error.
    body = json.dumps({"form": {"message": "Which?", "requested_schema": SCHEMA}})
    body = body.replace('"required"', '"$comment": "\\ud800", "required"')
    async with http.post(
        f"{service.url}/v1/questions", data=body, headers={"Content-Type": "application/json"}
    ) as response:
        refused = await response.json()
        assert response.status == 422, refused
    assert refused["details"] == [
        {
            "location": "form.requested_schema",
            "message": "must be valid Unicode text throughout, got a lone surrogate '\\ud800' "
            "(half of a UTF-16 pair; send the whole character)",
        }
    ]


async def test_a_link_form_is_done_with_empty_content(
    service: Service, http: aiohttp.ClientSession
) -> None:
    body = {"request_id": "link_1", "form": {"message": "Sign in", "url": "https://example.com/a"}}
    code, created = await post(http, service, body)
    assert code == 201, created
    assert created["form"] == {"message": "Sign in", "url": "https://example.com/a"}
    stray = await service.broker.act("link_1", ADA, Fill({"ticket": "1"}))
    assert isinstance(stray, Refused)
    assert stray.field_problems == {"ticket": "is not a field of this form"}
    done = await service.broker.act("link_1", ADA, Fill({}))
    assert isinstance(done, Decided)
    final = await status(http, service, "link_1")
    assert (final["status"], final["action"], final["content"]) == ("answered", "accept", {})
