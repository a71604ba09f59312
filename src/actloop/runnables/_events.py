"""`astream_events(version="v2")`: callbacks of a run turned into LangChain-shaped event dicts.

Each event is `{"event", "data", "name", "tags", "run_id", "metadata", "parent_ids"}`; the names are
`on_chain_start/stream/end`, `on_tool_start/end`, `on_chat_model_start/stream/end`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from actloop.callbacks import BaseCallbackHandler
from actloop.callbacks._manager import CallbackManager
from actloop.runnables._config import RunnableConfig, ensure_config

if TYPE_CHECKING:
    from actloop.runnables._base import Runnable

__all__ = ["astream_events"]

_DONE = object()


class _Run:
    __slots__ = ("ended", "input", "kind", "metadata", "name", "parent", "streamed", "tags")

    def __init__(
        self,
        kind: str,
        name: str,
        parent: UUID | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
        input: Any,
    ) -> None:
        self.kind = kind
        self.name = name
        self.parent = parent
        self.tags = list(tags or [])
        self.metadata = dict(metadata or {})
        self.input = input
        self.streamed = False
        self.ended = False


class _EventHandler(BaseCallbackHandler):
    """Collects the callbacks of one run into a queue of event dicts (thread safe)."""

    def __init__(
        self, queue: asyncio.Queue[Any], loop: asyncio.AbstractEventLoop, root_input: Any
    ) -> None:
        self.root_input = root_input
        """The input of the run `astream_events` started: its start event shows it."""
        self.queue = queue
        self.loop = loop
        self.loop_thread = threading.get_ident()
        self.runs: dict[UUID, _Run] = {}

    def put(self, item: Any) -> None:
        """Queue an event for the consumer, from the loop's thread or any other."""
        if threading.get_ident() == self.loop_thread:
            self.queue.put_nowait(item)
        else:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)

    def _parent_ids(self, parent: UUID | None) -> list[str]:
        ids: list[str] = []
        while parent is not None:
            ids.append(str(parent))
            run = self.runs.get(parent)
            parent = run.parent if run else None
        return ids[::-1]

    def _emit(self, phase: str, run_id: UUID, data: dict[str, Any]) -> None:
        run = self.runs.get(run_id)
        if run is None:
            return
        self.put(
            {
                "event": f"on_{run.kind}_{phase}",
                "data": data,
                "name": run.name,
                "tags": run.tags,
                "run_id": str(run_id),
                "metadata": run.metadata,
                "parent_ids": self._parent_ids(run.parent),
            }
        )

    def _open(self, kind: str, name: str, run_id: UUID, kw: dict[str, Any], input: Any) -> None:
        self.runs[run_id] = _Run(
            kind, name, kw.get("parent_run_id"), kw.get("tags"), kw.get("metadata"), input
        )

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kw: Any) -> None:
        streamed = inputs == {"input": ""}
        if streamed and kw.get("parent_run_id") is None:
            inputs, streamed = self.root_input, False
        info: Mapping[str, Any] = serialized or {}
        name = kw.get("name") or info.get("name") or "chain"
        kind = kw.get("run_type") or "chain"
        self._open(kind, name, run_id, kw, None if streamed else inputs)
        self._emit("start", run_id, {} if streamed else {"input": inputs})

    def _on_stream(self, chunk: Any, *, run_id: UUID, **kw: Any) -> None:
        run = self.runs.get(run_id)
        if run is None or (run.ended and not run.streamed):
            return  # LangChain streams a run only if a chunk came before its end
        run.streamed = True
        self._emit("stream", run_id, {"chunk": chunk})

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        run = self.runs.get(run_id)
        if run is not None and run.input is None and "inputs" in kw:
            run.input = kw["inputs"]
        self._close(run_id, outputs)

    def _close(self, run_id: UUID, output: Any) -> None:
        run = self.runs.get(run_id)
        data: dict[str, Any] = {"output": output}
        if run is not None:
            run.ended = True
            if run.input is not None and run.parent is not None:
                data["input"] = run.input
        self._emit("end", run_id, data)

    def on_tool_start(
        self, serialized: dict[str, Any], input_str: str, *, run_id: UUID, **kw: Any
    ) -> None:
        inputs = kw.get("inputs")
        payload = inputs if inputs is not None else input_str
        self._open("tool", serialized.get("name", "tool"), run_id, kw, payload)
        self._emit("start", run_id, {"input": payload})

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        self._close(run_id, output)

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID, **kw: Any
    ) -> None:
        payload = {"messages": messages} if kw.get("parent_run_id") else self.root_input
        self._open(
            "chat_model",
            kw.get("name") or serialized.get("name", "chat_model"),
            run_id,
            kw,
            payload,
        )
        self._emit("start", run_id, {"input": payload})

    def on_llm_new_token(self, token: str, *, chunk: Any = None, run_id: UUID, **kw: Any) -> None:
        if chunk is not None:
            self._emit("stream", run_id, {"chunk": getattr(chunk, "message", chunk)})

    def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
        message = response.generations[0][0].message if response.generations else None
        self._close(run_id, message)


def _with_handler(config: RunnableConfig, handler: BaseCallbackHandler) -> RunnableConfig:
    callbacks = config.get("callbacks")
    if isinstance(callbacks, CallbackManager):
        return {**config, "callbacks": callbacks.merged_with([handler])}
    return {**config, "callbacks": [*(callbacks or ()), handler]}


def _keep(
    event: dict[str, Any],
    names: Sequence[str] | None,
    types: Sequence[str] | None,
    tags: Sequence[str] | None,
) -> bool:
    if names is None and types is None and tags is None:
        return True
    kind = event["event"].split("_", 1)[1].rsplit("_", 1)[0]
    return bool(
        (names and event["name"] in names)
        or (types and kind in types)
        or (tags and set(tags) & set(event["tags"]))
    )


async def astream_events(
    runnable: Runnable[Any, Any],
    input: Any,
    config: RunnableConfig | None = None,
    *,
    version: str = "v2",
    include_names: Sequence[str] | None = None,
    include_types: Sequence[str] | None = None,
    include_tags: Sequence[str] | None = None,
    **kwargs: Any,
) -> AsyncIterator[dict[str, Any]]:
    """Run `runnable.astream(input)` and yield the events of the run as they happen."""
    if version != "v2":
        raise ValueError(f"Only version='v2' of astream_events is supported, got {version!r}")
    queue: asyncio.Queue[Any] = asyncio.Queue()
    handler = _EventHandler(queue, asyncio.get_running_loop(), input)
    run_config = _with_handler(ensure_config(config), handler)

    async def consume() -> None:
        try:
            async for _ in runnable.astream(input, run_config, **kwargs):
                pass
        finally:
            handler.put(_DONE)

    task = asyncio.create_task(consume())
    try:
        while (event := await queue.get()) is not _DONE:
            if _keep(event, include_names, include_types, include_tags):
                yield event
        await task
    finally:
        if not task.done():
            task.cancel()
