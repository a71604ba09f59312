"""A served agent whose MCP tool asks a person for input, over the Agent Protocol with the
official `langgraph-sdk`: the run ends interrupted with the question in its action request, an
answer that does not fit is a 422 (nothing runs), and `command={"resume": {"answer": ...}}`
re-sends the call with the answer and its request state. The page (a real headless Chromium)
shows the question and sends an answer or a decline."""

from __future__ import annotations

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
from test_input import QUESTION, received

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
    """A durable server whose agent books a room with the asking MCP server's tool."""
    with MCPToolset.stdio(sys.executable, [str(SERVERS / "asking.py")], timeout=10.0) as toolset:
        agent = ScriptedAgent(
            [AgentAction("book", {"city": "Oslo"}, "book a room"), finish], input_keys=["input"]
        )
        store = SqliteCheckpointer(tmp_path / "runs.sqlite")
        executor = AgentExecutor(agent=agent, tools=toolset.get_tools(), checkpointer=store)
        port = free_port()
        config = uvicorn.Config(
            create_app(executor, token=TOKEN), host="127.0.0.1", port=port, log_level="warning"
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
