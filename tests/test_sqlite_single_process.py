"""SQLite serves one process: a second `askbridge serve` on the same file refuses to start,
naming the setting that would let it share the database."""

from __future__ import annotations

from pathlib import Path

import pytest

from askbridge.core.store.sqlite import SQLiteStore
from tests.server_process import ServerProcess


async def test_a_second_process_on_one_sqlite_file_refuses_to_start(tmp_path: Path) -> None:
    database = tmp_path / "askbridge.db"
    first = SQLiteStore(database)
    await first.open()
    second = ServerProcess(database)
    try:
        with pytest.raises(AssertionError, match="server exited"):
            await second.start()
        log = "".join(second.log)
        assert "is in use by another askbridge process" in log
        assert "ASKBRIDGE_DATABASE_URL" in log
        assert "Traceback" not in log, log
    finally:
        await first.close()

    # Once the first process lets go, the file is free.
    third = ServerProcess(database)
    await third.start()
    assert await third.stop() == 0
