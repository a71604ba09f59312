"""Two real `actloop serve` processes on one real PostgreSQL serve the same threads.

A thread started through one is listed, streamed live, approved and resumed through the other;
when the process running a thread is killed with SIGKILL mid-call, the other takes the thread
over and finishes it. The served tools (`relay_agents`) write a line per finished call to a
file, so "no finished call ran twice" is checked exactly; `wait_for` holds a run mid-call until
the test creates its gate file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.postgres import PostgresServer
from support.serve import serve_env, start_serve, stop_serve

STORE_IDS = 10**9  # the first id of a store-told event (actloop.server._remote)


class Threads:
    """The threads HTTP API of one server: every request these tests make goes through here."""

    def __init__(self, url: str) -> None:
        self.url = url

    def start(self, thread: str, text: str) -> int:
        """A run of `thread` on `text` (the thread made if new): the status code."""
        body = {"assistant_id": "agent", "input": {"input": text}, "if_not_exists": "create"}
        return httpx.post(f"{self.url}/threads/{thread}/runs", json=body, timeout=30).status_code

    def resume(self, thread: str, **decisions: Any) -> int:
        """A run deciding the thread's waiting calls (`command.resume`): the status code."""
        body = {"assistant_id": "agent", "command": {"resume": decisions}}
        return httpx.post(f"{self.url}/threads/{thread}/runs", json=body, timeout=30).status_code

    def listed(self) -> dict[str, str]:
        found = httpx.post(f"{self.url}/threads/search", json={}, timeout=30).json()
        return {t["thread_id"]: t["status"] for t in found}

    def status(self, thread: str) -> str:
        return httpx.get(f"{self.url}/threads/{thread}", timeout=30).json()["status"]

    def state(self, thread: str) -> dict[str, Any]:
        return httpx.get(f"{self.url}/threads/{thread}/state", timeout=30).json()

    def observations(self, thread: str) -> list[tuple[str, str]]:
        """(tool, observation) of each call of the thread's latest turn, from its messages."""
        messages = self.state(thread)["values"]["messages"]
        return [(m["name"], m["content"]) for m in messages if m["type"] == "tool"]

    def waiting(self, thread: str) -> list[str]:
        """The ids of the calls waiting for approval."""
        interrupts = self.state(thread)["interrupts"]
        return [r["id"] for i in interrupts for r in i["value"]["action_requests"]]

    def events(self, thread: str, after: int | None = None) -> Iterator[tuple[int, str, Any]]:
        """The thread's events as they come: (id, name, data decoded)."""
        headers = {} if after is None else {"Last-Event-ID": str(after)}
        path = f"{self.url}/threads/{thread}/events"
        with httpx.stream("GET", path, headers=headers, timeout=60) as response:
            assert response.status_code == 200
            fields: dict[str, str] = {}
            for line in response.iter_lines():
                if line:
                    key, _, value = line.partition(": ")
                    fields[key] = value
                    continue
                data = fields.get("data", "")
                yield int(fields["id"]), fields["event"], json.loads(data) if data else None
                fields = {}


def kind(event: tuple[int, str, Any]) -> str:
    """What an event is: its name, or for a data event its item's first key (and tool)."""
    _, name, data = event
    if name != "data":
        return name
    if "actions" in data:
        return f"actions {data['actions'][0]['tool']}"
    if "steps" in data:
        return f"steps {data['steps'][0]['action']['tool']}"
    return next(k for k in ("pending_approvals", "output", "token") if k in data)


def until(events: Iterator[tuple[int, str, Any]], wanted: str) -> list[tuple[int, str, Any]]:
    """The events read up to and with the first of kind `wanted`."""
    seen: list[tuple[int, str, Any]] = []
    for event in events:
        seen.append(event)
        if kind(event) == wanted:
            return seen
    raise AssertionError(f"the stream ended before {wanted!r}: {[kind(e) for e in seen]}")


def waiting(check: Callable[[], bool], what: str) -> None:
    """Until `check()` holds (a side effect of another process: a file it writes)."""
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"no {what} within 60 s"
        time.sleep(0.02)


@dataclass
class Pair:
    """Two servers on one store, the tools' calls file and gates folder."""

    a: subprocess.Popen[bytes]
    b: subprocess.Popen[bytes]
    on_a: Threads
    on_b: Threads
    calls: Path
    gates: Path

    def lines(self) -> list[str]:
        """The calls so far, the server's pid replaced by its name."""
        names = {str(self.a.pid): "A", str(self.b.pid): "B"}
        text = self.calls.read_text().splitlines()
        return [f"{line.rsplit(' [', 1)[0]} @{names[line.rsplit('[', 1)[1][:-1]]}" for line in text]

    def open_gate(self, name: str) -> None:
        (self.gates / name).touch()


@pytest.fixture
def pair(postgres_server: PostgresServer, tmp_path: Path) -> Iterator[Pair]:
    db = postgres_server.create_database()
    calls, gates = tmp_path / "calls.log", tmp_path / "gates"
    calls.touch()
    gates.mkdir()
    env = {"ACTLOOP_TEST_CALLS": str(calls), "ACTLOOP_TEST_GATES": str(gates)}
    args = ("--executor", "server.relay_agents:make_executor", "--db", db)
    options = ("--lease-ttl", "2", "--takeover-every", "0.2")
    a, url_a = start_serve(*args, *options, env=env)
    try:
        b, url_b = start_serve(*args, *options, env=env)
    except BaseException:
        stop_serve(a)
        raise
    try:
        yield Pair(a, b, Threads(url_a), Threads(url_b), calls, gates)
    finally:
        for proc in (a, b):
            stop_serve(proc)


