"""A2A 1.x with the official `a2a-sdk` client against a real server on loopback: the agent card,
send, streaming send (the exact updates), get, cancel of a run blocked in a tool, a task that
waits for approval (input-required) and is resumed by a message, a failed run, a new turn by
`contextId`, bad requests with the JSON-RPC codes, and the token."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, create_client
from a2a.helpers import new_data_part, new_message, new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import MessageToDict

from actloop import AgentExecutor
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate
from actloop.server import create_app
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent
from actloop.tools import tool
from support.serve import Serve

from .agents import add, flaky, nap, policy, send

HELD = threading.Event()
"""Set by `hold` once it runs (the test then cancels the run blocked in it)."""
RELEASED = threading.Event()
"""Set if `hold` ever got past its wait (it must not: the run is cancelled there)."""


@tool
async def hold(reason: str) -> str:
    """Wait until the run is cancelled."""
    HELD.set()
    await asyncio.Event().wait()  # only a cancel ends this
    RELEASED.set()
    return "released"


def _policy(messages: list[BaseMessage]) -> AIMessage | str:
    """`agents.policy`, and "hold TEXT": call `hold`."""
    question = next(m.text for m in messages if isinstance(m, HumanMessage))
    if question.startswith("hold") and not any(isinstance(m, ToolMessage) for m in messages):
        call = {"name": "hold", "args": {"reason": question}, "id": "call_0"}
        return AIMessage("", tool_calls=[call])
    return policy(messages)


def executor(path: Path) -> AgentExecutor:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be brief."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    tools = [add, nap, flaky, send, hold]
    agent = create_tool_calling_agent(FunctionChatModel(_policy), tools, prompt)
    return AgentExecutor(agent=agent, tools=tools, checkpointer=SqliteCheckpointer(path))


@pytest.fixture
def url(serve: Serve, tmp_path: Path) -> Iterator[str]:
    HELD.clear()
    RELEASED.clear()
    yield serve(create_app(executor(tmp_path / "runs.sqlite")))


@pytest.fixture
async def client(url: str) -> AsyncIterator[Client]:
    found = await create_client(url)
    yield found
    await found.close()


@pytest.fixture
async def blocking(url: str) -> AsyncIterator[Client]:
    """A client that does not stream: `send_message` answers once the run is over."""
    found = await create_client(url, client_config=ClientConfig(streaming=False))
    yield found
    await found.close()


def ask(text: str, **ids: str) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER, **ids))


def decide(task_id: str, decision: dict[str, Any]) -> SendMessageRequest:
    message = new_message([new_data_part(decision)], task_id=task_id, role=Role.ROLE_USER)
    return SendMessageRequest(message=message)


async def updates(client: Client, request: SendMessageRequest) -> list[dict[str, Any]]:
    return [MessageToDict(r) async for r in client.send_message(request)]


def plain(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without what changes each run (timestamps, generated message ids)."""
    out = []
    for event in events:
        kind, body = next(iter(event.items()))
        status = dict(body.get("status", {}))
        status.pop("timestamp", None)
        message = status.get("message")
        if message is not None:
            ids = ("messageId", "taskId", "contextId")
            status["message"] = {k: v for k, v in message.items() if k not in ids}
        kept = {k: v for k, v in body.items() if k not in ("status", "taskId", "contextId", "id")}
        out.append({kind: {**kept, **({"status": status} if status else {})}})
    return out


WORKING = {"state": "TASK_STATE_WORKING"}


def agent(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "ROLE_AGENT", "parts": list(parts)}


