"""A served agent whose MCP tool asks a person for input, over the Agent Protocol with the
official `langgraph-sdk`: the run ends interrupted with the question in its action request, an
answer that does not fit is a 422 (nothing runs), and `command={"resume": {"answer": ...}}`
re-sends the call with the answer and its request state. The page (a real headless Chromium)
shows the question and sends an answer or a decline."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import UnprocessableEntityError
from mcp_fixtures import SERVERS
from test_input import QUESTION, SCHEMA, received

from actloop import AgentAction, AgentExecutor, AgentFinish
from actloop.checkpoint import SqliteCheckpointer
from actloop.mcp import MCPToolset
from actloop.server import create_app
from actloop.testing import ScriptedAgent
from server.browser import expect, launch, new_tab
from support.serve import free_port

TOKEN = "sdk-t0ken"


def finish(intermediate_steps: Any) -> AgentFinish:
    return AgentFinish({"output": intermediate_steps[-1][1]}, "")


@pytest.fixture
def url(no_orphans: None, tmp_path: Path) -> Iterator[str]:
    """A durable server (with a token) whose agent books a room with the asking server's tool."""
    with serving(tmp_path, TOKEN) as found:
        yield found


@contextlib.contextmanager
def serving(tmp_path: Path, token: str | None) -> Iterator[str]:
    """Serve the booking agent on loopback (uvicorn in a thread); its URL."""
    with MCPToolset.stdio(sys.executable, [str(SERVERS / "asking.py")], timeout=10.0) as toolset:
        agent = ScriptedAgent(
            [AgentAction("book", {"city": "Oslo"}, "book a room"), finish], input_keys=["input"]
        )
        store = SqliteCheckpointer(tmp_path / "runs.sqlite")
        executor = AgentExecutor(agent=agent, tools=toolset.get_tools(), checkpointer=store)
        port = free_port()
        config = uvicorn.Config(
            create_app(executor, token=token), host="127.0.0.1", port=port, log_level="warning"
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=30)
            store.close()


WAITING = {
    "value": {
        "action_requests": [
            {
                "id": "0-0",
                "name": "book",
                "args": {"city": "Oslo"},
                "description": "book a room",
                "questions": [QUESTION],
            }
        ],
        "review_configs": [{"action_name": "book", "allowed_decisions": ["answer"]}],
    },
    "id": "b/0-0",
}


def test_the_question_is_an_interrupt_and_the_answer_resumes_the_run(url: str) -> None:
    with get_sync_client(url=url, api_key=TOKEN) as sync:
        sync.threads.create(thread_id="b")
        paused = sync.runs.wait("b", "agent", input={"input": "book a room in Oslo"})
        assert isinstance(paused, dict)
        assert paused["__interrupt__"] == [WAITING]
        thread = sync.threads.get("b")
        assert (thread["status"], thread["interrupts"]) == ("interrupted", {"b": [WAITING]})

        with pytest.raises(UnprocessableEntityError) as refused:
            sync.runs.create("b", "agent", command={"resume": {"answer": {"0-0": 4}}})
        assert refused.value.response.json() == {
            "error": "the answer to call 0-0 must be an object (the form's content), "
            "'decline', 'cancel' or {'action': ..., 'content': {...}}"
        }
        with pytest.raises(UnprocessableEntityError) as unknown:
            sync.runs.create("b", "agent", command={"resume": {"answer": {"9-9": {"nights": 4}}}})
        assert unknown.value.response.json() == {
            "error": "no call waits for an answer with id '9-9' (waiting: 0-0)"
        }
        assert sync.threads.get("b")["status"] == "interrupted"
        assert len(sync.runs.list("b")) == 1  # the refused resumes ran nothing

        done = sync.runs.wait("b", "agent", command={"resume": {"answer": {"0-0": {"nights": 4}}}})
        assert isinstance(done, dict)
        assert done["output"] == received({"action": "accept", "content": {"nights": 4}})
        assert "__interrupt__" not in done
        assert sync.threads.get("b")["status"] == "idle"


