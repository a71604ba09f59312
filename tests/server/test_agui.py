"""AG-UI over `actloop serve`: a RunAgentInput posted with httpx, every event of the stream decoded
with the `ag-ui-protocol` package's models (the class its type names, no field AG-UI lacks, and the
very bytes its encoder writes), exact sequences for a text answer, tool calls, an approval and its
resume, and exactly one terminal event however a run ends."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import (
    Event,
    EventType,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UserMessage,
)
from ag_ui.encoder import EventEncoder
from pydantic import BaseModel, TypeAdapter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from actloop import AgentExecutor, ChatPromptTemplate, tool
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage
from actloop.react import REACT_PROMPT, create_react_agent
from actloop.server import create_app
from actloop.steps import AgentFinish
from actloop.testing import FunctionChatModel, ScriptedAgent, ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from support.postgres import PostgresServer
from support.serve import Serve, start_serve, stop_serve

from .agents import make_executor

Raw = dict[str, Any]

ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)
CLASSES: dict[EventType, type[BaseModel]] = {
    EventType.RUN_STARTED: RunStartedEvent,
    EventType.RUN_FINISHED: RunFinishedEvent,
    EventType.RUN_ERROR: RunErrorEvent,
    EventType.TEXT_MESSAGE_START: TextMessageStartEvent,
    EventType.TEXT_MESSAGE_CONTENT: TextMessageContentEvent,
    EventType.TEXT_MESSAGE_END: TextMessageEndEvent,
    EventType.TOOL_CALL_START: ToolCallStartEvent,
    EventType.TOOL_CALL_ARGS: ToolCallArgsEvent,
    EventType.TOOL_CALL_END: ToolCallEndEvent,
    EventType.TOOL_CALL_RESULT: ToolCallResultEvent,
    EventType.STATE_SNAPSHOT: StateSnapshotEvent,
}
TERMINAL = ("RUN_FINISHED", "RUN_ERROR")
STOPPED = "Agent stopped due to max iterations."  # LangChain's words for a multi-action agent


def no_extra(model: Any) -> None:
    """Every model in `model` holds only fields AG-UI defines (its models keep unknown ones)."""
    if isinstance(model, BaseModel):
        assert not model.model_extra, (type(model).__name__, model.model_extra)
        for name in type(model).model_fields:
            no_extra(getattr(model, name))
    elif isinstance(model, (list, tuple)):
        for item in model:
            no_extra(item)


def decode(line: str) -> Raw:
    """One SSE line as its event, checked against `ag_ui.core`: the class its type names, no
    unknown field, and the bytes `ag_ui.encoder.EventEncoder` writes for it."""
    assert line.startswith("data: "), line
    raw = json.loads(line[6:])
    event = ADAPTER.validate_python(raw)
    assert type(event) is CLASSES[EventType(raw["type"])]
    no_extra(event)
    assert EventEncoder().encode(event) == f"{line}\n\n"
    return raw


def read_events(lines: Iterator[str]) -> list[Raw]:
    """The stream's events; every event is a lone `data:` line, and exactly the last one is
    terminal."""
    events = [decode(line) for line in lines if line]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "RUN_STARTED"
    assert [k for k in kinds if k in TERMINAL] == [kinds[-1]], kinds
    return events


def run_input(thread: str, question: str | None = None, run: str = "run-1", **extra: Any) -> Raw:
    """A RunAgentInput as the AG-UI SDK builds it (camelCase JSON)."""
    messages = [UserMessage(id="u1", content=question)] if question is not None else []
    fields: Raw = {"state": {}, "tools": [], "context": [], "forwarded_props": {}, **extra}
    model = RunAgentInput(thread_id=thread, run_id=run, messages=messages, **fields)
    return model.model_dump(mode="json", by_alias=True)


def post(client: httpx.Client, body: Raw) -> list[Raw]:
    with client.stream("POST", "/ag-ui", json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return read_events(response.iter_lines())


def named(events: list[Raw]) -> list[Raw]:
    """The events with the server's message ids named by their order: `m1`, `m2`, ..."""
    names: dict[str, str] = {}

    def name(value: str) -> str:
        return names.setdefault(value, f"m{len(names) + 1}")

    out = []
    for event in events:
        event = dict(event)
        if "messageId" in event:
            event["messageId"] = name(event["messageId"])
        if "parentMessageId" in event:
            event["parentMessageId"] = name(event["parentMessageId"])
        out.append(event)
    return out


