"""The SQLite checkpoint store under unlucky and hostile use (issue 13, "held only in letter"): a
foreign file with a hot WAL is refused unwritten, a file can be read without write access, odd
thread ids and unsavable or hand-edited values are typed errors, and a dead host's lease can be
broken.
"""

from __future__ import annotations

import hashlib
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from actloop import AgentAction, AgentExecutor, AgentFinish
from actloop.checkpoint import JournalEntry, LeaseLostError, Owner, RunRecord, SqliteCheckpointer
from actloop.exceptions import CheckpointError, SerializationError
from actloop.serialization import dumps
from actloop.testing import ScriptedAgent
from actloop.tools import tool

HOT_WAL = r"""
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("CREATE TABLE users(name TEXT)")
conn.execute("INSERT INTO users VALUES ('ada')")
os._exit(0)  # die without closing: the WAL stays hot, its pages not yet in the main file
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_foreign_file_with_a_hot_wal_is_refused_unwritten(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    subprocess.run([sys.executable, "-c", HOT_WAL, str(path)], check=True)
    wal = Path(f"{path}-wal")
    before = (digest(path), digest(wal))
    with pytest.raises(CheckpointError) as caught:
        SqliteCheckpointer(path).list_runs()
    assert str(caught.value) == (
        f"{path} is not an actloop checkpoint file (it is another SQLite database); "
        "pass a new path. The file was left untouched."
    )
    assert (digest(path), digest(wal)) == before
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name FROM users").fetchall() == [("ada",)]
    conn.close()


CUT_CREATION = r"""
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size=1")  # spill pages into the file before the commit
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE t(x)")
for _ in range(2000):
    conn.execute("INSERT INTO t VALUES (?)", ("x" * 200,))
