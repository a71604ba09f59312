"""`create_agent(store=...)`: the object given reaches tools (`InjectedStore`, `ToolRuntime`) and
middleware (`runtime.store`) as it is, LangGraph's `InMemoryStore` included."""

from __future__ import annotations

from typing import Annotated, Any

from langgraph.store.memory import InMemoryStore

from actloop.agents import create_agent
from actloop.agents.middleware import AgentMiddleware
from actloop.messages import AIMessage, HumanMessage
from actloop.testing import ScriptedChatModel
from actloop.tools import InjectedStore, ToolRuntime, tool


@tool
def remember(fact: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Remember a fact."""
    store.put(("facts",), "latest", {"fact": fact})
    return "remembered"


@tool
def recall(runtime: ToolRuntime) -> str:
    """Recall the latest fact."""
    item = runtime.store.get(("facts",), "latest")
    return item.value["fact"]


class CountsFacts(AgentMiddleware):
    """Reads the store in after_agent, as middleware does."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def after_agent(self, state: Any, runtime: Any) -> None:
        self.seen.append(runtime.store.search(("facts",)))


def test_store_reaches_tools_and_middleware() -> None:
    calls = [
        AIMessage("", tool_calls=[{"name": "remember", "args": {"fact": "sky"}, "id": "c1"}]),
        AIMessage("", tool_calls=[{"name": "recall", "args": {}, "id": "c2"}]),
        AIMessage("done"),
    ]
    store = InMemoryStore()
    counter = CountsFacts()
    agent = create_agent(
        ScriptedChatModel(calls), [remember, recall], middleware=[counter], store=store
    )
    result = agent.invoke({"messages": [HumanMessage("hi")]})
    assert [m.content for m in result["messages"][2::2]] == ["remembered", "sky"]
    item = store.get(("facts",), "latest")
    assert item is not None and item.value == {"fact": "sky"}
    assert [[i.key for i in found] for found in counter.seen] == [["latest"]]