def test_a_thread_started_on_one_is_streamed_approved_and_resumed_on_the_other(
    pair: Pair,
) -> None:
    on_a, on_b = pair.on_a, pair.on_b
    assert on_a.start("one", "relay one") == 200
    first_on_a = on_a.events("one")
    until(first_on_a, "steps record")  # the run now goes on to `wait_for`, which holds it
    first_on_a.close()
    waiting(lambda: "wait_for one started @A" in pair.lines(), "blocked call")
    assert on_b.listed() == {"one": "busy"}  # run by A

    live = on_b.events("one")
    first = until(live, "steps record")  # told by B while A's run is held mid-call
    assert on_b.resume("one", approve=True) == 409  # A holds it: no second run
    assert on_b.start("one", "relay again") == 409
    pair.open_gate("one")
    rest = list(live)
    told = first + rest
    assert [kind(e) for e in told] == [
        "actions record",
        "steps record",
        "actions wait_for",
        "steps wait_for",
        "actions publish",
        "pending_approvals",
        "end",
    ]
    ids = [e[0] for e in told]
    assert ids == sorted(ids) and ids[0] >= STORE_IDS
    pending = told[-2][2]["pending_approvals"]
    assert [(p["id"], p["tool"], p["tool_input"]) for p in pending] == [
        ("2-0", "publish", {"text": "one"})
    ]
    assert told[1][2]["steps"][0]["observation"] == "noted one"

    assert on_b.resume("one", approve=True) == 200
    resumed = list(on_b.events("one"))  # B's own log now
    assert resumed[-2][2]["output"] == "Done one: published one"
    assert resumed[-1][1] == "end"

    # A's log ended at the pause; the store says B went on: A tells the rest from the store,
    # from the event after the pause (a reconnect with a store-made Last-Event-ID).
    again = list(on_a.events("one", after=told[-1][0]))
    assert [kind(e) for e in again] == ["steps publish", "output", "end"]
    assert again[1][2]["output"] == "Done one: published one"
    assert again[0][0] > told[-1][0]
    whole = list(on_a.events("one", after=STORE_IDS - 1))
    assert whole[: len(told)] == told  # the same ids for the same events, on either process
    assert on_a.status("one") == "idle"
    assert on_a.state("one")["values"]["output"] == "Done one: published one"
    assert pair.lines() == [
        "record one @A",
        "wait_for one started @A",
        "wait_for one @A",
        "publish one @B",
    ]


def test_a_thread_of_a_killed_process_is_taken_over_and_finished(pair: Pair) -> None:
    on_a, on_b = pair.on_a, pair.on_b
    pair.open_gate("p")
    assert on_a.start("p", "relay p") == 200  # paused on A before A dies: never taken over
    assert kind(list(on_a.events("p"))[-2]) == "pending_approvals"
    assert on_a.start("two", "chain two") == 200
    first_on_a = on_a.events("two")
    until(first_on_a, "steps record")
    first_on_a.close()
    waiting(lambda: "wait_for two started @A" in pair.lines(), "blocked call")
    live = on_b.events("two")
    first = until(live, "steps record")

    os.kill(pair.a.pid, signal.SIGKILL)  # mid-call: `wait_for` holds the run
    assert pair.a.wait(timeout=30) == -signal.SIGKILL
    waiting(lambda: "wait_for two started @B" in pair.lines(), "take-over")
    assert on_b.start("two", "chain again") == 409  # B runs it now
    pair.open_gate("two")
    told = first + list(live)  # the same stream, from before the kill to the end
    assert [kind(e) for e in told] == [
        "actions record",
        "steps record",
        "actions wait_for",
        "steps wait_for",
        "output",
        "end",
    ]
    assert told[-2][2]["output"] == "Done two: passed two"
    assert on_b.status("two") == "idle"
    assert on_b.state("two")["values"]["output"] == "Done two: passed two"
    assert on_b.observations("two") == [("record", "noted two"), ("wait_for", "passed two")]
    assert (on_b.status("p"), on_b.waiting("p")) == ("interrupted", ["2-0"])
    assert pair.lines() == [  # the finished call ran once; the killed one again on B
        "record p @A",
        "wait_for p started @A",
        "wait_for p @A",
        "record two @A",
        "wait_for two started @A",
        "wait_for two started @B",
        "wait_for two @B",
    ]


@pytest.mark.parametrize("option", ["--lease-ttl", "--takeover-every"])
def test_lease_and_takeover_settings_must_be_seconds(option: str) -> None:
    cmd = [sys.executable, "-m", "actloop", "serve", option, "-1"]
    done = subprocess.run(cmd, env=serve_env(), capture_output=True, timeout=60)
    assert done.returncode == 2
    assert f"argument {option}: '-1' is not a number of seconds" in done.stderr.decode()
