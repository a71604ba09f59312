"""The command line under unlucky and hostile use (issue 13, items 1, 9, 15 and the CLI's part of
"held only in letter"): every user error is one line and a documented exit code, a run writes
nothing unless asked, what a model or tool wrote cannot drive the terminal, and `runs` works on
files this user may only read and on runs a dead machine left locked.

Each test runs the real `actloop` command in a subprocess against the loopback OpenAI-compatible
server, which plays the model's replies.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from actloop.checkpoint import Owner, SqliteCheckpointer
from support.openai_server import LoopbackServer, Reply, error, message, running

ESCAPES = "\x1b]52;c;cHduZWQ=\x07 \x1b[2J \x1b]0;title\x07 \x9b31m \r"
"""An OSC 52 clipboard write, clear screen, a window title, a C1 CSI, a carriage return."""
INERT = "\\x1b]52;c;cHduZWQ=\\x07 \\x1b[2J \\x1b]0;title\\x07 \\x9b31m \\x0d"
"""How the CLI prints them: as visible text."""


class Done:
    """A finished CLI process: exit code and its output decoded as strict UTF-8."""

    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        self.code = proc.returncode
        self.out = proc.stdout.decode("utf-8")
        self.err = proc.stderr.decode("utf-8")


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}


def cli(*args: str | bytes, cwd: Path | None = None, prefix: tuple[str, ...] = ()) -> Done:
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "actloop", *args],
        capture_output=True,
        timeout=120,
        env=env(),
        cwd=cwd,
    )
    return Done(proc)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from running()


def on(server: LoopbackServer) -> list[str]:
    return ["--model", "openai:gpt-test", "--base-url", server.url]


def call(name: str, arguments: dict[str, object], id: str = "c1") -> dict[str, str]:
    return {"id": id, "name": name, "arguments": json.dumps(arguments)}


# -- item 1: a run writes nothing unless asked ----------------------------------------------------


def test_run_without_db_writes_nothing(server: LoopbackServer, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("the secret plan")
    server.script(message("", [call("read_file", {"path": "notes.txt"})]), message("Read it."))
    done = cli("run", "read notes.txt", "--tools", "read_file", *on(server), cwd=tmp_path)
    assert done.code == 0, done.err
    assert "← the secret plan" in done.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_thread_without_db_is_a_usage_error(server: LoopbackServer, tmp_path: Path) -> None:
    done = cli("run", "hi", "--thread", "t1", *on(server), cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert done.err == "actloop: error: --thread needs --db FILE (the checkpoint file)\n"
    assert server.requests == []
    assert list(tmp_path.iterdir()) == []


# -- item 9: user errors are one line and exit 2 --------------------------------------------------


def test_bad_db_targets_are_one_line_errors(server: LoopbackServer, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 50)
    folder = tmp_path / "folder"
    folder.mkdir()
    missing = tmp_path / "nope" / "runs.db"
    foreign = tmp_path / "app.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE users(name TEXT)")
    conn.commit()
    conn.close()
    foreign_bytes = foreign.read_bytes()
    expected = {
        text: f"--db {text}: checkpoint file {text} is corrupt or unreadable "
        "(file is not a database); it was left untouched",
        folder: f"--db {folder}: is a directory; name a checkpoint file",
        missing: f"--db {missing}: the folder {missing.parent} does not exist",
        foreign: f"--db {foreign}: {foreign} is not an actloop checkpoint file (it is another "
        "SQLite database); pass a new path. The file was left untouched.",
    }
    for target, message_ in expected.items():
        done = cli("run", "hi", "--db", str(target), *on(server))
        assert (done.code, done.out) == (2, ""), done.err
        assert done.err == f"actloop: error: {message_}\n"
    assert text.read_text() == "not a database\n" * 50
    assert foreign.read_bytes() == foreign_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db", "folder", "notes.txt"]
    assert server.requests == []


def test_rerunning_a_finished_thread_is_a_one_line_error(
    server: LoopbackServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    server.script(message("Hello."))
    assert cli("run", "hi", "--db", str(db), "--thread", "t1", *on(server)).code == 0
    done = cli("run", "hi again", "--db", str(db), "--thread", "t1", *on(server))
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"actloop: error: thread 't1' already finished in {db}; "
        "pick a new --thread (or leave it out for a fresh one)\n"
    )
    assert len(server.requests) == 1


@pytest.mark.parametrize("value", ["inf", "1e10", "nan", "-1"])
def test_timeouts_out_of_range_are_one_line_errors(server: LoopbackServer, value: str) -> None:
    done = cli("run", "hi", "--timeout", value, *on(server))
    assert (done.code, done.out) == (2, "")
    shown = f"{float(value):g}"
    assert done.err == (
        f"actloop: error: --timeout {shown}: give a number of seconds from 0 to 1000000\n"
    )
    assert server.requests == []


def test_a_question_that_is_not_utf8_is_a_one_line_error(server: LoopbackServer) -> None:
    done = cli("run", b"caf\xe9 au lait?", *on(server))
    assert (done.code, done.out) == (2, "")
    assert done.err == "actloop: error: the question is not UTF-8 text (it holds stray bytes)\n"
    assert server.requests == []


def test_lone_surrogate_in_the_answer_is_printed_escaped(server: LoopbackServer) -> None:
    server.script(message("broken \ud800 text"))
    done = cli("run", "hi", *on(server))
    assert done.code == 0, done.err
    assert "Answer: broken \\ud800 text" in done.out.splitlines()


def test_lone_surrogate_in_a_tool_input_is_sent_as_a_replacement_character(
    server: LoopbackServer,
) -> None:
    # The next request, which UTF-8 cannot encode as it is, carries U+FFFD in its place.
    server.script(message("", [call("calculator", {"expression": "1\ud800"})]), message("ok"))
    done = cli("run", "hi", *on(server))
    assert (done.code, done.err) == (0, "")
    assert done.out.splitlines()[:2] == [
        '→ calculator({"expression": "1\\ud800"})',
        "← Error: the expression is not valid arithmetic",
    ]
    calls = server.bodies[1]["messages"][-2]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == ['{"expression": "1\ufffd"}']


def failed_run(server: LoopbackServer, db: Path, thread: str = "t1", *extra: str) -> None:
    """A durable run that did one step, then failed on a model error (so it can be resumed)."""
    server.script(
        message("", [call("calculator", {"expression": "12 * 7 + 5"})]), error(400, "overloaded")
    )
    question = "What is 12 * 7 + 5?"
    done = cli("run", question, "--db", str(db), "--thread", thread, *extra, *on(server))
    assert done.code == 4, done.err


def test_runs_list_and_show_over_a_damaged_journal_entry(
    server: LoopbackServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    failed_run(server, db, "bad")
    server.script(message("Hi."))
    assert cli("run", "hi", "--db", str(db), "--thread", "good", *on(server)).code == 0
    conn = sqlite3.connect(db)
    conn.execute("UPDATE entries SET data='[1, 2' WHERE thread_id='bad' AND seq=0")
    conn.commit()
    conn.close()
    shown = cli("runs", "show", "bad", "--db", str(db))
    assert (shown.code, shown.err) == (1, "")
    assert shown.out == (
        "error: journal entry 0 of thread 'bad' is damaged (Cannot load: not valid JSON "
        "(Expecting ',' delimiter: line 1 column 6 (char 5)))\n"
    )
    listed = cli("runs", "list", "--db", str(db))  # every run listed, the damage named: exit 1
    assert (listed.code, listed.err) == (1, "")
    *table, named = listed.out.splitlines()
    rows = [line.split()[:3] for line in table]
    assert sorted(rows[1:]) == [["bad", "failed", "?"], ["good", "finished", "0"]]
    assert f"{named}\n" == shown.out


def test_rerunning_an_unfinished_thread_is_a_one_line_error(
    server: LoopbackServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    failed_run(server, db)
    done = cli("run", "again", "--db", str(db), "--thread", "t1", *on(server))
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"actloop: error: thread 't1' has an unfinished run (failed) in {db}; "
        f"resume it with: actloop runs resume t1 --db {db}\n"
    )
    assert len(server.requests) == 2


def test_a_run_on_a_locked_checkpoint_file_ends_at_its_timeout(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """The file's write lock is held elsewhere: the run's store calls wait no longer than what
    is left of `--timeout` (it used to wait SQLite's 30 s busy timeout, whatever --timeout said)."""
    db = tmp_path / "runs.db"
    SqliteCheckpointer(db).list_runs()  # an existing checkpoint file, in WAL mode
    lock = sqlite3.connect(db, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        server.script(message("Hi."))
        started = time.monotonic()
        done = cli("run", "hi", "--db", str(db), "--thread", "t1", "--timeout", "2", *on(server))
        took = time.monotonic() - started
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert (done.code, done.out) == (2, "")
    assert done.err.startswith(
        f"actloop: durable run, thread t1 in {db}\n"
        f"actloop: error: the checkpoint file failed: checkpoint file {db} (busy: database is "
        "locked) did not answer in time"
    )
    assert 2.0 <= took < 12.0  # the deadline, plus starting Python: not 30 s
    assert server.requests == []  # the lease was never taken: the model was not asked


# -- item 15: runs resume -------------------------------------------------------------------------


def test_runs_resume_prints_the_answer(server: LoopbackServer, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    failed_run(server, db)
    server.script(message("The answer is 89."))
    done = cli("runs", "resume", "t1", "--db", str(db), *on(server))
    assert (done.code, done.out, done.err) == (0, "The answer is 89.\n", "")
    assert len(server.requests) == 3


def test_runs_resume_keeps_the_time_limit_the_run_started_with(
    server: LoopbackServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    failed_run(server, db, "t1", "--timeout", "20")
    server.script(message("The answer is 89."))
    done = cli("runs", "resume", "t1", "--db", str(db), *on(server))
    assert (done.code, done.out, done.err) == (0, "The answer is 89.\n", "")
    (record,) = SqliteCheckpointer(db, read_only=True).list_runs()
    assert json.loads(record.fingerprint)["max_execution_time"] == 20.0


def test_ctrl_c_during_runs_resume(server: LoopbackServer, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    failed_run(server, db)
    server.script(Reply("message", message={"role": "assistant", "content": "late"}, delay=60))
    proc = subprocess.Popen(
        [sys.executable, "-m", "actloop", "runs", "resume", "t1", "--db", str(db), *on(server)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    deadline = time.monotonic() + 60
    while len(server.requests) < 3:  # the resumed run is waiting for the model
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err == b""
    assert out.decode() == (
        "interrupted: thread t1 keeps its finished steps; resume it with: actloop runs resume t1\n"
    )
    server.script(message("The answer is 89."))
    done = cli("runs", "resume", "t1", "--db", str(db), *on(server))
    assert (done.code, done.out) == (0, "The answer is 89.\n"), done.err


# -- held only in letter: runs on a read-only file, leases of dead hosts --------------------------


def test_runs_list_and_show_on_a_file_this_user_cannot_write(server: LoopbackServer) -> None:
    folder = Path(tempfile.mkdtemp(prefix="actloop-ro-"))
    try:
        db = folder / "runs.db"
        server.script(message("Hi."))
        assert cli("run", "hi", "--db", str(db), "--thread", "t1", *on(server)).code == 0
        assert sorted(p.name for p in folder.iterdir()) == ["runs.db"]
        db.chmod(0o444)
        folder.chmod(0o555)
        as_other: tuple[str, ...] = ()
        if os.geteuid() == 0:  # root writes anything: read as user nobody (util-linux setpriv)
            folder.chmod(0o755)  # owned by root: still not writable by that user
            as_other = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        listed = cli("runs", "list", "--db", str(db), prefix=as_other)
        assert (listed.code, listed.err) == (0, ""), listed.out
        assert listed.out.splitlines()[1].split()[:3] == ["t1", "finished", "0"]
        shown = cli("runs", "show", "t1", "--db", str(db), prefix=as_other)
        assert (shown.code, shown.err) == (0, ""), shown.out
        assert shown.out.splitlines()[1] == "status:  finished"
        assert shown.out.splitlines()[-1] == 'output:  {"output": "Hi."}'
        assert sorted(p.name for p in folder.iterdir()) == ["runs.db"]
    finally:
        folder.chmod(0o755)
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()


def test_runs_unlock_breaks_the_lease_of_a_dead_host(
    server: LoopbackServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    failed_run(server, db)
    SqliteCheckpointer(db).acquire("t1", Owner(4242, "gone.invalid", ""))
    busy = cli("runs", "resume", "t1", "--db", str(db), *on(server))
    assert (busy.code, busy.out) == (
        1,
        "error: thread 't1' is being run by process 4242 on gone.invalid (lease epoch 2); "
        "wait for it to end (or stop it) and resume then\n",
    )
    done = cli("runs", "unlock", "t1", "--db", str(db))
    assert (done.code, done.out) == (
        0,
        "broke the lease of process 4242@gone.invalid on thread t1; "
        "resume it with: actloop runs resume t1\n",
    )
    again = cli("runs", "unlock", "t1", "--db", str(db))
    assert (again.code, again.out) == (0, "thread t1 holds no lease; nothing to unlock\n")
    server.script(message("The answer is 89."))
    resumed = cli("runs", "resume", "t1", "--db", str(db), *on(server))
    assert (resumed.code, resumed.out) == (0, "The answer is 89.\n"), resumed.err


def test_runs_unlock_refuses_a_live_process_on_this_host(
    server: LoopbackServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    failed_run(server, db)
    SqliteCheckpointer(db).acquire("t1", Owner.current())  # this test process: alive
    done = cli("runs", "unlock", "t1", "--db", str(db))
    assert (done.code, done.out) == (
        1,
        f"error: thread 't1' is being run by process {os.getpid()} on this host (it is alive); "
        "stop it instead of breaking its lease\n",
    )
    assert SqliteCheckpointer(db).list_runs()[0].owner == f"{os.getpid()}@{socket.gethostname()}"


# -- held only in letter: escape sequences, the default deadline ----------------------------------


def escape_script(server: LoopbackServer, root: Path) -> list[str]:
    (root / "evil.txt").write_text(f"file {ESCAPES} end")
    server.script(
        message(f"thinking {ESCAPES} now", [call("read_file", {"path": "evil.txt"})]),
        message(f"answer {ESCAPES} done"),
    )
    return ["run", "read evil.txt", "--tools", "read_file", "--root", str(root), *on(server)]


def test_escape_sequences_are_inert_in_plain_output(server: LoopbackServer, tmp_path: Path) -> None:
    done = cli(*escape_script(server, tmp_path), "--verbose")
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[:3] == [
        f"thinking {INERT} now",  # --verbose shows the model's text
        '→ read_file({"path": "evil.txt"})',
        f"← file {INERT} end",
    ]
    assert f"Answer: answer {INERT} done" in lines
    for control in ("\x1b", "\x07", "\x9b", "\r"):
        assert control not in done.out


def test_escape_sequences_are_inert_on_a_terminal(server: LoopbackServer, tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "actloop", *escape_script(server, tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**env(), "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "40"},
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    screen = b"".join(chunks).decode()
    assert f"file {INERT} end" in screen
    assert f"answer {INERT} done" in screen
    for sequence in ("\x1b]52", "\x1b]0;", "\x1b[2J", "\x9b"):
        assert sequence not in screen  # rich writes its own colours, never these


def test_a_run_without_timeout_gets_the_default_deadline(
    server: LoopbackServer, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    server.script(message("Hi."))
    assert cli("run", "hi", "--db", str(db), "--thread", "t1", *on(server)).code == 0
    (record,) = SqliteCheckpointer(db, read_only=True).list_runs()
    assert json.loads(record.fingerprint)["max_execution_time"] == 300.0
    assert "hard limit in seconds for the whole run (default 300)" in " ".join(
        cli("run", "--help").out.split()
    )


def test_a_stalled_server_ends_at_the_deadline(server: LoopbackServer) -> None:
    server.script(Reply("message", message={"role": "assistant", "content": "late"}, delay=60))
    started = time.monotonic()
    done = cli("run", "hi", "--timeout", "2", *on(server))
    assert time.monotonic() - started < 30  # liveness: the deadline ends the run, not the SDK
    assert done.code == 3, done.err
    assert "Stopped by the time limit (--timeout 2 s): no answer before the limit." in done.out
