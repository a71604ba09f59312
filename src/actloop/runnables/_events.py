"""`astream_events`: callbacks of a run turned into LangChain-shaped event dicts.

Each event is `{"event", "data", "name", "tags", "run_id", "metadata", "parent_ids"}`; the names are
`on_chain_start/stream/end`, `on_tool_start/end`, `on_chat_model_start/stream/end` (and
`on_prompt_*`, `on_parser_*` as the run types say). `version="v2"` is `EventHandler`;
`version="v1"` (langchain-core's first, log-based shape, deprecated there) is `V1EventHandler`,
which keeps every difference from v2 in one place.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

from actloop.callbacks import BaseCallbackHandler
from actloop.callbacks._manager import CallbackManager
from actloop.runnables._config import RunnableConfig, ensure_config

if TYPE_CHECKING:
    from actloop.runnables._base import Runnable

__all__ = [
    "DONE",
    "EventFilter",
    "EventHandler",
    "V1EventHandler",
    "astream_events",
    "with_handler",
]

DONE = object()
_V1_DEPRECATED = "astream_events version='v1' is deprecated. Use version='v2' or astream instead."


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


def _event(
    event: str,
    data: dict[str, Any],
    name: str,
    tags: list[str],
    run_id: str,
    metadata: dict[str, Any],
    parent_ids: list[str],
) -> dict[str, Any]:
    """One event dict, in LangChain's `StandardStreamEvent` shape."""
    return {
        "event": event,
        "data": data,
        "name": name,
        "tags": tags,
        "run_id": run_id,
        "metadata": metadata,
        "parent_ids": parent_ids,
    }


class EventHandler(BaseCallbackHandler):
    """Collects the callbacks of one run into a queue of v2 event dicts (thread safe)."""

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

    def root_chunk(self, chunk: Any) -> None:
        """A chunk the root run's `astream` yielded (v2 streams the root from its callbacks)."""

    def finish(self) -> None:
        """The root run's stream ended without an error (v2 has its end event already)."""

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
            _event(
                f"on_{run.kind}_{phase}",
                data,
                run.name,
                run.tags,
                str(run_id),
                run.metadata,
                self._parent_ids(run.parent),
            )
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
        payload = self._tool_input(input_str, kw.get("inputs"))
        self._open("tool", serialized.get("name", "tool"), run_id, kw, payload)
        self._emit("start", run_id, {} if payload is None else {"input": payload})

    def _tool_input(self, input_str: str, inputs: dict[str, Any] | None) -> Any:
        """A tool run's input: v2 shows the text when the tool was not given a dict."""
        return inputs if inputs is not None else input_str

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

    def on_llm_start(
        self, serialized: dict[str, Any], prompts: list[str], *, run_id: UUID, **kw: Any
    ) -> None:
        payload = {"prompts": prompts} if kw.get("parent_run_id") else self.root_input
        name = kw.get("name") or serialized.get("name", "llm")
        self._open("llm", name, run_id, kw, payload)
        self._emit("start", run_id, {"input": payload})

    def on_llm_new_token(self, token: str, *, chunk: Any = None, run_id: UUID, **kw: Any) -> None:
        run = self.runs.get(run_id)
        if run is not None and (chunk is not None or run.kind == "llm"):
            self._emit("stream", run_id, {"chunk": self._token(run.kind, token, chunk)})

    def _token(self, kind: str, token: str, chunk: Any) -> Any:
        """A streamed piece: v2 gives a chat model's message chunk, a text model's
        `GenerationChunk`."""
        if kind != "llm":
            return getattr(chunk, "message", chunk)
        if chunk is None:
            from actloop.outputs import GenerationChunk

            return GenerationChunk(token)
        return chunk

    def on_llm_end(self, response: Any, *, run_id: UUID, **kw: Any) -> None:
        run = self.runs.get(run_id)
        if run is not None:
            self._close(run_id, self._model_output(run.kind, response))

    def _model_output(self, kind: str, response: Any) -> Any:
        """A model run's end output: v2 gives a chat model's reply message, a text model's
        generations."""
        if kind == "llm":
            return {
                "generations": [
                    [
                        {"text": g.text, "generation_info": g.generation_info, "type": _type(g)}
                        for g in batch
                    ]
                    for batch in response.generations
                ],
                "llm_output": response.llm_output,
            }
        return response.generations[0][0].message if response.generations else None


