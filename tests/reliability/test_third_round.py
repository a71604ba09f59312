"""Third round of attacks (issue 29): secrets, stored values, bounded model calls.

Each test here failed on the code before its fix. A test whose failure was a hang runs its attack
in a fresh interpreter with a generous time limit, so a regression fails instead of hanging.
"""

from __future__ import annotations

import datetime
import json
import logging
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from actloop import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    CheckpointError,
    SerializationError,
    Tool,
)
from actloop.checkpoint import (
    PostgresCheckpointer,
    RunRecord,
    SqliteCheckpointer,
    read_thread,
)
from actloop.checkpoint import _entries as entries
from actloop.cli import main
from actloop.serialization import dumps
from actloop.testing import ScriptedAgent
from actloop.tools import StructuredTool, convert_to_openai_tool
from support.postgres import PostgresServer


def run_script(script: str, *args: str, timeout: float = 60) -> dict[str, Any]:
    """Run `script` in a fresh interpreter; it must print one JSON line and exit by itself."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the script hung for {timeout} s")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the key filter never blocks -----------------------------------------------------------------

REENTERED_FILTER = r"""
import gc, io, json, logging
from actloop.models._secret import Secret, watch_logs

KEY = "sk-reentry-0123456789abcdef"
stream = io.StringIO()
handler = logging.StreamHandler(stream)
logging.basicConfig(level=logging.DEBUG, handlers=[handler])


class LogsWhenCollected:
    # What the SDK's client does: its finalizer logs on the HTTP stack's logger.
    def __del__(self):
        logging.getLogger("httpcore.connection").debug("close.started " + KEY)


class CollectingSecret(Secret):
    # Garbage collection runs while the key filter reads the live keys, as it did when the
    # filter iterated its WeakSet (here made certain instead of left to the collector's timing).
    def get_secret_value(self):
        gc.collect()
        return super().get_secret_value()


secret = CollectingSecret(KEY)
watch_logs(secret)
for _ in range(3):
    cycle = LogsWhenCollected()
    cycle.me = cycle
    del cycle
    logging.getLogger("httpx").debug("HTTP Request: key=%s", KEY)
