"""The question broker: the lifecycle of every request, from the agent's ask to its answer.

`waiting → answered | cancelled | expired | withdrawn`. Each transition is one `Store.finish`
(a compare-and-set), then waiters are woken, then the posted messages are re-rendered in the
background: the agent never waits on a chat platform to learn its answer.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from core.answers import merge, to_answers
from core.ask import REQUEST_ID_PATTERN as REQUEST_ID_PATTERN
from core.ask import Ask
from core.clock import Clock, SystemClock
from core.errors import (
    AlreadyEnded,
    AskbridgeError,
    Conflict,
    ForeignMessage,
    NotEligible,
    NotFound,
    SurfaceUnavailable,
    UnknownTarget,
)
from core.hub import Hub
from core.messages import BACKOFF_S, MessageUpdates
from core.models import MessageRef, Person, Request, Selections, Status, Target, UserQuestion
from core.policy import may_answer
from core.store.base import Ending, Event, Store, VoteOutcome
from core.surface import Surface
from core.targets import parse_target

log = logging.getLogger("askbridge.broker")

EXPIRY_RETRY_S = 5.0


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
    ) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.hub = Hub()
        self.default_timeout_s = default_timeout_s
        self.default_target = default_target
        self.surfaces: dict[str, Surface] = {}
        # platform -> how to enable it, for the error when a target names it
        self._unconfigured = dict(unconfigured or {})
        self.messages = MessageUpdates(store, self.surfaces, backoff_s=render_backoff_s)
        self._deadline_moved = asyncio.Event()
        self._expiry: asyncio.Task[None] | None = None

    def add_surface(self, surface: Surface) -> None:
        self.surfaces[surface.platform] = surface

    async def start(self) -> None:
        await self.store.listen(self._changed_elsewhere)
        self._expiry = asyncio.create_task(self._expire_forever(), name="askbridge-expiry")
        for request, message in await self.store.unrendered():
            self.messages.changed(request.model_copy(update={"messages": (message,)}))

    async def _changed_elsewhere(self, request_id: str) -> None:
        """Another replica changed `request_id`: wake our waiters, and look at deadlines again."""
        await self.hub.publish(request_id)
        self._deadline_moved.set()

    async def stop(self, grace_s: float = 5.0) -> None:
        """Stop expiring; give message updates in flight `grace_s` to finish, then cancel."""
        await self.hub.close()
        if self._expiry is not None:
            self._expiry.cancel()
            await asyncio.gather(self._expiry, return_exceptions=True)
        await self.messages.stop(grace_s)

    # --- the agent's side -------------------------------------------------------------

    async def ask(self, ask: Ask) -> tuple[Request, bool]:
        """Create and post a request; return it and whether it is new (False: a repeat)."""
        request_id = ask.request_id or f"ask_{uuid.uuid4()}"
        targets = [self._target(t) for t in ask.target or (self.default_target,)]
        timeout_s = self.default_timeout_s if ask.timeout_s is None else ask.timeout_s
        policy = ask.policy
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
        )
        stored, created = await self.store.create(draft)
        if not created:
            if stored.questions != ask.questions:
                raise Conflict(
                    f"request_id {request_id!r} already exists with other questions; "
                    "use a new request_id for a new question"
                )
            return stored, False
        await self._post(stored)
        if stored.expires_at is not None or stored.remind_at is not None:
            self._deadline_moved.set()
        await self.hub.publish(request_id)
        return await self.get(request_id), True

    async def get(self, request_id: str) -> Request:
        request = await self.store.get(request_id)
        if request is None:
            raise NotFound(f"no request with request_id {request_id!r}")
        return request

    async def wait(self, request_id: str, timeout_s: float) -> Request:
        """The request once it has ended, or as it is after `timeout_s` seconds."""
        with self.hub.watch(request_id) as watch:
            request = await self.get(request_id)
            if request.status.is_terminal or timeout_s <= 0:
                return request
            try:
                async with asyncio.timeout(timeout_s):
                    while not request.status.is_terminal and not self.hub.closed:
                        await watch.changed.wait()
                        watch.changed.clear()
                        request = watch.latest or await self.get(request_id)
            except TimeoutError:
                pass
            return request

    async def list_requests(self, status: Status | None = None, limit: int = 100) -> list[Request]:
        return await self.store.list_requests(status, limit)

    async def withdraw(self, request_id: str) -> Request:
        await self.get(request_id)
        return await self._finish(request_id, Ending(Status.WITHDRAWN, self.clock.now()))

    # --- the people's side ------------------------------------------------------------

    async def select(
        self,
        request_id: str,
        person: Person,
        question: int,
        options: Sequence[int],
        origin: MessageRef | None = None,
    ) -> Selections:
        """Remember one person's choice for one question until they submit."""
        request = await self._waiting(request_id, person, origin)
        chosen = _checked_choice(request.questions, question, options)
        return await self.store.save_draft(request_id, person, {question: chosen}, self.clock.now())

    async def submit(
        self,
        request_id: str,
        person: Person,
        selections: Selections | None = None,
        origin: MessageRef | None = None,
    ) -> Request:
        """Vote with the stored draft plus `selections`; MissingAnswers when one is left.

        With a quorum of 1 the vote answers the request. Otherwise the returned request may
        still be waiting, with this vote in its tally.
        """
        request = await self._waiting(request_id, person, origin)
        given: Selections = {
            q: _checked_choice(request.questions, q, o) for q, o in (selections or {}).items()
        }
        chosen = given
        if len(given) < len(request.questions):
            # Only clicks that do not carry every answer (Discord's Submit) need the draft.
            chosen = merge(await self.store.draft(request_id, person), given)
        answers = to_answers(request.questions, chosen)
        voted, outcome = await self.store.vote(
            request_id, person, answers, request.policy.quorum, self.clock.now()
        )
        if outcome is VoteOutcome.CLOSED:
            raise AlreadyEnded(voted)
        self.messages.changed(voted)
        await self.hub.publish(request_id, voted if voted.status.is_terminal else None)
        return voted

    async def cancel(
        self, request_id: str, person: Person, origin: MessageRef | None = None
    ) -> Request:
        await self._waiting(request_id, person, origin)
        return await self._finish(request_id, Ending(Status.CANCELLED, self.clock.now(), by=person))

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
                self.messages.remind(await self.get(request_id))
        return ended

    async def _deadline_ending(self, request_id: str) -> Ending:
        request = await self.get(request_id)
        answers = request.policy.timeout_answers
        if answers is None:
            return Ending(Status.EXPIRED, self.clock.now())
        return Ending(
            Status.ANSWERED, self.clock.now(), answers=answers, event_data={"decided_by": "timeout"}
        )

    async def _expire_forever(self) -> None:
        while True:
            self._deadline_moved.clear()
            deadline = await self.store.next_deadline()
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
        surface = self.surfaces.get(target.platform)
        if surface is None:
            hint = self._unconfigured.get(target.platform)
            if hint:
                raise UnknownTarget(
                    f"target {str(target)!r}: {target.platform} is not set up; {hint}"
                )
            known = ", ".join(sorted(self.surfaces)) or "none"
            raise UnknownTarget(
                f"target {str(target)!r}: unknown platform {target.platform!r}; "
                f"configured platforms: {known}"
            )
        surface.check_target(target)
        return target

    async def _post(self, request: Request) -> None:
        posted: list[MessageRef] = []
        for target in request.targets:
            surface = self.surfaces[target.platform]
            try:
                message = await surface.post(request, target)
            except Exception as error:
                reason = str(error) if isinstance(error, AskbridgeError) else repr(error)
                log.warning("posting %s to %s failed: %s", request.request_id, target, reason)
                await self.store.discard(request.request_id, self.clock.now(), reason)
                await self.messages.retract(request, posted, self.clock.now())
                raise SurfaceUnavailable(
                    f"could not post the question to {target}: {reason}"
                ) from error
            posted.append(message)
            await self.store.add_message(request.request_id, message, self.clock.now())

    async def _waiting(self, request_id: str, person: Person, origin: MessageRef | None) -> Request:
        request = await self.store.get(request_id)
        if request is None:
            raise NotFound("This question is no longer available.")
        if origin is not None and not any(_same_message(origin, m) for m in request.messages):
            log.warning(
                "refused a click by %s on %s: it did not come from one of its messages (%s)",
                person.key,
                request_id,
                _where(origin),
            )
            raise ForeignMessage()
        if request.status.is_terminal:
            raise AlreadyEnded(request)
        if not may_answer(request.policy, person):
            await self.store.add_event(
                Event(request_id, self.clock.now(), "denied", person, {"origin": _where(origin)})
            )
            raise NotEligible(request.policy.answerers)
        return request

    async def _finish(self, request_id: str, ending: Ending) -> Request:
        request, won = await self.store.finish(request_id, ending)
        if not won:
            raise AlreadyEnded(request)
        log.info("request %s %s", request_id, request.status.value)
        await self.hub.publish(request_id, request)
        self.messages.changed(request)
        return request


def _where(origin: MessageRef | None) -> dict[str, str] | None:
    if origin is None:
        return None
    return {"platform": origin.platform, "channel": origin.channel, "message_id": origin.message_id}


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


def _checked_choice(
    questions: Sequence[UserQuestion], question: int, options: Iterable[int]
) -> tuple[int, ...]:
    chosen = tuple(sorted(set(options)))
    if not 0 <= question < len(questions) or any(
        not 0 <= o < len(questions[question].options) for o in chosen
    ):
        raise ForeignMessage()
    if not questions[question].multi_select:
        chosen = chosen[-1:]
    return chosen
