"""The checkpoint file: corrupt, foreign, busy, unknown and finished threads; the runs commands."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from actloop import AgentExecutor, CheckpointError
from actloop.checkpoint import BaseCheckpointer, Owner, SqliteCheckpointer
from actloop.cli._runs import CliResult, runs_list, runs_resume, runs_show
from support.durable import Stores

from .scenario import TwoCalls, build, side_effect_tool
from .test_approval import effects, setup
from .test_crash import start


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def finished_file(tmp_path: Path) -> Path:
    path = tmp_path / "c.db"
    store = SqliteCheckpointer(path)
    build(tmp_path / "fx.log", store).invoke({"input": "go"}, cfg("T"))
    store.close()
    return path


def finished_store(stores: Stores, tmp_path: Path) -> BaseCheckpointer:
    store = stores.open(tmp_path)
    build(tmp_path / "fx.log", store).invoke({"input": "go"}, cfg("T"))
    return store


def test_garbage_file_is_a_clear_error_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    path.write_bytes(b"this is not a database\n" * 100)
    before = digest(path)
    executor = build(tmp_path / "fx.log", SqliteCheckpointer(path))
    with pytest.raises(CheckpointError, match=f"checkpoint file {path} is corrupt or unreadable"):
        executor.invoke({"input": "go"}, cfg("T"))
    assert digest(path) == before
    assert runs_list(path).code == 1


def test_corrupt_pages_are_a_clear_error_and_left_untouched(tmp_path: Path) -> None:
    path = finished_file(tmp_path)
    data = bytearray(path.read_bytes())
    assert len(data) > 8192
    for page in range(1, len(data) // 4096):  # garble the header of every page but the first
        data[page * 4096 : page * 4096 + 16] = b"\xa5" * 16
    path.write_bytes(bytes(data))
    before = digest(path)
    store = SqliteCheckpointer(path)
    with pytest.raises(CheckpointError, match="is corrupt or unreadable"):
        store.get("T")
    with pytest.raises(CheckpointError, match="is corrupt or unreadable"):
        build(tmp_path / "fx.log", store).invoke({"input": "go"}, cfg("U"))
    assert digest(path) == before


def test_foreign_sqlite_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users(name TEXT)")
    conn.execute("INSERT INTO users VALUES ('ada')")
    conn.commit()
    conn.close()
    before = digest(path)
    executor = build(tmp_path / "fx.log", SqliteCheckpointer(path))
    with pytest.raises(CheckpointError, match="is not an actloop checkpoint file"):
        executor.invoke({"input": "go"}, cfg("T"))
    assert digest(path) == before
    assert not Path(f"{path}-wal").exists()


def test_unknown_and_finished_threads(stores: Stores, tmp_path: Path) -> None:
    store = finished_store(stores, tmp_path)
    executor = build(tmp_path / "fx.log", store)
    with pytest.raises(CheckpointError, match=r"no run is saved under thread 'nope'"):
        executor.resume("nope")
    with pytest.raises(CheckpointError, match="'T' already finished; there is nothing to resume"):
        executor.resume("T")
    with pytest.raises(CheckpointError, match="'T' already finished; start a new run"):
        executor.invoke({"input": "go"}, cfg("T"))
    stores.open(tmp_path).delete("T")
    assert executor.invoke({"input": "again"}, cfg("T"))["output"].startswith("again:")


def test_resume_needs_a_checkpointer(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="resume\\(\\) needs a checkpointer"):
        build(tmp_path / "fx.log").resume("T")


def test_a_second_process_cannot_run_a_thread_that_is_running(
    stores: Stores, tmp_path: Path
) -> None:
    db = stores.target(tmp_path)
    proc = start(db, tmp_path, "invoke", "sync", "block")  # its tool blocks for a minute
    try:
        while stores.kind == "sqlite" and not Path(db).exists():
            assert proc.poll() is None
        store = stores.open(tmp_path)
        while not store.entries("T"):
            assert proc.poll() is None
        executor = build(tmp_path / "fx.log", store)
        busy = rf"thread 'T' is being run by process {proc.pid} on "
        with pytest.raises(CheckpointError, match=busy):
            executor.resume("T")
        with pytest.raises(CheckpointError, match=busy):
            executor.invoke({"input": "go"}, cfg("T"))
        row = runs_list(db).text.splitlines()[1].split()
        assert row[:2] == ["T", "running"] and row[2].startswith(f"({proc.pid}@")
    finally:
        proc.kill()
        proc.communicate()
    slow = side_effect_tool("slow", tmp_path / "fx.log", delay=0.0)
    executor = AgentExecutor(
        agent=TwoCalls("slow"), tools=[slow], checkpointer=stores.open(tmp_path)
    )
    assert executor.resume("T")["output"] == "slow(one) slow(two)"  # the dead owner's lease goes


def test_a_lease_held_in_this_process_blocks_another_run(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    store.acquire("T", Owner.current())
    with pytest.raises(CheckpointError, match="is being run by process"):
        build(tmp_path / "fx.log", store).invoke({"input": "go"}, cfg("T"))


def test_runs_list_show_and_resume(stores: Stores, tmp_path: Path) -> None:
    executor, _, _ = setup(stores, tmp_path)
    executor.invoke({"input": "q"}, cfg("P"))
    path = stores.target(tmp_path)
    listed = runs_list(path)
    assert listed.code == 0
    assert listed.text.splitlines()[0].split() == ["THREAD", "STATUS", "STEPS", "UPDATED"]
    assert listed.text.splitlines()[1].split()[:3] == ["P", "paused", "1"]
    shown = runs_show(path, "P")
    assert shown.code == 0
    assert shown.text.splitlines()[1:2] == ["status:  paused"]
    assert "  [0-0] send(one) -> (not finished)" in shown.text
    assert shown.text.endswith("waiting for approval:\n  [0-0] send(one)")

    def factory(checkpointer: BaseCheckpointer) -> Any:
        return setup(stores, tmp_path)[0]

    waiting = runs_resume(path, "P", factory, approve=["0-0"])
    assert waiting == CliResult(
        3,
        "thread P is waiting for approval:\n  [1-0] send(two)\n"
        "resume it with: actloop runs resume P --approve ID ...",
    )
    assert runs_resume(path, "P", factory, approve=True) == CliResult(0, "send(one) | send(two)")
    assert effects(tmp_path) == ["send:one", "send:two"]
    assert runs_resume(path, "P", factory).code == 1
    assert runs_show(path, "nope") == CliResult(
        1, f"error: no run is saved under thread 'nope' in {path}"
    )
    assert runs_list(tmp_path / "missing.db") == CliResult(
        1, f"error: no checkpoint file at {tmp_path / 'missing.db'}"
    )
