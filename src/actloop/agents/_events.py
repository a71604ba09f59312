"""LangGraph's run tree for a `create_agent` run: node runs, their metadata, `astream_events`.

LangGraph traces every node it runs (`model`, `tools`, `<middleware>.<hook>`) as a chain run under
the graph's run, with `graph:step:N` tags and `langgraph_*` metadata; the model and tool runs are
children of their node, tagged `seq:step:1`. `NodeRun` opens such a run on the callbacks the loop
hands the agent (only when a handler listens: `invoke` without callbacks opens nothing), so
`astream_events`, tracers and the `messages` stream mode see LangGraph's tree. `astream_events`
here is `Runnable.astream_events`'s v2 (`runnables/_events`) with the graph's root run as
LangGraph reports it: its raw input, a stream event per node update, its public final state.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from actloop.runnables._events import DONE, EventFilter, EventHandler, V1EventHandler, with_handler

if TYPE_CHECKING:
    from actloop.callbacks._manager import CallbackManager, RunManager

__all__ = [
    "NodeRun",
    "agent_metadata",
    "astream_events",
    "in_node",
    "left_node",
    "node_callbacks",
    "node_metadata",
]

INTEGRATION = "langchain_create_agent"
"""The `ls_integration` metadata LangChain gives a `create_agent` graph's runs."""


def agent_metadata(config: dict[str, Any], name: str | None) -> dict[str, Any]:
    """The graph run's metadata as LangChain 1.5 gives it: `ls_integration`, the agent's name,
    the call's metadata, and (as langchain-core's `ensure_config` copies them) the plain values
    of `configurable` such as `thread_id`."""
    metadata: dict[str, Any] = {"ls_integration": INTEGRATION}
    if name:
        metadata["lc_agent_name"] = name
    metadata.update(config.get("metadata") or {})
    configurable: dict[str, Any] = config.get("configurable") or {}
    for key, value in configurable.items():
        plain = isinstance(value, (str, int, float, bool))
        if plain and not key.startswith("__") and key not in metadata and key != "api_key":
            metadata[key] = value
    return metadata


def node_metadata(node: str, step: int, push: int | None = None) -> dict[str, Any]:
    """LangGraph's `langgraph_*` metadata of a node's task: a pulled node (its edge triggered
    it), or a pushed one (`Send`, the tools node: one task per tool call, `push` its index)."""
    if push is None:
        triggers: tuple[Any, ...] = (f"branch:to:{node}",)
        path: tuple[Any, ...] = ("__pregel_pull", node)
    else:
        triggers, path = ("__pregel_push",), ("__pregel_push", push, False)
    return {
        "langgraph_step": step,
        "langgraph_node": node,
        "langgraph_triggers": triggers,
        "langgraph_path": path,
    }


_NODE: ContextVar[NodeRun | None] = ContextVar("actloop_graph_node", default=None)
"""The node run a hook or model call runs in now (its internal model calls are children)."""


def in_node(node: NodeRun | None) -> Token[NodeRun | None] | None:
    """Mark `node` as the one running now (nothing when no handler listens)."""
    return None if node is None else _NODE.set(node)


def left_node(token: Token[NodeRun | None] | None) -> None:
    """Undo `in_node`."""
    if token is not None:
        _NODE.reset(token)


def node_callbacks() -> CallbackManager | None:
    """The callbacks of a call made inside the running node (as LangGraph's nodes pass their
    config to the runnables they call through a context variable), or None."""
    node = _NODE.get()
    return None if node is None else node.child


class NodeRun:
    """One node's chain run: opened on the loop's callbacks, it gives the runs inside it their
    parent (`child`), and ends with the node's output streamed, as LangGraph's nodes do."""

    __slots__ = ("child", "metadata", "run")

    def __init__(
        self,
        callbacks: CallbackManager,
        node: str,
        step: int,
        input: Any,
        push: int | None = None,
    ) -> None:
        from uuid import uuid4

        from actloop.callbacks._manager import CallbackManager

        namespace = f"{node}:{uuid4()}"
        own = {**node_metadata(node, step, push), "langgraph_checkpoint_ns": namespace}
        self.run: RunManager = callbacks.start(
            "on_chain_start",
            None,
            input,
            own_tags=[f"graph:step:{step}"],
            metadata=own,
            name=node,
        )
        self.metadata: dict[str, Any] = self.run.metadata
        self.child = CallbackManager(
            self.run.inheritable_handlers,
            self.run.inheritable_handlers,
            self.run.run_id,
            tags=self.run.inheritable_tags,
            metadata={**self.run.metadata, "checkpoint_ns": namespace},
            local_tags=["seq:step:1"],
        )

    @classmethod
    def open(
        cls,
        callbacks: CallbackManager | None,
        node: str,
        step: int,
        input: Any,
        push: int | None = None,
    ) -> NodeRun | None:
        """The node's run, or None when no handler listens."""
        if callbacks is None:
            return None
        return cls(callbacks, node, step, input, push)

    def end(self, output: Any) -> None:
        """The node's output streamed, then its end."""
        self.run.fire("_on_stream", output)
        self.run.fire("on_chain_end", output)

    def error(self, exc: BaseException) -> None:
        """The node failed."""
        self.run.fire("on_chain_error", exc)


