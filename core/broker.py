"""The question broker: the lifecycle of every request, from the agent's ask to its answer.

`waiting → answered | cancelled | declined | expired | withdrawn`. Each transition is one
`Store.finish` (a compare-and-set), then waiters are woken, then the posted messages are
re-rendered in the background: the agent never waits on a chat platform to learn its answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from askbridge.core import request_log
from askbridge.core.answers import ballot, merge
from askbridge.core.ask import REQUEST_ID_PATTERN as REQUEST_ID_PATTERN
from askbridge.core.ask import Ask
from askbridge.core.changes import ChangeRefused, changeable, changed_input
from askbridge.core.clock import Clock, SystemClock
from askbridge.core.crash_points import CrashPoint, no_crash
from askbridge.core.errors import (
    FORM_ASK,
    AlreadyEnded,
    Conflict,
    InvalidQuestion,
    NotFound,
    Problem,
    UnknownTarget,
)
from askbridge.core.forms import Form, FormRefused, encode, read_input
from askbridge.core.hub import Hub
from askbridge.core.intents import (
    CHANGED,
    Cancel,
    Choose,
    Counted,
    Decided,
    Decline,
    Drafted,
    Fill,
    FormOpens,
    Intent,
    Outcome,
    Pick,
    Refusal,
    Refused,
    Submit,
)
from askbridge.core.ladder_time import due_at
from askbridge.core.message_updates import BACKOFF_S, SWEEP_S, TAKEOVER_S, MessageUpdates
from askbridge.core.metrics import Metrics
from askbridge.core.models import (
    Ladder,
    MessageRef,
    Person,
    Policy,
    Request,
    Selections,
    Status,
    Target,
    UserQuestion,
)
from askbridge.core.policy import Ineligible, eligibility, groups_to_ask
from askbridge.core.posting import Posting
from askbridge.core.public_links import PublicLinks
from askbridge.core.questions import MAX_QUESTIONS
from askbridge.core.store.base import EVERY_REQUEST, Click, Ending, Event, Store, VoteOutcome
from askbridge.core.surface import GroupDirectory, Surface, form_fields_of
from askbridge.core.targets import parse_target
from askbridge.core.tool_view import ToolView, tool_view
from askbridge.core.view import RequestView
from askbridge.core.webhooks import WebhookOptions, Webhooks

log = logging.getLogger("askbridge.broker")

CHECKED_FOR_REDELIVERY = frozenset({Refusal.REPLAYED, Refusal.NOT_ANSWERER, Refusal.SELF_APPROVAL})
"""Refusals whose click `_eligible` checked against earlier deliveries already (or a replay)."""

EXPIRY_RETRY_S = 5.0
HELD_REQUESTS = 1024
"""How many requests the broker keeps at hand for clicks (the newest it has read or written):
a click on one of them needs no read before its vote is written."""


@dataclass(frozen=True)
class _Lost:
    """A vote or an ending that another click beat to the write: refused (ALREADY_ENDED),
    with its click recorded in that write, so that it is no delivery of itself again."""

    refused: Refused


class Broker:
    def __init__(
        self,
        store: Store,
        *,
        clock: Clock | None = None,
        default_timeout_s: float | None = None,
        default_target: str = "web",
        unconfigured: Mapping[str, str] | None = None,
        render_backoff_s: Sequence[float] = BACKOFF_S,
        render_sweep_s: float = SWEEP_S,
        takeover_s: float = TAKEOVER_S,
        metrics: Metrics | None = None,
        crash_point: CrashPoint = no_crash,
        webhooks: WebhookOptions | None = None,
        default_escalation: Ladder | None = None,
        render_clock: Clock | None = None,
    ) -> None:
        """`webhooks`: how to send requests' callback_url webhooks; None refuses such asks.
        `default_escalation`: the ladder of asks that set neither escalation nor
        remind_after_s. `render_clock`: real time for message updates (their claims, their
        waits on a failing platform), whatever `clock` says."""
        self.store = store
        self.metrics = metrics or Metrics()
        self.clock: Clock = clock or SystemClock()
        self.hub = Hub()
        self.default_timeout_s = default_timeout_s
        self.default_target = default_target
        self.default_escalation = default_escalation
        self._surfaces: dict[str, Surface] = {}
        # platform -> how to enable it, for the error when a target names it
        self._unconfigured = dict(unconfigured or {})
        # Only fault-injection tests pass anything but `no_crash` (see core/crash_points.py).
        self._crash = crash_point
        self.messages = MessageUpdates(
            store,
            self._surfaces,
            backoff_s=render_backoff_s,
            sweep_s=render_sweep_s,
            takeover_s=takeover_s,
            crash_point=crash_point,
            clock=render_clock,
        )
        self.metrics.watch_backlog(lambda: self.messages.backlog)
        self.posting = Posting(
            store,
            self._surfaces,
            self.messages,
            self.clock,
            crash_point,
            self.hub.publish,
            backoff_s=render_backoff_s,
        )
        self._deadline_moved = asyncio.Event()
        self._expiry: asyncio.Task[None] | None = None
        self.webhooks = (
            None
            if webhooks is None
            else Webhooks(store, self.clock, webhooks, changed=self.hub.publish)
        )
        # request_id -> the request as last read or written here. Only what never changes is
        # taken from it (questions, policy, the messages it was posted in), and an ending,
        # which is final; whether it still waits is decided by the vote's own transaction.
        self._held: OrderedDict[str, Request] = OrderedDict()
        self.links: PublicLinks | None = None
        """Where the web page is reached and what signs its links (ASKBRIDGE_PUBLIC_URL): set
        by the service once the page's key is read, before `start`. A tool call a message may
        have to cut is then asked with the link to its whole view."""

    def add_surface(self, surface: Surface) -> None:
        self._surfaces[surface.platform] = surface
        self.metrics.add_surface(surface.platform)

    async def start(self) -> None:
        await self.store.listen(self._changed_elsewhere)
        self._expiry = asyncio.create_task(self._expire_forever(), name="askbridge-expiry")
        self.messages.start()
        self.posting.start()
        if self.webhooks is not None:
            self.webhooks.start()

    async def _changed_elsewhere(self, request_id: str) -> None:
        """Another replica changed `request_id` (EVERY_REQUEST: perhaps any request, as changes
        may have gone unheard): wake its waiters to re-read it, and look at deadlines again."""
        if request_id == EVERY_REQUEST:
            self.hub.wake_all()
        else:
            self.hub.publish(request_id)
        self._deadline_moved.set()
        if self.webhooks is not None:
            self.webhooks.poke()

    async def stop(self, grace_s: float = 5.0) -> None:
        """Stop expiring; give message updates in flight `grace_s` to finish, then cancel."""
        self.hub.close()
        if self._expiry is not None:
            self._expiry.cancel()
            await asyncio.gather(self._expiry, return_exceptions=True)
        await self.posting.stop()
        if self.webhooks is not None:
            await self.webhooks.stop(grace_s)
        await self.messages.stop(grace_s)

    def alive(self) -> dict[str, bool]:
        """Whether each background loop still runs: False means it died, and only a restart
        brings it back."""
        expiring = self._expiry is not None and not self._expiry.done()
        loops = {"deadlines": expiring, "message_updates": self.messages.running}
        if self.webhooks is not None:
            loops["webhooks"] = self.webhooks.running
        return loops

    # --- the agent's side -------------------------------------------------------------

    async def ask(self, ask: Ask) -> tuple[Request, bool]:
        """Create and post a request; return it and whether it is new (False: a repeat).

        A repeat of a request whose posting never finished (the process died while posting,
        say) finishes it: the agent's retry is what gets its question seen."""
        try:
            return await self._ask(ask)
        except InvalidQuestion as error:
            raise error.about(ask.noun) from None

    async def _ask(self, ask: Ask) -> tuple[Request, bool]:
        request_id = ask.request_id or f"ask_{uuid.uuid4()}"
        if ask.callback_url is not None and self.webhooks is None:
            raise InvalidQuestion(
                [
                    Problem(
                        "callback_url",
                        "this server sends no webhooks: set ASKBRIDGE_WEBHOOK_SECRET on the "
                        "server (it signs them), or leave callback_url out",
                    )
                ]
            )
        if ask.callback_url is not None and self.webhooks is not None:
            refused = await self.webhooks.refusal(ask.callback_url)
            if refused is not None:
                raise InvalidQuestion([Problem("callback_url", refused)])
        targets = [self._target(t) for t in ask.target or (self.default_target,)]
        self._check_answerers(ask.answerers)
        timeout_s = self.default_timeout_s if ask.timeout_s is None else ask.timeout_s
        policy = ask.policy
        if policy.escalation is None and policy.remind_after_s is None:
            policy = policy.model_copy(update={"escalation": self.default_escalation})
        steps = self.check_ladder(policy.escalation)
        self._check_form_fits(ask.form, targets, steps)
        now = self.clock.now()
        expires_at = None if timeout_s is None else now + timedelta(seconds=timeout_s)
        remind_at = None
        if policy.remind_after_s is not None:
            remind_at = now + timedelta(seconds=policy.remind_after_s)
            if expires_at is not None and remind_at >= expires_at:
                remind_at = None
        draft = Request(
            request_id=request_id,
            questions=ask.questions,
            targets=tuple(targets),
            context=ask.context,
            created_at=now,
            expires_at=expires_at,
            policy=policy,
            remind_at=remind_at,
            tool=self._tool(request_id, ask, policy),
            form=ask.form,
        )
        draft = draft.model_copy(update={"escalate_at": due_at(draft, 0, now)})
        async with self.store.posting(request_id) as mine:
            stored, created = await self.store.create(draft)
            if not created:
                return await self._repeated(stored, ask, mine), False
            # Not mine: another task or replica is in the middle of the same ask; it posts.
            if mine:
                self._crash("ask.stored")
                # Logged before posting, whose lines ("posted on …") follow it.
                request_log.step(request_id, "created", request_log.surfaces_of(stored))
                await self.posting.first(stored)
                self.metrics.record_created(stored)
        if any(at is not None for at in (stored.expires_at, stored.remind_at, stored.escalate_at)):
            self._deadline_moved.set()
        self.hub.publish(request_id)
        return await self.get(request_id), True

    def _tool(self, request_id: str, ask: Ask, policy: Policy) -> ToolView | None:
        """The tool call as people see it, with the link to its whole view on the web page."""
        if ask.tool_use is None:
            return None
        shown = tool_view(ask.tool_use, keep_input=policy.allow_changes)
        if self.links is None:
            return shown
        return shown.model_copy(update={"full_view": self.links.request_page(request_id)})

    async def _repeated(self, stored: Request, ask: Ask, mine: bool) -> Request:
        """The request a repeated ask names, its posting finished if it was cut short."""
        # An approval's questions are the same for every call of a tool: its subject (the
        # call's input) tells one from another, so an answer is never given for another call.
        if stored.policy.subject_sha256 != ask.policy.subject_sha256:
            asked = "another subject"
        elif stored.questions != ask.questions or stored.form != ask.form:
            asked = "another form" if stored.form is not None else "other questions"
        else:
            asked = ""
        if asked:
            raise Conflict(
                f"request_id {stored.request_id!r} already exists with {asked}; "
                "use a new request_id for a new question"
            )
        if not mine or stored.posted_at is not None:
            return stored
        await self.posting.again(stored)
        return await self.get(stored.request_id)

    async def get(self, request_id: str) -> Request:
        request = await self.store.get(request_id)
        if request is None:
            raise NotFound(f"no request with request_id {request_id!r}")
        self._hold(request)
        return request

    def _hold(self, request: Request) -> None:
        """Keep `request` at hand for the next click on it (the least recently used goes)."""
        self._held[request.request_id] = request
        self._held.move_to_end(request.request_id)
        if len(self._held) > HELD_REQUESTS:
            self._held.popitem(last=False)

    async def _fresh(self, request_id: str) -> Request | None:
        request = await self.store.get(request_id)
        if request is not None:
            self._hold(request)
        return request

    async def wait(self, request_id: str, timeout_s: float) -> Request:
        """The request once it has ended, or as it is after `timeout_s` seconds.

        While it waits, a waiter holds only the id and the status: the ending is handed to it
        by the transition (one object shared by every waiter), or read once at the end."""
        with self.hub.watch(request_id) as watch:
            status = await self.store.status(request_id)
            if status is None:
                raise NotFound(f"no request with request_id {request_id!r}")
            if status.is_terminal or timeout_s <= 0:
                return await self.get(request_id)
            # A timer that wakes the watch, rather than a timeout that cancels the task: one
            # object less for each of many waiting agents, and no read is cut short.
            timer = asyncio.get_running_loop().call_later(timeout_s, watch.expire)
            try:
                while not (self.hub.closed or watch.expired):
                    await watch.changed
                    latest = watch.take()
                    if latest is None and not (self.hub.closed or watch.expired):
                        latest = await self.get(request_id)
                    if latest is not None and latest.status.is_terminal:
                        return latest
            finally:
                timer.cancel()
            # Timed out, or shutting down; a change may also have gone unheard (another
            # replica's NOTIFY was lost): read again.
            return await self.get(request_id)

    async def events(
        self,
        request_id: str | None = None,
        since: datetime | None = None,
        limit: int = 1000,
        *,
        until: datetime | None = None,
        after: int = 0,
    ) -> list[Event]:
        """The audit trail, in order: of one request (NotFound when there is none) or of all;
        `after` (a `seq`) gives the page after that event."""
        found = await self.store.events(request_id, since, limit, until=until, after=after)
        if request_id is not None and not found and not after:
            await self.get(request_id)
        return found

    def now(self) -> datetime:
        """The broker's time, the one its deadlines and the audit trail are written in."""
        return self.clock.now()

    @property
    def version(self) -> int:
        """A counter that moves on every change of any request."""
        return self.hub.version

    async def wait_for_change(self, since: int, max_wait_s: float) -> int:
        """The change counter once it passes `since`, or after `max_wait_s` seconds."""
        return await self.hub.wait_for_change(since, max_wait_s)

    @property
    def closed(self) -> bool:
        """Shutting down: waits return at once."""
        return self.hub.closed

    def close_waiters(self) -> None:
        """Wake every long-poll for good, so the server need not wait out their timeouts."""
        self.hub.close()

    async def prune(self, older_than: timedelta) -> int:
        """Forget requests that ended longer than `older_than` ago, with their audit trail."""
        pruned = await self.store.prune(self.clock.now() - older_than)
        if pruned:
            log.info("pruned %d requests that ended over %s ago", pruned, older_than)
        return pruned

    async def ping(self) -> None:
        """Raise unless the store answers (for readiness)."""
        await self.store.ping()

    async def waiting_by_surface(self) -> dict[str, int]:
        """How many requests wait now on each surface, from the store: every replica's."""
        return await self.store.waiting_by_surface()

    async def secret(self, name: str) -> bytes:
        """A random secret every replica shares, made on first use (see `Store.secret`)."""
        return await self.store.secret(name)

    @property
    def platforms(self) -> list[str]:
        return sorted(self._surfaces)

    async def answer_form(
        self, request_id: str, person: Person, origin: MessageRef | None = None
    ) -> FormOpens | Refused:
        """What a form for typing an answer (a chat platform's modal), opened by `person` from
        `origin`, is prefilled with: the request and what they have chosen so far. Or why it
        does not open, checked as a click is (a person who may not answer is recorded as
        denied): a form nobody could submit is not shown."""
        request, draft = await self.store.get_with_draft(request_id, person)
        if request is None:
            return Refused(Refusal.UNKNOWN_REQUEST)
        self._hold(request)
        view = RequestView.of(request)
        refused = self._foreign(view, person, origin)
        if refused is not None:
            return refused
        answering = await self._eligible(view, person, origin)
        if isinstance(answering, Refused):
            return answering
        return FormOpens(view, draft)

    async def list_requests(
        self, status: Status | None = None, limit: int = 100, older_than: str | None = None
    ) -> list[Request]:
        """Newest first; `older_than`: the page after that request (see `Store.list_requests`)."""
        return await self.store.list_requests(status, limit, older_than)

    async def count_requests(self, status: Status, older_than: str | None = None) -> int:
        return await self.store.count_requests(status, older_than)

    async def withdraw(self, request_id: str) -> Request:
        await self.get(request_id)
        return await self._finish(request_id, Ending(Status.WITHDRAWN, self.clock.now()))

    # --- the people's side ------------------------------------------------------------

    async def act(
        self,
        request_id: str,
        person: Person,
        intent: Intent,
        origin: MessageRef | None = None,
        *,
        sent_at: datetime | None = None,
        click_id: str | None = None,
    ) -> Outcome:
        """The one entry for every click: read the request once, check the click once, write.

        `origin` is the message the click claims to come from; every claim it makes that was
        recorded when the message was posted must match. `sent_at` is when the platform says
        the click happened: a vote never gives way to an older click (a replay), and a click
        delivered again (a platform's retry, to this replica or another) is REPLAYED, which
        no surface answers with a note. `click_id`, the id of the click's delivery where a
        surface has one (a form's), is known again the same way. Nothing is raised for a
        click that cannot count: the outcome says why, and each surface words that once.
        """
        started = time.perf_counter()
        click = None
        if sent_at is not None or click_id is not None:
            # Each surface's delivery ids are its own: another's can never stand for them.
            known_by = None if click_id is None else f"{person.platform}:{click_id}"
            click = Click(person, self.clock.now(), sent_at, known_by)
        acted = await self._act(request_id, person, intent, origin, sent_at, click)
        if isinstance(acted, _Lost):
            return acted.refused
        outcome = acted
        if (
            click is not None
            and isinstance(outcome, Refused)
            and outcome.reason not in CHECKED_FOR_REDELIVERY
            and not await self._first_delivery(request_id, click)
        ):
            # Refusals write nothing else, so only they pay for this; a vote's click is
            # recorded with its vote, a cancel's with its ending, a denial's with its event.
            return Refused(Refusal.REPLAYED, outcome.view)
        if isinstance(outcome, Decided):
            self.metrics.observe_click_to_agent(person.platform, time.perf_counter() - started)
        return outcome

    async def _act(
        self,
        request_id: str,
        person: Person,
        intent: Intent,
        origin: MessageRef | None,
        sent_at: datetime | None,
        click: Click | None,
    ) -> Outcome | _Lost:
        held = self._held.get(request_id)
        asked = MAX_QUESTIONS if held is None else len(held.questions)
        # A submit that leaves a question out takes it from the person's draft.
        needs_draft = (
            isinstance(intent, Submit) and len(intent.selections.keys() & range(asked)) < asked
        )
        draft: Selections = {}
        request = None if needs_draft else held
        if request is not None and (
            not _from(origin, request)
            or _drafts(intent, request)
            or self._may_have_escalated(request)
        ):
            # A message recorded since, perhaps; a draft is saved only while the request
            # waits, as read now.
            request = None
        if request is None:
            if needs_draft:
                request, draft = await self.store.get_with_draft(request_id, person)
                if request is not None:
                    self._hold(request)
            else:
                request = await self._fresh(request_id)
        if request is None:
            return Refused(Refusal.UNKNOWN_REQUEST)
        view = RequestView.of(request)
        refused = self._foreign(view, person, origin)
        if refused is not None:
            return refused
        chosen = _checked(request.questions, intent)
        if chosen is None or not _fits(request, intent):
            return Refused(Refusal.FOREIGN_MESSAGE, await self._view(view))
        answering = await self._eligible(
            view, person, origin, cancelling=isinstance(intent, Cancel), click=click
        )
        if isinstance(answering, Refused):
            if answering.reason is Refusal.ALREADY_ENDED:
                return answering  # an ending is final: the view at hand shows it
            return replace(answering, view=await self._view(view))
        person = answering
        match intent:
            case Cancel():
                ending = Ending(Status.CANCELLED, self.clock.now(), by=person)
                self._crash("cancel.checked")
                return await self._decide(view, ending, click)
            case Decline():
                ending = Ending(Status.DECLINED, self.clock.now(), by=person)
                return await self._decide(view, ending, click)
            case Fill(values=values):
                return await self._fill(view, person, values, sent_at, click)
            case Pick() | Choose() if not (view.one_click and isinstance(intent, Pick)):
                question = intent.question
                saved = await self.store.save_draft(request_id, person, chosen, self.clock.now())
                return Drafted(view, question, saved)
        chosen = merge(draft, chosen)
        return await self._vote(view, person, chosen, intent, sent_at, click)

    async def _first_delivery(self, request_id: str, click: Click) -> bool:
        first = await self.store.first_delivery(request_id, click)
        if not first:
            _delivered_again(request_id, click.person)
        return first

    def _foreign(
        self, view: RequestView, person: Person, origin: MessageRef | None
    ) -> Refused | None:
        """Why a click cannot count whoever made it: it did not come from one of the request's
        messages; None when it did."""
        if _from(origin, view.request):
            return None
        request_id = view.request_id
        log.warning(
            "refused a click by %s on %s: it did not come from one of its messages (%s)",
            person.key,
            request_id,
            _where(origin),
            extra={"request_id": request_id, "surface": person.platform, "person": person.key},
        )
        return Refused(Refusal.FOREIGN_MESSAGE, view)

    async def _eligible(
        self,
        view: RequestView,
        person: Person,
        origin: MessageRef | None,
        *,
        cancelling: bool = False,
        click: Click | None = None,
    ) -> Person | Refused:
        """`person`, with the groups of theirs that the answerers name, when they may act on
        the request now (`policy.eligibility`); else why not, showing `view` as it was given.
        A person refused for who they are is recorded in the audit trail as denied. Their
        platform is asked about groups only when groups could decide (`groups_to_ask`)."""
        request = view.request
        found = None
        entries = groups_to_ask(request, person, cancelling=cancelling)
        directory = self._surfaces.get(person.platform) if entries else None
        # `isinstance` against a protocol walks its members (microseconds): only when asked.
        if directory is not None and isinstance(directory, GroupDirectory):
            found = await directory.membership(person, entries, self.clock.now())
        verdict = eligibility(request, person, cancelling=cancelling, found=found)
        if not isinstance(verdict, Ineligible):
            return verdict
        if verdict.reason is not Refusal.ALREADY_ENDED:
            data: dict[str, Any] = {"origin": _where(origin)}
            if verdict.reason is Refusal.SELF_APPROVAL:
                data["reason"] = verdict.reason.value
            denied = Event(view.request_id, self.clock.now(), "denied", person, data)
            # A click delivered again is denied once, in the trail as in the notes.
            if not await self.store.deny(denied, click):
                _delivered_again(view.request_id, person)
                return Refused(Refusal.REPLAYED, view)
        return Refused(verdict.reason, view, unchecked=verdict.unchecked)

    async def _view(self, held: RequestView) -> RequestView:
        """The request as it is now, for a refusal that shows it: a click answered from what
        was held reads it again (refusals are rare; counted votes never wait for this)."""
        fresh = await self._fresh(held.request_id)
        return held if fresh is None else RequestView.of(fresh)

    async def _vote(
        self,
        view: RequestView,
        person: Person,
        chosen: Selections,
        submitted: Intent,
        sent_at: datetime | None,
        click: Click | None,
    ) -> Outcome | _Lost:
        """One transaction: still waiting? then the vote, and the ending when it decides. The
        waiters are woken right after it commits, before any platform hears of it."""
        typed, note = (
            (submitted.typed, submitted.note) if isinstance(submitted, Submit) else ({}, "")
        )
        vote = ballot(view.questions, chosen, typed, note, view.request.policy)
        changed: dict[str, Any] | None = None
        if isinstance(submitted, Submit) and submitted.changed is not None:
            if changeable(view.request) is None or chosen != {0: (0,)}:
                return Refused(Refusal.FOREIGN_MESSAGE, await self._view(view))
            try:
                changed = changed_input(view.request, submitted.changed)
            except ChangeRefused as refusal:
                problems = {**vote.problems, CHANGED: str(refusal)}
                vote = replace(vote, problems=problems)
        if vote.problems:
            return Refused(
                Refusal.BAD_TEXT,
                await self._view(view),
                vote.missing,
                selections=chosen,
                problems=vote.problems,
            )
        if vote.missing:
            return Refused(
                Refusal.MISSING_ANSWERS, await self._view(view), vote.missing, selections=chosen
            )
        return await self._cast(view, person, vote.answers, vote.notes, sent_at, click, changed)

    async def _fill(
        self,
        view: RequestView,
        person: Person,
        values: Mapping[str, object],
        sent_at: datetime | None,
        click: Click | None,
    ) -> Outcome | _Lost:
        """A typed form's values, read and checked once: a vote with them as answers (each
        value's canonical JSON, so equal values agree), or BAD_VALUES and nothing recorded."""
        form = view.request.form
        assert form is not None
        try:
            content = read_input(form, values)
        except FormRefused as refused:
            return Refused(
                Refusal.BAD_VALUES,
                await self._view(view),
                field_problems=refused.by_field(),
                values=dict(values),
            )
        return await self._cast(view, person, encode(content), {}, sent_at, click)

    async def _cast(
        self,
        view: RequestView,
        person: Person,
        answers: dict[str, str],
        notes: dict[str, str],
        sent_at: datetime | None,
        click: Click | None,
        changed: dict[str, Any] | None = None,
    ) -> Outcome | _Lost:
        request_id = view.request_id
        voted, outcome = await self.store.vote(
            request_id,
            person,
            answers,
            view.quorum,
            self.clock.now(),
            sent_at,
            notes=notes,
            click_id=None if click is None else click.click_id,
            changed=changed,
        )
        self._hold(voted)
        if outcome is VoteOutcome.CLOSED:
            lost = Refused(Refusal.ALREADY_ENDED, RequestView.of(voted))
            # A click known by its delivery's id was recorded with the vote it tried.
            return lost if click is None or click.click_id is None else _Lost(lost)
        if outcome is VoteOutcome.REPLAYED:
            log.info(
                "ignored a replayed click by %s on %s",
                person.key,
                request_id,
                extra={"request_id": request_id, "surface": person.platform, "person": person.key},
            )
            return Refused(Refusal.REPLAYED, RequestView.of(voted))
        self._crash("vote.recorded")
        self.hub.publish(request_id, voted if voted.status.is_terminal else None)
        # One turn of the loop for the agents just woken: their answers go out before the
        # rest of the click (the person's note, the message update, metrics) is worked out.
        await asyncio.sleep(0)
        now = RequestView.of(voted)
        self.messages.changed(voted)
        if outcome is VoteOutcome.DECIDED:
            request_log.step(request_id, voted.status.value, [person.platform], person)
            self.metrics.record_ended(voted)
            if self.webhooks is not None:
                self.webhooks.poke()
        receipt = now.receipt(person)
        if outcome is VoteOutcome.DECIDED or receipt is None:
            return Decided(now)
        return Counted(now, receipt)

    async def _decide(
        self, held: RequestView, ending: Ending, click: Click | None
    ) -> Outcome | _Lost:
        """End the request for a click; the click, when it can be known again, is recorded in
        the same write, so that a crash before it leaves the click still to be delivered."""
        request_id = held.request_id
        if click is None:
            request, won = await self.store.finish(request_id, ending)
        else:
            finished = await self.store.finish_click(request_id, ending, click)
            if finished is None:
                _delivered_again(request_id, click.person)
                return Refused(Refusal.REPLAYED, held)
            request, won = finished
        self._hold(request)
        view = RequestView.of(request)
        if not won:
            lost = Refused(Refusal.ALREADY_ENDED, view)
            return lost if click is None else _Lost(lost)
        self._crash("finish.recorded")
        self._finished(request)
        return Decided(view)

    def _may_have_escalated(self, request: Request) -> bool:
        """An escalation step may have been taken since `request` was read (here or by another
        replica): who may answer and where it is posted are read again."""
        return request.escalate_at is not None and request.escalate_at <= self.clock.now()

    # --- time -------------------------------------------------------------------------

    async def expire_due(self) -> int:
        """End every waiting request whose deadline has passed, send due reminders; return
        how many requests ended."""
        ended = 0
        while ids := await self.store.expired(self.clock.now()):
            for request_id in ids:
                try:
                    await self._finish(request_id, await self._deadline_ending(request_id))
                    ended += 1
                except AlreadyEnded:
                    pass
        for request_id in await self.store.due_reminders(self.clock.now()):
            if await self.store.mark_reminded(request_id, self.clock.now()):
                # The reminder goes out with the message update, on each message once.
                self.messages.changed(await self.get(request_id))
        for request_id in await self.store.due_escalations(self.clock.now()):
            await self._escalate(request_id)
        return ended

    async def _escalate(self, request_id: str) -> None:
        """Take the request's next escalation step, unless another process took it first: the
        step's target gets the request posted, the people who may answer now are pinged, and
        every message shows the step."""
        request = await self.get(request_id)
        now = self.clock.now()
        step = request.escalation_step
        if request.escalate_at is None or request.escalate_at > now:
            return
        if not await self.store.escalate(request_id, step, now, due_at(request, step + 1, now)):
            return
        escalated = await self.get(request_id)
        request_log.step(
            request_id,
            "escalated",
            request_log.surfaces_of(escalated),
            detail=f" (step {step + 1})",
        )
        if escalated.posted_at is None:
            async with self.store.posting(request_id) as mine:
                if mine:
                    await self.posting.again(escalated)
            escalated = await self.get(request_id)
        self.hub.publish(request_id)
        # The ping (when the step mentions) goes out with the message update.
        self.messages.changed(escalated)

    async def _deadline_ending(self, request_id: str) -> Ending:
        request = await self.get(request_id)
        answers = request.policy.timeout_answers
        if request.policy.timeout_decline:
            return Ending(Status.DECLINED, self.clock.now(), event_data={"decided_by": "timeout"})
        if answers is None:
            return Ending(Status.EXPIRED, self.clock.now())
        return Ending(
            Status.ANSWERED, self.clock.now(), answers=answers, event_data={"decided_by": "timeout"}
        )

    async def _expire_forever(self) -> None:
        while True:
            self._deadline_moved.clear()
            try:
                deadline = await self.store.next_deadline()
            except Exception:
                log.exception(
                    "reading the next deadline failed; trying again in %.0fs", EXPIRY_RETRY_S
                )
                await asyncio.sleep(EXPIRY_RETRY_S)
                continue
            sleeper = None if deadline is None else self.clock.sleep_until(deadline)
            moved = self._deadline_moved.wait()
            waits = [asyncio.ensure_future(c) for c in (sleeper, moved) if c is not None]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waits:
                    w.cancel()
            try:
                await self.expire_due()
            except Exception:
                # A failing store must not turn a past deadline into a busy loop.
                log.exception("expiring requests failed; trying again in %.0fs", EXPIRY_RETRY_S)
                await asyncio.sleep(EXPIRY_RETRY_S)

    # --- internals --------------------------------------------------------------------

    def _target(self, raw: Any) -> Target:
        target = parse_target(raw)
        surface = self._surfaces.get(target.platform)
        if surface is None:
            hint = self._unconfigured.get(target.platform)
            if hint:
                raise UnknownTarget(
                    f"target {str(target)!r}: {target.platform} is not set up; {hint}"
                )
            known = ", ".join(sorted(self._surfaces)) or "none"
            raise UnknownTarget(
                f"target {str(target)!r}: unknown platform {target.platform!r}; "
                f"configured platforms: {known}"
            )
        surface.check_target(target)
        return target

    def _check_form_fits(
        self, form: Form | None, targets: Sequence[Target], steps: Mapping[int, Target]
    ) -> None:
        """Every surface the form may be shown on, its targets' and its escalation steps'
        (`check_ladder`'s), shows all of its fields in one form."""
        if form is None or not form.fields:
            return
        count = len(form.fields)
        shown = [(f"target {str(t)!r}", t) for t in targets]
        shown += [(f"escalation[{i}].target {str(t)!r}", t) for i, t in steps.items()]
        narrow = [
            (where, most)
            for where, target in shown
            if count > (most := form_fields_of(self._surfaces[target.platform]))
        ]
        if not narrow:
            return
        wider = [p for p, s in sorted(self._surfaces.items()) if form_fields_of(s) >= count]
        instead = f", or target {' or '.join(wider)}" if wider else ""
        problems = [
            Problem(
                "form.requested_schema.properties",
                f"holds {count} fields, and {where} shows at most {most} in one form: "
                f"ask with at most {most} fields{instead}",
            )
            for where, most in narrow
        ]
        raise InvalidQuestion(problems, FORM_ASK)

    def check_ladder(self, ladder: Ladder | None) -> dict[int, Target]:
        """Each step's answerers and target must work here, as the ask's own must; the steps'
        targets, by step."""
        targets: dict[int, Target] = {}
        for index, step in enumerate(ladder.steps if ladder else ()):
            if step.target is not None:
                try:
                    targets[index] = self._target(step.target)
                except UnknownTarget as error:
                    problem = Problem(f"escalation[{index}].target", str(error))
                    raise InvalidQuestion([problem]) from None
            try:
                self._check_answerers(step.answerers or ())
            except InvalidQuestion as error:
                where = f"escalation[{index}]"
                raise InvalidQuestion(
                    [Problem(f"{where}.{p.location}", p.message) for p in error.problems]
                ) from None
        return targets

    def _check_answerers(self, answerers: Sequence[str]) -> None:
        """Every answerer must be of a kind a configured surface knows, or nobody could ever
        answer as them (a typo in a group's kind, `team-grup:S0SRE`, would make a gate no one
        can pass)."""
        kinds = {kind: s.platform for s in self._surfaces.values() for kind in s.answerer_kinds}
        problems = []
        for index, entry in enumerate(answerers):
            kind = entry.partition(":")[0]
            if kind in kinds:
                continue
            platform = kind.split("-")[0]
            hint = self._unconfigured.get(platform)
            why = f"{platform} is not set up ({hint})" if hint else f"unknown kind {kind!r}"
            valid = ", ".join(f"{k}:…" for k in sorted(kinds)) or "none"
            problems.append(Problem(f"answerers[{index}]", f"{why}; valid here: {valid}"))
        if problems:
            raise InvalidQuestion(problems)

    async def _finish(self, request_id: str, ending: Ending) -> Request:
        request, won = await self.store.finish(request_id, ending)
        if not won:
            raise AlreadyEnded(request)
        self._crash("finish.recorded")
        self._finished(request)
        return request

    def _finished(self, request: Request) -> None:
        self._hold(request)
        # The waiting agents first: the log line and the rest are nobody's wait.
        self.hub.publish(request.request_id, request)
        by = request.ended_by
        surfaces = [by.platform] if by is not None else request_log.surfaces_of(request)
        request_log.step(request.request_id, request.status.value, surfaces, by)
        self.messages.changed(request)
        self.metrics.record_ended(request)
        if self.webhooks is not None:
            self.webhooks.poke()


