"""The Agent Protocol with the official `langgraph-sdk` client (async `get_client` and
`get_sync_client`) against a real server on loopback, over the scripted agent of `agents.py`:
assistants, threads, runs waited and streamed in each mode (exact parts), interrupts approved,
rejected and edited by `command`, cancel, join, stateless runs, a failing run, bad input."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client, get_sync_client
from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

from actloop.checkpoint import SqliteCheckpointer
from actloop.server import create_app
from support.serve import Serve, start_serve, stop_serve

from .agents import make_executor

TOKEN = "sdk-t0ken"
Part = tuple[str, Any]


@pytest.fixture
def url(serve: Serve, tmp_path: Path) -> str:
    """A durable server with a token (the SDK sends it as `X-Api-Key`)."""
    return serve(
        create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite")), token=TOKEN)
    )


@pytest.fixture
def sync(url: str) -> Iterator[SyncLangGraphClient]:
    with get_sync_client(url=url, api_key=TOKEN) as client:
        yield client


@pytest.fixture
async def client(url: str) -> AsyncIterator[LangGraphClient]:
    async with get_client(url=url, api_key=TOKEN) as c:
        yield c


# the scripted agent's messages for "add 2 40" on thread `t` (turn ids: t, t:2, ...)


def human(t: str, text: str) -> dict[str, Any]:
    return {"type": "human", "content": text, "id": f"{t}-human-0"}


def ai_calls(
    t: str, name: str, args: dict[str, Any], step: int = 0, turn: str = ""
) -> dict[str, Any]:
    call = {"name": name, "args": args, "id": f"{turn}{step}-0", "type": "tool_call"}
    return {"type": "ai", "content": "", "id": f"{t}-ai-{step}", "tool_calls": [call]}


def tool(t: str, name: str, content: str, turn: str = "") -> dict[str, Any]:
    return {
        "type": "tool",
        "content": content,
        "tool_call_id": f"{turn}0-0",
        "name": name,
        "id": f"{t}-tool-0-0",
    }


def answer(t: str, text: str, step: int = 1) -> dict[str, Any]:
    return {"type": "ai", "content": text, "id": f"{t}-ai-{step}", "tool_calls": []}


def added(t: str) -> list[dict[str, Any]]:
    """The messages of the turn "add 2 40"."""
    return [
        human(t, "add 2 40"),
        ai_calls(t, "add", {"a": 2, "b": 40}),
        tool(t, "add", "42"),
        answer(t, "The sum is 42."),
    ]


TOKENS = ["The", " sum", " is", " 42."]


def meta(t: str, run: str, node: str, step: int) -> dict[str, Any]:
    return {
        "run_id": run,
        "thread_id": t,
        "assistant_id": "agent",
        "graph_id": "agent",
        "langgraph_node": node,
        "langgraph_step": step,
    }


def collect(parts: Any) -> tuple[str, list[Part]]:
    """The run id (from the first part, `metadata`) and every part as (event, data)."""
    seen = [(p.event, p.data) for p in parts]
    assert seen[0][0] == "metadata"
    return seen[0][1]["run_id"], seen


async def acollect(parts: Any) -> tuple[str, list[Part]]:
    return collect([p async for p in parts])


# assistants


def test_one_assistant_the_served_agent(sync: SyncLangGraphClient) -> None:
    [found] = sync.assistants.search()
    assert {k: v for k, v in found.items() if not k.endswith("_at")} == {
        "assistant_id": "agent",
        "graph_id": "agent",
        "name": "agent",
        "description": None,
        "config": {},
        "context": {},
        "metadata": {"created_by": "system"},
        "version": 1,
    }
    assert sync.assistants.get("agent") == found
    assert sync.assistants.search(graph_id="other") == []
    schemas = sync.assistants.get_schemas("agent")
    assert schemas["input_schema"] == {
        "title": "Input",
        "type": "object",
        "properties": {"input": {"title": "Input"}},
        "required": ["input"],
    }
    assert schemas["output_schema"]["required"] == ["output"]
    with pytest.raises(NotFoundError):
        sync.assistants.get("nope")


# threads


async def test_threads_create_get_search_delete(client: LangGraphClient) -> None:
    made = await client.threads.create(thread_id="a", metadata={"user": "u1"})
    assert {k: v for k, v in made.items() if not k.endswith("_at")} == {
        "thread_id": "a",
        "metadata": {"graph_id": "agent", "assistant_id": "agent", "user": "u1"},
        "status": "idle",
        "config": {},
        "values": {},
        "interrupts": {},
    }
    with pytest.raises(ConflictError):
        await client.threads.create(thread_id="a")
    assert (await client.threads.create(thread_id="a", if_exists="do_nothing")) == made
    other = await client.threads.create()
    assert len(other["thread_id"]) == 36  # a uuid
    assert [t["thread_id"] for t in await client.threads.search(metadata={"user": "u1"})] == ["a"]
    assert len(await client.threads.search(status="idle")) == 2
    updated = await client.threads.update("a", metadata={"topic": "sums"})
    assert updated["metadata"] == {
        "graph_id": "agent",
        "assistant_id": "agent",
        "user": "u1",
        "topic": "sums",
    }
    assert await client.threads.search(status="busy") == []
    await client.runs.wait("a", "agent", input={"input": "add 2 40"})
    assert [
        t["thread_id"] for t in await client.threads.search(values={"output": "The sum is 42."})
    ] == ["a"]
    await client.threads.delete("a")
    with pytest.raises(NotFoundError):
        await client.threads.get("a")
    with pytest.raises(NotFoundError):
        await client.threads.delete("a")
    assert [t["thread_id"] for t in await client.threads.search()] == [other["thread_id"]]


def test_wait_then_state_and_history_over_two_turns(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="w")
    values = sync.runs.wait("w", "agent", input={"input": "add 2 40"})
    assert values == {"input": "add 2 40", "output": "The sum is 42.", "messages": added("w")}
    thread = sync.threads.get("w")
    assert (thread["status"], thread["values"], thread["interrupts"]) == ("idle", values, {})
    second = sync.runs.wait(
        "w", "agent", input={"messages": [{"role": "user", "content": "add 1 2"}]}
    )
    turn2 = [
        human("w:2", "add 1 2"),
        ai_calls("w:2", "add", {"a": 1, "b": 2}, turn="2:"),
        tool("w:2", "add", "3", turn="2:"),
        answer("w:2", "The sum is 3."),
    ]
    assert second == {"input": "add 1 2", "output": "The sum is 3.", "messages": added("w") + turn2}
    state = sync.threads.get_state("w")
    assert (state["values"], state["next"], state["tasks"], state["interrupts"]) == (
        second,
        [],
        [],
        [],
    )
    assert state["checkpoint"]["checkpoint_id"] == "w:2@8"
    history = sync.threads.get_history("w")
    assert [h["values"]["messages"] for h in history] == [added("w") + turn2, added("w")]
    assert [h["checkpoint"]["checkpoint_id"] for h in sync.threads.get_history("w", limit=1)] == [
        "w:2@8"
    ]
    runs = sync.runs.list("w")
    assert [(r["status"], r["assistant_id"]) for r in runs] == [("success", "agent")] * 2


# streams, mode by mode


def test_stream_values(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="v")
    run, parts = collect(sync.runs.stream("v", "agent", input={"input": "add 2 40"}))
    m = added("v")
    state = {"input": "add 2 40"}
    assert parts == [
        ("metadata", {"run_id": run, "attempt": 1}),
        ("values", {**state, "messages": m[:1]}),
        ("values", {**state, "messages": m[:2]}),
        ("values", {**state, "messages": m[:3]}),
        ("values", {**state, "output": "The sum is 42.", "messages": m}),
        ("end", {"run_id": run, "status": "success"}),
    ]


def test_stream_updates(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="u")
    run, parts = collect(
        sync.runs.stream("u", "agent", input={"input": "add 2 40"}, stream_mode="updates")
    )
    m = added("u")
    assert parts == [
        ("metadata", {"run_id": run, "attempt": 1}),
        ("updates", {"agent": {"messages": [m[1]]}}),
        ("updates", {"tools": {"messages": [m[2]]}}),
        ("updates", {"agent": {"messages": [m[3]], "output": "The sum is 42."}}),
        ("end", {"run_id": run, "status": "success"}),
    ]


def test_stream_messages_tuple(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="mt")
    run, parts = collect(
        sync.runs.stream("mt", "agent", input={"input": "add 2 40"}, stream_mode="messages-tuple")
    )
    m = added("mt")
    chunk = {"type": "AIMessageChunk", "id": "mt-ai-1", "tool_calls": [], "tool_call_chunks": []}
    assert parts == [
        ("metadata", {"run_id": run, "attempt": 1}),
        ("messages", [m[1], meta("mt", run, "agent", 0)]),
        ("messages", [m[2], meta("mt", run, "tools", 0)]),
        *[("messages", [{**chunk, "content": t}, meta("mt", run, "agent", 1)]) for t in TOKENS],
        ("end", {"run_id": run, "status": "success"}),
    ]


def test_stream_messages(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="ms")
    run, parts = collect(
        sync.runs.stream("ms", "agent", input={"input": "add 2 40"}, stream_mode="messages")
    )
    m = added("ms")
    so_far = ["The", "The sum", "The sum is", "The sum is 42."]
    assert parts == [
        ("metadata", {"run_id": run, "attempt": 1}),
        ("messages/metadata", {"ms-ai-0": {"metadata": meta("ms", run, "agent", 0)}}),
        ("messages/complete", [m[1]]),
        ("messages/metadata", {"ms-tool-0-0": {"metadata": meta("ms", run, "tools", 0)}}),
        ("messages/complete", [m[2]]),
        ("messages/metadata", {"ms-ai-1": {"metadata": meta("ms", run, "agent", 1)}}),
        *[("messages/partial", [answer("ms", text)]) for text in so_far],
        ("messages/complete", [m[3]]),
        ("end", {"run_id": run, "status": "success"}),
    ]


async def test_stream_events(client: LangGraphClient) -> None:
    await client.threads.create(thread_id="e")
    run, parts = await acollect(
        client.runs.stream("e", "agent", input={"input": "add 2 40"}, stream_mode="events")
    )
    events = [d for name, d in parts if name == "events"]
    assert [(e["event"], e["name"]) for e in events] == [
        ("on_chain_start", "AgentExecutor"),
        ("on_chain_stream", "AgentExecutor"),
        ("on_chain_stream", "AgentExecutor"),
        *[("on_chat_model_stream", "model")] * 4,
        ("on_chain_stream", "AgentExecutor"),
        ("on_chain_end", "AgentExecutor"),
    ]
    assert events[0]["data"] == {"input": {"input": "add 2 40"}}
    assert [e["data"]["chunk"]["content"] for e in events[3:7]] == TOKENS
    assert events[-1]["data"]["output"]["output"] == "The sum is 42."
    assert {e["run_id"] for e in events} == {run}
    assert parts[-1] == ("end", {"run_id": run, "status": "success"})


# interrupts


def send_interrupt(t: str, text: str) -> dict[str, Any]:
    return {
        "value": {
            "action_requests": [
                {
                    "id": "0-0",
                    "name": "send",
                    "args": {"text": text},
                    "description": f"\nInvoking: `send` with `{{'text': '{text}'}}`\n\n\n",
                }
            ],
            "review_configs": [
                {"action_name": "send", "allowed_decisions": ["approve", "edit", "reject"]}
            ],
        },
        "id": f"{t}/0-0",
    }


def test_an_interrupt_approved_by_command(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="ok")
    paused = sync.runs.wait("ok", "agent", input={"input": "send hello"})
    waiting = send_interrupt("ok", "hello")
    assert paused == {
        "input": "send hello",
        "messages": [human("ok", "send hello"), ai_calls("ok", "send", {"text": "hello"})],
        "__interrupt__": [waiting],
    }
    thread = sync.threads.get("ok")
    assert (thread["status"], thread["interrupts"]) == ("interrupted", {"ok": [waiting]})
    state = sync.threads.get_state("ok")
    assert (state["next"], state["interrupts"]) == (["tools"], [waiting])
    assert [(t["name"], t["interrupts"]) for t in state["tasks"]] == [("tools", [waiting])]
    assert sync.runs.list("ok")[0]["status"] == "interrupted"
    run, parts = collect(
        sync.runs.stream(
            "ok", "agent", command={"resume": {"approve": True}}, stream_mode="updates"
        )
    )
    sent = tool("ok", "send", "sent 'hello'")
    assert parts == [
        ("metadata", {"run_id": run, "attempt": 1}),
        (
            "updates",
            {"agent": {"messages": [ai_calls("ok", "send", {"text": "hello"})]}},
        ),  # re-announced
        ("updates", {"tools": {"messages": [sent]}}),
        (
            "updates",
            {
                "agent": {
                    "messages": [answer("ok", "Sent: sent 'hello'")],
                    "output": "Sent: sent 'hello'",
                }
            },
        ),
        ("end", {"run_id": run, "status": "success"}),
    ]
    assert sync.threads.get("ok")["status"] == "idle"


async def test_an_interrupt_rejected_or_edited_by_command(client: LangGraphClient) -> None:
    for t in ("no", "fix"):
        await client.threads.create(thread_id=t)
    paused = client.runs.stream("no", "agent", input={"input": "send spam"}, stream_mode="values")
    run, parts = await acollect(paused)
    assert parts[-2:] == [
        ("values", {"__interrupt__": [send_interrupt("no", "spam")]}),
        ("end", {"run_id": run, "status": "interrupted"}),
    ]
    rejected = await client.runs.wait(
        "no", "agent", command={"resume": {"reject": {"0-0": "no spam"}}}
    )
    observation = rejected["messages"][2]["content"]
    assert "rejected" in observation and "no spam" in observation
    assert rejected["output"] == f"Sent: {observation}"
    await client.runs.wait("fix", "agent", input={"input": "send helo"})
    edit = {"type": "edit", "edited_action": {"name": "send", "args": {"text": "hello"}}}
    fixed = await client.runs.wait("fix", "agent", command={"resume": {"decisions": [edit]}})
    assert fixed["messages"][1:3] == [
        ai_calls("fix", "send", {"text": "hello"}),
        tool("fix", "send", "sent 'hello'"),
    ]
    assert fixed["output"] == "Sent: sent 'hello'"


# background runs: join, join stream, cancel


def test_join_and_join_stream(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="j")
    run = sync.runs.create("j", "agent", input={"input": "add 2 40"}, stream_mode=["updates"])
    assert (run["thread_id"], run["status"]) == ("j", "running")
    values = sync.runs.join("j", run["run_id"])
    assert values["messages"] == added("j")
    assert sync.runs.get("j", run["run_id"])["status"] == "success"
    _, parts = collect(sync.runs.join_stream("j", run["run_id"]))  # the run's own modes
    assert [name for name, _ in parts] == ["metadata", "updates", "updates", "updates", "end"]
    _, later = collect(
        sync.runs.join_stream("j", run["run_id"], stream_mode="values", last_event_id="1")
    )
    # events 0 and 1 (the call and its result) are left out: the answer's tokens, then the answer
    assert [name for name, _ in later] == ["metadata", "values", "end"]
    assert later[1][1]["output"] == "The sum is 42."


async def test_cancel_then_resume(client: LangGraphClient) -> None:
    await client.threads.create(thread_id="c")
    run = await client.runs.create("c", "agent", input={"input": "slow 20"}, stream_mode="updates")
    async for part in client.runs.join_stream("c", run["run_id"]):
        if part.event == "updates":
            break  # the first step is done: the run goes on
    assert (await client.threads.get("c"))["status"] == "busy"
    await client.runs.cancel("c", run["run_id"])
    assert (await client.runs.get("c", run["run_id"]))["status"] == "interrupted"
    assert (await client.threads.get("c"))["status"] == "interrupted"
    _, parts = await acollect(client.runs.join_stream("c", run["run_id"]))
    assert parts[-1] == ("error", {"error": "UserInterrupt", "message": "the run was cancelled"})
    done = await client.runs.wait("c", "agent", command={"resume": None})
    assert done["output"] == "Napped 20 times."
    assert [m["content"] for m in done["messages"] if m["type"] == "tool"] == ["rested"] * 20


# stateless runs


def test_stateless_runs(sync: SyncLangGraphClient) -> None:
    values = sync.runs.wait(None, "agent", input={"input": "add 2 40"})
    [thread] = sync.threads.search()
    assert values == {
        "input": "add 2 40",
        "output": "The sum is 42.",
        "messages": added(thread["thread_id"]),
    }
    _, parts = collect(
        sync.runs.stream(None, "agent", input={"input": "add 1 2"}, stream_mode="updates")
    )
    assert [name for name, _ in parts] == ["metadata", "updates", "updates", "updates", "end"]
    assert parts[3][1]["agent"]["output"] == "The sum is 3."
    background = sync.runs.create(None, "agent", input={"input": "add 3 4"})
    assert (
        sync.runs.join(background["thread_id"], background["run_id"])["output"] == "The sum is 7."
    )


# failures and bad input


async def test_a_failing_run(
    client: LangGraphClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "down"
    flag.touch()
    monkeypatch.setenv("ACTLOOP_TEST_FAIL", str(flag))
    await client.threads.create(thread_id="f")
    run, parts = await acollect(
        client.runs.stream("f", "agent", input={"input": "flaky x"}, stream_mode="updates")
    )
    failure = {
        "error": "RuntimeError",
        "message": "the run failed (RuntimeError); see the server log",
    }
    assert parts == [
        ("metadata", {"run_id": run, "attempt": 1}),
        ("updates", {"agent": {"messages": [ai_calls("f", "flaky", {"text": "x"})]}}),
        ("error", failure),
    ]
    assert "the flaky service is down" not in str(parts)
    assert (await client.runs.get("f", run))["status"] == "error"
    assert (await client.threads.get("f"))["status"] == "error"
    state = await client.threads.get_state("f")
    assert [(t["name"], t["error"]) for t in state["tasks"]] == [("agent", "RuntimeError")]
    with pytest.raises(Exception, match=r"^RuntimeError: the run failed \(RuntimeError\)"):
        await client.runs.wait("f", "agent", command={"resume": None})
    flag.unlink()
    done = await client.runs.wait("f", "agent", command={"resume": None})
    assert done["output"] == "Flaky said: echo x"


def test_bad_input_is_a_4xx_and_runs_nothing(sync: SyncLangGraphClient) -> None:
    sync.threads.create(thread_id="b")
    cases: list[tuple[type[Exception], dict[str, Any], str]] = [
        (
            NotFoundError,
            {"assistant_id": "other", "input": {"input": "add 1 2"}},
            "no assistant 'other'",
        ),
        (UnprocessableEntityError, {"assistant_id": "agent"}, "missing 'input'"),
        (UnprocessableEntityError, {"assistant_id": "agent", "input": 5}, "bad input: "),
        (
            UnprocessableEntityError,
            {"assistant_id": "agent", "input": {"input": "add 1 2"}, "stream_mode": "everything"},
            "unknown stream_mode 'everything'",
        ),
        (
            UnprocessableEntityError,
            {"assistant_id": "agent", "command": {"goto": "tools"}},
            "command 'goto' is not supported (only 'resume')",
        ),
        (
            UnprocessableEntityError,
            {"assistant_id": "agent", "input": {"messages": [{"role": "ai", "content": "hi"}]}},
            "'messages' holds no human message",
        ),
    ]
    for error, body, reason in cases:
        with pytest.raises(error) as caught:
            sync.runs.create("b", **body)
        assert caught.value.response.json()["error"].startswith(reason), body
    with pytest.raises(NotFoundError):
        sync.runs.create("nope", "agent", input={"input": "add 1 2"})
    with pytest.raises(UnprocessableEntityError):
        sync.threads.get("a b")
    with pytest.raises(NotFoundError):
        sync.runs.get("b", "no-such-run")
    with pytest.raises(ConflictError):  # nothing waits for a decision
        sync.runs.create("b", "agent", command={"resume": True})
    assert sync.runs.list("b") == []
    assert sync.threads.get("b")["status"] == "idle"


def test_actloop_serve_with_the_sync_client(tmp_path: Path) -> None:
    """`actloop serve --token` as a process: the token as langgraph-sdk's api_key."""
    db = str(tmp_path / "runs.sqlite")
    proc, url = start_serve(
        "--executor", "server.agents:make_executor", "--db", db, "--token", TOKEN
    )
    try:
        with get_sync_client(url=url, api_key=TOKEN) as sdk:
            values = sdk.runs.wait(None, "agent", input={"input": "add 2 40"})
        with get_sync_client(url=url, api_key="wrong") as wrong:
            with pytest.raises(Exception, match="missing or wrong bearer token"):
                wrong.assistants.search()
    finally:
        stop_serve(proc)
    assert values["output"] == "The sum is 42."