gc.collect()
print(json.dumps(stream.getvalue().splitlines()))
"""


def test_the_key_filter_never_blocks_when_a_finalizer_logs_inside_it() -> None:
    # Before: the filter held a plain Lock while it read the keys; a finalizer run by garbage
    # collection there logged, re-entered the filter on the same thread and hung forever.
    lines = run_script(REENTERED_FILTER, timeout=30)
    request = "DEBUG:httpx:HTTP Request: key=**********"
    closed = "DEBUG:httpcore.connection:close.started **********"
    assert sorted(lines) == [closed] * 3 + [request] * 3


# -- Postgres passwords stay hidden; a malformed store URI is a usage error -----------------------

PASSWORD = "S3cr'etPW"


def keyword_conninfo(server: PostgresServer, database: str) -> str:
    # The test server trusts loopback, so it accepts (and ignores) any password.
    return (
        f"host=127.0.0.1 port={server.port} user={server.superuser} dbname={database} "
        "password='S3cr\\'etPW'"
    )


def test_a_keyword_password_with_an_escaped_quote_stays_hidden(
    postgres_server: PostgresServer,
) -> None:
    # Before: the redaction stopped at the escaped quote: repr showed `password=***etPW'`.
    url = postgres_server.create_database()
    database = url.rsplit("/", 1)[1]
    conninfo = keyword_conninfo(postgres_server, database)
    store = PostgresCheckpointer(conninfo)
    store.create(RunRecord("T", "running", "{}", "{}"))
    store.close()
    shown = (
        f"host=127.0.0.1 port={postgres_server.port} user=actloop dbname={database} password=***"
    )
    assert repr(store) == f"PostgresCheckpointer({shown!r})"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE actloop.meta SET value='2' WHERE key='version'")
    with pytest.raises(CheckpointError) as caught:
        PostgresCheckpointer(conninfo).list_runs()
    assert str(caught.value) == (
        f"schema 'actloop' of {shown} has schema version 2; this actloop reads versions 1 to 1. "
        "It was left untouched."
    )


@pytest.mark.parametrize(
    ("uri", "shown", "detail"),
    [
        (
            "postgresql://ada:p%zzS3cretPW@127.0.0.1:1/db",
            "postgresql://ada:***@127.0.0.1:1/db",
            'invalid percent-encoded token: "***"',
        ),
        (
            "postgresql://ada:S3cr%40etPW@[::1/db",
            "postgresql://ada:***@[::1/db",
            'end of string reached when looking for matching "]" in IPv6 host address in URI: '
            '"postgresql://ada:***@[::1/db"',
        ),
    ],
)
def test_a_uri_libpq_cannot_parse_exits_2_without_the_password(
    uri: str, shown: str, detail: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: `actloop runs list` printed libpq's error quoting the password and exited 1.
    assert main(["runs", "list", "--db", uri]) == 2
    out = capsys.readouterr().out
    assert out == (
        f"actloop: error: PostgreSQL store {shown} (schema actloop): libpq cannot read the "
        f"connection string ({detail}); see "
        "https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING\n"
    )
    assert "S3cr" not in out and "S3cr" not in repr(PostgresCheckpointer(uri))


# -- one typed error for a damaged stored value --------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "shown"),
    [("\u00b2", "'\u00b2'"), ("9" * 5000, "'" + "9" * 39 + "... (5002 characters)"), ("", "''")],
)
def test_a_tampered_schema_version_is_a_checkpoint_error(
    postgres_server: PostgresServer, stored: str, shown: str
) -> None:
    # Before: `²` passed isdigit() and int() raised a bare ValueError (5,000 digits the same).
    url = postgres_server.create_database()
    store = PostgresCheckpointer(url)
    store.create(RunRecord("T", "running", "{}", "{}"))
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE actloop.meta SET value=%s WHERE key='version'", (stored,))
    with pytest.raises(CheckpointError) as caught:
        PostgresCheckpointer(url).list_runs()
    assert str(caught.value) == (
        f"schema 'actloop' of {url} is damaged (its schema version {shown} is not a number); it "
        "was left untouched. Restore it from a backup or pass another schema=."
    )


def test_a_schema_reference_with_a_non_ascii_digit_is_not_found() -> None:
    # Before: `²` passed isdigit() and int() raised "invalid literal for int()"; LangChain's
    # KeyError is what a reference that names nothing raises.
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/x/\u00b2"}},
        "$defs": {"x": [{"type": "string"}]},
    }
    tool = StructuredTool.from_function(lambda a: a, name="t", description="d", args_schema=schema)
    with pytest.raises(KeyError, match=r"^\"Reference '#/\$defs/x/\u00b2' not found.\"$"):
        convert_to_openai_tool(tool)
    schema["properties"] = {"a": {"$ref": "#/$defs/x/0"}}
    tool = StructuredTool.from_function(lambda a: a, name="t", description="d", args_schema=schema)
    assert convert_to_openai_tool(tool)["function"]["parameters"]["properties"] == {
        "a": {"type": "string"}
    }


@pytest.mark.parametrize(("value", "expected"), [("\u00b2", None), ("9" * 5000, None), ("3", 3)])
def test_a_thread_count_that_is_not_ascii_digits_is_ignored(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: int | None
) -> None:
    from actloop.models._local_engine import default_threads

    monkeypatch.delenv("ACTLOOP_LOCAL_THREADS", raising=False)
    fallback = default_threads()
    monkeypatch.setenv("ACTLOOP_LOCAL_THREADS", value)
    assert default_threads() == (fallback if expected is None else expected)


# -- values JSON cannot hold exactly -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind"),
    [({"lc": 1, "s": {1, 2}}, "set"), ({"lc": 1, "when": datetime.date(2026, 1, 1)}, "date")],
)
def test_dumps_of_an_escaped_dict_holding_what_json_cannot_is_a_serialization_error(
    value: dict[str, Any], kind: str
) -> None:
    # Before: a bare TypeError from json.dumps (the escaped dict is written as is).
    with pytest.raises(SerializationError) as caught:
        dumps(value)
    assert str(caught.value) == (
        "Cannot serialize a dict with an 'lc' key holding a value JSON cannot hold: "
        f"Object of type {kind} is not JSON serializable"
    )


def test_a_durable_observation_json_changes_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: a tuple observation came back as a list on resume without a word.
    monkeypatch.setattr(entries, "_warned", False)
    values = {"pair": (1, 2), "keys": {1: "a"}}
    tool = Tool(name="get", func=lambda q: values[q], description="d")
    agent = ScriptedAgent(
        [AgentAction("get", "pair", ""), AgentAction("get", "keys", ""), AgentFinish({}, "")]
    )
    store = SqliteCheckpointer(tmp_path / "runs.db")
    executor = AgentExecutor(agent=agent, tools=[tool], checkpointer=store)
    with caplog.at_level(logging.WARNING, logger="actloop.checkpoint"):
        executor.invoke({"input": "x"}, {"configurable": {"thread_id": "T"}})
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        (
            "actloop.checkpoint",
            "the observation of tool 'get' holds a tuple (it comes back as a list): JSON saves "
            "it changed, so a resumed run sees it changed; return lists and dicts with string "
            "keys (logged once)",
        )
    ]
    history = read_thread(store, "T")
    assert history is not None
    assert [c.observation for c in history.calls] == [[1, 2], {"1": "a"}]
    store.close()


def test_what_json_saves_changed() -> None:
    action = AgentAction("t", "i", "")
    assert entries.inexact("text") is None
    assert entries.inexact([{"a": [1, {"b": None}]}, (action, "obs")]) is None
    assert entries.inexact([{"a": [(1,)]}]) == "a tuple (it comes back as a list)"
    assert entries.inexact({"a": {2: 1}}) == (
        "a dict key that is not a string (it comes back as a string)"
    )
    assert entries.inexact([(action, {None: 1})]) == (
        "a dict key that is not a string (it comes back as a string)"
    )


def test_runs_list_over_a_disallowed_class_id_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: the run was listed with `?` steps and the command exited 0.
    path = tmp_path / "runs.db"
    store = SqliteCheckpointer(path)
    tool = Tool(name="t", func=lambda q: "obs", description="d")
    agent = ScriptedAgent([AgentAction("t", "x", ""), AgentFinish({"output": "done"}, "")])
    executor = AgentExecutor(agent=agent, tools=[tool], checkpointer=store)
    executor.invoke({"input": "q"}, {"configurable": {"thread_id": "T"}})
    store.close()
    forbidden = json.dumps({"lc": 1, "type": "constructor", "id": ["os", "system"], "kwargs": {}})
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entries SET data=? WHERE kind='obs'", (forbidden,))
    conn.close()
    assert main(["runs", "list", "--db", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines[:2]] == [
        ["THREAD", "STATUS", "STEPS"],
        ["T", "finished", "?"],
    ]
    assert lines[2:] == [
        "error: journal entry 1 of thread 'T' is damaged (Deserialization of ['os', 'system'] is "
        "not allowed: load builds only actloop's messages and agent data classes (narrow them "
        "with allowed_objects=...).)"
    ]


# -- a full disk, then a resume in the same process ----------------------------------------------

FULL_DISK = r"""
import json, os, resource, signal, sys
from actloop import AgentAction, AgentExecutor, AgentFinish, Tool
from actloop.checkpoint import SqliteCheckpointer, read_thread
from actloop.testing import ScriptedAgent

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
calls = []