def _where(origin: MessageRef | None) -> dict[str, str] | None:
    if origin is None:
        return None
    return {"platform": origin.platform, "channel": origin.channel, "message_id": origin.message_id}


def _drafts(intent: Intent, request: Request) -> bool:
    """The click only changes the person's draft (see `RequestView.one_click`)."""
    questions = request.questions
    one_click = len(questions) == 1 and not questions[0].multi_select
    return isinstance(intent, Choose) or (isinstance(intent, Pick) and not one_click)


def _from(origin: MessageRef | None, request: Request) -> bool:
    """The click claims no message, or one of the request's own (see `_same_message`)."""
    return origin is None or any(_same_message(origin, m) for m in request.messages)


def _same_message(origin: MessageRef, posted: MessageRef) -> bool:
    """The click came from `posted`: same message, and every attribute the click claims
    (its workspace, its app…) that was recorded when the message was posted matches."""
    if (origin.platform, origin.channel, origin.message_id) != (
        posted.platform,
        posted.channel,
        posted.message_id,
    ):
        return False
    return all(posted.data[k] == v for k, v in origin.data.items() if k in posted.data)


def _fits(request: Request, intent: Intent) -> bool:
    """The click is one the request has: a form's Fill and Decline, the questions' picks and
    submits, and Cancel on either."""
    if isinstance(intent, Cancel):
        return True
    return (request.form is not None) == isinstance(intent, Fill | Decline)


def _checked(questions: Sequence[UserQuestion], intent: Intent) -> Selections | None:
    """The selections a click stands for; None when it names a question or option the request
    does not have (it was not made for this request)."""
    match intent:
        case Pick(question=question, option=option):
            given: Selections = {question: (option,)}
        case Choose(question=question, options=options):
            given = {question: options}
        case Submit(selections=selections, typed=typed):
            if any(not 0 <= q < len(questions) for q in typed):
                return None
            given = dict(selections)
        case _:
            return {}
    chosen: Selections = {}
    for question, options in given.items():
        picked = tuple(sorted(set(options)))
        if not 0 <= question < len(questions) or any(
            not 0 <= o < len(questions[question].options) for o in picked
        ):
            return None
        # A submitted form keeps every option it names: its ballot refuses two for a
        # single-select question rather than taking one the person may not have meant.
        whole = questions[question].multi_select or isinstance(intent, Submit)
        chosen[question] = picked if whole else picked[-1:]
    return chosen


def _delivered_again(request_id: str, person: Person) -> None:
    log.info(
        "ignored a click by %s on %s delivered again",
        person.key,
        request_id,
        extra={"request_id": request_id, "surface": person.platform, "person": person.key},
    )
