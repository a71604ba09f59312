"""Durable threads over HTTP: start, follow live (Last-Event-ID), approve/reject/edit, resume."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from actloop.checkpoint import SqliteCheckpointer
from actloop.server import create_app
from support.serve import Serve

from .agents import make_executor

Event = tuple[int, str, Any]


@pytest.fixture
def client(serve: Serve, tmp_path: Path) -> Iterator[httpx.Client]:
    url = serve(create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite"))))
    with httpx.Client(base_url=url, timeout=30) as c:
        yield c


def events(client: httpx.Client, thread: str, last: int | None = None) -> list[Event]:
    """Every event of the thread's run (after `last`), read until the run's end."""
    headers = {} if last is None else {"Last-Event-ID": str(last)}
    with client.stream("GET", f"/threads/{thread}/events", headers=headers) as response:
        assert response.status_code == 200
        return parse(response.iter_lines())


def parse(lines: Iterator[str]) -> list[Event]:
    out: list[Event] = []
    ident, name = -1, ""
    for line in lines:
        if line.startswith("id: "):
            ident = int(line[4:])
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
            out.append((ident, name, json.loads(data) if data else None))
    return out


def start(client: httpx.Client, question: str, thread: str) -> None:
    body = {"input": {"input": question}, "thread_id": thread}
    response = client.post("/threads", json=body)
    assert (response.status_code, response.json()) == (
        202,
        {"thread_id": thread, "first_event": 0},
    )


def kinds(evs: list[Event]) -> list[str]:
    """Each event as its kind: actions, steps, output, pending_approvals, token, end, error."""
    out = []
    for _, name, data in evs:
        if name != "data":
            out.append(name)
        else:
            out.append(
                next(
                    k
                    for k in ("actions", "steps", "output", "token", "pending_approvals")
                    if k in data
                )
            )
    return out


def test_a_run_on_a_thread_streams_then_reads_back(client: httpx.Client) -> None:
    start(client, "add 2 40", "t1")
    evs = events(client, "t1")
    assert [e[0] for e in evs] == list(range(len(evs)))
    assert kinds(evs) == ["actions", "steps", "token", "token", "token", "token", "output", "end"]
    assert "".join(d["token"] for _, _, d in evs if d and "token" in d) == "The sum is 42."
    state = client.get("/threads/t1").json()
    assert {k: state[k] for k in ("status", "input", "output", "pending_approvals", "error")} == {
        "status": "finished",
        "input": "add 2 40",
        "output": {"output": "The sum is 42."},
        "pending_approvals": [],
        "error": None,
    }
    assert state["steps"] == [
        {"id": "0-0", "tool": "add", "tool_input": {"a": 2, "b": 40}, "observation": 42}
    ]
    listed = client.get("/threads").json()["threads"]
    assert [(t["thread_id"], t["status"], t["input"]) for t in listed] == [
        ("t1", "finished", "add 2 40")
    ]


def test_reconnecting_with_last_event_id_misses_nothing(client: httpx.Client) -> None:
    start(client, "slow 4", "t2")
    with client.stream("GET", "/threads/t2/events") as response:
        seen = []
        lines = response.iter_lines()
        for line in lines:  # leave after the second event
            if line.startswith("id: "):
                seen.append(int(line[4:]))
            if len(seen) == 2 and line == "":
                break
    assert seen == [0, 1]
    rest = events(client, "t2", last=1)
    everything = events(client, "t2")
    assert [e[0] for e in rest] == list(range(2, len(everything)))
    assert rest == everything[2:]
    assert kinds(everything)[:8] == ["actions", "steps"] * 4
    assert everything[-2][2]["output"] == "Napped 4 times."


def wait_status(client: httpx.Client, thread: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        state = client.get(f"/threads/{thread}").json()
        if state["status"] == status and not state["live"]:
            return state
        assert time.monotonic() < deadline, state
        time.sleep(0.05)


def test_approve_a_paused_call(client: httpx.Client) -> None:
    start(client, "send hello", "t3")
    evs = events(client, "t3")
    assert kinds(evs) == ["actions", "pending_approvals", "end"]
    pending = evs[1][2]["pending_approvals"]
    assert [(p["id"], p["tool"], p["tool_input"]) for p in pending] == [
        ("0-0", "send", {"text": "hello"})
    ]
    assert client.get("/threads/t3").json()["status"] == "paused"
    response = client.post("/threads/t3/resume", json={"approve": ["0-0"]})
    assert (response.status_code, response.json()) == (202, {"thread_id": "t3", "first_event": 3})
    after = events(client, "t3", last=2)
    # the resumed run replays the paused step's actions, then runs the approved call
    assert kinds(after) == ["actions", "steps", "token", "token", "token", "output", "end"]
    assert [e[0] for e in after] == list(range(3, 10))
    assert after[-2][2]["output"] == "Sent: sent 'hello'"
    state = wait_status(client, "t3", "finished")
    assert state["steps"][0]["observation"] == "sent 'hello'"


def test_reject_with_a_reason(client: httpx.Client) -> None:
    start(client, "send spam", "t4")
    events(client, "t4")
    response = client.post("/threads/t4/resume", json={"reject": {"0-0": "no spam"}})
    assert response.status_code == 202
    state = wait_status(client, "t4", "finished")
    observation = state["steps"][0]["observation"]
    assert "rejected" in observation and "no spam" in observation
    assert state["output"] == {"output": f"Sent: {observation}"}


def test_edit_the_input_of_a_paused_call(client: httpx.Client) -> None:
    start(client, "send helo", "t5")
    events(client, "t5")
    response = client.post("/threads/t5/resume", json={"edit": {"0-0": {"text": "hello"}}})
    assert response.status_code == 202
    state = wait_status(client, "t5", "finished")
    assert state["steps"] == [
        {
            "id": "0-0",
            "tool": "send",
            "tool_input": {"text": "hello"},
            "observation": "sent 'hello'",
        }
    ]


def test_bad_decisions_are_refused_before_anything_runs(client: httpx.Client) -> None:
    start(client, "send x", "t6")
    events(client, "t6")
    cases = [
        ({"approve": ["0.0"]}, "no call waits with id '0.0' (waiting: 0-0)"),
        ({"approve": "yes"}, "'approve' must be true or a list of call ids"),
        ({"edit": ["0-0"]}, "'edit' must be {id: new tool input}"),
    ]
    for body, reason in cases:
        response = client.post("/threads/t6/resume", json=body)
        assert (response.status_code, response.json()) == (422, {"error": reason})
    assert client.get("/threads/t6").json()["status"] == "paused"


def test_a_failed_run_resumes(
    client: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "down"
    flag.write_text("")
    monkeypatch.setenv("ACTLOOP_TEST_FAIL", str(flag))
    start(client, "flaky ping", "t7")
    evs = events(client, "t7")
    assert kinds(evs) == ["actions", "error"]
    assert evs[-1][2] == {"status_code": 500, "message": "Internal Server Error"}
    state = wait_status(client, "t7", "failed")
    assert state["error"] == "RuntimeError"  # the type only: the message stays in the log
    flag.unlink()
    assert client.post("/threads/t7/resume", json={}).status_code == 202
    state = wait_status(client, "t7", "finished")
    assert state["output"] == {"output": "Flaky said: echo ping"}


def test_conflicts_and_unknown_threads(client: httpx.Client) -> None:
    start(client, "add 1 1", "t8")
    events(client, "t8")
    again = client.post("/threads", json={"input": {"input": "add 1 1"}, "thread_id": "t8"})
    assert again.status_code == 409
    assert again.json() == {"error": "thread 't8' already has a run; resume it instead"}
    finished = client.post("/threads/t8/resume", json={})
    assert finished.status_code == 409
    assert "already finished" in finished.json()["error"]
    assert client.get("/threads/nope").status_code == 404
    bad = client.post("/threads", json={"input": {"input": "x"}, "thread_id": "../etc"})
    assert bad.json() == {"error": "thread_id must be 1-100 letters, digits, '-', '_' or '.'"}


def test_openapi_describes_the_routes(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    assert sorted(document["paths"]) == [
        "/",
        "/.well-known/agent-card.json",
        "/a2a",
        "/ag-ui",
        "/agent/batch",
        "/agent/config_schema",
        "/agent/input_schema",
        "/agent/invoke",
        "/agent/output_schema",
        "/agent/stream",
        "/agent/stream_events",
        "/health",
        "/mcp",
        "/threads",
        "/threads/{thread_id}",
        "/threads/{thread_id}/events",
        "/threads/{thread_id}/resume",
        "/v1/models",
        "/v1/models/{model}",
        "/v1/responses",
        "/v1/responses/{response_id}",
    ]


def test_a_durable_langserve_stream_left_midway_can_be_followed_again(
    client: httpx.Client,
) -> None:
    body = {"input": {"input": "slow 3"}, "config": {"configurable": {"thread_id": "d1"}}}
    with client.stream("POST", "/agent/stream", json=body) as response:
        for line in response.iter_lines():
            if line.startswith("event: data"):
                break  # leave after the first chunk
    evs = events(client, "d1")
    assert kinds(evs) == ["actions", "steps"] * 3 + ["output", "end"]
    assert evs[-2][2]["output"] == "Napped 3 times."
    state = wait_status(client, "d1", "finished")
    assert [s["observation"] for s in state["steps"]] == ["rested"] * 3