def run(q):
    calls.append(q)
    if len(calls) == 1:  # the disk is full from now on: no file of this process may grow
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, hard))
    return "obs " + q

store = SqliteCheckpointer(sys.argv[1])
tool = Tool(name="t", func=run, description="d")
done = AgentFinish({"output": "done"}, "")
plans = [AgentAction("t", "one", ""), AgentAction("t", "two", ""), done]
executor = AgentExecutor(agent=ScriptedAgent(list(plans)), tools=[tool], checkpointer=store)
out = {}
try:
    executor.invoke({"input": "q"}, {"configurable": {"thread_id": "T"}})
except Exception as exc:
    out["first"] = type(exc).__name__
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space was freed
executor.agent = ScriptedAgent(list(plans))  # step 1 was saved with its result or not at all
try:
    out["resume"] = executor.resume("T")["output"]
except Exception as exc:
    out["resume"] = f"{type(exc).__name__}: {exc}"
history = read_thread(store, "T")
out["calls"] = calls
out["journal"] = [(c.tool_input, c.observation) for c in history.calls]
print(json.dumps(out))
"""


def test_a_resume_after_a_full_disk_in_the_same_process_takes_its_own_lease(
    tmp_path: Path,
) -> None:
    # Before: the failed run's lease could not be released on the full disk, and the resume in
    # the same process was refused: "thread 'T' is being run by process <its own pid>".
    result = run_script(FULL_DISK, str(tmp_path / "runs.db"))
    assert result == {
        "first": "CheckpointError",
        "resume": "done",
        "calls": ["one", "one", "two"],  # "one"'s observation was not saved: it runs again
        "journal": [["one", "obs one"], ["two", "obs two"]],
    }
