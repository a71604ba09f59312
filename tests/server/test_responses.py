"""OpenAI's Responses API at `/v1`, driven by the official `openai` SDK against a real server on
loopback: plain, streamed, continued, paused and approved, failed, refused, read back."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai import AsyncOpenAI, OpenAI
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from actloop import AgentExecutor
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate
from actloop.server import create_app
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool
from support import openai_server
from support.serve import Serve, start_serve, stop_serve

from .agents import make_executor

EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
TOKEN = "resp-t0k"


@pytest.fixture
def url(serve: Serve, tmp_path: Path) -> str:
    return serve(create_app(make_executor(SqliteCheckpointer(tmp_path / "runs.sqlite"))))


@pytest.fixture
def client(url: str) -> Iterator[OpenAI]:
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as sdk:
        yield sdk


def thread_of(response_id: str) -> str:
    return response_id.split("_", 2)[2]


def strict(response: Response) -> dict[str, Any]:
    """The response as JSON, after checking it against the SDK's model with validation."""
    data = response.to_dict()
    Response.model_validate(data)
    return data


def call(core: str, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{core}_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def result(core: str, call_id: str, output: str) -> dict[str, Any]:
    return {
        "type": "function_call_output",
        "id": f"fco_{core}_{call_id}",
        "call_id": call_id,
        "output": output,
        "status": "completed",
    }


def answer(ident: str, text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {
        "type": "message",
        "id": ident,
        "role": "assistant",
        "status": "completed",
        "content": [part],
        "phase": "final_answer",
    }


def test_a_plain_response_holds_the_calls_and_the_answer(client: OpenAI) -> None:
    response = client.responses.create(model="agent", input="add 2 40")
    thread = thread_of(response.id)
    core = f"1_{thread}"
    assert response.id == f"resp_{core}"
    data = strict(response)
    assert (data["status"], data["model"], data["object"]) == ("completed", "agent", "response")
    assert (data["error"], data["previous_response_id"]) == (None, None)
    assert data["output"] == [
        call(core, "0-0", "add", '{"a":2,"b":40}'),
        result(core, "0-0", "42"),
        answer(f"msg_{core}_1", "The sum is 42."),
    ]
    assert response.output_text == "The sum is 42."
    assert [t["name"] for t in data["tools"]] == ["add", "nap", "flaky", "send"]
    assert strict(client.responses.retrieve(response.id)) == data


def stream_events(client: OpenAI, **request: Any) -> list[dict[str, Any]]:
    """Every event of a streamed create, as JSON checked against the SDK's event models."""
    events = []
    with client.responses.create(stream=True, **request) as stream:
        for event in stream:
            data = event.to_dict()
            EVENTS.validate_python(data)
            events.append(data)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    return events


def test_a_streamed_response_sends_the_sdk_events_in_order(client: OpenAI) -> None:
    events = stream_events(client, model="agent", input="add 2 40")
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * 4,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    rid = events[0]["response"]["id"]
    core = rid.removeprefix("resp_")
    assert events[0]["response"]["status"] == "in_progress"
    assert events[0]["response"]["output"] == []
    assert events[2]["item"] == {**call(core, "0-0", "add", ""), "status": "in_progress"}
    assert events[3]["delta"] == events[4]["arguments"] == '{"a":2,"b":40}'
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert deltas == ["The", " sum", " is", " 42."]
    assert events[-4]["text"] == "The sum is 42."
    assert [e["output_index"] for e in events if e["type"] == "response.output_item.done"] == [
        0,
        1,
        2,
    ]
    final = events[-1]["response"]
    assert final["status"] == "completed"
    assert final["output"] == [
        e["item"] for e in events if e["type"] == "response.output_item.done"
    ]
    assert final == strict(client.responses.retrieve(rid))


async def test_the_async_sdk_accumulates_a_stream(url: str) -> None:
    async with AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as sdk:
        async with sdk.responses.stream(model="agent", input="add 5 6") as stream:
            snapshots = [e.snapshot async for e in stream if e.type == "response.output_text.delta"]
            final = await stream.get_final_response()
        fetched = await sdk.responses.retrieve(final.id)
    assert snapshots == ["The", "The sum", "The sum is", "The sum is 11."]
    assert final.output_text == fetched.output_text == "The sum is 11."
    assert [item.type for item in final.output] == [
        "function_call",
        "function_call_output",
        "message",
    ]


def remember(messages: list[BaseMessage]) -> str:
    """A model that repeats every user message it was shown."""
    return "Heard: " + " | ".join(m.text for m in messages if isinstance(m, HumanMessage))


def chat_executor(path: Path) -> AgentExecutor:
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Be brief."),
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    )
    agent = create_tool_calling_agent(FunctionChatModel(remember), [], prompt)
    return AgentExecutor(
        agent=agent, tools=[], checkpointer=SqliteCheckpointer(path), name="parrot"
    )


def test_previous_response_id_continues_the_thread(serve: Serve, tmp_path: Path) -> None:
    url = serve(create_app(chat_executor(tmp_path / "chat.sqlite")))
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as sdk:
        assert [m.id for m in sdk.models.list()] == ["parrot"]
        first = sdk.responses.create(model="parrot", input="my name is Ada")
        second = sdk.responses.create(
            model="parrot", input="what is my name?", previous_response_id=first.id
        )
        third = sdk.responses.create(
            model="parrot",
            previous_response_id=second.id,
            input=[{"role": "user", "content": [{"type": "input_text", "text": "and again?"}]}],
        )
        with pytest.raises(openai.ConflictError) as stale:
            sdk.responses.create(model="parrot", input="x", previous_response_id=first.id)
        told = sdk.responses.create(
            model="parrot",
            input=[
                {"role": "user", "content": "I am Bo"},
                {"role": "assistant", "content": "Hi Bo"},
                {"role": "user", "content": "who am I?"},
            ],
        )
    thread = thread_of(first.id)
    assert (second.id, third.id) == (f"resp_2_{thread}", f"resp_3_{thread}")
    assert (second.previous_response_id, third.previous_response_id) == (first.id, second.id)
    assert first.output_text == "Heard: my name is Ada"
    assert second.output_text == "Heard: my name is Ada | what is my name?"
    assert third.output_text == "Heard: my name is Ada | what is my name? | and again?"
    assert stale.value.body == {
        "message": f"response {first.id!r} is not the latest of its thread; "
        f"continue from {third.id!r}",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    assert told.output_text == "Heard: I am Bo | who am I?"


def test_a_paused_run_ends_incomplete_and_goes_on_when_approved(client: OpenAI) -> None:
    paused = client.responses.create(model="agent", input="send hello")
    core = paused.id.removeprefix("resp_")
    data = strict(paused)
    assert (data["status"], data["incomplete_details"]) == ("incomplete", None)
    request = {
        "type": "mcp_approval_request",
        "id": "0-0",
        "name": "send",
        "arguments": '{"text":"hello"}',
        "server_label": "agent",
    }
    assert data["output"] == [call(core, "0-0", "send", '{"text":"hello"}'), request]
    with pytest.raises(openai.ConflictError) as waiting:
        client.responses.create(model="agent", input="hi", previous_response_id=paused.id)
    assert waiting.value.body["message"] == (  # type: ignore[index]
        f"response {paused.id!r} waits for approval: answer its mcp_approval_request items "
        "with mcp_approval_response items"
    )

    def decide(*decisions: tuple[str, bool]) -> Response:
        items: list[Any] = [
            {"type": "mcp_approval_response", "approval_request_id": i, "approve": yes}
            for i, yes in decisions
        ]
        return client.responses.create(model="agent", previous_response_id=paused.id, input=items)

    with pytest.raises(openai.BadRequestError) as unknown:
        decide(("9-9", True))
    assert unknown.value.body["message"] == (  # type: ignore[index]
        "no call waits with id '9-9' (waiting: 0-0)"
    )
    with pytest.raises(openai.BadRequestError) as twice:
        decide(("0-0", True), ("0-0", False))
    assert twice.value.body["message"] == (  # type: ignore[index]
        "the approval request '0-0' is answered more than once"
    )
    approved = decide(("0-0", True))
    assert approved.id == paused.id  # the same turn went on
    assert strict(approved)["output"] == [
        call(core, "0-0", "send", '{"text":"hello"}'),
        result(core, "0-0", "sent 'hello'"),
        answer(f"msg_{core}_1", "Sent: sent 'hello'"),
    ]


def test_a_rejection_with_a_reason_reaches_the_agent(client: OpenAI) -> None:
    paused = client.responses.create(model="agent", input="send spam")
    decision = {
        "type": "mcp_approval_response",
        "approval_request_id": "0-0",
        "approve": False,
        "reason": "not today",
    }
    events = stream_events(client, model="agent", previous_response_id=paused.id, input=[decision])
    final = events[-1]["response"]
    core = paused.id.removeprefix("resp_")
    said = (
        "The call to tool 'send' was rejected by a human reviewer and did not run. "
        "Reason: not today"
    )
    assert (events[-1]["type"], final["id"], final["status"]) == (
        "response.completed",
        paused.id,
        "completed",
    )
    assert final["output"] == [
        e["item"] for e in events if e["type"] == "response.output_item.done"
    ]
    assert final["output"] == [
        call(core, "0-0", "send", '{"text":"spam"}'),
        result(core, "0-0", said),
        answer(f"msg_{core}_1", f"Sent: {said}"),
    ]


def test_a_streamed_pause_ends_with_response_incomplete(client: OpenAI) -> None:
    events = stream_events(client, model="agent", input="send hi")
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.output_item.done",
        "response.incomplete",
    ]
    assert events[6]["item"]["type"] == "mcp_approval_request"
    assert events[-1]["response"]["output"] == [events[5]["item"], events[7]["item"]]


def test_a_failed_run_shows_its_error_type_only(
    client: OpenAI, url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "down"
    flag.touch()
    monkeypatch.setenv("ACTLOOP_TEST_FAIL", str(flag))
    failed = client.responses.create(model="agent", input="flaky ping")
    assert (failed.status, failed.error and failed.error.to_dict()) == (
        "failed",
        {"code": "server_error", "message": "the run failed (RuntimeError)"},
    )
    core = failed.id.removeprefix("resp_")
    assert strict(failed)["output"] == [call(core, "0-0", "flaky", '{"text":"ping"}')]
    body = {"model": "agent", "input": "flaky pong", "stream": True}
    with httpx.Client(base_url=url, timeout=30) as raw:
        text = raw.post("/v1/responses", json=body).text
        fetched = raw.get(f"/v1/responses/{failed.id}").text
    assert "down" not in text and "down" not in fetched
    last = json.loads(text.strip().rsplit("data: ", 1)[1])
    assert (last["type"], last["response"]["status"]) == ("response.failed", "failed")
    assert last["response"]["error"] == {
        "code": "server_error",
        "message": "the run failed (RuntimeError)",
    }
    with pytest.raises(openai.ConflictError):  # a failed turn is resumed over the threads API
        client.responses.create(model="agent", input="x", previous_response_id=failed.id)


def failing_model(messages: list[BaseMessage]) -> str:
    raise ConnectionError("the model at 10.9.8.7 with key sk-secret is unreachable")


def test_a_model_that_fails_ends_the_stream_with_response_failed(
    serve: Serve, tmp_path: Path
) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(FunctionChatModel(failing_model), [], prompt)
    executor = AgentExecutor(agent=agent, tools=[])
    url = serve(create_app(executor))
    body = {"model": "agent", "input": "hello", "stream": True}
    with httpx.Client(base_url=url, timeout=30) as raw:
        text = raw.post("/v1/responses", json=body).text
    kinds = [line[7:] for line in text.splitlines() if line.startswith("event: ")]
    assert kinds == ["response.created", "response.in_progress", "response.failed"]
    assert "10.9.8.7" not in text and "secret" not in text
    assert "the run failed (ConnectionError)" in text


def test_a_cut_model_stream_never_looks_like_success(serve: Serve) -> None:
    from actloop.models import ChatOpenAI

    model_server = openai_server.serve()
    events = openai_server.stream_events(
        {"role": "assistant", "content": "Hello wor ld"}, "stop", True
    )
    model_server.script(openai_server.Reply("stream", events=events[:3], drop=True))
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    model = ChatOpenAI(model="gpt-test", base_url=model_server.url, api_key="sk-test")
    executor = AgentExecutor(agent=create_tool_calling_agent(model, [], prompt), tools=[])
    url = serve(create_app(executor))
    try:
        with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as sdk:
            events = stream_events(sdk, model="agent", input="hi")
    finally:
        openai_server.stop(model_server)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.failed",
    ]
    assert [e["delta"] for e in events[4:6]] == ["Hello", " wor"]
    assert events[-2]["item"]["status"] == "incomplete"
    final = events[-1]["response"]
    assert (final["status"], final["error"]) == (
        "failed",
        {"code": "server_error", "message": "the run failed (StreamInterruptedError)"},
    )
    assert "127.0.0.1" not in json.dumps(events)


@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()


def react_policy(messages: list[BaseMessage]) -> str:
    """A ReAct model: shout once, then answer."""
    if "Observation: HELLO" not in messages[-1].text:
        return "Thought: say it\nAction: shout\nAction Input: hello"
    return "Thought: done\nFinal Answer: It said HELLO."


def test_a_react_agent_streams_its_thoughts_as_commentary(serve: Serve) -> None:
    from actloop.react import REACT_PROMPT, create_react_agent

    agent = create_react_agent(FunctionChatModel(react_policy), [shout], REACT_PROMPT)
    url = serve(create_app(AgentExecutor(agent=agent, tools=[shout])))
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as sdk:
        events = stream_events(sdk, model="agent", input="say hello")
        fetched = strict(sdk.responses.retrieve(events[0]["response"]["id"]))
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [(i["type"], i.get("phase")) for i in done] == [
        ("message", "commentary"),
        ("function_call", None),
        ("function_call_output", None),
        ("message", "commentary"),
        ("message", "final_answer"),
    ]
    texts = [i["content"][0]["text"] for i in done if i["type"] == "message"]
    assert texts == [
        "Thought: say it\nAction: shout\nAction Input: hello",
        "Thought: done\nFinal Answer: It said HELLO.",
        "It said HELLO.",
    ]
    assert (done[1]["arguments"], done[2]["output"]) == ('"hello"', "HELLO")
    final = events[-1]["response"]
    assert [i["type"] for i in final["output"]] == [
        "function_call",
        "function_call_output",
        "message",
    ]
    assert final["output"][:2] == fetched["output"][:2] == done[1:3]
    assert final["output"][2] == done[-1]
    assert fetched["output"][2]["content"] == done[-1]["content"]


def error_of(response: httpx.Response) -> tuple[int, dict[str, Any]]:
    return response.status_code, response.json()["error"]


def invalid(message: str, param: str | None, code: str | None) -> dict[str, Any]:
    return {"message": message, "type": "invalid_request_error", "param": param, "code": code}


BAD_REQUESTS: list[tuple[dict[str, Any], int, dict[str, Any]]] = [
    (
        {"input": "hi"},
        400,
        invalid("'model' must name the agent ('agent')", "model", "invalid_value"),
    ),
    (
        {"model": "gpt-5", "input": "hi"},
        404,
        invalid(
            "the model 'gpt-5' does not exist; this server serves 'agent'",
            "model",
            "model_not_found",
        ),
    ),
    (
        {"model": "agent"},
        400,
        invalid(
            "'input' must be a string or a non-empty list of input items", "input", "invalid_value"
        ),
    ),
    (
        {"model": "agent", "input": []},
        400,
        invalid(
            "'input' must be a string or a non-empty list of input items", "input", "invalid_value"
        ),
    ),
    (
        {"model": "agent", "input": [{"role": "user", "content": [{"type": "input_image"}]}]},
        400,
        invalid("only text content is supported (got 'input_image')", "input", "invalid_value"),
    ),
    (
        {"model": "agent", "input": [{"type": "function_call_output", "call_id": "c"}]},
        400,
        invalid(
            "input items of type 'function_call_output' are not supported here "
            "(send messages, or mcp_approval_response items)",
            "input",
            "invalid_value",
        ),
    ),
    (
        {"model": "agent", "input": [{"role": "assistant", "content": "hi"}]},
        400,
        invalid("the last input message must be the user's", "input", "invalid_value"),
    ),
    (
        {
            "model": "agent",
            "input": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        },
        400,
        invalid(
            "this agent takes one message (it has no chat_history input)", "input", "invalid_value"
        ),
    ),
    (
        {
            "model": "agent",
            "input": [
                {"type": "mcp_approval_response", "approval_request_id": "0-0", "approve": True}
            ],
        },
        400,
        invalid(
            "mcp_approval_response items need the paused previous_response_id",
            "input",
            "invalid_value",
        ),
    ),
    (
        {"model": "agent", "input": "hi", "instructions": "Talk like a pirate."},
        400,
        invalid(
            "'instructions' is not supported: the agent's prompt holds its instructions",
            "instructions",
            "unsupported_parameter",
        ),
    ),
    (
        {"model": "agent", "input": "hi", "text": {"format": {"type": "json_object"}}},
        400,
        invalid(
            "'text.format' is not supported: the agent answers in text",
            "text.format",
            "unsupported_parameter",
        ),
    ),
    (
        {"model": "agent", "input": "hi", "stream": "yes"},
        400,
        invalid("'stream' must be true or false", "stream", "invalid_value"),
    ),
    (
        {"model": "agent", "input": "hi", "previous_response_id": "resp_1_nothere"},
        404,
        invalid("no response 'resp_1_nothere'", "previous_response_id", "not_found"),
    ),
    (
        {"model": "agent", "input": "hi", "previous_response_id": "resp_0_x"},
        404,
        invalid("no response 'resp_0_x'", None, "not_found"),
    ),
]


@pytest.mark.parametrize(("body", "status", "error"), BAD_REQUESTS)
def test_bad_requests_get_openai_errors(
    url: str, tmp_path: Path, body: dict[str, Any], status: int, error: dict[str, Any]
) -> None:
    with httpx.Client(base_url=url, timeout=30) as raw:
        assert error_of(raw.post("/v1/responses", json=body)) == (status, error)
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    try:
        assert store.list_runs() == []  # nothing ran
    finally:
        store.close()


def test_unknown_ids_and_models_are_404(client: OpenAI, url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as raw:
        for given in ["resp_1_nothere", "resp_x", "resp_01_a", "resp_1_a%20b", "nope"]:
            shown = given.replace("%20", " ")
            assert error_of(raw.get(f"/v1/responses/{given}")) == (
                404,
                invalid(f"no response {shown!r}", None, "not_found"),
            )
        assert error_of(raw.get("/v1/models/gpt-5")) == (
            404,
            invalid(
                "the model 'gpt-5' does not exist; this server serves 'agent'",
                "model",
                "model_not_found",
            ),
        )
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve("resp_2_nothere")
    assert client.models.retrieve("agent").to_dict() == {
        "id": "agent",
        "object": "model",
        "created": 0,
        "owned_by": "actloop",
    }


def retrieve_events(client: OpenAI, response_id: str, **query: Any) -> list[dict[str, Any]]:
    """Every event of a retrieve with stream=True, checked against the SDK's event models."""
    events = []
    with client.responses.retrieve(response_id, stream=True, **query) as stream:
        for event in stream:
            data = event.to_dict()
            EVENTS.validate_python(data)
            events.append(data)
    return events


def test_bad_retrieve_queries_get_openai_errors(client: OpenAI, url: str) -> None:
    rid = client.responses.create(model="agent", input="add 1 1").id
    with httpx.Client(base_url=url, timeout=30) as raw:
        for query, param, message in [
            ("stream=maybe", "stream", "'stream' must be true or false"),
            ("starting_after=3", "starting_after", "'starting_after' needs stream=true"),
        ]:
            assert error_of(raw.get(f"/v1/responses/{rid}?{query}")) == (
                400,
                invalid(message, param, "invalid_value"),
            )
        assert error_of(raw.get(f"/v1/responses/{rid}?stream=true&starting_after=x")) == (
            400,
            invalid("starting_after must be a whole number of at most 18 digits", None, None),
        )


def test_a_background_response_streams_until_it_ends(client: OpenAI, url: str) -> None:
    started = client.responses.create(model="agent", input="slow 2", background=True)
    assert (started.status, started.background, started.output) == ("in_progress", True, [])
    events = retrieve_events(client, started.id)  # live, or rebuilt if it already ended
    assert (events[0]["type"], events[-1]["type"]) == ("response.created", "response.completed")
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["response"] == strict(client.responses.retrieve(started.id))
    assert client.responses.retrieve(started.id).output_text == "Napped 2 times."
    thread = thread_of(started.id)
    with httpx.Client(base_url=url, timeout=30) as raw:  # one thread, two APIs
        assert raw.get(f"/threads/{thread}").json()["thread_id"] == thread


def test_the_stream_of_a_response_that_ended_is_rebuilt(client: OpenAI) -> None:
    done = client.responses.create(model="agent", input="add 2 40")
    events = retrieve_events(client, done.id)
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        *["response.output_item.added", "response.output_item.done"] * 3,
        "response.completed",
    ]
    assert [e["item"] for e in events[2:8:2]] == strict(done)["output"]
    assert events[-1]["response"] == strict(done)
    rest = retrieve_events(client, done.id, starting_after=5)
    assert rest == events[6:]


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """A gate the gated agent's tool waits at; opened at the end whatever happened."""
    opened = threading.Event()
    yield opened
    opened.set()


def gated_executor(gate: threading.Event) -> AgentExecutor:
    """An agent whose one tool waits until the test opens `gate`."""

    @tool
    def wait_at_gate(name: str) -> str:
        """Wait until the gate opens."""
        gate.wait(60)
        return f"{name} went through"

    def policy(messages: list[BaseMessage]) -> AIMessage | str:
        results = [m.text for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return AIMessage(
                "", tool_calls=[{"name": "wait_at_gate", "args": {"name": "Ada"}, "id": "c0"}]
            )
        return f"Done: {results[0]}"

    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(FunctionChatModel(policy), [wait_at_gate], prompt)
    return AgentExecutor(agent=agent, tools=[wait_at_gate])


def test_a_client_that_leaves_a_stream_comes_back_and_misses_nothing(
    serve: Serve, gate: threading.Event
) -> None:
    url = serve(create_app(gated_executor(gate)))
    with OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0) as sdk:
        seen = []
        with sdk.responses.create(model="agent", input="go", stream=True) as stream:
            for event in stream:  # leave once the call is announced: the tool waits at the gate
                seen.append(event.to_dict())
                if event.type == "response.output_item.done":
                    break
        rid = seen[0]["response"]["id"]
        with sdk.responses.retrieve(rid, stream=True, starting_after=len(seen) - 1) as again:
            gate.set()  # the run was still going: the retrieve follows it live
            rest = [event.to_dict() for event in again]
        whole = retrieve_events(sdk, rid)
    assert [e["type"] for e in seen] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
    ]
    assert [e["sequence_number"] for e in rest] == list(range(len(seen), len(seen) + len(rest)))
    assert [e["type"] for e in rest] == [
        "response.output_item.added",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * 4,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert rest[0]["item"]["output"] == "Ada went through"
    assert (rest[-1]["type"], rest[-1]["response"]["output"][-1]["content"][0]["text"]) == (
        "response.completed",
        "Done: Ada went through",
    )
    assert whole[-1]["response"] == rest[-1]["response"]


def test_the_token_is_the_sdk_api_key(tmp_path: Path) -> None:
    proc, url = start_serve(
        "--executor",
        "server.agents:make_executor",
        "--db",
        str(tmp_path / "runs.sqlite"),
        "--token",
        TOKEN,
    )
    try:
        with OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0) as sdk:
            assert sdk.responses.create(model="agent", input="add 1 2").output_text == (
                "The sum is 3."
            )
        with OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0) as sdk:
            with pytest.raises(openai.AuthenticationError):
                sdk.responses.create(model="agent", input="add 1 2")
    finally:
        stop_serve(proc)
