"""`make unit` narrowed by PYTEST_ARGS: a selection that matches no test is not a green run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 120.0


def make_unit(pytest_args: str) -> subprocess.CompletedProcess[str]:
    if not (ROOT / ".venv" / "bin" / "pytest").exists():
        pytest.skip("no .venv in the checkout: make dev makes it")
    return subprocess.run(
        ["make", "--no-print-directory", "unit", "PYTEST_WORKERS=0", f"PYTEST_ARGS={pytest_args}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def test_arguments_that_match_no_test_fail_and_say_so() -> None:
    ran = make_unit("tests/test_retry.py -k no_test_is_called_this")
    assert ran.returncode != 0, ran.stdout
    assert (
        "make unit: no test matches PYTEST_ARGS=tests/test_retry.py -k no_test_is_called_this"
        in (ran.stderr)
    )


def test_a_selection_with_no_serial_test_passes() -> None:
    # The parallel run finds the tests; the serial run finds none, which is fine on its own.
    ran = make_unit("tests/test_retry.py")
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout
    assert "no test matches" not in ran.stderr
