"""Escalation ladders: what a request does while nobody answers it, step by step.

A ladder is a list of steps `{after_s, answerers?, target?, mention?}`, with optional quiet
hours; this module only reads ladders (when steps fall due is `ladder_time.py`), the broker takes
the steps, each claimed once in the store (`Store.escalate`). What each step does:
docs/how-to/escalation.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from askbridge.core.errors import Problem
from askbridge.core.models import EscalationStep, Ladder, QuietHours
from askbridge.core.policy import ANSWERER
from askbridge.core.problems import broken, rule, shown, text_problem
from askbridge.core.surface import SurfaceWords
from askbridge.core.targets import TargetObject, TargetText, read_targets

MAX_STEPS = 5
MAX_ANSWERERS = 50
MAX_SECONDS = 30 * 24 * 3600.0
STEP_FIELDS = ("after_s", "answerers", "target", "mention")
CLOCK_TIME = re.compile(r"(?P<hour>[01]\d|2[0-3]):(?P<minute>[0-5]\d)")


def ladder_example(words: SurfaceWords) -> str:
    """A two-step ladder in JSON, its second step naming a group and a target of a surface."""
    groups = [g for s in words.specs for g in s.groups] or [words.people().split(", ")[0]]
    target = words.simple_targets()[-1]
    return (
        f'[{{"after_s": 1800}}, {{"after_s": 3600, "answerers": ["{groups[0]}"], '
        f'"target": "{target}"}}]'
    )


class StepInput(BaseModel):
    """An escalation step as an agent writes it (for the JSON schema)."""

    model_config = ConfigDict(title="EscalationStep")

    after_s: float = Field(gt=0, le=MAX_SECONDS, description="seconds after creation")
    answerers: list[str] | None = Field(
        default=None, description="who may answer from this step on; absent: the same people"
    )
    target: TargetText | TargetObject | None = Field(
        default=None, description="also post the request here"
    )
    mention: bool = Field(default=True, description="ping the people who may answer")


class QuietHoursInput(BaseModel):
    model_config = ConfigDict(title="QuietHours")

    tz: str = Field(description="an IANA time zone, e.g. Europe/Berlin")
    start: str = Field(pattern=CLOCK_TIME.pattern, description="HH:MM")
    end: str = Field(pattern=CLOCK_TIME.pattern, description="HH:MM; before start: overnight")


class LadderInput(BaseModel):
    model_config = ConfigDict(title="EscalationLadder")

    steps: list[StepInput] = Field(max_length=MAX_STEPS)
    quiet_hours: QuietHoursInput | None = Field(
        default=None, description="steps due in this daily window wait until it ends"
    )


LadderSchema = Annotated[list[StepInput], Field(max_length=MAX_STEPS)] | LadderInput | None
"""What `escalation` may be, for the JSON schema."""


def read_answerers(raw: Any, words: SurfaceWords | None = None) -> tuple[str, ...]:
    """Answerer entries from a list (or a comma-separated text), each checked, duplicates
    dropped; raises the problems found (for a pydantic validator)."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [part for part in raw.split(",") if part.strip()]
    if not isinstance(raw, list | tuple):
        raise rule(f"must be a list of strings, got {shown(raw)}")
    if len(raw) > MAX_ANSWERERS:
        raise rule(f"must name at most {MAX_ANSWERERS} answerers, got {len(raw)}")
    entries: list[str] = []
    problems: list[Problem] = []
    for index, entry in enumerate(raw):
        text = entry.strip() if isinstance(entry, str) else entry
        problem = text_problem(text) if isinstance(text, str) else None
        if problem is None and (not isinstance(text, str) or not ANSWERER.fullmatch(text)):
            wanted = (words or SurfaceWords()).answerer_entries()
            problem = f"must be {wanted}, got {shown(entry)}"
        if problem is not None:
            problems.append(Problem(f"[{index}]", problem))
        elif text not in entries:
            entries.append(text)
    if problems:
        raise broken(*problems)
    return tuple(entries)