async def test_the_card_names_the_agent_its_tools_and_the_endpoint(url: str) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{url}/.well-known/agent-card.json")
        card = await A2ACardResolver(http, url).get_agent_card()
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    described = {
        "add": "Add two integers.",
        "nap": "Sleep, then record that the nap ended in $ACTLOOP_TEST_LOG (when set).",
        "flaky": "Fail while the file named by $ACTLOOP_TEST_FAIL exists (a run that fails, "
        "then resumes).",
        "send": "Send a message (needs a person's approval).",
        "hold": "Wait until the run is cancelled.",
    }
    assert MessageToDict(card) == {
        "name": "actloop agent",
        "description": "An agent served by actloop: send it a task in text; it answers in text "
        "and may call its tools (its skills) on the way.",
        "supportedInterfaces": [
            {"url": f"{url}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "version": "0.1.0",
        "capabilities": {"streaming": True, "pushNotifications": False, "extendedAgentCard": False},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {"id": name, "name": name, "description": text, "tags": ["tool"]}
            for name, text in described.items()
        ],
    }
    assert response.json()["url"] == f"{url}/a2a"  # the endpoint, for clients of A2A 0.3 cards


async def test_send_answers_with_the_completed_task(blocking: Client) -> None:
    [answer] = await updates(blocking, ask("add 2 40"))
    task = answer["task"]
    task["status"].pop("timestamp")
    assert task == {
        "id": task["contextId"],  # the first turn of a thread: task id = context id = thread id
        "contextId": task["contextId"],
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [
            {"artifactId": "answer", "name": "answer", "parts": [{"text": "The sum is 42."}]}
        ],
        "history": [
            {
                "messageId": f"{task['id']}-input",
                "contextId": task["id"],
                "taskId": task["id"],
                "role": "ROLE_USER",
                "parts": [{"text": "add 2 40"}],
            }
        ],
    }


async def test_streaming_send_gives_each_update_in_order(client: Client) -> None:
    events = await updates(client, ask("add 2 40"))
    task_id = events[0]["task"]["id"]
    assert all(next(iter(e.values())).get("taskId", task_id) == task_id for e in events)
    calls = {"tool_calls": [{"tool": "add", "tool_input": {"a": 2.0, "b": 40.0}}]}
    results = {"tool_results": [{"tool": "add", "observation": 42.0}]}
    assert plain(events) == [
        {"task": {"status": WORKING, "history": events[0]["task"]["history"]}},
        {"statusUpdate": {"status": {**WORKING, "message": agent({"data": calls})}}},
        {"statusUpdate": {"status": {**WORKING, "message": agent({"data": results})}}},
        {
            "artifactUpdate": {
                "artifact": {
                    "artifactId": "answer",
                    "name": "answer",
                    "parts": [{"text": "The sum is 42."}],
                },
                "lastChunk": True,
            }
        },
        {"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}},
    ]
    assert events[0]["task"]["history"][0]["parts"] == [{"text": "add 2 40"}]


async def test_get_task_and_a_new_turn_by_context_id(client: Client, blocking: Client) -> None:
    [first] = await updates(blocking, ask("add 1 2"))
    thread = first["task"]["contextId"]
    [second] = await updates(blocking, ask("add 3 4", context_id=thread))
    assert (second["task"]["id"], second["task"]["contextId"]) == (f"{thread}:2", thread)
    for task_id, answer in ((thread, "The sum is 3."), (f"{thread}:2", "The sum is 7.")):
        task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"] == [{"text": answer}]
    only_state = await client.get_task(GetTaskRequest(id=thread, history_length=0))
    assert list(only_state.history) == []
    listed = await client.list_tasks(ListTasksRequest(context_id=thread))
    assert [t.id for t in listed.tasks] == [f"{thread}:2", thread]
    assert (listed.total_size, listed.next_page_token, list(listed.tasks[0].artifacts)) == (
        2,
        "",
        [],
    )
    page = await client.list_tasks(ListTasksRequest(page_size=1, include_artifacts=True))
    assert ([t.id for t in page.tasks], page.next_page_token) == ([f"{thread}:2"], "1")
    assert page.tasks[0].artifacts[0].parts[0].text == "The sum is 7."
    rest = await client.list_tasks(ListTasksRequest(page_size=1, page_token="1"))
    assert ([t.id for t in rest.tasks], rest.next_page_token) == ([thread], "")
    with pytest.raises(InvalidParamsError, match="'pageSize' must be a whole number from 1 to 100"):
        await client.list_tasks(ListTasksRequest(page_size=101))
    for missing in ("nope", f"{thread}:3", f"{thread}:1", "../x"):
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=missing))
    with pytest.raises(UnsupportedOperationError, match="is completed: it takes no message"):
        await updates(client, ask("add 5 6", task_id=thread))


