"""The model's streamed text of a served run (`{"token": text}` items, AG-UI's text messages), from
wherever in the run a chat model speaks: a model the agent invokes rather than streams, and a model
a sync tool invokes on a worker thread with the run's config. The server follows a run with
`astream` and a token handler of its own (`_service._Tokens`), so these pin that the text still
comes, whole and in order, as under `astream_events`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from actloop import AgentExecutor, ChatPromptTemplate, tool
from actloop.checkpoint import SqliteCheckpointer
from actloop.messages import AIMessage, BaseMessage, ToolMessage
from actloop.runnables import RunnableConfig
from actloop.testing import FunctionChatModel, ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent
from support.serve import Serve

from .test_agui import call, client_for, finished, named, post, result, run_input, started, text

INNER = ScriptedChatModel(["inner words here"] * 4)


@tool
def ask(question: str, config: RunnableConfig) -> str:
    """Ask another model (a sync tool: it runs on a worker thread, with the run's config)."""
    return INNER.invoke(question, config).text


def policy(messages: list[BaseMessage]) -> AIMessage | str:
    """Call `ask` once, then answer with what it said."""
    said = [m.text for m in messages if isinstance(m, ToolMessage)]
    if said:
        return f"got {said[-1]}"
    return AIMessage("", tool_calls=[{"name": "ask", "args": {"question": "q"}, "id": "c1"}])


def executor(tmp_path: Path, **options: Any) -> AgentExecutor:
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(FunctionChatModel(policy), [ask], prompt)
    store = SqliteCheckpointer(tmp_path / "runs.sqlite")
    return AgentExecutor(agent=agent, tools=[ask], checkpointer=store, **options)


def expected() -> list[dict[str, Any]]:
    return [
        started("t1"),
        *call("c1", "ask", '{"question":"q"}'),
        *text("m1", "inner", " words", " here"),  # the tool's model, from a worker thread
        result("m2", "c1", "inner words here"),
        *text("m3", "got", " inner", " words", " here"),
        finished("t1", "got inner words here"),
    ]


def test_a_tools_model_on_a_worker_thread_streams_its_text(serve: Serve, tmp_path: Path) -> None:
    with client_for(serve, executor(tmp_path)) as client:
        events = named(post(client, run_input("t1", "hello")))
    assert events == expected()


def test_a_model_the_agent_invokes_still_streams_its_text(serve: Serve, tmp_path: Path) -> None:
    with client_for(serve, executor(tmp_path, stream_runnable=False)) as client:
        events = named(post(client, run_input("t1", "hello")))
    assert events == expected()
