"""Capacity floors with a wide margin: many waiting requests stay cheap, answers stay fast."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench.broker import measure


@pytest.mark.serial
async def test_waiting_requests_cost_kilobytes_and_answers_stay_fast(tmp_path: Path) -> None:
    results = await measure(2_000, tmp_path)
    # Measured on a 2-core machine: about 9 KiB and over 400 answers/s; the floors leave room
    # for a busy CI machine while still catching a regression by an order of magnitude.
    assert results["kib_per_waiting_request"] < 32
    assert results["answers_per_s_sequential"] > 100
