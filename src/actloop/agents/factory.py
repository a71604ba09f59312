"""`create_agent`: LangChain 1.x's agent constructor, compiled onto actloop's executor loop.

`create_agent(model, tools, system_prompt=..., middleware=[...], checkpointer=...)` returns a
`CompiledAgent` whose `invoke`/`ainvoke`/`batch`/`stream` take and return LangGraph's state dict
(`{"messages": [...]}`). Each run is an `AgentExecutor` run of a `GraphRun` agent (`_graph`): the
same I/O-free loop, drivers, parallel tool calls, deadlines and durable journal as any actloop
agent. `max_execution_time` (seconds for the whole run) is actloop's extension; LangGraph has no
run deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, cast

from actloop.agents._graph import GraphRun, GraphSpec, ToolNode
from actloop.agents.middleware.types import AgentMiddleware, Runtime
from actloop.messages import SystemMessage

__all__ = ["CompiledAgent", "create_agent"]

DEFAULT_RECURSION_LIMIT = 10007
"""LangGraph 1.2's default `recursion_limit` (nodes a run may take)."""


def _chat_model(model: Any) -> Any:
    """An instance as given (LangChain models are adopted); `"openai:NAME"` a `ChatOpenAI`;
    `"local"` / `"local:PATH"` the embedded model."""
    if not isinstance(model, str):
        from actloop.runnables._foreign import adopt

        return adopt(model)
    provider, _, name = model.partition(":")
    if provider == "openai" and name:
        from actloop.models.openai import ChatOpenAI

        return ChatOpenAI(model=name)
    if provider == "local":
        from actloop.models.local import LocalChatModel

        return LocalChatModel(model_path=name) if name else LocalChatModel()
    raise ValueError(
        f"Unable to infer model provider for {model!r}: use 'openai:<model>' or 'local', "
        "or pass a chat model instance"
    )


def _as_tool(thing: Any) -> Any:
    """A tool: actloop's as given; LangChain's and MCP's adopted; a function made a tool."""
    from actloop.runnables._foreign import adopt

    thing = adopt(thing)
    if callable(thing) and not hasattr(thing, "run"):
        from actloop.tools import tool

        return tool(thing)
    return thing


def create_agent(
    model: Any,
    tools: Sequence[Any] | None = None,
    *,
    system_prompt: str | SystemMessage | None = None,
    middleware: Sequence[AgentMiddleware] = (),
    response_format: Any = None,
    state_schema: type[Any] | None = None,
    context_schema: type[Any] | None = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    name: str | None = None,
    cache: Any = None,
    max_execution_time: float | None = None,
) -> CompiledAgent:
    """An agent that calls `model` with `tools` until it answers without a tool call, as
    `langchain.agents.create_agent` builds it (same arguments; see the module docstring)."""
    if response_format is not None:
        raise NotImplementedError("response_format is not supported yet by actloop's create_agent")
    if interrupt_before or interrupt_after:
        raise NotImplementedError("interrupt_before/interrupt_after are not supported yet")
    middleware = list(middleware)
    names = [m.name for m in middleware]
    if len(set(names)) != len(names):
        raise AssertionError("Please remove duplicate middleware instances.")
    all_tools = [_as_tool(t) for t in [*(tools or []), *(t for m in middleware for t in m.tools)]]
    system_message = (
        SystemMessage(system_prompt) if isinstance(system_prompt, str) else system_prompt
    )
    spec = GraphSpec(
        model=_chat_model(model),
        tools={t.name: t for t in all_tools},
        middleware=middleware,
        system_message=system_message,
        name=name,
    )
    return CompiledAgent(spec, checkpointer, store, max_execution_time, name or "LangGraph")


class CompiledAgent:
    """A compiled `create_agent` agent: LangGraph's `CompiledStateGraph` calls on actloop's loop."""

    def __init__(
        self,
        spec: GraphSpec,
        checkpointer: Any,
        store: Any,
        max_execution_time: float | None,
        name: str,
    ) -> None:
        self.spec = spec
        self.checkpointer = checkpointer
        self.store = store
        self.max_execution_time = max_execution_time
        self.name = name

    # -- one run -------------------------------------------------------------------------------

    def _prepare(
        self, input: Any, config: dict[str, Any] | None, context: Any
    ) -> tuple[Any, dict[str, Any], GraphRun]:
        from actloop.executor import AgentExecutor

        config = dict(config or {})
        limit = int(config.pop("recursion_limit", DEFAULT_RECURSION_LIMIT))
        runtime = Runtime(context=context, store=self.store, config=config)
        run = GraphRun(self.spec, runtime, limit, config)
        tools = [ToolNode(t, run) for t in self.spec.tools.values()]
        executor = AgentExecutor(
            agent=run,
            tools=tools,
            max_iterations=None,
            max_execution_time=self.max_execution_time,
            name=self.name,
        )
        inputs = dict(cast("dict[str, Any]", input))
        return executor, {**inputs, "messages": list(inputs.get("messages", []))}, run

    def invoke(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None, **_: Any
    ) -> dict[str, Any]:
        """Run to the end; the final state (`{"messages": [...], ...}`)."""
        executor, inputs, _run = self._prepare(input, config, context)
        return executor.invoke(inputs, cast("Any", self._config(config)), return_only_outputs=True)

    async def ainvoke(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None, **_: Any
    ) -> dict[str, Any]:
        """Async `invoke`."""
        executor, inputs, _run = self._prepare(input, config, context)
        return await executor.ainvoke(
            inputs, cast("Any", self._config(config)), return_only_outputs=True
        )

    def _config(self, config: dict[str, Any] | None) -> dict[str, Any]:
        return {k: v for k, v in (config or {}).items() if k != "recursion_limit"}

    def batch(
        self, inputs: list[Any], config: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """`invoke` each input (one after another)."""
        return [self.invoke(i, config, **kwargs) for i in inputs]

    async def abatch(
        self, inputs: list[Any], config: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """`ainvoke` the inputs concurrently."""
        return list(await asyncio.gather(*(self.ainvoke(i, config, **kwargs) for i in inputs)))

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # pragma: no cover - stub
        raise NotImplementedError

    def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # pragma: no cover
        raise NotImplementedError

    def get_name(self) -> str:
        return self.name