async def test_a_call_waiting_for_approval_is_input_required_until_a_message_decides(
    client: Client,
) -> None:
    events = await updates(client, ask("send hello"))
    task_id = events[0]["task"]["id"]
    pending = [
        {
            "id": "0-0",
            "tool": "send",
            "tool_input": {"text": "hello"},
            "log": "\nInvoking: `send` with `{'text': 'hello'}`\n\n\n",
        }
    ]
    waiting = agent(
        {"text": "Waiting for approval: send (0-0). Answer on this task with a data part."},
        {"data": {"pending_approvals": pending}},
    )
    assert plain(events)[1:] == [
        {
            "statusUpdate": {
                "status": {
                    **WORKING,
                    "message": agent(
                        {
                            "data": {
                                "tool_calls": [{"tool": "send", "tool_input": {"text": "hello"}}]
                            }
                        }
                    ),
                }
            }
        },
        {"statusUpdate": {"status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": waiting}}},
    ]
    task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert {k: v for k, v in task["status"]["message"].items() if k != "messageId"} == {
        **waiting,
        "contextId": task_id,
        "taskId": task_id,
    }
    for bad in ({"approve": "yes"}, {"aprove": True}, {"approve": ["9-9"]}):
        with pytest.raises(InvalidParamsError):
            await updates(client, decide(task_id, bad))
    with pytest.raises(InvalidParamsError, match="waits for approval"):
        await updates(client, ask("yes please", task_id=task_id))
    with pytest.raises(UnsupportedOperationError, match="waiting for approval"):
        await updates(client, ask("add 1 1", context_id=task_id))  # not a new turn yet
    resumed = await updates(client, decide(task_id, {"approve": True}))
    assert resumed[0]["task"]["id"] == task_id
    assert [next(iter(e)) for e in resumed][-2:] == ["artifactUpdate", "statusUpdate"]
    assert resumed[-2]["artifactUpdate"]["artifact"]["parts"] == [{"text": "Sent: sent 'hello'"}]
    assert resumed[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_reject_with_a_reason_by_message(blocking: Client) -> None:
    [paused] = await updates(blocking, ask("send spam"))
    task_id = paused["task"]["id"]
    assert paused["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    [done] = await updates(blocking, decide(task_id, {"reject": {"0-0": "no spam"}}))
    text = done["task"]["artifacts"][0]["parts"][0]["text"]
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert text.startswith("Sent: ") and "rejected" in text and "no spam" in text


async def test_cancel_a_run_blocked_in_a_tool(client: Client, url: str) -> None:
    polling = SendMessageConfiguration(return_immediately=True)
    request = SendMessageRequest(
        message=new_text_message("hold on", role=Role.ROLE_USER), configuration=polling
    )
    async with await create_client(url, client_config=ClientConfig(streaming=False)) as quick:
        [started] = await updates(quick, request)
    task_id = started["task"]["id"]
    assert started["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert await asyncio.to_thread(HELD.wait, 30)
    following = client.subscribe(SubscribeToTaskRequest(id=task_id))
    first = MessageToDict(await anext(following))
    assert first["task"]["status"]["state"] == "TASK_STATE_WORKING"
    cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
    assert cancelled.status.state == 5  # TASK_STATE_CANCELED
    rest: list[StreamResponse] = [r async for r in following]
    assert [MessageToDict(r)["statusUpdate"]["status"]["state"] for r in rest] == [
        "TASK_STATE_CANCELED"
    ]
    task = await client.get_task(GetTaskRequest(id=task_id))
    assert MessageToDict(task)["status"]["state"] == "TASK_STATE_CANCELED"
    assert not RELEASED.is_set()
    with pytest.raises(TaskNotCancelableError, match="is already canceled"):
        await client.cancel_task(CancelTaskRequest(id=task_id))
    with pytest.raises(UnsupportedOperationError, match="is canceled"):
        await updates(client, decide(task_id, {"approve": True}))
    done = await updates(client, ask("add 1 1"))
    with pytest.raises(TaskNotCancelableError, match="is completed"):
        await client.cancel_task(CancelTaskRequest(id=done[0]["task"]["id"]))


async def test_a_failed_run_is_failed_with_its_error_type_only(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "down"
    flag.write_text("")
    monkeypatch.setenv("ACTLOOP_TEST_FAIL", str(flag))
    events = await updates(client, ask("flaky ping"))
    failed = agent({"text": "RuntimeError"})
    assert plain(events)[-1] == {
        "statusUpdate": {"status": {"state": "TASK_STATE_FAILED", "message": failed}}
    }
    task = MessageToDict(await client.get_task(GetTaskRequest(id=events[0]["task"]["id"])))
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert task["status"]["message"]["parts"] == [{"text": "RuntimeError"}]
    assert "down" not in str(events) + str(task)  # the exception's message stays in the log


def rpc(method: str, params: Any = None, **envelope: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, **envelope}
    return body if params is None else {**body, "params": params}


def error(code: int, message: str, reason: str | None, ident: Any = 7) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if reason is not None:
        body["data"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
                "metadata": {},
            }
        ]
    return {"jsonrpc": "2.0", "id": ident, "error": body}


async def test_bad_requests_get_the_json_rpc_codes(url: str) -> None:
    text = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "add 1 1"}]}}
    cases: list[tuple[Any, dict[str, str], dict[str, Any]]] = [
        (b"{not json", {}, error(-32700, "request body is not valid JSON", None, None)),
        (
            [rpc("GetTask", {"id": "x"})],
            {},
            error(-32600, "request body must be a JSON object", "INVALID_REQUEST", None),
        ),
        (
            {**rpc("GetTask", {"id": "x"}), "jsonrpc": "1.0"},
            {},
            error(-32600, "'jsonrpc' must be exactly \"2.0\"", "INVALID_REQUEST"),
        ),
        (
            rpc("tasks/get", {"id": "x"}),
            {},
            error(-32601, "no method 'tasks/get'", "METHOD_NOT_FOUND"),
        ),
        (rpc("GetTask", []), {}, error(-32602, "'params' must be an object", "INVALID_PARAMS")),
        (rpc("GetTask", {}), {}, error(-32602, "'id' (the task id) is required", "INVALID_PARAMS")),
        (rpc("GetTask", {"id": "nope"}), {}, error(-32001, "no task 'nope'", "TASK_NOT_FOUND")),
        (
            rpc("SendMessage", {"message": {"parts": []}}),
            {},
            error(-32602, "'message.parts' must be a non-empty list", "INVALID_PARAMS"),
        ),
        (
            rpc("SendMessage", {"message": {"parts": [{"text": " "}, {"data": [1]}]}}),
            {},
            error(-32602, "the message holds no text nor data object to act on", "INVALID_PARAMS"),
        ),
        (
            rpc("SendMessage", {"message": {"parts": [{"url": "file:///etc/passwd"}]}}),
            {},
            error(
                -32005,
                "a url part is not supported: send text or data",
                "CONTENT_TYPE_NOT_SUPPORTED",
            ),
        ),
        (
            rpc("SendMessage", {"message": {**text["message"], "contextId": "a/b"}}),
            {},
            error(
                -32602,
                "'contextId' must be 1-100 letters, digits, '-', '_' or '.'",
                "INVALID_PARAMS",
            ),
        ),
        (
            rpc("SendMessage", text),
            {"A2A-Version": "0.3"},
            error(
                -32009,
                "A2A version '0.3' is not supported; this server speaks 1.0",
                "VERSION_NOT_SUPPORTED",
            ),
        ),
        (
            rpc("CreateTaskPushNotificationConfig", {"taskId": "x", "url": "http://x"}),
            {},
            error(
                -32003, "push notifications are not supported", "PUSH_NOTIFICATION_NOT_SUPPORTED"
            ),
        ),
    ]
    async with httpx.AsyncClient(base_url=url) as http:
        for body, headers, expected in cases:
            content = body if isinstance(body, bytes) else None
            response = await http.post(
                "/a2a",
                content=content,
                json=None if content is not None else body,
                headers={"Content-Type": "application/json", **headers},
            )
            assert (response.status_code, response.json()) == (200, expected), body
        listed = await http.post("/a2a", json=rpc("ListTasks", {}))
        assert listed.json()["result"]["tasks"] == []  # nothing ran
        refused = await http.post("/a2a", content=b"{}", headers={"Content-Type": "text/plain"})
        assert refused.status_code == 415

        async def chunks() -> AsyncIterator[bytes]:
            yield b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "'
            for _ in range(20):
                yield b"x" * 65536
            yield b'"}}'

        json_body = {"Content-Type": "application/json"}
        large = await http.post("/a2a", content=chunks(), headers=json_body)
        assert (large.status_code, large.json()) == (
            413,
            {"error": "request body too large (limit 1048576 bytes)"},
        )


