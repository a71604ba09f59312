"""Durable threads over HTTP in the Agent Protocol's shape (raw requests; the langgraph-sdk
client is in test_agent_protocol.py): start a run, follow the thread's events live
(Last-Event-ID), approve/reject/edit by `command.resume`, resume a failed run."""

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


def start(client: httpx.Client, question: str, thread: str) -> dict[str, Any]:
    """Create thread `thread` and start a run on it; the run."""
    made = client.post("/threads", json={"thread_id": thread})
    assert (made.status_code, made.json()["status"], made.json()["values"]) == (200, "idle", {})
    return run(client, thread, {"input": {"input": question}})


def run(client: httpx.Client, thread: str, body: dict[str, Any]) -> dict[str, Any]:
    """Start a run on the thread (`POST /threads/{id}/runs`); the run."""
    response = client.post(f"/threads/{thread}/runs", json={"assistant_id": "agent", **body})
    assert response.status_code == 200, response.json()
    started = response.json()
    assert (started["thread_id"], started["assistant_id"]) == (thread, "agent")
    return started


def resume(client: httpx.Client, thread: str, decision: Any) -> httpx.Response:
    body = {"assistant_id": "agent", "command": {"resume": decision}}
    return client.post(f"/threads/{thread}/runs", json=body)


def state_of(client: httpx.Client, thread: str) -> tuple[str, dict[str, Any]]:
    """The thread's status and its state."""
    return client.get(f"/threads/{thread}").json()["status"], client.get(
        f"/threads/{thread}/state"
    ).json()


