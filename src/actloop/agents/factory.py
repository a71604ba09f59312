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
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any, cast

from actloop.agents import _interrupts, _subgraphs, _threads
from actloop.agents._compose import ComposedResponse as _ComposedExtendedModelResponse
from actloop.agents._compose import (
    chain_async_model_call_handlers as _chain_async_model_call_handlers,
)
from actloop.agents._compose import chain_model_call_handlers as _chain_model_call_handlers
from actloop.agents._events import agent_metadata
from actloop.agents._graph import GraphRun, GraphSpec
from actloop.agents._models import chat_model
from actloop.agents._state import add_messages
from actloop.agents._structured import StructuredOutput
from actloop.agents._threads import StateSnapshot
from actloop.agents._tool_node import ToolNode
from actloop.agents.middleware.types import AgentMiddleware, Runtime, overrides
from actloop.agents.middleware.types import can_jump_to as _get_can_jump_to
from actloop.messages import SystemMessage
from actloop.runnables._halts import HALTS

__all__ = ["CompiledAgent", "create_agent"]

# LangChain's private names of the `wrap_model_call` chain (its tests import them from here)
_ = (
    _ComposedExtendedModelResponse,
    _chain_async_model_call_handlers,
    _chain_model_call_handlers,
    _get_can_jump_to,
)

DEFAULT_RECURSION_LIMIT = 10007
"""LangGraph 1.2's default `recursion_limit` (nodes a run may take)."""


def _as_tool(thing: Any) -> Any:
    """A tool: actloop's as given; LangChain's and MCP's adopted; a function made a tool."""
    from actloop.runnables._foreign import adopt

    thing = adopt(thing)
    if callable(thing) and not hasattr(thing, "run"):
        from actloop.tools import tool

        return tool(thing)
    return thing


def overrides_tool_call(middleware: AgentMiddleware) -> bool:
    """Whether `middleware` wraps tool calls (sync or async)."""
    return any(overrides(middleware, "wrap_tool_call"))


FALLBACK_MODELS_WITH_STRUCTURED_OUTPUT = [
    r"(^|[/:.])gpt-4\.1($|[-/:])",
    r"(^|[/:.])gpt-4o($|[-/:])",
    r"(^|[/:.])gpt-5($|[-/:])",
    r"(^|[/:.])gpt-5\.1($|[-/:])",
    r"(^|[/:.])gpt-5\.2(-\d{4}-\d{2}-\d{2})?($|[/:])",
    r"(^|[/:.])gpt-5\.2-(chat|codex)($|[-/:])",
    r"(^|[/:.])gpt-5\.3($|[-/:])",
    r"(^|[/:.])gpt-5\.4(-\d{4}-\d{2}-\d{2})?($|[/:])",
    r"(^|[/:.])gpt-5\.4-(mini|nano)($|[-/:])",
    r"(^|[/:.])gpt-5\.5($|[-/:])",
    r"(^|[/:.])gpt-6-(astra|luna|sol)($|[-/:])",
    r"(^|[/:.])claude-(fable|mythos)-5(?:-\d{8})?(?:-v\d(?::\d)?)?($|[/:])",
    r"(^|[/:.])claude-haiku-4-5(?:-\d{8})?(?:-v\d(?::\d)?)?($|[/:])",
    r"(^|[/:.])claude-opus-4-(5|6|7|8)(?:-\d{8})?(?:-v\d(?::\d)?)?($|[/:])",
    r"(^|[/:.])claude-sonnet-4-(5|6)(?:-\d{8})?(?:-v\d(?::\d)?)?($|[/:])",
    r"(^|[/:.])grok-4($|[-.:/])",
    r"(^|[/:.])grok-build($|[-/:])",
]
"""LangChain 1.5's patterns of model names assumed to have native structured output when the
model has no `profile` saying so."""


def _supports_provider_strategy(model: Any, tools: list[Any] | None = None) -> bool:
    """Whether `model` (an instance or a name) has native structured output: its `profile`
    says so (not a Gemini before 3 with tools), or its name matches LangChain's list."""
    model_name: Any = None
    if isinstance(model, str):
        model_name = model
    else:
        model = getattr(model, "langchain_model", model)  # an adopted LangChain model
        model_name = (
            getattr(model, "model_name", None)
            or getattr(model, "model", None)
            or getattr(model, "model_id", "")
        )
        profile: Any = getattr(model, "profile", None)
        gemini_before_3 = (
            bool(tools)
            and isinstance(model_name, str)
            and "gemini" in model_name.lower()
            and "gemini-3" not in model_name.lower()
        )
        if profile is not None and profile.get("structured_output") and not gemini_before_3:
            return True
    if not isinstance(model_name, str) or not model_name:
        return False
    name = model_name.lower()
    return any(re.search(p, name) for p in FALLBACK_MODELS_WITH_STRUCTURED_OUTPUT)