async def test_with_a_token_the_card_is_public_and_every_call_needs_it(
    serve: Serve, tmp_path: Path
) -> None:
    url = serve(create_app(executor(tmp_path / "runs.sqlite"), token="s3cret"))
    async with httpx.AsyncClient(base_url=url) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        assert (await http.head("/.well-known/agent-card.json")).status_code == 200
        assert card["skills"] == []
        assert card["capabilities"]["extendedAgentCard"] is True
        assert card["securitySchemes"] == {
            "bearer": {
                "httpAuthSecurityScheme": {
                    "scheme": "Bearer",
                    "description": "the token `actloop serve` was started with",
                }
            }
        }
        assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
        refused = await http.post("/a2a", json=rpc("GetTask", {"id": "x"}))
        assert (refused.status_code, refused.json()) == (
            401,
            {"error": "missing or wrong bearer token"},
        )
        written = await http.post("/.well-known/agent-card.json", json={})
        assert written.status_code == 401
    headers = {"Authorization": "Bearer s3cret"}
    async with httpx.AsyncClient(headers=headers) as http:
        config = ClientConfig(httpx_client=http, streaming=False)
        async with await create_client(url, client_config=config) as secured:
            full = await secured.get_extended_agent_card(GetExtendedAgentCardRequest())
            assert [s.id for s in full.skills] == ["add", "nap", "flaky", "send", "hold"]
            [answer] = await updates(secured, ask("add 20 22"))
            assert answer["task"]["artifacts"][0]["parts"] == [{"text": "The sum is 42."}]