def started(thread: str, run: str = "run-1") -> Raw:
    return {"type": "RUN_STARTED", "threadId": thread, "runId": run, "protocolVersion": "1.0"}


def finished(thread: str, result: Any, run: str = "run-1") -> Raw:
    return {"type": "RUN_FINISHED", "threadId": thread, "runId": run, "result": result}


def text(message: str, *deltas: str) -> list[Raw]:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": d} for d in deltas),
        {"type": "TEXT_MESSAGE_END", "messageId": message},
    ]


def call(call_id: str, tool_name: str, args: str, parent: str | None = None) -> list[Raw]:
    start: Raw = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": tool_name}
    if parent:
        start["parentMessageId"] = parent
    return [
        start,
        {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": args},
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]


def result(message: str, call_id: str, content: str) -> Raw:
    return {
        "type": "TOOL_CALL_RESULT",
        "messageId": message,
        "toolCallId": call_id,
        "content": content,
        "role": "tool",
    }


def failed(kind: str) -> Raw:
    message = f"the run failed ({kind}); see the server log"
    return {"type": "RUN_ERROR", "message": message, "code": kind}


def thread_of(client: httpx.Client, thread: str) -> Raw:
    """`GET /threads/{thread}`: the Agent Protocol's thread (its status and values)."""
    response = client.get(f"/threads/{thread}")
    assert response.status_code == 200, response.json()
    return response.json()


def state_of(client: httpx.Client, thread: str) -> Raw:
    """`GET /threads/{thread}/state`: the Agent Protocol's state (a failed turn's error in
    `tasks`)."""
    response = client.get(f"/threads/{thread}/state")
    assert response.status_code == 200, response.json()
    return response.json()


def observations(values: Raw) -> list[Any]:
    """The content of each tool message of a thread's values, in order."""
    return [m["content"] for m in values["messages"] if m["type"] == "tool"]


def turns(client: httpx.Client, thread: str) -> int:
    """How many turns the thread has (its history holds one state per turn)."""
    return len(client.get(f"/threads/{thread}/history").json())


def follow_to_end(client: httpx.Client, thread: str) -> None:
    """Wait for the thread's run to end: follow its events until the terminal one."""
    with client.stream("GET", f"/threads/{thread}/events") as response:
        assert response.status_code == 200
        response.read()


@tool
def lookup(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def broken(city: str) -> str:
    """A tool that fails (no handler turns its error into an observation)."""
    raise RuntimeError("the weather service at 10.0.0.7 refused key sk-secret")


def executor_over(
    model: Any, tmp_path: Path, tools: list[Any] | None = None, **options: Any
) -> AgentExecutor:
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    tools = [lookup] if tools is None else tools
    agent = create_tool_calling_agent(model, tools, prompt)
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    return AgentExecutor(agent=agent, tools=tools, checkpointer=store, **options)


def client_for(serve: Serve, executor: AgentExecutor) -> httpx.Client:
    return httpx.Client(base_url=serve(create_app(executor)), timeout=30)


@pytest.fixture
def client(serve: Serve, tmp_path: Path) -> Iterator[httpx.Client]:
    """A client of the server tests' scripted agent (add, send needing approval, slow, flaky)."""
    with client_for(serve, make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite"))) as c:
        yield c


def test_a_text_answer_streams_as_one_message(serve: Serve, tmp_path: Path) -> None:
    model = ScriptedChatModel(["Hello there, Ann."])
    with client_for(serve, executor_over(model, tmp_path)) as client:
        events = post(client, run_input("t1", "Hi, I am Ann"))
        thread = thread_of(client, "t1")
    assert named(events) == [
        started("t1"),
        *text("m1", "Hello", " there,", " Ann."),
        finished("t1", "Hello there, Ann."),
    ]
    assert (thread["status"], thread["values"]["input"], thread["values"]["output"]) == (
        "idle",
        "Hi, I am Ann",
        "Hello there, Ann.",
    )


def test_an_answer_the_model_did_not_stream_comes_whole(serve: Serve, tmp_path: Path) -> None:
    agent = ScriptedAgent([AgentFinish({"output": "Forty-two."}, "Final Answer: Forty-two.")])
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    executor = AgentExecutor(agent=agent, tools=[lookup], checkpointer=store)
    with client_for(serve, executor) as client:
        events = post(client, run_input("t1", "What is six times seven?"))
    assert named(events) == [
        started("t1"),
        *text("m1", "Forty-two."),
        finished("t1", "Forty-two."),
    ]


def test_tool_calls_and_their_results(client: httpx.Client) -> None:
    events = post(client, run_input("t1", "add 2 40"))
    assert named(events) == [
        started("t1"),
        *call("call_0", "add", '{"a":2,"b":40}'),
        result("m1", "call_0", "42"),
        *text("m2", "The", " sum", " is", " 42."),
        finished("t1", "The sum is 42."),
    ]


def test_several_calls_of_one_step_and_text_before_them(serve: Serve, tmp_path: Path) -> None:
    calls = [
        {"name": "lookup", "args": {"city": "Oslo"}, "id": "c1"},
        {"name": "lookup", "args": {"city": "Rome"}, "id": "c2"},
    ]
    model = ScriptedChatModel(
        [AIMessage("Looking both up.", tool_calls=calls), "Oslo and Rome are sunny."]
    )
    with client_for(serve, executor_over(model, tmp_path)) as client:
        events = post(client, run_input("t1", "weather in Oslo and Rome?"))
    assert named(events) == [
        started("t1"),
        *text("m1", "Looking", " both", " up."),
        *call("c1", "lookup", '{"city":"Oslo"}', parent="m1"),
        *call("c2", "lookup", '{"city":"Rome"}', parent="m1"),
        result("m2", "c1", "sunny in Oslo"),
        result("m3", "c2", "sunny in Rome"),
        *text("m4", "Oslo", " and", " Rome", " are", " sunny."),
        finished("t1", "Oslo and Rome are sunny."),
    ]


def test_a_pending_approval_then_its_resume(client: httpx.Client) -> None:
    paused = post(client, run_input("t1", "send hello", state={"theme": "dark"}))
    waiting = {
        "id": "0-0",
        "tool": "send",
        "tool_input": {"text": "hello"},
        "log": "\nInvoking: `send` with `{'text': 'hello'}`\n\n\n",
    }
    interrupt = paused[-1]["outcome"]["interrupts"][0]
    assert paused == [
        started("t1"),
        *call("call_0", "send", '{"text":"hello"}'),
        {"type": "STATE_SNAPSHOT", "snapshot": {"theme": "dark", "pending_approvals": [waiting]}},
        {
            "type": "RUN_FINISHED",
            "threadId": "t1",
            "runId": "run-1",
            "outcome": {
                "type": "interrupt",
                "interrupts": [
                    {
                        "id": "0-0",
                        "reason": "tool_approval",
                        "message": "approve the call of send",
                        "toolCallId": "call_0",
                        "responseSchema": interrupt["responseSchema"],
                    }
                ],
            },
        },
    ]
    assert interrupt["responseSchema"]["properties"]["approve"] == {"type": "boolean"}
    assert thread_of(client, "t1")["status"] == "interrupted"
    # a new message while a call waits is refused: the thread must be resumed
    busy = client.post("/ag-ui", json=run_input("t1", "add 1 2", run="run-2"))
    assert (busy.status_code, busy.json()) == (
        409,
        {"error": "thread 't1' has a run waiting for approval; resume it instead"},
    )
    answer = [{"interruptId": "0-0", "status": "resolved", "payload": {"approve": True}}]
    resumed = post(client, run_input("t1", run="run-2", resume=answer))
    assert named(resumed) == [
        started("t1", "run-2"),
        {"type": "STATE_SNAPSHOT", "snapshot": {"pending_approvals": []}},
        *call("call_0", "send", '{"text":"hello"}'),  # the paused step's calls, again
        result("m1", "call_0", "sent 'hello'"),
        *text("m2", "Sent:", " sent", " 'hello'"),
        finished("t1", "Sent: sent 'hello'", "run-2"),
    ]
    thread = thread_of(client, "t1")
    assert (thread["status"], observations(thread["values"])) == ("idle", ["sent 'hello'"])


def test_resume_rejects_edits_and_cancels(client: httpx.Client) -> None:
    for thread in ("r", "e", "c"):
        post(client, run_input(thread, "send spam"))
    answers = {
        "r": {"status": "resolved", "payload": {"approve": False, "reason": "no spam"}},
        "e": {"status": "resolved", "payload": {"edit": {"text": "ham"}}},
        "c": {"status": "cancelled"},
    }
    results = {}
    for thread, answer in answers.items():
        events = post(client, run_input(thread, run="2", resume=[{"interruptId": "0-0", **answer}]))
        assert events[-1] == finished(thread, events[-1]["result"], "2")
        results[thread] = next(e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert results["e"] == "sent 'ham'"
    assert "rejected" in results["r"] and "no spam" in results["r"]
    assert "rejected" in results["c"]


def test_a_finished_thread_takes_a_new_turn(client: httpx.Client) -> None:
    post(client, run_input("t1", "add 1 2"))
    second = post(client, run_input("t1", "add 3 4", run="run-2"))
    assert second[-1] == finished("t1", "The sum is 7.", "run-2")
    assert turns(client, "t1") == 2


def test_a_failing_tool_ends_in_one_run_error(serve: Serve, tmp_path: Path) -> None:
    call_broken = AIMessage(
        "", tool_calls=[{"name": "broken", "args": {"city": "Oslo"}, "id": "c1"}]
    )
    model = ScriptedChatModel([call_broken])
    with client_for(serve, executor_over(model, tmp_path, [broken])) as client:
        with client.stream("POST", "/ag-ui", json=run_input("t1", "weather?")) as response:
            raw = response.read().decode()
            events = read_events(iter(raw.splitlines()))
        status, state = thread_of(client, "t1")["status"], state_of(client, "t1")
    assert events == [
        started("t1"),
        *call("c1", "broken", '{"city":"Oslo"}'),
        failed("RuntimeError"),
    ]
    assert "sk-secret" not in raw and "10.0.0.7" not in raw
    assert (status, state["tasks"][0]["error"]) == ("error", "RuntimeError")


def test_a_failing_model_ends_in_one_run_error(serve: Serve, tmp_path: Path) -> None:
    def down(messages: list[BaseMessage]) -> str:
        raise ConnectionError("https://internal.example/v1 answered 502")

    with client_for(serve, executor_over(FunctionChatModel(down), tmp_path)) as client:
        with client.stream("POST", "/ag-ui", json=run_input("t1", "hi")) as response:
            raw = response.read().decode()
    assert read_events(iter(raw.splitlines())) == [started("t1"), failed("ConnectionError")]
    assert "internal.example" not in raw


class CutStream(ScriptedChatModel):
    """A model whose stream breaks off after two pieces (a provider dropping the connection)."""

    async def _astream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        yield AIMessageChunk("The answer")
        yield AIMessageChunk(" is")
        raise ConnectionResetError("peer 10.1.2.3 reset the stream")


def test_a_cut_model_stream_is_a_run_error_never_a_finish(serve: Serve, tmp_path: Path) -> None:
    with client_for(serve, executor_over(CutStream(["unused"]), tmp_path)) as client:
        with client.stream("POST", "/ag-ui", json=run_input("t1", "hi")) as response:
            raw = response.read().decode()
        thread = thread_of(client, "t1")
    events = named(read_events(iter(raw.splitlines())))
    assert events == [
        started("t1"),
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "The answer"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": " is"},
        failed("ConnectionResetError"),  # the cut message is left open: it never ended
    ]
    assert "10.1.2.3" not in raw
    assert (thread["status"], "output" in thread["values"]) == ("error", False)


def test_a_run_past_its_deadline_finishes_once(serve: Serve, tmp_path: Path) -> None:
    executor = make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite"))
    executor.max_execution_time = 0.3
    with client_for(serve, executor) as client:
        events = named(post(client, run_input("t1", "slow 100")))
    message = events[-2]["messageId"]
    assert events[-4:] == [*text(message, STOPPED), finished("t1", STOPPED)]
    kinds = [e["type"] for e in events[1:-4]]
    assert set(kinds) <= {"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"}
    assert kinds.count("TOOL_CALL_RESULT") < 24  # its max_iterations: the deadline stopped it


def test_a_cancelled_run_finishes_with_a_cancelled_outcome(serve: Serve, tmp_path: Path) -> None:
    app = create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite")))

    async def cancel(request: Request) -> Response:  # the service's cancel, as a route to call
        return JSONResponse(await request.app.state.threads.cancel(request.path_params["t"]))

    app.router.routes.append(Route("/cancel/{t}", cancel, methods=["POST"]))
    url = serve(app)
    with httpx.Client(base_url=url, timeout=30) as client:
        with client.stream("POST", "/ag-ui", json=run_input("t1", "slow 20")) as response:
            lines = (line for line in response.iter_lines() if line)
            head = [next(lines) for _ in range(5)]
            assert decode(head[-1])["type"] == "TOOL_CALL_RESULT"  # the run is under way
            assert client.post("/cancel/t1", json={}).json() is True
            events = read_events(iter([*head, *lines]))
        status, state = thread_of(client, "t1")["status"], state_of(client, "t1")
    assert events[-1] == {
        "type": "RUN_FINISHED",
        "threadId": "t1",
        "runId": "run-1",
        "outcome": {"type": "cancelled"},
    }
    # cancelled: stopped midway (not busy any more), its error the cancellation's type
    assert (status, state["tasks"][0]["error"]) == ("interrupted", "CancelledError")
    with httpx.Client(base_url=url, timeout=30) as client:  # stopped, not lost: resume it
        resumed = post(client, run_input("t1", run="run-2", resume=[]))
    assert resumed[-1] == finished("t1", "Napped 20 times.", "run-2")


def test_a_client_that_leaves_never_stops_the_run(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """`actloop serve` as a process, on a PostgreSQL store."""
    log = tmp_path / "naps.log"
    proc, url = start_serve(
        "--executor",
        "server.agents:make_executor",
        "--db",
        postgres_server.create_database(),
        env={"ACTLOOP_TEST_LOG": str(log)},
    )
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            with client.stream("POST", "/ag-ui", json=run_input("t1", "slow 5")) as response:
                for line in response.iter_lines():
                    if line and decode(line)["type"] == "TOOL_CALL_RESULT":
                        break  # leave after the first result
            follow_to_end(client, "t1")
            thread = thread_of(client, "t1")
    finally:
        stop_serve(proc)
    assert (thread["status"], thread["values"]["output"]) == ("idle", "Napped 5 times.")
    assert observations(thread["values"]) == ["rested"] * 5
    assert log.read_text() == "nap done\n" * 5


def test_bad_input_is_a_4xx_and_runs_nothing(client: httpx.Client) -> None:
    good = run_input("t1", "add 1 2")
    parts = [{"type": "image", "source": {"type": "url", "value": "http://x/y.png"}}]
    image = {**good, "messages": [{"id": "u1", "role": "user", "content": parts}]}
    cases: list[tuple[Any, int, str]] = [
        ({**good, "threadId": None}, 422, "'threadId' must be a non-empty string"),
        (
            {**good, "threadId": "../etc"},
            422,
            "thread_id must be 1-100 letters, digits, '-', '_' or '.'",
        ),
        ({**good, "runId": ""}, 422, "'runId' must be a non-empty string"),
        ({**good, "messages": "add 1 2"}, 422, "'messages' must be a list of AG-UI messages"),
        (
            {**good, "messages": [{"id": "a", "role": "assistant", "content": "hi"}]},
            422,
            "no user message to answer ('messages' holds none; or send 'resume')",
        ),
        (image, 422, "only text parts are supported in a user message"),
        (
            {**good, "resume": {"approve": True}},
            422,
            "'resume' must be a list of {interruptId, status, payload}",
        ),
        (
            {**good, "resume": [{"status": "resolved"}]},
            422,
            "each 'resume' entry must be an object with an 'interruptId'",
        ),
        (
            {**good, "resume": [{"interruptId": "0-0", "status": "resolved", "payload": "yes"}]},
            422,
            'a resume payload must be {"approve": bool, "reason"?: str} or {"edit": input}',
        ),
        ({**good, "resume": []}, 404, "no thread 't1'"),
    ]
    for body, status, reason in cases:
        response = client.post("/ag-ui", json=body)
        assert (response.status_code, response.json()) == (status, {"error": reason}), body
    malformed = client.post("/ag-ui", content=b"{", headers={"Content-Type": "application/json"})
    assert malformed.status_code == 400
    form = client.post("/ag-ui", content=json.dumps(good), headers={"Content-Type": "text/plain"})
    assert form.status_code == 415
    assert client.post("/threads/search", json={}).json() == []  # nothing ran
    post(client, good)
    finished_already = client.post("/ag-ui", json={**good, "resume": []})
    assert finished_already.status_code == 409
    post(client, run_input("t2", "send x"))  # paused on call 0-0
    unknown = [{"interruptId": "9-9", "status": "cancelled"}]
    refused = client.post("/ag-ui", json=run_input("t2", run="2", resume=unknown))
    assert (refused.status_code, refused.json()) == (
        422,
        {"error": "no call waits with id '9-9' (waiting: 0-0)"},
    )
    assert thread_of(client, "t2")["status"] == "interrupted"


def test_openapi_names_the_route(client: httpx.Client) -> None:
    document = client.get("/openapi.json").json()
    operation = document["paths"]["/ag-ui"]["post"]
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["threadId", "runId", "messages"]
    assert list(operation["responses"]["200"]["content"]) == ["text/event-stream"]


def test_one_thread_across_ag_ui_and_the_agent_protocol(client: httpx.Client) -> None:
    paused = post(client, run_input("t1", "send hi"))
    assert paused[-1]["outcome"]["type"] == "interrupt"
    resume = {"assistant_id": "agent", "command": {"resume": {"approve": ["0-0"]}}}
    approved = client.post("/threads/t1/runs", json=resume)
    assert (approved.status_code, approved.json()["status"]) == (200, "running")
    follow_to_end(client, "t1")
    assert thread_of(client, "t1")["values"]["output"] == "Sent: sent 'hi'"
    # the next turn, over AG-UI again
    events = post(client, run_input("t1", "add 20 22", run="run-3"))
    assert events[-1] == finished("t1", "The sum is 42.", "run-3")
    assert turns(client, "t1") == 2


def test_a_text_agent_streams_its_reasoning_then_the_answer(serve: Serve, tmp_path: Path) -> None:
    model = ScriptedChatModel(
        [
            "Thought: look it up\nAction: lookup\nAction Input: Oslo",
            "Thought: I know\nFinal Answer: sunny",
        ]
    )
    agent = create_react_agent(model, [lookup], REACT_PROMPT)
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    executor = AgentExecutor(agent=agent, tools=[lookup], checkpointer=store)
    with client_for(serve, executor) as client:
        events = named(post(client, run_input("t1", "weather in Oslo?")))
    call_id = events[-13]["toolCallId"]  # no id from a text model: the server names the call
    assert call_id.startswith("call-")
    assert events == [
        started("t1"),
        *text(
            "m1",
            "Thought:",
            " look",
            " it",
            " up",
            "\nAction:",
            " lookup",
            "\nAction",
            " Input:",
            " Oslo",
        ),
        *call(call_id, "lookup", '"Oslo"', parent="m1"),
        result("m2", call_id, "sunny in Oslo"),
        *text("m3", "Thought:", " I", " know", "\nFinal", " Answer:", " sunny"),
        *text("m4", "sunny"),  # the answer itself, apart from the text that held it
        finished("t1", "sunny"),
    ]