def calls(values: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """Each tool call of the values' messages: (id, name and args, its tool message's content)."""
    results = {m["tool_call_id"]: m["content"] for m in values["messages"] if m["type"] == "tool"}
    return [
        (c["id"], (c["name"], c["args"]), results.get(c["id"]))
        for m in values["messages"]
        if m["type"] == "ai"
        for c in m["tool_calls"]
    ]


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
    status, state = state_of(client, "t1")
    assert (status, state["next"], state["tasks"], state["interrupts"]) == ("idle", [], [], [])
    assert state["values"] == {
        "input": "add 2 40",
        "output": "The sum is 42.",
        "messages": [
            {"type": "human", "content": "add 2 40", "id": "t1-human-0"},
            {
                "type": "ai",
                "content": "",
                "id": "t1-ai-0",
                "tool_calls": [
                    {"name": "add", "args": {"a": 2, "b": 40}, "id": "0-0", "type": "tool_call"}
                ],
            },
            {
                "type": "tool",
                "content": "42",
                "tool_call_id": "0-0",
                "name": "add",
                "id": "t1-tool-0-0",
            },
            {"type": "ai", "content": "The sum is 42.", "id": "t1-ai-1", "tool_calls": []},
        ],
    }
    listed = client.post("/threads/search", json={}).json()
    assert [(t["thread_id"], t["status"], t["values"]["input"]) for t in listed] == [
        ("t1", "idle", "add 2 40")
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
    """The thread's state once its status is `status` (a run started by another request)."""
    deadline = time.monotonic() + 30
    while True:
        now, state = state_of(client, thread)
        if now == status:
            return state
        assert time.monotonic() < deadline, (now, state)
        time.sleep(0.05)


def test_approve_a_paused_call(client: httpx.Client) -> None:
    start(client, "send hello", "t3")
    evs = events(client, "t3")
    assert kinds(evs) == ["actions", "pending_approvals", "end"]
    pending = evs[1][2]["pending_approvals"]
    assert [(p["id"], p["tool"], p["tool_input"]) for p in pending] == [
        ("0-0", "send", {"text": "hello"})
    ]
    status, state = state_of(client, "t3")
    assert (status, state["next"]) == ("interrupted", ["tools"])
    [waiting] = state["interrupts"]
    assert waiting["value"]["action_requests"][0] | {"description": ""} == {
        "id": "0-0",
        "name": "send",
        "args": {"text": "hello"},
        "description": "",
    }
    assert state["tasks"][0]["interrupts"] == [waiting]
    response = resume(client, "t3", {"approve": ["0-0"]})
    assert (response.status_code, response.json()["status"]) == (200, "running")
    after = events(client, "t3", last=2)
    # the resumed run replays the paused step's actions, then runs the approved call
    assert kinds(after) == ["actions", "steps", "token", "token", "token", "output", "end"]
    assert [e[0] for e in after] == list(range(3, 10))
    assert after[-2][2]["output"] == "Sent: sent 'hello'"
    state = wait_status(client, "t3", "idle")
    assert calls(state["values"]) == [("0-0", ("send", {"text": "hello"}), "sent 'hello'")]


def test_reject_with_a_reason(client: httpx.Client) -> None:
    start(client, "send spam", "t4")
    events(client, "t4")
    assert resume(client, "t4", {"reject": {"0-0": "no spam"}}).status_code == 200
    events(client, "t4", last=2)
    state = wait_status(client, "t4", "idle")
    [(_, _, observation)] = calls(state["values"])
    assert "rejected" in observation and "no spam" in observation
    assert state["values"]["output"] == f"Sent: {observation}"


def test_edit_the_input_of_a_paused_call(client: httpx.Client) -> None:
    start(client, "send helo", "t5")
    events(client, "t5")
    assert resume(client, "t5", {"edit": {"0-0": {"text": "hello"}}}).status_code == 200
    events(client, "t5", last=2)
    state = wait_status(client, "t5", "idle")
    assert calls(state["values"]) == [("0-0", ("send", {"text": "hello"}), "sent 'hello'")]


def test_bad_decisions_are_refused_before_anything_runs(client: httpx.Client) -> None:
    start(client, "send x", "t6")
    events(client, "t6")
    cases = [
        ({"approve": ["0.0"]}, "no call waits with id '0.0' (waiting: 0-0)"),
        ({"approve": "yes"}, "'approve' must be true or a list of call ids"),
        ({"edit": ["0-0"]}, "'edit' must be {id: new tool input}"),
        ({"decisions": []}, "'decisions' must be a list of 1 decision(s), one per waiting call"),
        ("yes", "'resume' must be true, null or an object"),
    ]
    for decision, reason in cases:
        response = resume(client, "t6", decision)
        assert (response.status_code, response.json()) == (422, {"error": reason})
    assert state_of(client, "t6")[0] == "interrupted"


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
    state = wait_status(client, "t7", "error")
    assert (
        state["tasks"][0]["error"] == "RuntimeError"
    )  # the type only: the message stays in the log
    flag.unlink()
    assert resume(client, "t7", None).status_code == 200
    events(client, "t7", last=1)
    state = wait_status(client, "t7", "idle")
    assert state["values"]["output"] == "Flaky said: echo ping"


def test_conflicts_and_unknown_threads(client: httpx.Client) -> None:
    start(client, "add 1 1", "t8")
    events(client, "t8")
    again = client.post("/threads", json={"thread_id": "t8"})
    assert (again.status_code, again.json()) == (409, {"error": "thread 't8' already exists"})
    same = client.post("/threads", json={"thread_id": "t8", "if_exists": "do_nothing"})
    assert (same.status_code, same.json()["values"]["output"]) == (200, "The sum is 2.")
    finished = resume(client, "t8", None)
    assert finished.status_code == 409
    assert "already finished" in finished.json()["error"]
    assert client.get("/threads/nope").status_code == 404
    assert (
        client.post(
            "/threads/nope/runs", json={"assistant_id": "agent", "input": {"input": "x"}}
        ).status_code
        == 404
    )
    bad = client.post("/threads", json={"thread_id": "../etc"})
    assert bad.json() == {"error": "thread_id must be 1-100 letters, digits, '-', '_' or '.'"}


def test_openapi_describes_the_routes(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    assert document["openapi"] == "3.1.0"
    assert document["info"]["x-actloop-durable"] is True
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
        "/assistants/search",
        "/assistants/{assistant_id}",
        "/assistants/{assistant_id}/schemas",
        "/health",
        "/mcp",
        "/runs",
        "/runs/stream",
        "/runs/wait",
        "/threads",
        "/threads/search",
        "/threads/{thread_id}",
        "/threads/{thread_id}/events",
        "/threads/{thread_id}/history",
        "/threads/{thread_id}/runs",
        "/threads/{thread_id}/runs/stream",
        "/threads/{thread_id}/runs/wait",
        "/threads/{thread_id}/runs/{run_id}",
        "/threads/{thread_id}/runs/{run_id}/cancel",
        "/threads/{thread_id}/runs/{run_id}/join",
        "/threads/{thread_id}/runs/{run_id}/stream",
        "/threads/{thread_id}/state",
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
    state = wait_status(client, "d1", "idle")
    assert [c[2] for c in calls(state["values"])] == ["rested"] * 3
