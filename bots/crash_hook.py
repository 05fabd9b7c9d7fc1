"""The fault-injection tests' hook: `ASKBRIDGE_TEST_CRASH_AT=<point>[#<n>]` makes `askbridge
serve` SIGKILL itself the n-th time (the first by default) the broker reaches that point of
`core/crash_points.py`. Without it, which is always outside those tests, the broker is given
`no_crash` and nothing of this runs.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Mapping

from askbridge.core.crash_points import POINTS, CrashPoint, no_crash
from askbridge.core.errors import StartupError

log = logging.getLogger("askbridge")

ENV = "ASKBRIDGE_TEST_CRASH_AT"


def crash_point_from(environ: Mapping[str, str]) -> CrashPoint:
    """What the broker calls at each point: `no_crash`, unless `ENV` names one."""
    spec = environ.get(ENV, "").strip()
    if not spec:
        return no_crash
    point, _, nth = spec.partition("#")
    if point not in POINTS or not (nth or "1").isdecimal() or int(nth or "1") < 1:
        known = ", ".join(POINTS)
        raise StartupError(f"{ENV}={spec!r} is not <point>[#<n>] with a point among: {known}")
    log.warning(
        "%s=%s: this process kills itself (SIGKILL) when %s; this is for tests only",
        ENV,
        spec,
        POINTS[point],
    )
    return _Crash(point, int(nth or "1"))


class _Crash:
    def __init__(self, point: str, nth: int) -> None:
        self.point = point
        self.left = nth

    def __call__(self, point: str) -> None:
        if point != self.point:
            return
        self.left -= 1
        if self.left == 0:
            log.warning("crashing at %s (%s)", point, ENV)
            os.kill(os.getpid(), signal.SIGKILL)
