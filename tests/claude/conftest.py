"""Fixtures for the real-client tests: the pinned CLI, a sandbox, the fake API, the settings."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from tests.claude.cli import ClaudeRun, Sandbox, find_claude
from tests.claude.fake_anthropic import FakeAnthropic, Script
from tests.claude.scenario import StartFake
from tests.test_browser import CHROMIUM_FLAGS, chromium_path


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    return find_claude()


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox.make(tmp_path / "claude")


@pytest.fixture
async def start_fake() -> AsyncIterator[StartFake]:
    started: list[FakeAnthropic] = []

    async def start(script: Script) -> FakeAnthropic:
        fake = FakeAnthropic(script)
        await fake.start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        await fake.stop()
        assert fake.unknown == [], "the CLI called the fake API where it answers nothing"


@pytest.fixture
async def claude(claude_binary: Path, sandbox: Sandbox) -> AsyncIterator[Callable[..., ClaudeRun]]:
    runs: list[ClaudeRun] = []

    def make(api_url: str, **env: str) -> ClaudeRun:
        run = ClaudeRun(claude_binary, sandbox, sandbox.env(api_url, env))
        runs.append(run)
        return run

    yield make
    for run in runs:
        await run.stop()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_FLAGS
        )
        try:
            yield launched
        finally:
            await launched.close()
