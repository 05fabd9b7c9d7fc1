"""The database is in the per-user data directory unless ASKBRIDGE_DATABASE_URL names one,
from whatever directory askbridge runs; one-off commands never make an empty one."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

import pytest

from askbridge.bots.service import Service
from askbridge.bots.settings import Settings
from askbridge.core.broker import Broker
from askbridge.core.intents import Cancel
from askbridge.core.models import Person
from askbridge.core.store import open_store
from tests.chat import Chat
from tests.test_retention import ask

ADA = Person(platform="chat", id="U1", name="Ada")


async def askbridge(folder: Path, *args: str, **env: str) -> tuple[int, str]:
    """Run the `askbridge` command in `folder` with ASKBRIDGE_DATABASE_URL unset unless given."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ASKBRIDGE_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "askbridge.bots.cli",
        *args,
        env=base | env,
        cwd=folder,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, err.decode()


def database_files(*folders: Path) -> list[Path]:
    return [found for folder in folders for found in folder.rglob("*.db")]


async def test_prune_refuses_a_database_that_does_not_exist(
    tmp_path: Path, data_home: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, err = await askbridge(elsewhere, "prune", "--older-than", "90d")
    assert code == 1, err
    assert "there is no database at" in err
    assert "ASKBRIDGE_DATABASE_URL is unset" in err
    assert "deleted" not in err
    missing = tmp_path / "missing.db"
    code, err = await askbridge(
        elsewhere, "prune", "--older-than", "90d", ASKBRIDGE_DATABASE_URL=f"sqlite:///{missing}"
    )
    assert code == 1, err
    assert f"ASKBRIDGE_DATABASE_URL=sqlite:///{missing}" in err
    assert database_files(tmp_path, data_home) == [], "prune made an empty database"


async def test_prune_finds_the_default_database_from_any_directory(
    tmp_path: Path, data_home: Path
) -> None:
    default = Settings(_env_file=None).database_url
    assert default == f"sqlite:///{data_home / 'askbridge' / 'askbridge.db'}"
    store = open_store(default)
    await store.open()
    try:
        broker = Broker(store, default_target="chat:C1")
        broker.add_surface(Chat())
        await ask(broker, "ask_done")
        await broker.act("ask_done", ADA, Cancel())
        code, err = await askbridge(tmp_path, "prune", "--older-than", "0")
        assert code == 2, err
        assert "add --yes" in err
        assert await store.get("ask_done") is not None
        code, err = await askbridge(tmp_path, "prune", "--older-than", "0", "--yes")
        assert code == 0, err
        assert "deleted 1 request that" in err
        assert await store.get("ask_done") is None
    finally:
        await store.close()
    assert database_files(tmp_path) == []


async def test_an_earlier_database_in_the_working_directory_is_named_at_start_up(
    tmp_path: Path,
    data_home: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    earlier = tmp_path / "askbridge.db"
    earlier.write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.INFO, logger="askbridge")
    service = Service(Settings(_env_file=None, host="127.0.0.1", port=0))
    await service.start()
    try:
        default = data_home / "askbridge" / "askbridge.db"
        assert default.is_file()
        log = "\n".join(record.getMessage() for record in caplog.records)
        assert f"store: sqlite:///{default}, the default: ASKBRIDGE_DATABASE_URL is unset" in log
        assert f"set ASKBRIDGE_DATABASE_URL=sqlite:///{earlier}" in log
        assert earlier.read_bytes() == b"", "the earlier file is left alone"
    finally:
        await service.stop()


async def test_a_given_database_url_gets_no_warning_about_the_working_directory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "askbridge.db").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.INFO, logger="askbridge")
    url = f"sqlite:///{tmp_path / 'chosen.db'}"
    service = Service(Settings(_env_file=None, host="127.0.0.1", port=0, database_url=url))
    await service.start()
    await service.stop()
    log = "\n".join(record.getMessage() for record in caplog.records)
    assert f"store: {url};" in log
    assert "earlier askbridge" not in log