class _GraphEventHandler(EventHandler):
    """v2 events with the graph's root run as LangGraph reports it: its start shows the input
    as given, a stream event per node update, and the end comes from `finish_graph`."""

    def __init__(
        self, queue: asyncio.Queue[Any], loop: asyncio.AbstractEventLoop, root_input: Any
    ) -> None:
        super().__init__(queue, loop, root_input)
        self.root: UUID | None = None

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kw: Any) -> None:
        if kw.get("parent_run_id") is None and self.root is None:
            self.root = run_id
            inputs = self.root_input
        super().on_chain_start(serialized, inputs, run_id=run_id, **kw)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        if run_id != self.root:  # the root ends with the public state (`finish_graph`)
            super().on_chain_end(outputs, run_id=run_id, **kw)

    def update(self, chunk: Any) -> None:
        """A node's update (`{node: update}`): the root's stream event."""
        if self.root is not None:
            self._on_stream(chunk, run_id=self.root)

    def finish_graph(self, output: Any) -> None:
        """The run's end with its final state."""
        if self.root is not None:
            self._close(self.root, output)


class _GraphV1EventHandler(V1EventHandler):
    """v1 events (langchain-core's log-based shape): the root's stream is the graph's node
    updates, its end their sum (the last one: they do not add up)."""

    def update(self, chunk: Any) -> None:
        self.root_chunk(chunk)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        # langchain-core's run log keeps a copy of the output as it was at the end (the state
        # gives the tool's message its id after that)
        super().on_tool_end(copy.copy(output), run_id=run_id, **kw)

    def finish_graph(self, output: Any) -> None:
        self.finish()


def _handler(
    version: str, queue: asyncio.Queue[Any], input: Any, root: tuple[str, list[str], dict[str, Any]]
) -> _GraphEventHandler | _GraphV1EventHandler:
    """The handler that shapes the events of `version`."""
    loop = asyncio.get_running_loop()
    if version == "v2":
        return _GraphEventHandler(queue, loop, input)
    if version == "v1":
        from actloop.exceptions import warn_deprecated

        message = "astream_events version='v1' is deprecated. Use version='v2' or astream instead."
        warn_deprecated("astream_events_v1", message, stacklevel=5, once=False)
        return _GraphV1EventHandler(queue, loop, input, root)
    raise NotImplementedError(
        f"astream_events version={version!r} of a create_agent agent is not supported; "
        "use version='v2' (or the deprecated 'v1')"
    )


async def astream_events(
    input: Any,
    config: dict[str, Any] | None,
    run: Callable[[dict[str, Any], Callable[[str, Any], None]], Any],
    *,
    name: str = "LangGraph",
    version: str = "v2",
    include_names: Sequence[str] | None = None,
    include_types: Sequence[str] | None = None,
    include_tags: Sequence[str] | None = None,
    exclude_names: Sequence[str] | None = None,
    exclude_types: Sequence[str] | None = None,
    exclude_tags: Sequence[str] | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """The events of `run(config, sink)` (an awaitable of the final state; `sink(mode, chunk)`
    gets the run's stream chunks), with the graph's run (`name`) as the root."""
    config = config or {}
    queue: asyncio.Queue[Any] = asyncio.Queue()
    root = (
        config.get("run_name") or name,
        list(config.get("tags") or []),
        dict(config.get("metadata") or {}),
    )
    handler = _handler(version, queue, input, root)
    run_config: dict[str, Any] = dict(with_handler(cast("Any", config or {}), handler))
    events = EventFilter(
        (include_names, include_types, include_tags), (exclude_names, exclude_types, exclude_tags)
    )

    def sink(mode: str, chunk: Any) -> None:
        if mode == "updates":
            handler.update(chunk)

    async def consume() -> None:
        try:
            handler.finish_graph(await run(run_config, sink))
        finally:
            handler.put(DONE)

    task = asyncio.create_task(consume())
    first: str | None = None
    try:
        while (event := await queue.get()) is not DONE:
            if events.selects and not events.keep(event):
                continue
            if version == "v1":
                pass
            elif first is None:  # langchain-core's v2: the first event shows the input ...
                first = event["run_id"]
                event["data"]["input"] = input
            elif event["run_id"] == first and event["event"].endswith("_end"):
                event["data"].pop("input", None)  # ... and its run's end does not
            yield event
        await task
    finally:
        if not task.done():
            task.cancel()
