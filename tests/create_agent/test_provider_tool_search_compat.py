"""`ProviderToolSearchMiddleware` against LangChain 1.5's: the same agent (tools named in
`searchable_tools`, one marked `defer_loading`, with other middleware adding nothing) on models
whose provider is Anthropic, OpenAI or one without tool search; the tools each model call is
bound with (names, extras, the search tool) and the final states or errors compared."""

from __future__ import annotations

from typing import Any

import langchain.agents.middleware as lc_mw
import langchain_core.messages as lc_messages
import langchain_core.tools as lc_tools
import pytest
from _both import LcScripted, reply, state_fields
from langchain.agents import create_agent as lc_create_agent

import actloop.agents.middleware as al_mw
import actloop.messages as al_messages
import actloop.tools as al_tools
from actloop.agents import create_agent
from actloop.testing import ScriptedChatModel


def bound(tools: Any) -> list[Any]:
    """What a model was bound with: each tool's name and extras, a provider tool as given."""
    return [t if isinstance(t, dict) else (t.name, t.extras) for t in tools]


class LcModel(LcScripted):
    """LangChain's scripted model with a provider, recording its bindings."""

    provider: str = "anthropic"
    bindings: list[Any] = []  # noqa: RUF012 - a pydantic field

    def _get_ls_params(self, **kwargs: Any) -> Any:
        return {"ls_provider": self.provider}

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bindings.append(bound(tools))
        return self


class AlModel(ScriptedChatModel):
    """actloop's scripted model with a provider, recording its bindings."""

    def __init__(self, replies: Any, provider: str) -> None:
        super().__init__(replies)
        self.provider = provider
        self.bindings: list[Any] = []

    def _get_ls_params(self) -> Any:
        return {"ls_provider": self.provider}

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bindings.append(bound(tools))
        return self


def weather(city: str) -> str:
    """Get the weather for a city."""
    return f"Sunny in {city}"


def email(to: str) -> str:
    """Send an email."""
    return f"Sent to {to}"


def order(order_id: str) -> str:
    """Look up an order."""
    return f"Order {order_id} shipped"


def tools_of(module: Any) -> list[Any]:
    return [
        module.tool(weather),
        module.tool(email, extras={"category": "mail"}),
        module.tool(extras={"defer_loading": True})(order),
    ]


REPLIES = [
    reply("", ("order", {"order_id": "7"}, "c1"), ("email", {"to": "ada"}, "c2"), id="r1"),
    reply("done", id="r2"),
]


async def run(side: str, provider: str, searchable: list[str], use_async: bool) -> Any:
    """(final state or error, bindings) of one side's run."""
    if side == "lc":
        model: Any = LcModel(
            messages=iter([lc_messages.AIMessage(**r) for r in REPLIES]),
            provider=provider,
            bindings=[],
        )
        mw = lc_mw.ProviderToolSearchMiddleware(searchable_tools=list(searchable))
        agent = lc_create_agent(model, tools_of(lc_tools), middleware=[mw])
        human: Any = lc_messages.HumanMessage("go", id="h1")
    else:
        model = AlModel([al_messages.AIMessage(**r) for r in REPLIES], provider)
        mw = al_mw.ProviderToolSearchMiddleware(searchable_tools=list(searchable))
        agent = create_agent(model, tools_of(al_tools), middleware=[mw])
        human = al_messages.HumanMessage("go", id="h1")
    try:
        inputs = {"messages": [human]}
        state = await agent.ainvoke(inputs) if use_async else agent.invoke(inputs)
        result: Any = state_fields(state)
    except ValueError as exc:
        result = ("ValueError", str(exc))
    return result, model.bindings


ANTHROPIC = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize(
    ("provider", "searchable"),
    [("anthropic", ["email"]), ("OpenAI", []), ("mistralai", ["email"]), ("anthropic", ["nope"])],
)
async def test_deferred_tools_equal_langchains(
    provider: str, searchable: list[str], use_async: bool
) -> None:
    lc = await run("lc", provider, searchable, use_async)
    al = await run("al", provider, searchable, use_async)
    assert al == lc
    if (provider, searchable) == ("anthropic", ["email"]):
        assert al[1][0] == [
            ("weather", None),
            ("email", {"category": "mail", "defer_loading": True}),
            ("order", {"defer_loading": True}),
            ANTHROPIC,
        ]
        assert [m["content"] for m in al[0]["messages"]][2:] == [
            "Order 7 shipped",
            "Sent to ada",
            "done",
        ]
    if provider == "mistralai":
        assert al[0] == (
            "ValueError",
            "ProviderToolSearchMiddleware requires a provider with server-side tool search, "
            "but got 'mistralai'; supported providers: anthropic, openai",
        )
