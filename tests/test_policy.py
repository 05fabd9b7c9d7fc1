"""The one eligibility check (`core.policy`): who may act on a request now, and which groups are
worth asking a platform about first."""

from __future__ import annotations

from datetime import UTC, datetime

from askbridge.core.models import (
    EscalationStep,
    Ladder,
    Person,
    Policy,
    QuestionOption,
    Request,
    Status,
    Target,
    UserQuestion,
)
from askbridge.core.policy import Ineligible, eligibility, groups_to_ask
from askbridge.core.refusals import Refusal
from askbridge.core.surface import Membership
from askbridge.core.view import RequestView

ADA = Person(platform="slack", id="U1", name="Ada")
GRACE = Person(platform="slack", id="U2", name="Grace")
QUESTION = UserQuestion(
    question="Ship it?",
    header="Ship",
    options=(QuestionOption(label="Yes"), QuestionOption(label="No")),
)


def request(policy: Policy, **changes: object) -> Request:
    made = Request(
        request_id="ask_1",
        questions=(QUESTION,),
        targets=(Target(platform="slack", channel="C1"),),
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        policy=policy,
    )
    return made.model_copy(update=changes)


def refused(verdict: Person | Ineligible) -> Refusal | None:
    return verdict.reason if isinstance(verdict, Ineligible) else None


def test_anyone_may_act_on_a_waiting_request_without_answerers_and_nobody_on_an_ended_one() -> None:
    open_to_all = request(Policy())
    assert eligibility(open_to_all, GRACE) == GRACE
    assert RequestView.of(open_to_all).eligibility(GRACE) == GRACE
    for status in (Status.ANSWERED, Status.CANCELLED, Status.EXPIRED, Status.WITHDRAWN):
        ended = request(Policy(answerers=("slack:U1",)), status=status)
        assert refused(eligibility(ended, ADA)) is Refusal.ALREADY_ENDED
        assert groups_to_ask(ended, GRACE) == ()


def test_answerers_by_id_or_by_a_group_the_person_carries() -> None:
    gated = request(Policy(answerers=("slack:@U1", "discord-role:7")))
    assert eligibility(gated, ADA) == ADA
    assert refused(eligibility(gated, GRACE)) is Refusal.NOT_ANSWERER
    member = Person(platform="discord", id="9", groups=("discord-role:7",))
    assert eligibility(gated, member) == member
    assert refused(RequestView.of(gated).eligibility(GRACE)) is Refusal.NOT_ANSWERER


def test_the_requester_may_cancel_but_not_approve_their_own_request() -> None:
    own = request(
        Policy(answerers=("slack:U1", "slack:U2"), requested_by="slack:U2", no_self_approval=True)
    )
    assert refused(eligibility(own, GRACE)) is Refusal.SELF_APPROVAL
    assert eligibility(own, GRACE, cancelling=True) == GRACE
    assert eligibility(own, ADA) == ADA
    allowed = request(Policy(answerers=("slack:U2",), requested_by="slack:U2"))
    assert eligibility(allowed, GRACE) == GRACE


def test_an_escalation_step_taken_names_who_may_answer_from_then_on() -> None:
    ladder = Ladder(steps=(EscalationStep(after_s=60, answerers=("slack:U2",)),))
    policy = Policy(answerers=("slack:U1",), escalation=ladder)
    assert eligibility(request(policy), ADA) == ADA
    assert refused(eligibility(request(policy), GRACE)) is Refusal.NOT_ANSWERER
    escalated = request(policy, escalation_step=1)
    assert eligibility(escalated, GRACE) == GRACE
    assert refused(eligibility(escalated, ADA)) is Refusal.NOT_ANSWERER


def test_groups_are_asked_about_only_when_they_could_decide() -> None:
    gated = request(Policy(answerers=("slack:U1", "slack-group:S1", "discord-role:7")))
    assert groups_to_ask(gated, ADA) == ()  # their own id decides
    assert groups_to_ask(gated, GRACE) == ("slack-group:S1",)  # only their platform's groups
    assert groups_to_ask(request(Policy()), GRACE) == ()  # anyone may answer
    own = request(
        Policy(answerers=("slack-group:S1",), requested_by="slack:U2", no_self_approval=True)
    )
    assert groups_to_ask(own, GRACE) == ()  # refused whatever the groups say
    assert groups_to_ask(own, GRACE, cancelling=True) == ("slack-group:S1",)


def test_what_the_platform_found_decides_and_what_it_could_not_check_is_said() -> None:
    gated = request(Policy(answerers=("slack-group:S1", "slack-group:S2")))
    found = Membership(groups=("slack-group:S2",))
    verdict = eligibility(gated, GRACE, found=found)
    assert isinstance(verdict, Person)
    assert verdict.groups == ("slack-group:S2",)
    unsure = eligibility(gated, GRACE, found=Membership(groups=(), unchecked=("slack-group:S1",)))
    assert unsure == Ineligible(Refusal.NOT_ANSWERER, ("slack-group:S1",))