def read_ladder(raw: Any, words: SurfaceWords | None = None) -> Ladder:
    """A ladder from a list of steps or `{"steps": [...], "quiet_hours": {...}}`; raises every
    problem found, each naming the step and field, for a pydantic validator."""
    words = words or SurfaceWords()
    if isinstance(raw, Ladder):
        return raw
    quiet_raw: Any = None
    steps_raw: Any = raw
    problems: list[Problem] = []
    if isinstance(raw, Mapping):
        unknown = sorted(set(raw) - {"steps", "quiet_hours"})
        if unknown:
            problems.append(
                Problem("", f"unknown fields {unknown}: a ladder has steps and quiet_hours")
            )
        steps_raw, quiet_raw = raw.get("steps"), raw.get("quiet_hours")
        where = ".steps"
    else:
        where = ""
    if not isinstance(steps_raw, list | tuple):
        raise rule(
            "must be a list of steps or an object {steps, quiet_hours}, such as "
            f"{ladder_example(words)}; got {shown(raw)}"
        )
    if len(steps_raw) > MAX_STEPS:
        raise rule(f"must have at most {MAX_STEPS} steps, got {len(steps_raw)}")
    steps: list[EscalationStep] = []
    for index, step_raw in enumerate(steps_raw):
        step = _step(step_raw, f"{where}[{index}]", problems, words)
        if step is None:
            continue
        if steps and step.after_s <= steps[-1].after_s:
            problems.append(
                Problem(
                    f"{where}[{index}].after_s",
                    f"must be later than the step before ({steps[-1].after_s:g} s): after_s "
                    f"counts from when the request was created, got {step.after_s:g}",
                )
            )
        steps.append(step)
    quiet = None if quiet_raw is None else _quiet_hours(quiet_raw, problems)
    if problems:
        raise broken(*problems)
    return Ladder(steps=tuple(steps), quiet_hours=quiet)


def _step(
    raw: Any, where: str, problems: list[Problem], words: SurfaceWords
) -> EscalationStep | None:
    if not isinstance(raw, Mapping):
        problems.append(
            Problem(where, f'must be an object such as {{"after_s": 1800}}, got {shown(raw)}')
        )
        return None
    found = len(problems)
    unknown = sorted(set(raw) - set(STEP_FIELDS))
    if unknown:
        known = ", ".join(STEP_FIELDS)
        problems.append(Problem(where, f"unknown fields {unknown}: a step has {known}"))
    after = raw.get("after_s")
    if isinstance(after, bool) or not isinstance(after, int | float) or not after > 0:
        after = None
    if after is None or after > MAX_SECONDS:
        problems.append(
            Problem(
                f"{where}.after_s",
                "must be a number of seconds after the request was created, above 0 and at "
                f"most {MAX_SECONDS:.0f}, got {shown(raw.get('after_s'))}",
            )
        )
    fields: dict[str, Any] = {"after_s": after}
    for name, read in (("answerers", read_answerers), ("target", read_targets)):
        if raw.get(name) is None:
            continue
        try:
            fields[name] = read(raw[name], words)
        except PydanticCustomError as error:
            problems += _problems(error, f"{where}.{name}")
    if "answerers" in fields and not fields["answerers"]:
        problems.append(
            Problem(f"{where}.answerers", "must name someone; leave it out to keep the answerers")
        )
    if "target" in fields:
        targets = fields["target"]
        if len(targets) != 1:
            problems.append(Problem(f"{where}.target", f"must be one target, got {len(targets)}"))
        else:
            fields["target"] = targets[0]
    mention = raw.get("mention", True)
    if not isinstance(mention, bool):
        problems.append(Problem(f"{where}.mention", f"must be true or false, got {shown(mention)}"))
    fields["mention"] = mention
    if len(problems) > found:
        return None
    return EscalationStep.model_validate(fields)


def _quiet_hours(raw: Any, problems: list[Problem]) -> QuietHours | None:
    example = '{"tz": "Europe/Berlin", "start": "22:00", "end": "07:00"}'
    if not isinstance(raw, Mapping):
        problems.append(Problem(".quiet_hours", f"must be an object such as {example}"))
        return None
    found = len(problems)
    tz = raw.get("tz")
    try:
        if not isinstance(tz, str) or not tz:
            raise ZoneInfoNotFoundError
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        # zoneinfo opens the name as a file: a folder of zones ('Europe') or a name too long
        # for the file system fails as an OSError, not as an unknown zone.
        problems.append(
            Problem(
                ".quiet_hours.tz",
                f"must be an IANA time zone such as 'Europe/Berlin' or 'UTC', got {shown(tz)}",
            )
        )
    for name in ("start", "end"):
        value = raw.get(name)
        if not isinstance(value, str) or not CLOCK_TIME.fullmatch(value):
            problems.append(
                Problem(f".quiet_hours.{name}", f"must be a time HH:MM (24 h), got {shown(value)}")
            )
    if len(problems) == found and raw["start"] == raw["end"]:
        problems.append(Problem(".quiet_hours", "start and end must differ"))
    if len(problems) > found:
        return None
    return QuietHours(tz=str(tz), start=raw["start"], end=raw["end"])


def _problems(error: PydanticCustomError, where: str) -> list[Problem]:
    inner: list[Problem] = list((error.context or {}).get("problems", ()))
    if not inner:
        return [Problem(where, error.message())]
    return [Problem(f"{where}{p.location}", p.message) for p in inner]