def _provider_check(model: Any, tools: list[Any]) -> bool:
    """`_supports_provider_strategy`, looked up when called (so a patch of it takes effect)."""
    return _supports_provider_strategy(model, tools=tools)


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
    middleware = list(middleware)
    names = [m.name for m in middleware]
    if len(set(names)) != len(names):
        raise AssertionError("Please remove duplicate middleware instances.")
    all_tools = [_as_tool(t) for t in [*(tools or []), *(t for m in middleware for t in m.tools)]]
    system_message = (
        SystemMessage(system_prompt) if isinstance(system_prompt, str) else system_prompt
    )
    spec = GraphSpec(
        model=chat_model(model),
        tools={t.name: t for t in all_tools},
        middleware=middleware,
        system_message=system_message,
        name=name,
        structured=StructuredOutput.of(response_format, _provider_check),
        has_tool_node=bool(all_tools) or any(overrides_tool_call(m) for m in middleware),
        interrupt_before=_interrupts.validated(interrupt_before, middleware),
        interrupt_after=_interrupts.validated(interrupt_after, middleware),
        state_schema=state_schema,
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
        self, input: Any, config: dict[str, Any] | None, context: Any, durable: bool
    ) -> tuple[Any, dict[str, Any], GraphRun]:
        from actloop.executor import AgentExecutor

        config = dict(config or {})
        limit = int(config.pop("recursion_limit", DEFAULT_RECURSION_LIMIT))
        runtime = Runtime(context=context, store=self.store, config=config)
        run = GraphRun(self.spec, runtime, limit, config)
        runtime.stream_writer = lambda chunk: run.emit("custom", chunk)
        run.durable = durable
        tools: list[Any] = [ToolNode(t, run) for t in self.spec.tools.values()]
        if self.spec.tool_wrappers:  # tools middleware adds, which its wrap_tool_call runs
            tools.append(ToolNode(None, run))
        if durable and (self.spec.interrupt_before or self.spec.interrupt_after):
            tools.append(_interrupts.PauseNode())
        if durable:  # a node's interrupt() pauses on it
            tools.append(_interrupts.NodePause())
        executor = AgentExecutor(
            agent=run,
            tools=tools,
            max_iterations=None,
            max_execution_time=self.max_execution_time,
            name=self.name,
        )
        if not isinstance(input, dict):
            return executor, input, run  # a Resume of a paused or broken turn
        inputs = dict(cast("dict[str, Any]", input))
        # messages as message objects with ids (LangGraph's reducer), before the journal saves
        # them: a resumed run then has the same ones, ("user", text) pairs included
        messages = add_messages([], _listed(inputs.get("messages", [])))
        return executor, {**inputs, "messages": messages}, run

    def invoke(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None, **_: Any
    ) -> dict[str, Any]:
        """Run to the end; the final state (`{"messages": [...], ...}`). With a checkpointer
        and `config["configurable"]["thread_id"]`, the run goes on from the thread's state."""
        turn = self._turn(config)
        if turn is not None:
            turn.begin(_threads.latest(self.checkpointer, turn.thread))
        call = self._start(input, config, context, turn)
        return self._finish(call.invoke_sync(), turn, call.run)

    async def ainvoke(
        self, input: Any, config: dict[str, Any] | None = None, *, context: Any = None, **_: Any
    ) -> dict[str, Any]:
        """Async `invoke`."""
        turn = self._turn(config)
        if turn is not None:
            turn.begin(await _threads.alatest(self.checkpointer, turn.thread))
        call = self._start(input, config, context, turn)
        return await self._afinish(await call.invoke_async(), turn, call.run)

    def _turn(self, config: dict[str, Any] | None) -> _threads.Turn | None:
        """The thread turn this run is, when it has a checkpointer and a thread id."""
        configurable: dict[str, Any] = (config or {}).get("configurable") or {}
        thread: Any = configurable.get("thread_id")
        if self.checkpointer is None or thread is None:
            return None
        return _threads.Turn(str(thread), self.spec, self.checkpointer)

    def _start(
        self, input: Any, config: dict[str, Any] | None, context: Any, turn: _threads.Turn | None
    ) -> _Call:
        run_config = {k: v for k, v in (config or {}).items() if k != "recursion_limit"}
        run_config["metadata"] = agent_metadata(run_config, self.spec.name)
        if isinstance(input, dict) and self.spec.no_input:  # keys the input schema lacks
            no_input = self.spec.no_input
            input = {k: v for k, v in cast("dict[str, Any]", input).items() if k not in no_input}
        if turn is not None:
            input = turn.input(input)
            configurable: dict[str, Any] = dict(run_config.get("configurable") or {})
            run_config["configurable"] = {**configurable, "thread_id": turn.run_id}
        executor, inputs, run = self._prepare(input, config, context, turn is not None)
        if turn is not None:
            executor.checkpointer = self.checkpointer
        return _Call(executor, inputs, run_config, run)

    def _finish(
        self, outputs: dict[str, Any], turn: _threads.Turn | None, run: GraphRun
    ) -> dict[str, Any]:
        if run.refused is not None:  # an answer an interrupt's schema refused
            raise run.refused
        outputs = outputs if turn is None else turn.outputs(outputs, run.state)
        return run.public(outputs)

    async def _afinish(
        self, outputs: dict[str, Any], turn: _threads.Turn | None, run: GraphRun
    ) -> dict[str, Any]:
        """Async `_finish` (a pause's state read with the store's async API)."""
        if run.refused is not None:
            raise run.refused
        outputs = outputs if turn is None else await turn.aoutputs(outputs, run.state)
        return run.public(outputs)

    def get_state(self, config: dict[str, Any]) -> StateSnapshot:
        """The thread's state now: values, what runs next, the pending interrupts."""
        turn = self._turn(config)
        if turn is None:
            raise ValueError("No checkpointer set")
        return turn.snapshot(_threads.latest(self.checkpointer, turn.thread), config)

    async def aget_state(self, config: dict[str, Any]) -> StateSnapshot:
        """Async `get_state`."""
        turn = self._turn(config)
        if turn is None:
            raise ValueError("No checkpointer set")
        return turn.snapshot(await _threads.alatest(self.checkpointer, turn.thread), config)

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

    def stream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: str | Sequence[str] | None = None,
        subgraphs: bool = False,
        **_: Any,
    ) -> Iterator[Any]:
        """LangGraph's `stream`: chunks of the `stream_mode`s ("values", "updates", "messages",
        "custom"; default "updates"), `(mode, chunk)` pairs when a list of modes is given, with
        the namespace first when `subgraphs` (`_subgraphs`: sub-agents that tools run stream
        too). The run goes on a worker thread so chunks arrive as they happen; closing the stream
        early (a `break`) halts it, as LangGraph's stops: it starts no model call or tool after
        (one already running finishes)."""
        import contextvars
        import queue
        import threading

        modes, single = _modes(stream_mode)
        turn = self._turn(config)
        if turn is not None:
            turn.begin(_threads.latest(self.checkpointer, turn.thread))
        call = self._start(input, config, context, turn)
        chunks: queue.Queue[tuple[Any, Any]] = queue.Queue()

        def put(item: tuple[Any, Any]) -> None:
            chunks.put(item)
            time.sleep(0)  # let the reader take it now, not at the next GIL switch (5 ms)

        _listen(call.run, modes, put)
        call.outer = _subgraphs.top(modes, put) if subgraphs else None

        halt = threading.Event()

        def work() -> None:
            HALTS.set((*HALTS.get(), halt))  # the drivers test it before each model call and tool
            try:
                chunks.put((_DONE, self._finish(call.invoke_sync(), turn, call.run)))
            except BaseException as exc:
                chunks.put((_DONE, exc))

        context_copy = contextvars.copy_context()
        worker = threading.Thread(
            target=context_copy.run, args=(work,), name="actloop-stream", daemon=True
        )
        worker.start()
        try:
            while True:
                out, done = _emitted(chunks.get(), modes, single, subgraphs, call.run)
                yield from out
                if done:
                    return
        finally:
            halt.set()  # no-op once the run ended; else the reader left: the run starts nothing

    async def astream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: str | Sequence[str] | None = None,
        subgraphs: bool = False,
        **_: Any,
    ) -> AsyncIterator[Any]:
        """Async `stream`: the run is a task on this event loop."""
        modes, single = _modes(stream_mode)
        turn = self._turn(config)
        if turn is not None:
            turn.begin(await _threads.alatest(self.checkpointer, turn.thread))
        call = self._start(input, config, context, turn)
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[tuple[Any, Any]] = asyncio.Queue()

        def put(item: tuple[Any, Any]) -> None:  # hooks, tools and writers may be on threads
            loop.call_soon_threadsafe(chunks.put_nowait, item)

        _listen(call.run, modes, put)
        call.outer = _subgraphs.top(modes, put) if subgraphs else None

        async def work() -> None:
            try:
                outputs = await self._afinish(await call.invoke_async(), turn, call.run)
                loop.call_soon(chunks.put_nowait, (_DONE, outputs))  # after the chunks queued
            except BaseException as exc:
                loop.call_soon(chunks.put_nowait, (_DONE, exc))

        task = asyncio.ensure_future(work())
        try:
            while True:
                out, done = _emitted(await chunks.get(), modes, single, subgraphs, call.run)
                for chunk in out:
                    yield chunk
                if done:
                    return
        finally:
            if not task.done():
                task.cancel()

    def astream_events(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        version: str = "v2",
        context: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """LangChain's `astream_events` (v2, or the deprecated v1) of a run, with LangGraph's
        run tree: the graph's run, a chain run per node (`model`, `tools`, `<middleware>.<hook>`),
        the model and tool runs inside them. Filters (`include_names`, ...) as in
        `Runnable.astream_events`."""
        from actloop.agents import _events

        async def run(run_config: dict[str, Any], sink: Any) -> dict[str, Any]:
            turn = self._turn(run_config)
            if turn is not None:
                turn.begin(await _threads.alatest(self.checkpointer, turn.thread))
            call = self._start(input, run_config, context, turn)
            call.run.sink = sink
            outputs = await self._afinish(await call.invoke_async(), turn, call.run)
            for chunk in _ending(outputs, ("updates",), True, call.run.paused):
                sink("updates", chunk)
            private = self.spec.private  # LangGraph's graph run ends with every state key
            return {**outputs, **{k: v for k, v in call.run.state.items() if k in private}}

        return _events.astream_events(input, config, run, name=self.name, version=version, **kwargs)

    def get_name(self) -> str:
        return self.name

    def get_graph(self, config: dict[str, Any] | None = None, *, xray: int | bool = False) -> Any:
        """LangGraph's drawable graph of the agent (`draw_mermaid()`, `nodes`, `edges`, ...):
        the nodes and edges LangChain's `create_agent` builds for it (`_diagram`)."""
        from actloop.agents._diagram import graph_of

        return graph_of(self.spec)

    async def aget_graph(
        self, config: dict[str, Any] | None = None, *, xray: int | bool = False
    ) -> Any:
        """Async `get_graph`."""
        return self.get_graph(config, xray=xray)


_DONE: Any = object()
STREAM_MODES = ("values", "updates", "messages", "custom")


def _modes(stream_mode: str | Sequence[str] | None) -> tuple[tuple[str, ...], bool]:
    """The modes asked for, and whether one mode was given as a string (plain chunks)."""
    if stream_mode is None:
        return ("updates",), True
    modes = (stream_mode,) if isinstance(stream_mode, str) else tuple(stream_mode)
    for mode in modes:
        if mode not in STREAM_MODES:
            raise ValueError(f"stream_mode {mode!r} is not supported; use one of {STREAM_MODES}")
    return modes, isinstance(stream_mode, str)


def _listen(run: GraphRun, modes: tuple[str, ...], put: Any) -> None:
    """Send the run's chunks of `modes` to `put`."""
    run.stream_tokens = "messages" in modes
    run.sink = lambda mode, payload: put((mode, payload)) if mode in modes else None


def _ending(outcome: Any, modes: tuple[str, ...], single: bool, static: bool) -> Iterator[Any]:
    """The last chunks: a paused run's interrupts (as LangGraph's updates give them; none for a
    static interrupt), or the run's error raised."""
    if isinstance(outcome, BaseException):
        raise outcome
    interrupts = outcome.get("__interrupt__")
    if (interrupts or static) and "updates" in modes:
        chunk = {"__interrupt__": tuple(interrupts or ())}
        yield chunk if single else ("updates", chunk)


def _emitted(
    item: tuple[Any, Any], modes: tuple[str, ...], single: bool, subgraphs: bool, run: GraphRun
) -> tuple[list[Any], bool]:
    """What a stream yields for one item of its run's queue, and whether the run is over (its
    outcome: the closing chunks, or the error it raises)."""
    mode, payload = item
    if mode is _DONE:
        ending = _ending(payload, modes, True, run.paused)
        return [_subgraphs.chunk("updates", chunk, single, subgraphs) for chunk in ending], True
    return [_subgraphs.chunk(mode, payload, single, subgraphs)], False


def _listed(value: Any) -> list[Any]:
    return cast("list[Any]", value) if isinstance(value, list) else [value]


class _Call:
    """One executor call of a run, sync or async (the outputs only)."""

    def __init__(self, executor: Any, inputs: Any, config: dict[str, Any], run: GraphRun) -> None:
        self.executor, self.inputs, self.config, self.run = executor, inputs, config, run
        self.outer: _subgraphs.Outer | None = None
        """Where the runs its tools start stream (a stream with `subgraphs`)."""

    def invoke_sync(self) -> dict[str, Any]:
        with _subgraphs.inside(self.run, self.outer):
            return self.executor.invoke(self.inputs, self.config, return_only_outputs=True)

    async def invoke_async(self) -> dict[str, Any]:
        with _subgraphs.inside(self.run, self.outer):
            return await self.executor.ainvoke(self.inputs, self.config, return_only_outputs=True)