def _type(generation: Any) -> str:
    """A generation's langchain-core `type`: `Generation` for text (chunks too), else the class
    name (`ChatGeneration`, `ChatGenerationChunk`)."""
    return type(generation).__name__ if hasattr(generation, "message") else "Generation"


def llm_result_dump(response: Any) -> dict[str, Any]:
    """An `LLMResult` as langchain-core's tracers store it (`model_dump`, messages kept as
    objects): what v1 events and `astream_log` give as a model run's final output."""
    generations = [
        [
            {
                "text": generation.text,
                "generation_info": generation.generation_info,
                "type": _type(generation),
                **({"message": generation.message} if hasattr(generation, "message") else {}),
            }
            for generation in batch
        ]
        for batch in response.generations
    ]
    return {
        "generations": generations,
        "llm_output": response.llm_output,
        "run": None,
        "type": "LLMResult",
    }


def _patched(state: Any, old: Any, new: Any) -> Any:
    """`state` (a copy of `old`) changed in place into a copy of `new` wherever langchain-core's
    JSON patches of `old` to `new` change it in place: dict keys, and lists that grew at their end.
    A list the root's first chunk shares between two keys (an executor's `messages`, which is its
    first action's `message_log`) thus grows under both keys, as in LangChain's v1 events."""
    if _all(dict, state, old, new):
        target = cast("dict[Any, Any]", state)
        before = cast("dict[Any, Any]", old)
        for key, value in cast("dict[Any, Any]", new).items():
            if key not in before:
                target[key] = copy.deepcopy(value)
            elif before[key] is not value:
                target[key] = _patched(target.get(key), before[key], value)
        return target
    if _all(list, state, old, new):
        items, before, after = (cast("list[Any]", x) for x in (state, old, new))
        if len(after) >= len(before) and after[: len(before)] == before:
            items.extend(copy.deepcopy(after[len(before) :]))
            return items
    return state if new == old else copy.deepcopy(new)  # a JSON patch `replace`


def _all(kind: type, *values: Any) -> bool:
    """Whether every value is a `kind` (dict or list; AddableDict is a dict)."""
    return all(isinstance(value, kind) for value in values)


class V1EventHandler(EventHandler):
    """v1's shapes, as langchain-core builds them from its run log: no `parent_ids`; the root's
    events under the call's name, tags and metadata, its stream and end made of what `astream`
    yields (the end's output is their sum, the end comes after the stream closes, without
    `input`); a tool's input only when it was given a dict; a model run's end output the dumped
    `LLMResult`; a child run that fails ends too (output None, or the model's partial result)."""

    def __init__(
        self,
        queue: asyncio.Queue[Any],
        loop: asyncio.AbstractEventLoop,
        root_input: Any,
        root: tuple[str, list[str], dict[str, Any]],
    ) -> None:
        super().__init__(queue, loop, root_input)
        self.root_name, self.root_tags, self.root_metadata = root
        self.root_id: UUID | None = None
        self.root_kind = "chain"
        self.total: Any = None
        """The sum of the root's chunks so far."""
        self.final: Any = None
        """What langchain-core's run log holds as the root's output: the sum, patched in place."""

    def _parent_ids(self, parent: UUID | None) -> list[str]:
        return []

    def _emit(self, phase: str, run_id: UUID, data: dict[str, Any]) -> None:
        run = self.runs.get(run_id)
        if run is None or run.parent is not None or self.root_id not in (None, run_id):
            super()._emit(phase, run_id, data)
        elif phase == "start":  # the root's stream and end come from its output
            self.root_id, self.root_kind = run_id, run.kind
            self._root_event("start", {"input": self.root_input})

    def _root_event(self, phase: str, data: dict[str, Any]) -> None:
        run_id = "" if self.root_id is None else str(self.root_id)
        self.put(
            _event(
                f"on_{self.root_kind}_{phase}",
                data,
                self.root_name,
                self.root_tags,
                run_id,
                self.root_metadata,
                [],
            )
        )

    def root_chunk(self, chunk: Any) -> None:
        previous = self.total
        if previous is None:
            self.total = chunk
        else:
            try:
                self.total = previous + chunk
            except TypeError:
                previous, self.total = None, chunk
        if previous is None:
            self.final = copy.deepcopy(self.total)
        else:
            self.final = _patched(self.final, previous, self.total)
        self._root_event("stream", {"chunk": chunk})

    def finish(self) -> None:
        self._root_event("end", {"output": self.final})

    def _tool_input(self, input_str: str, inputs: dict[str, Any] | None) -> Any:
        return inputs  # a tool given a string shows no input in v1

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self.on_chain_end(None, run_id=run_id, **kw)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self._close(run_id, None)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        response = kw.get("response")
        self._close(run_id, None if response is None else llm_result_dump(response))

    def _token(self, kind: str, token: str, chunk: Any) -> Any:
        return token if kind == "llm" else super()._token(kind, token, chunk)

    def _model_output(self, kind: str, response: Any) -> Any:
        return llm_result_dump(response)


