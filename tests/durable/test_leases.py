"""Leases on a thread: fencing epochs, expiry, take-overs, fenced writes, async twins, migration."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from actloop import CheckpointError
from actloop.checkpoint import (
    JournalEntry,
    Lease,
    LeaseLostError,
    Owner,
    RunRecord,
    SqliteCheckpointer,
)
from support.durable import Stores

from .test_approval import effects, setup

HOST = socket.gethostname()
ME = f"{os.getpid()}@{HOST}"
APP_ID = 0x61637470  # "actp"

# The version-1 schema, as `git show HEAD:src/actloop/checkpoint/sqlite.py` had it.
V1_SCHEMA = """
CREATE TABLE runs(thread_id TEXT PRIMARY KEY, status TEXT NOT NULL, inputs TEXT NOT NULL,
    fingerprint TEXT NOT NULL, output TEXT, pending TEXT, error TEXT,
    created REAL NOT NULL, updated REAL NOT NULL);
CREATE TABLE entries(thread_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
    act INTEGER, call INTEGER, elapsed REAL NOT NULL, data TEXT,
    PRIMARY KEY(thread_id, seq)) WITHOUT ROWID;
CREATE TABLE leases(thread_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL,
    started TEXT NOT NULL, token TEXT NOT NULL)
"""

CHILD = """
import sys
from actloop.checkpoint import Owner, RunRecord, connect
store = connect(sys.argv[1])
lease = store.acquire("T", Owner.current())
store.create(RunRecord("T", "running", "{}", "{}"), lease=lease)
print(lease.epoch, flush=True)
sys.stdin.read()
"""


def entry(seq: int, data: str) -> JournalEntry:
    return JournalEntry(seq, "obs", 0, seq, 1.5, data)


def busy(pid: int) -> str:
    """A pattern matching the start of the error for thread T held by `pid` at epoch 1."""
    return re.escape(f"thread 'T' is being run by process {pid} on {HOST} (lease epoch 1); ")


def lost(old: Lease, epoch: int, now: str) -> str:
    """A pattern matching exactly the LeaseLostError message for `old`."""
    message = (
        f"thread 'T': the lease of epoch {old.epoch} (process {old.owner}) was lost; the thread "
        f"is at epoch {epoch}, {now}. Nothing was written."
    )
    return f"^{re.escape(message)}$"


def test_epochs_grow_across_acquire_release_acquire(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    first = store.acquire("T", Owner.current())
    assert (first.thread_id, first.epoch, first.expires) == ("T", 1, None)
    assert str(first.owner) == ME
    store.release(first)
    second = store.acquire("T", Owner.current())
    assert second.epoch == 2
    store.release(first)  # no longer current: nothing happens
    with pytest.raises(CheckpointError, match="is being run by process"):
        store.acquire("T", Owner.current())
    store.release(second)
    store.release(second)
    assert store.acquire("T", Owner.current()).epoch == 3
    store.delete("T")  # frees the thread, keeps its epoch
    assert store.acquire("T", Owner.current()).epoch == 4
    assert store.acquire("U", Owner.current()).epoch == 1


def test_a_second_live_owner_is_refused_and_only_the_holder_writes(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    lease = store.acquire("T", Owner.current())
    with pytest.raises(
        CheckpointError,
        match=busy(os.getpid()),
    ):
        store.acquire("T", Owner.current())
    store.create(RunRecord("T", "running", "{}", "{}"), lease=lease)
    store.append("T", entry(0, "a"), lease=lease)
    store.update("T", "paused", lease=lease, pending="[]")
    record = store.get("T")
    assert record is not None
    assert (record.status, record.pending, record.owner) == ("paused", "[]", ME)
    with pytest.raises(ValueError, match="the lease is for thread 'T', not 'U'"):
        store.append("U", entry(0, "a"), lease=lease)
    assert store.entries("U") == []


def test_an_expired_lease_is_taken_over_and_the_old_one_is_fenced(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    old = store.acquire("T", Owner.current(), ttl=0.5)
    assert old.expires is not None
    with pytest.raises(CheckpointError, match="is being run by process"):
        store.acquire("T", Owner.current())
    store.create(RunRecord("T", "running", "{}", "{}"), lease=old)
    time.sleep(0.6)
    store.append("T", entry(0, "late but not overtaken"), lease=old)  # expired, still current
    new = store.acquire("T", Owner.current())
    assert (new.epoch, new.expires) == (2, None)
    before = store.entries("T")
    assert before == [JournalEntry(0, "obs", 0, 0, 1.5, "late but not overtaken", 1)]
    message = lost(old, 2, f"held by process {ME}")
    with pytest.raises(LeaseLostError, match=message):
        store.append("T", entry(1, "stale"), lease=old)
    with pytest.raises(LeaseLostError, match=message):
        store.update("T", "finished", lease=old, output="{}")
    with pytest.raises(LeaseLostError, match=message):
        store.renew(old, ttl=60)
    assert store.entries("T") == before
    record = store.get("T")
    assert record is not None and (record.status, record.output) == ("running", None)
    store.append("T", entry(1, "fresh"), lease=new)
    assert [e.epoch for e in store.entries("T")] == [1, 2]
    store.release(new)
    with pytest.raises(LeaseLostError, match=lost(new, 2, "released")):
        store.append("T", entry(2, "after release"), lease=new)
    assert len(store.entries("T")) == 2


def test_a_dead_owner_is_taken_over_with_a_new_epoch(stores: Stores, tmp_path: Path) -> None:
    db = stores.target(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, db],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "1\n"
        store = stores.open(tmp_path)
        with pytest.raises(CheckpointError, match=busy(proc.pid)):
            store.acquire("T", Owner.current())
        with pytest.raises(
            CheckpointError, match=busy(proc.pid)
        ):  # no lease: refused while it lives
            store.append("T", entry(0, "intruder"))
        with pytest.raises(CheckpointError, match=busy(proc.pid)):
            store.update("T", "failed", error="intruder")
        record = store.get("T")
        assert record is not None and (record.status, record.owner) == (
            "running",
            f"{proc.pid}@{HOST}",
        )
    finally:
        proc.kill()
        proc.communicate()
    assert store.entries("T") == []
    store.append("T", entry(0, "no lease, holder dead"))  # a dead holder blocks nothing
    lease = store.acquire("T", Owner.current())
    assert lease.epoch == 2
    record = store.get("T")
    assert record is not None and record.owner == ME


def test_renew_extends_the_expiry_and_store_default_ttl(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path, lease_ttl=30.0)
    t0 = time.time()
    lease = store.acquire("T", Owner.current())
    assert lease.expires is not None and t0 + 30.0 <= lease.expires <= time.time() + 30.0
    t1 = time.time()
    renewed = store.renew(lease, ttl=120.0)
    assert renewed.expires is not None and t1 + 120.0 <= renewed.expires <= time.time() + 120.0
    assert renewed == Lease("T", lease.owner, 1, renewed.expires)
    again = store.renew(renewed)  # ttl None: the store's lease_ttl
    assert again.expires is not None and again.expires < renewed.expires
    store.lease_ttl = None
    assert store.renew(again).expires is None
    store.release(again)
    with pytest.raises(LeaseLostError, match=lost(again, 1, "released")):
        store.renew(again)
    with pytest.raises(ValueError, match=r"ttl=-1\.0: a lease lasts zero seconds or more"):
        store.acquire("T", Owner.current(), ttl=-1.0)


def test_entries_carry_the_epoch_of_the_lease_that_wrote_them(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path)
    first = store.acquire("T", Owner.current())
    store.append("T", entry(0, "a"), lease=first)
    store.append("T", entry(1, "b")._replace(epoch=99), lease=first)  # the lease's epoch wins
    store.release(first)
    store.append("T", entry(2, "c"))  # nobody holds the thread: no lease is fine
    second = store.acquire("T", Owner.current())
    store.append("T", entry(3, "d"), lease=second)
    assert store.entries("T") == [
        JournalEntry(0, "obs", 0, 0, 1.5, "a", 1),
        JournalEntry(1, "obs", 0, 1, 1.5, "b", 1),
        JournalEntry(2, "obs", 0, 2, 1.5, "c", None),
        JournalEntry(3, "obs", 0, 3, 1.5, "d", 2),
    ]


async def test_async_twins_give_the_same_results(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    owner = Owner.current()
    lease = await store.aacquire("T", owner, ttl=60.0)
    assert (lease.thread_id, lease.owner, lease.epoch) == ("T", owner, 1)
    await store.acreate(RunRecord("T", "running", "{}", "{}"), lease=lease)
    await store.aappend("T", entry(0, "a"), lease=lease)
    renewed = await store.arenew(lease, ttl=None)
    assert renewed == Lease("T", owner, 1, None)
    await store.aupdate("T", "finished", lease=renewed, output='{"output": "x"}')
    record = await store.aget("T")
    assert record is not None and (record.status, record.output) == ("finished", '{"output": "x"}')
    assert [r.thread_id for r in await store.alist_runs()] == ["T"]
    assert await store.aentries("T") == [JournalEntry(0, "obs", 0, 0, 1.5, "a", 1)]
    await store.arelease(renewed)
    with pytest.raises(LeaseLostError, match=lost(renewed, 1, "released")):
        await store.aappend("T", entry(1, "b"), lease=renewed)
    assert (await store.aacquire("T", owner)).epoch == 2
    await store.adelete("T")
    assert await store.aget("T") is None
    assert await store.aentries("T") == []
    await store.aclose()


def test_a_version_1_file_is_migrated_and_its_run_resumes(tmp_path: Path) -> None:
    source = tmp_path / "v2"
    source.mkdir()
    executor, _, store = setup(Stores("sqlite", None), source)
    executor.invoke({"input": "q"}, {"configurable": {"thread_id": "P"}})
    store.close()
    dead_pid = _exited_pid()
    path = tmp_path / "runs.db"
    _write_v1(path, source / "runs.db", dead_pid)

    migrated = SqliteCheckpointer(path)
    assert [(r.thread_id, r.status, r.owner) for r in migrated.list_runs()] == [
        ("P", "paused", f"{dead_pid}@{HOST}")
    ]
    assert [e.epoch for e in migrated.entries("P")] == [None]
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone() == (2,)
    assert check.execute("SELECT epoch, expires FROM leases").fetchall() == [(1, None)]
    check.close()
    executor, _, _ = setup(Stores("sqlite", None), tmp_path)
    assert executor.resume("P", approve=True)["status"] == "paused"  # now waits for send(two)
    assert executor.resume("P", approve=True)["output"] == "send(one) | send(two)"
    assert effects(tmp_path) == ["send:one", "send:two"]
    assert migrated.acquire("P", Owner.current()).epoch == 4  # v1 lease: 1; two resumes: 2, 3


def test_a_newer_schema_version_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id={APP_ID}")
    conn.execute("PRAGMA user_version=3")
    conn.execute("CREATE TABLE future(x)")
    conn.commit()
    conn.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(
        CheckpointError,
        match=re.escape(
            f"checkpoint file {path} has schema version 3; this actloop reads versions 1 to 2. "
            "The file was left untouched."
        ),
    ):
        SqliteCheckpointer(path).list_runs()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def _exited_pid() -> int:
    """The pid of a child that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _write_v1(path: Path, source: Path, dead_pid: int) -> None:
    """A version-1 file holding `source`'s runs and journal, and a lease of a dead process."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.executescript(V1_SCHEMA)
    conn.execute("ATTACH DATABASE ? AS src", (str(source),))
    conn.execute("INSERT INTO runs SELECT * FROM src.runs")
    conn.execute(
        "INSERT INTO entries SELECT thread_id, seq, kind, act, call, elapsed, data FROM src.entries"
    )
    conn.execute("DETACH DATABASE src")
    conn.execute("INSERT INTO leases VALUES ('P', ?, ?, '', 'old-token')", (dead_pid, HOST))
    conn.execute(f"PRAGMA application_id={APP_ID}")
    conn.execute("PRAGMA user_version=1")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