async def test_a_client_that_leaves_never_stops_the_run(client: LangGraphClient) -> None:
    await client.threads.create(thread_id="gone")
    parts = client.runs.stream("gone", "agent", input={"input": "slow 5"}, stream_mode="updates")
    async for part in parts:
        if part.event == "updates":
            break  # leave after the first step
    await parts.aclose()  # type: ignore[attr-defined]
    [run] = await client.runs.list("gone")
    done = await client.runs.join("gone", run["run_id"])
    assert done["output"] == "Napped 5 times."
    assert (await client.runs.get("gone", run["run_id"]))["status"] == "success"


def test_one_thread_over_langserve_and_the_agent_protocol(
    url: str, sync: SyncLangGraphClient
) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    body = {"input": {"input": "add 2 40"}, "config": {"configurable": {"thread_id": "x"}}}
    assert httpx.post(f"{url}/agent/invoke", json=body, headers=auth).status_code == 200
    assert sync.threads.get("x")["values"]["messages"] == added("x")
    second = sync.runs.wait("x", "agent", input={"input": "add 1 2"})
    assert second["output"] == "The sum is 3."
    assert [m["id"] for m in second["messages"]][4:] == [
        "x:2-human-0",
        "x:2-ai-0",
        "x:2-tool-0-0",
        "x:2-ai-1",
    ]