@pytest.fixture
def page() -> Iterator[Any]:
    """A tab of a headless Chromium (Debian's, driven by Playwright)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = launch(driver)
        tab = new_tab(chromium)
        try:
            yield tab
        finally:
            tab.context.close()
            chromium.close()


@pytest.mark.parametrize("how", ["answer", "decline"])
def test_the_page_shows_the_question_and_sends_the_answer(url: str, page: Any, how: str) -> None:
    page.goto(f"{url}/?token={TOKEN}")
    expect(page.locator("#mode")).to_have_text("durable threads")
    page.fill("#question", "book a room in Oslo")
    page.click("#send")
    page.wait_for_selector(".question")
    assert page.text_content(".question .what") == (
        'waiting for an answer [0-0]: book({"city":"Oslo"})'
    )
    assert page.locator(".question .asks").all_text_contents() == [
        "How many nights in Oslo? \u2014 answer: "
        '{"properties":{"nights":{"type":"integer","description":"How many nights"}},'
        '"required":["nights"],"type":"object"}'
    ]
    expect(page.locator("#threads li")).to_have_text(["interruptedbook a room in Oslo"])
    if how == "answer":
        page.fill(".question textarea", '{"nights": 2}')
        page.click(".question button.answer")
        sent: dict[str, Any] = {"action": "accept", "content": {"nights": 2}}
    else:
        page.click(".question button.decline")
        sent = {"action": "decline"}
    expect(page.locator("#answer")).to_have_text(received(sent))
    assert page.locator(".question").count() == 0


def agui_events(client: Any, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The AG-UI events of one run (each checked against the `ag-ui-protocol` models)."""
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    adapter: TypeAdapter[Any] = TypeAdapter(Event)
    with client.stream("POST", "/ag-ui", json=body) as response:
        assert response.status_code == 200, response.read()
        lines = [line for line in response.iter_lines() if line]
    events = [json.loads(line.removeprefix("data: ")) for line in lines]
    for event in events:
        adapter.validate_python(event)
    return events


def agui_input(thread: str, run: str, **extra: Any) -> dict[str, Any]:
    from ag_ui.core import RunAgentInput, UserMessage

    messages = [] if "resume" in extra else [UserMessage(id="u1", content="book a room")]
    fields: dict[str, Any] = {"state": {}, "tools": [], "context": [], "forwarded_props": {}}
    model = RunAgentInput(thread_id=thread, run_id=run, messages=messages, **fields, **extra)
    return model.model_dump(mode="json", by_alias=True)


def test_over_ag_ui_the_question_is_an_interrupt_answered_by_a_payload(url: str) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, timeout=60, headers=headers) as client:
        paused = agui_events(client, agui_input("g", "run-1"))
        outcome = paused[-1]["outcome"]
        assert outcome == {
            "type": "interrupt",
            "interrupts": [
                {
                    "id": "0-0",
                    "reason": "input_required",
                    "message": "How many nights in Oslo?",
                    "toolCallId": outcome["interrupts"][0]["toolCallId"],
                    "responseSchema": {"type": "object", "properties": {"answer": SCHEMA}},
                }
            ],
        }
        answer = [{"interruptId": "0-0", "status": "resolved", "payload": {"answer": "cancel"}}]
        resumed = agui_events(client, agui_input("g", "run-2", resume=answer))
        assert resumed[-1] == {
            "type": "RUN_FINISHED",
            "threadId": "g",
            "runId": "run-2",
            "result": received({"action": "cancel"}),
        }


async def test_over_a2a_the_task_asks_and_a_data_part_answers(
    no_orphans: None, tmp_path: Path
) -> None:
    from a2a.client import create_client
    from a2a.helpers import new_data_part, new_message, new_text_message
    from a2a.types.a2a_pb2 import Role, SendMessageRequest
    from google.protobuf.json_format import MessageToDict

    with serving(tmp_path, None) as base:
        client = await create_client(base)
        try:
            ask = new_text_message("book a room", role=Role.ROLE_USER)
            events = [
                MessageToDict(r) async for r in client.send_message(SendMessageRequest(message=ask))
            ]
            status = events[-1]["statusUpdate"]["status"]
            assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
            parts = status["message"]["parts"]
            assert parts[0] == {
                "text": "Waiting for an answer: book (0-0) asks: How many nights in Oslo?. "
                "Answer on this task with a data part."
            }
            assert parts[1]["data"]["pending_approvals"][0]["questions"] == [QUESTION]
            task_id = events[0]["task"]["id"]
            answer = new_data_part({"answer": {"0-0": {"nights": 6}}})
            message = new_message([answer], task_id=task_id, role=Role.ROLE_USER)
            resumed = [
                MessageToDict(r)
                async for r in client.send_message(SendMessageRequest(message=message))
            ]
            assert resumed[-2]["artifactUpdate"]["artifact"]["parts"] == [
                {"text": received({"action": "accept", "content": {"nights": 6}})}
            ]
            assert resumed[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        finally:
            await client.close()
