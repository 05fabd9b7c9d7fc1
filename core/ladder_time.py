"""When an escalation ladder's steps fall due, and when those taken were taken: `after_s` from
the request's creation, held past the ladder's quiet hours. The broker schedules steps by
`due_at`; the view tells people when a step came by `taken_at`."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from askbridge.core.models import QuietHours, Request


def due_at(request: Request, step: int, not_before: datetime) -> datetime | None:
    """When step `step` (from 0) of the request's ladder is due: `after_s` from creation, not
    before `not_before`, out of quiet hours; None when there is no such step or it would come
    at or after the deadline."""
    ladder = request.policy.escalation
    if ladder is None or not 0 <= step < len(ladder.steps):
        return None
    at = max(request.created_at + timedelta(seconds=ladder.steps[step].after_s), not_before)
    if ladder.quiet_hours is not None:
        at = after_quiet_hours(ladder.quiet_hours, at)
    if request.expires_at is not None and at >= request.expires_at:
        return None
    return at


def taken_at(request: Request, number: int) -> datetime:
    """When step `number` (from 1) of the request's ladder, already taken, was taken: the last
    one's time is kept (`escalated_at`); an earlier one's is when it fell due, out of quiet
    hours, which is when it was taken unless askbridge was not running then."""
    ladder = request.policy.escalation
    assert ladder is not None, "a request with a ladder"
    if number == request.escalation_step and request.escalated_at is not None:
        return request.escalated_at
    at = request.created_at + timedelta(seconds=ladder.steps[number - 1].after_s)
    return at if ladder.quiet_hours is None else after_quiet_hours(ladder.quiet_hours, at)


def after_quiet_hours(quiet: QuietHours, at: datetime) -> datetime:
    """`at`, or the end of the quiet window it falls in."""
    zone = ZoneInfo(quiet.tz)
    local = at.astimezone(zone)
    start, end = _clock(quiet.start), _clock(quiet.end)
    for day in (local.date() - timedelta(days=1), local.date()):
        opens = _local(day, start, zone)
        closes = _local(day + timedelta(days=1) if end <= start else day, end, zone)
        if opens <= local < closes:
            return closes.astimezone(UTC)
    return at


def _clock(text: str) -> time:
    hour, minute = text.split(":")
    return time(int(hour), int(minute))


def _local(day: date, at: time, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, at, tzinfo=zone)