def with_handler(config: RunnableConfig, handler: BaseCallbackHandler) -> RunnableConfig:
    callbacks = config.get("callbacks")
    if isinstance(callbacks, CallbackManager):
        return {**config, "callbacks": callbacks.merged_with([handler])}
    return {**config, "callbacks": [*(callbacks or ()), handler]}


class EventFilter:
    """LangChain's include/exclude rule on names, run types and tags (the same in v1 and v2)."""

    __slots__ = ("exclude", "include", "selects")

    def __init__(self, include: tuple[Any, Any, Any], exclude: tuple[Any, Any, Any]) -> None:
        self.include = include
        self.exclude = exclude
        self.selects = any(x is not None for x in (*include, *exclude))

    def keep(self, event: dict[str, Any]) -> bool:
        """Whether the event's run passes the filters."""
        kind = event["event"][3:].rsplit("_", 1)[0]
        names, types, tags = self.include
        keep = names is None and types is None and tags is None
        keep = keep or bool(
            (names is not None and event["name"] in names)
            or (types is not None and kind in types)
            or (tags is not None and any(tag in tags for tag in event["tags"]))
        )
        names, types, tags = self.exclude
        return keep and not (
            (names is not None and event["name"] in names)
            or (types is not None and kind in types)
            or (tags is not None and any(tag in tags for tag in event["tags"]))
        )


def _handler(
    version: str,
    runnable: Runnable[Any, Any],
    input: Any,
    config: RunnableConfig,
    queue: asyncio.Queue[Any],
) -> EventHandler:
    """The handler that shapes the events of `version`."""
    loop = asyncio.get_running_loop()
    if version == "v2":
        return EventHandler(queue, loop, input)
    if version == "v1":
        from actloop.exceptions import warn_deprecated

        warn_deprecated("astream_events_v1", _V1_DEPRECATED, stacklevel=4, once=False)
        root = (
            config.get("run_name") or runnable.get_name(),
            list(config.get("tags") or []),
            dict(config.get("metadata") or {}),
        )
        return V1EventHandler(queue, loop, input, root)
    raise ValueError(
        f"Only versions 'v1' and 'v2' of astream_events are supported, got {version!r}"
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
    exclude_names: Sequence[str] | None = None,
    exclude_types: Sequence[str] | None = None,
    exclude_tags: Sequence[str] | None = None,
    **kwargs: Any,
) -> AsyncIterator[dict[str, Any]]:
    """Run `runnable.astream(input)` and yield the events of the run as they happen."""
    config = ensure_config(config)
    queue: asyncio.Queue[Any] = asyncio.Queue()
    handler = _handler(version, runnable, input, config, queue)
    run_config = with_handler(config, handler)
    events = EventFilter(
        (include_names, include_types, include_tags), (exclude_names, exclude_types, exclude_tags)
    )

    async def consume() -> None:
        try:
            async for chunk in runnable.astream(input, run_config, **kwargs):
                handler.root_chunk(chunk)
            handler.finish()
        finally:
            handler.put(DONE)

    task = asyncio.create_task(consume())
    try:
        while (event := await queue.get()) is not DONE:
            if not events.selects or events.keep(event):
                yield event
        await task
    finally:
        if not task.done():
            task.cancel()