os._exit(0)  # killed mid-transaction: a hot rollback journal over a file that was empty
"""


def test_a_file_whose_creation_was_cut_is_rolled_back_and_used(tmp_path: Path) -> None:
    path = tmp_path / "c.db"  # what a process killed while creating its checkpoint leaves
    subprocess.run([sys.executable, "-c", CUT_CREATION, str(path)], check=True)
    assert Path(f"{path}-journal").stat().st_size > 0
    store = SqliteCheckpointer(path)
    assert store.list_runs() == []
    store.create(RunRecord("T", "running", "{}", "{}"))
    assert store.get("T") is not None


def saved(tmp_path: Path) -> Path:
    path = tmp_path / "c.db"
    store = SqliteCheckpointer(path)
    store.create(RunRecord("T", "finished", '{"input": "q"}', "{}", output='{"output": "a"}'))
    store.close()
    return path


def test_a_read_only_store_reads_and_refuses_writes(tmp_path: Path) -> None:
    path = saved(tmp_path)
    before = digest(path)
    store = SqliteCheckpointer(path, read_only=True)
    (record,) = store.list_runs()
    assert (record.thread_id, record.status, record.output) == ("T", "finished", '{"output": "a"}')
    assert store.entries("T") == []
    with pytest.raises(CheckpointError) as caught:
        store.update("T", "failed")
    assert str(caught.value) == (
        f"checkpoint file {path} cannot be written (attempt to write a readonly database); "
        "it was left untouched"
    )
    store.close()
    assert digest(path) == before
    with pytest.raises(CheckpointError, match=f"^no checkpoint file at {tmp_path / 'x.db'}$"):
        SqliteCheckpointer(tmp_path / "x.db", read_only=True).list_runs()
    assert not (tmp_path / "x.db").exists()


def test_a_lone_surrogate_thread_id_is_a_checkpoint_error(tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "c.db")
    expected = (
        "'\\ud800' is a lone surrogate, not valid Unicode text: thread ids and saved text in "
        f"{tmp_path / 'c.db'} must be valid UTF-8"
    )
    with pytest.raises(CheckpointError) as caught:
        store.get("\ud800")
    assert str(caught.value) == expected
    executor = AgentExecutor(
        agent=ScriptedAgent([AgentFinish({"output": "done"}, "")]), tools=[], checkpointer=store
    )
    with pytest.raises(CheckpointError) as caught:
        executor.invoke({"input": "q"}, {"configurable": {"thread_id": "\ud800"}})
    assert str(caught.value) == expected
    assert store.list_runs() == []


def test_breaking_the_lease_of_a_dead_host(tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "c.db")
    store.create(RunRecord("T", "failed", '{"input": "q"}', "{}"))
    gone = Owner(4242, "gone.invalid", "")
    lease = store.acquire("T", gone)
    with pytest.raises(CheckpointError, match=r"is being run by process 4242 on gone\.invalid"):
        store.acquire("T", Owner.current())
    assert store.break_lease("T") == gone
    assert store.break_lease("T") is None
    with pytest.raises(LeaseLostError):  # the old holder, should it wake up, writes nothing
        store.append("T", JournalEntry(0, "deadline", None, None, 0.0, None), lease=lease)
    assert store.entries("T") == []
    assert store.acquire("T", Owner.current()).epoch == lease.epoch + 1


def test_breaking_a_live_local_lease_is_refused(tmp_path: Path) -> None:
    store = SqliteCheckpointer(tmp_path / "c.db")
    me = Owner.current()
    store.acquire("T", me)
    with pytest.raises(CheckpointError) as caught:
        store.break_lease("T")
    assert str(caught.value) == (
        f"thread 'T' is being run by process {me.pid} on this host (it is alive); "
        "stop it instead of breaking its lease"
    )
    assert store.get("T") is None
    row = sqlite3.connect(tmp_path / "c.db").execute("SELECT pid, host FROM leases").fetchall()
    assert row == [(me.pid, socket.gethostname())]


def test_dumps_of_a_value_json_cannot_hold_is_a_serialization_error() -> None:
    with pytest.raises(SerializationError, match=r"^Cannot serialize: Exceeds the limit"):
        dumps({"n": 10**5000})


def test_an_unsavable_observation_is_a_typed_error(tmp_path: Path) -> None:
    @tool
    def huge(x: str) -> int:
        """A number too long for JSON."""
        return 10**5000

    agent = ScriptedAgent(
        [AgentAction("huge", {"x": "a"}, "log"), AgentFinish({"output": "done"}, "")]
    )
    executor = AgentExecutor(
        agent=agent, tools=[huge], checkpointer=SqliteCheckpointer(tmp_path / "c.db")
    )
    with pytest.raises((CheckpointError, SerializationError)):
        executor.invoke({"input": "q"}, {"configurable": {"thread_id": "T"}})


@tool
def echo(x: str) -> str:
    """Echo the input."""
    return f"echo {x}"


def two_step_executor(store: SqliteCheckpointer) -> AgentExecutor:
    agent = ScriptedAgent(
        [AgentAction("echo", {"x": "a"}, "log"), AgentFinish({"output": "done"}, "")]
    )
    return AgentExecutor(agent=agent, tools=[echo], checkpointer=store)


def set_value(path: Path, sql: str, value: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, (value,))
    conn.execute("UPDATE runs SET status='failed', output=NULL")
    conn.commit()
    conn.close()


PLAN = "UPDATE entries SET data=? WHERE seq=0"
OBS = "UPDATE entries SET data=? WHERE seq=1"
INPUTS = "UPDATE runs SET inputs=?"
FINGERPRINT = "UPDATE runs SET fingerprint=?"


@pytest.mark.parametrize(
    ("sql", "value", "reason"),
    [
        (PLAN, "[]", "TypeError: list indices must be integers or slices, not str"),
        (PLAN, "{}", "KeyError: 'output'"),
        (PLAN, '{"parse_error": 1}', "TypeError: 'int' object is not subscriptable"),
        (OBS, "1" * 5000, "SerializationError: Cannot load: not valid JSON (Exceeds the limit"),
        (OBS, "[" * 5000, "SerializationError: Cannot load an object nested more than 200"),
        (INPUTS, "[1]", "TypeError: the saved inputs are not a dict but list"),
        (FINGERPRINT, "nope", "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"),
        (FINGERPRINT, "[]", "AttributeError: 'list' object has no attribute 'get'"),
    ],
)
def test_a_hand_edited_run_is_a_checkpoint_error(
    tmp_path: Path, sql: str, value: str, reason: str
) -> None:
    path = tmp_path / "c.db"
    store = SqliteCheckpointer(path)
    first = two_step_executor(store).invoke({"input": "q"}, {"configurable": {"thread_id": "T"}})
    assert first["output"] == "done"
    good = {
        PLAN: store.entries("T")[0].data,
        OBS: store.entries("T")[1].data,
        INPUTS: store.get("T").inputs,  # pyright: ignore[reportOptionalMemberAccess]
        FINGERPRINT: store.get("T").fingerprint,  # pyright: ignore[reportOptionalMemberAccess]
    }[sql]
    assert good is not None
    set_value(path, sql, value)
    with pytest.raises(CheckpointError) as caught:
        two_step_executor(store).resume("T")
    assert str(caught.value).startswith(
        f"the saved run of thread 'T' is damaged and cannot be resumed ({reason}"
    )
    assert str(caught.value).endswith("; it was left untouched")
    set_value(path, sql, good)  # repaired: the same process resumes it (the lease was let go)
    assert two_step_executor(store).resume("T")["output"] == "done"
