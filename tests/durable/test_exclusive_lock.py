"""`SqliteCheckpointer(locking_mode="EXCLUSIVE")`: one process keeps the file to itself.

The store then holds SQLite's lock from its first access until `close()` (no lock calls and no
shared-memory index per transaction). Another process or connection cannot read or write the file
meanwhile, and gets StoreTimeoutError after its bound; once the holder closes (or dies: the OS
drops a killed process's locks) the file is shared again, with every committed step in it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from actloop.checkpoint import SqliteCheckpointer, StoreTimeoutError

from .scenario import STEPS, build
from .test_crash import check_effects, reference, result_of, run_child, start

TRIALS = 6
SEED = 20261206


def test_locking_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="locking_mode='SHARED'"):
        SqliteCheckpointer("x.db", locking_mode="SHARED")
    assert SqliteCheckpointer("x.db", locking_mode="exclusive").locking_mode == "EXCLUSIVE"
    assert SqliteCheckpointer("x.db").locking_mode == "NORMAL"


def test_an_exclusive_store_keeps_the_file_until_closed(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    holder = SqliteCheckpointer(path, locking_mode="EXCLUSIVE")
    other = SqliteCheckpointer(path, timeout=0.3)
    try:
        out = build(tmp_path / "effects.log", holder).invoke(
            {"input": "go"}, {"configurable": {"thread_id": "T"}}
        )
        assert len(out["intermediate_steps"]) == STEPS
        with pytest.raises(StoreTimeoutError):
            other.get("T")
        holder.close()
        record = other.get("T")
        assert record is not None and record.status == "finished"
        shared = SqliteCheckpointer(tmp_path / "shared.db")  # the same run on a shared file
        build(tmp_path / "shared.log", shared).invoke(
            {"input": "go"}, {"configurable": {"thread_id": "T"}}
        )
        journal = sorted((e.kind, e.act, e.call, e.data) for e in shared.entries("T"))
        shared.close()  # (sorted: a step's parallel calls are journaled as they finish)
        assert sorted((e.kind, e.act, e.call, e.data) for e in other.entries("T")) == journal
        assert [kind for kind, *_ in journal].count("obs") == STEPS
        other.close()
        assert holder.get("T") == record  # the holder opens the file again, exclusive again
        with pytest.raises(StoreTimeoutError):
            other.list_runs()
    finally:
        holder.close()
        other.close()


def test_an_exclusive_store_survives_sigkill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Children holding the file exclusively are killed at random moments, then resumed: the
    result equals an uninterrupted run's, each call's effect once (bar a call in flight)."""
    monkeypatch.setenv("ACTLOOP_TEST_LOCKING", "EXCLUSIVE")
    expected, effects = reference(tmp_path)
    whole = tmp_path / "whole"  # an exclusive child left alone runs to the end
    whole.mkdir()
    out, _ = start(str(whole / "runs.db"), whole, "invoke", "sync").communicate(timeout=60)
    assert result_of(out, str(whole / "runs.db")) == expected
    rng = random.Random(SEED)
    kills = 0
    for trial in range(TRIALS):
        tmp = tmp_path / f"t{trial}"
        tmp.mkdir()
        db = str(tmp / "runs.db")
        killed, out = run_child(
            db, tmp, "invoke", "sync", None, kill_when=_after_steps(tmp, rng.randint(1, STEPS - 2))
        )
        history = [killed]
        if killed:
            killed, out = run_child(db, tmp, "resume", "async" if trial % 2 else "sync", None)
            history.append(killed)
        kills += history[0]
        assert result_of(out, db) == expected, trial
        check_effects(tmp / "effects.log", history, effects)
    assert kills == TRIALS, kills  # every first child was killed mid-run


def _after_steps(tmp: Path, count: int) -> Callable[[], bool]:
    """A check: true once the effects log holds `count` calls (a kill then lands mid-run)."""
    log = tmp / "effects.log"

    def reached() -> bool:
        return (
            log.exists() and sum(1 for x in log.read_text().splitlines() if x[:1] != "#") >= count
        )

    return reached