async def test_openapi_names_the_a2a_routes(url: str) -> None:
    async with httpx.AsyncClient(base_url=url) as http:
        paths = (await http.get("/openapi.json")).json()["paths"]
    assert list(paths["/a2a"]) == ["post"]
    assert paths["/.well-known/agent-card.json"]["get"]["security"] == []


async def test_a_client_that_leaves_the_stream_stops_nothing(client: Client) -> None:
    stream = client.send_message(ask("slow 2"))
    first = MessageToDict(await anext(stream))
    await stream.aclose()  # the client leaves after the first event
    task_id = first["task"]["id"]
    try:
        async for _ in client.subscribe(SubscribeToTaskRequest(id=task_id)):
            pass  # the run is still going: follow it to its end
    except UnsupportedOperationError:
        pass  # it ended already
    task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "Napped 2 times."}]


async def test_one_thread_over_a2a_and_the_agent_protocol(client: Client, url: str) -> None:
    events = await updates(client, ask("send hello"))
    task_id = events[0]["task"]["id"]
    async with httpx.AsyncClient(base_url=url) as http:
        thread = (await http.get(f"/threads/{task_id}")).json()
        assert (thread["status"], thread["values"]["input"]) == ("interrupted", "send hello")
        resume = {"assistant_id": "agent", "command": {"resume": {"approve": True}}}
        approved = await http.post(f"/threads/{task_id}/runs", json=resume)
        assert (approved.status_code, approved.json()["status"]) == (200, "running")
        async with http.stream("GET", f"/threads/{task_id}/events") as followed:
            async for _ in followed.aiter_lines():
                pass  # to the run's end
        made = await http.post("/threads", json={"thread_id": "over-http"})
        assert made.status_code == 200
        run = {"assistant_id": "agent", "input": {"input": "add 2 2"}}
        started = await http.post("/threads/over-http/runs", json=run)
        assert (started.status_code, started.json()["status"]) == (200, "running")
        async with http.stream("GET", "/threads/over-http/events") as followed:
            async for _ in followed.aiter_lines():
                pass
    task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "Sent: sent 'hello'"}]
    other = MessageToDict(await client.get_task(GetTaskRequest(id="over-http")))
    assert (other["contextId"], other["status"]["state"]) == ("over-http", "TASK_STATE_COMPLETED")
    assert other["artifacts"][0]["parts"] == [{"text": "The sum is 4."}]
    turn = await updates(client, ask("add 3 3", context_id="over-http"))
    assert turn[0]["task"]["id"] == "over-http:2"
    assert turn[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
