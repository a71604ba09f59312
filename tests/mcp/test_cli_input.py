"""`actloop run --db --mcp` with a tool that asks a person: the run pauses (exit 3) printing
the question and how to answer; `runs show` lists it; `runs resume --answer` (the server started
again: the sealed request state still opens) re-sends the call and the run finishes."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_fixtures import SERVERS
from test_cli import _calls, _servers_anywhere, run_cli
from test_input import received

from support.openai_server import LoopbackServer, message, running

ASKING = str(SERVERS / "asking.py")


@pytest.fixture
def model() -> Iterator[LoopbackServer]:
    yield from running()


def test_a_cli_run_pauses_on_the_question_and_resumes_with_the_answer(
    model: LoopbackServer, tmp_path: Path
) -> None:
    db = str(tmp_path / "runs.db")
    server = f"{sys.executable} {ASKING}"
    agent = ["--model", "openai:test", "--base-url", model.url, "--mcp", server]
    model.script(_calls(("c1", "book", {"city": "Oslo"})), message("Booked for 2 nights."))
    paused = run_cli("run", "book a room in Oslo", *agent, "--db", db, "--thread", "T")
    assert paused.returncode == 3, paused.stderr
    words = ["actloop", "runs", "resume", "T", "--db", db, "--model", "openai:test"]
    resume = shlex.join([*words, "--base-url", model.url, "--mcp", server])
    assert paused.stdout.splitlines()[-4:] == [
        "thread T is waiting for an answer:",
        '  [0-0] book({"city": "Oslo"}) asks:',
        '    nights: How many nights in Oslo? answer: {"properties": {"nights": {"type": '
        '"integer", "description": "How many nights"}}, "required": ["nights"], "type": "object"}',
        f"resume it with: {resume} --answer ID='{{...}}' (or ID=decline, ID=cancel)",
    ]
    shown = run_cli("runs", "show", "T", "--db", db)
    assert shown.stdout.splitlines()[-3:-1] == [
        "waiting for an answer:",
        '  [0-0] book({"city": "Oslo"}) asks:',
    ]
    done = run_cli(
        "runs",
        "resume",
        "T",
        "--db",
        db,
        *agent[:4],
        "--mcp",
        server,
        "--answer",
        '0-0={"nights": 2}',
    )
    assert (done.returncode, done.stdout) == (0, "Booked for 2 nights.\n"), done.stderr
    tool_messages = [m for m in model.bodies[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [
        received({"action": "accept", "content": {"nights": 2}})
    ]
    assert _servers_anywhere(ASKING) == []
