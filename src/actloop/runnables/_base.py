"""The Runnable base: invoke/stream/batch and async twins, with callbacks kept off the hot path.

Subclasses implement `_invoke`/`_ainvoke` and, when they can stream, `_stream`/`_astream`; a
subclass that consumes its input as a stream implements `_transform`/`_atransform`. The public
methods add the run's callbacks only when a handler is attached (`configure` returns None
otherwise).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar, Generic, TypeVar, cast

from actloop.callbacks._context import context_handlers
from actloop.callbacks._manager import RunManager, configure
from actloop.runnables._config import RunnableConfig, child_config, ensure_config, merge_configs

__all__ = [
    "NOTHING",
    "Runnable",
    "RunnableBinding",
    "add",
    "add_chunks",
    "coerce_to_runnable",
    "open_chain_run",
    "run_in_executor",
    "unpackable",
]

Input = TypeVar("Input")
Output = TypeVar("Output")
Other = TypeVar("Other")


def add_chunks(acc: Any, chunk: Any) -> Any:
    """`acc + chunk` when the chunks can be added, else the newest chunk (LangChain's rule)."""
    if acc is None:
        return chunk
    try:
        return acc + chunk
    except TypeError:
        return chunk


def unpackable(values: Mapping[Any, Any], named: tuple[str, ...]) -> bool:
    """Whether `f(**values)` would bind every item of `values` to `f`'s `**kwargs`: each key a
    string, none of them `named` (`f`'s other parameters). Such a dict may be handed on as it is
    instead: `f(**values)` copies a small dict's key table with a fresh allocation that CPython
    then keeps on its dict-keys free list (a few copies a step fill it: ~10 KiB held)."""
    for key in values:
        if not isinstance(key, str):
            return False
    for name in named:
        if name in values:
            return False
    return True


def add(addables: Iterable[Any]) -> Any:
    """The chunks added together with `+` (None when there are none), as langchain-core's `add`."""
    final: Any = None
    for chunk in addables:
        final = chunk if final is None else final + chunk
    return final


async def run_in_executor(
    executor_or_config: Any, func: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    """`func(*args, **kwargs)` in a worker thread with the caller's context (langchain-core's
    helper for calling sync code from async code); `executor_or_config` may be an Executor."""
    import asyncio
    import contextvars
    import functools
    from concurrent.futures import Executor

    executor = executor_or_config if isinstance(executor_or_config, Executor) else None
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(executor, call)


_LAZY: dict[Any, bool] = {}


def _lazy(body: Any) -> bool:
    """Whether `body` (a class's `_stream`, `_astream`, `_transform` or `_atransform`) is a
    generator function: calling it runs nothing, so without callbacks a stream may be the body's
    own generator instead of `_traced`'s wrapper around it (one generator less per Runnable
    of a chain; a body that returns an iterator it builds keeps the wrapper, which defers that
    work to the first chunk). Cached per function."""
    lazy = _LAZY.get(body)
    if lazy is None:
        import inspect

        lazy = _LAZY[body] = inspect.isgeneratorfunction(body) or inspect.isasyncgenfunction(body)
    return lazy


_STREAMED: Any = object()
"""Payload marker: the input arrives as a stream, unknown when the run starts."""
_END: Any = object()


def _recording(chunks: Iterator[Any], into: list[Any]) -> Iterator[Any]:
    for chunk in chunks:
        into.append(chunk)
        yield chunk


async def _arecording(chunks: AsyncIterator[Any], into: list[Any]) -> AsyncIterator[Any]:
    async for chunk in chunks:
        into.append(chunk)
        yield chunk


async def _aprepend(first: Any, rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    if first is not _END:
        yield first
    async for chunk in rest:
        yield chunk


async def _aiter_one(item: Any) -> AsyncIterator[Any]:
    yield item


def _end_inputs(payload: Any, inputs: list[Any]) -> dict[str, Any]:
    """`on_chain_end`'s (and `on_chain_error`'s) `inputs=` for a streamed-input run: the merged
    input, as LangChain sends."""
    if payload is not _STREAMED:
        return {}
    return {"inputs": merge_chunks(inputs)}


def merge_chunks(chunks: Iterable[Any], empty: Any = None) -> Any:
    """All chunks added together with `add_chunks`; `empty` when there are none."""
    final: Any = _END
    for chunk in chunks:
        final = chunk if final is _END else add_chunks(final, chunk)
    return empty if final is _END else final


async def amerge_chunks(chunks: AsyncIterator[Any], empty: Any = None) -> Any:
    """Async twin of `merge_chunks`."""
    final: Any = _END
    async for chunk in chunks:
        final = chunk if final is _END else add_chunks(final, chunk)
    return empty if final is _END else final


NOTHING: Any = object()
"""What a step's `_afast_merged` gives for a stream of no chunks."""


def open_chain_run(
    runnable: Runnable[Any, Any], run_type: str | None, config: RunnableConfig, payload: Any
) -> RunManager | None:
    """Open a chain run for `runnable` if any handler listens, else None."""
    callbacks = config.get("callbacks")
    if callbacks is None and not context_handlers():
        return None
    cm = configure(callbacks, tags=config.get("tags"), metadata=config.get("metadata"))
    if cm is None:
        return None
    extra: dict[str, Any] = {"run_type": run_type} if run_type else {}
    return cm.start(
        "on_chain_start",
        None,
        payload,
        run_id=config.get("run_id"),
        name=config.get("run_name") or runnable.get_name(),
        **extra,
    )


class Runnable(Generic[Input, Output]):
    """A unit of work with invoke, stream and batch, sync and async, composable with `|`."""

    name: str | None = None
    _run_type: ClassVar[str | None] = None
    """How runs of this class are reported ("prompt", "parser"; None for plain chains)."""
    _streams_input: ClassVar[bool] = False
    """True when `stream` goes through `transform` (input arrives as a stream), as in LangChain."""

    def get_name(self) -> str:
        """The name runs and events are reported under."""
        return self.name or type(self).__name__

    @property
    def InputType(self) -> Any:
        """The type this runnable accepts."""
        return Any

    @property
    def OutputType(self) -> Any:
        """The type this runnable returns."""
        return Any

    # -- what subclasses implement -------------------------------------------------------------

    def _invoke(self, input: Input, config: RunnableConfig, **kwargs: Any) -> Output:
        raise NotImplementedError(f"{type(self).__name__} does not implement invoke")

    async def _ainvoke(self, input: Input, config: RunnableConfig, **kwargs: Any) -> Output:
        raise NotImplementedError(f"{type(self).__name__} does not implement ainvoke")

    def _stream(self, input: Input, config: RunnableConfig, **kwargs: Any) -> Iterator[Output]:
        yield self._invoke(input, config, **kwargs)

    async def _astream(
        self, input: Input, config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Output]:
        yield await self._ainvoke(input, config, **kwargs)

    def _transform(
        self, chunks: Iterator[Input], config: RunnableConfig, **kwargs: Any
    ) -> Iterator[Output]:
        final: Any = merge_chunks(chunks)
        yield from self._stream(final, config, **kwargs)

    async def _atransform(
        self, chunks: AsyncIterator[Input], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Output]:
        final: Any = await amerge_chunks(chunks)
        async for out in self._astream(final, config, **kwargs):
            yield out

    # -- the async fast path of a sequence nothing listens to (`RunnableSequence._aquiet`) -----
    # One async generator costs an event-loop hook and a WeakSet entry, so a step whose output
    # is only merged is run through `_afast_merged` rather than its stream layers. The flags and
    # `_afast_merged` speak of a config without callbacks.

    _fast_guard: ClassVar[tuple[str, ...]] = (
        "astream",
        "atransform",
        "_astream",
        "_atransform",
        "_streams_input",
    )
    """What a subclass must keep for the fast path it inherits to hold (see `__init_subclass__`)."""
    _fast = True
    """Whether the class keeps its fast path's `_fast_guard` (set per class)."""
    _fast_buffers = True
    """`atransform(chunks)` is `astream(<the chunks added>)`, with nothing done before the last
    chunk is in (here: `atransform` is `_abuffered`)."""
    _fast_single = True
    """`astream` yields exactly one chunk (here: `_ainvoke_once`'s)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        owner = next(k for k in cls.__mro__ if "_fast_guard" in k.__dict__)
        guard: tuple[str, ...] = owner.__dict__["_fast_guard"]
        cls._fast = all(getattr(cls, n) is getattr(owner, n) for n in guard)

    def _afast_merged(
        self, input: Input, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> Awaitable[Any]:
        """The chunks of `astream(input, config, **kwargs)` added together (`NOTHING` if none),
        through as few layers as the class allows (only called when `_fast`)."""
        return self.ainvoke(input, config, **kwargs)

    # -- public API ----------------------------------------------------------------------------

    def invoke(self, input: Input, config: RunnableConfig | None = None, **kwargs: Any) -> Output:
        """Run on one input."""
        config = ensure_config(config)
        run = open_chain_run(self, self._run_type, config, input)
        if run is None:
            return self._invoke(input, config, **kwargs)
        run.flush()
        try:
            output = self._invoke(input, child_config(config, run.get_child()), **kwargs)
        except BaseException as exc:
            run.fire("on_chain_error", exc)
            raise
        run.fire("on_chain_end", output)
        return output

    async def ainvoke(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Output:
        """Run on one input (async)."""
        config = ensure_config(config)
        run = open_chain_run(self, self._run_type, config, input)
        if run is None:
            return await self._ainvoke(input, config, **kwargs)
        await run.aflush()
        try:
            output = await self._ainvoke(input, child_config(config, run.get_child()), **kwargs)
        except BaseException as exc:
            await run.afire("on_chain_error", exc)
            raise
        await run.afire("on_chain_end", output)
        return output

    def stream(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Output]:
        """Run on one input, yielding output chunks as they are produced."""
        if self._streams_input:
            return self.transform(iter((input,)), config, **kwargs)
        cls = type(self)
        if cls._stream is _Base._stream:
            # Cannot stream: one invoke, as LangChain does.
            return self._invoke_once(input, config, kwargs)
        config = ensure_config(config)
        if config.get("callbacks") is None and _lazy(cls._stream):
            return self._stream(input, config, **kwargs)  # what `_traced` would do, one layer less
        return self._traced(self._stream, input, config, input, kwargs)

    def astream(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Output]:
        """Run on one input, yielding output chunks as they are produced (async)."""
        if self._streams_input:
            return self.atransform(_aiter_one(input), config, **kwargs)
        cls = type(self)
        if cls._astream is _Base._astream:
            return self._ainvoke_once(input, config, kwargs)
        config = ensure_config(config)
        if config.get("callbacks") is None and _lazy(cls._astream):
            return self._astream(input, config, **kwargs)
        return self._atraced(self._astream, input, config, input, kwargs)

    def transform(
        self, chunks: Iterator[Input], config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Output]:
        """Run on an input that arrives in chunks, yielding output chunks."""
        cls = type(self)
        if cls._transform is _Base._transform:
            return self._buffered(chunks, config, kwargs)  # cannot take a stream: gather it first
        config = ensure_config(config)
        if config.get("callbacks") is None and _lazy(cls._transform):
            return self._transform(chunks, config, **kwargs)
        return self._traced(self._transform, chunks, config, _STREAMED, kwargs)

    def atransform(
        self, chunks: AsyncIterator[Input], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Output]:
        """Run on an input that arrives in chunks, yielding output chunks (async)."""
        cls = type(self)
        if cls._atransform is _Base._atransform:
            return self._abuffered(chunks, config, kwargs)
        config = ensure_config(config)
        if config.get("callbacks") is None and _lazy(cls._atransform):
            return self._atransform(chunks, config, **kwargs)
        return self._atraced(self._atransform, chunks, config, _STREAMED, kwargs)

    def _invoke_once(
        self, input: Input, config: RunnableConfig | None, kwargs: dict[str, Any]
    ) -> Iterator[Output]:
        yield self.invoke(input, config, **kwargs)

    async def _ainvoke_once(
        self, input: Input, config: RunnableConfig | None, kwargs: dict[str, Any]
    ) -> AsyncIterator[Output]:
        yield await self.ainvoke(input, config, **kwargs)

    def _buffered(
        self, chunks: Iterator[Input], config: RunnableConfig | None, kwargs: dict[str, Any]
    ) -> Iterator[Output]:
        final: Any = merge_chunks(chunks, _END)
        if final is not _END:
            yield from self.stream(final, config, **kwargs)

    async def _abuffered(
        self, chunks: AsyncIterator[Input], config: RunnableConfig | None, kwargs: dict[str, Any]
    ) -> AsyncIterator[Output]:
        final: Any = await amerge_chunks(chunks, _END)
        if final is not _END:
            async for out in self.astream(final, config, **kwargs):
                yield out

    def _traced(
        self,
        body: Callable[..., Iterator[Output]],
        arg: Any,
        config: RunnableConfig,
        payload: Any,
        kwargs: dict[str, Any],
    ) -> Iterator[Output]:
        if config.get("callbacks") is None:
            yield from body(arg, config, **kwargs)
            return
        inputs: list[Any] = []
        if payload is _STREAMED:
            # Like LangChain: the run starts once its first input chunk exists.
            arg = _recording(arg, inputs)
            first = next(arg, _END)
            arg = itertools.chain(() if first is _END else (first,), arg)
        run = open_chain_run(
            self, self._run_type, config, {"input": ""} if payload is _STREAMED else payload
        )
        if run is None:
            yield from body(arg, config, **kwargs)
            return
        run.flush()
        final: Any = None
        try:
            for chunk in body(arg, child_config(config, run.get_child()), **kwargs):
                run.fire("_on_stream", chunk)
                final = add_chunks(final, chunk)
                yield chunk
        except BaseException as exc:
            run.fire("on_chain_error", exc, **_end_inputs(payload, inputs))
            raise
        run.fire("on_chain_end", final, **_end_inputs(payload, inputs))

    async def _atraced(
        self,
        body: Callable[..., AsyncIterator[Output]],
        arg: Any,
        config: RunnableConfig,
        payload: Any,
        kwargs: dict[str, Any],
    ) -> AsyncIterator[Output]:
        if config.get("callbacks") is None:
            async for chunk in body(arg, config, **kwargs):
                yield chunk
            return
        inputs: list[Any] = []
        if payload is _STREAMED:
            arg = _arecording(arg, inputs)
            first = await anext(arg, _END)
            arg = _aprepend(first, arg)
        run = open_chain_run(
            self, self._run_type, config, {"input": ""} if payload is _STREAMED else payload
        )
        if run is None:
            async for chunk in body(arg, config, **kwargs):
                yield chunk
            return
        await run.aflush()
        final: Any = None
        try:
            async for chunk in body(arg, child_config(config, run.get_child()), **kwargs):
                await run.afire("_on_stream", chunk)
                final = add_chunks(final, chunk)
                yield chunk
        except BaseException as exc:
            await run.afire("on_chain_error", exc, **_end_inputs(payload, inputs))
            raise
        await run.afire("on_chain_end", final, **_end_inputs(payload, inputs))

    def batch(
        self,
        inputs: list[Input],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Output]:
        """Run on many inputs on daemon workers, at most `max_concurrency` at once, results in
        order.

        Ctrl-C reaches the caller at once and the other runs start no new step or tool."""
        configs = _configs_for(config, len(inputs))
        if not inputs:
            return []

        def one(pair: tuple[Input, RunnableConfig]) -> Any:
            try:
                return self.invoke(pair[0], pair[1], **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return exc
                raise

        if len(inputs) == 1:
            return [one((inputs[0], configs[0]))]
        from actloop.runnables._workers import run_batch

        workers = configs[0].get("max_concurrency") or min(len(inputs), 32)
        return run_batch(one, list(zip(inputs, configs, strict=True)), workers)

    async def abatch(
        self,
        inputs: list[Input],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Output]:
        """Run on many inputs concurrently, at most `max_concurrency` at once; results in order."""
        import asyncio

        configs = _configs_for(config, len(inputs))
        limit = configs[0].get("max_concurrency") if configs else None
        semaphore = asyncio.Semaphore(limit) if limit else None

        async def one(item: Input, cfg: RunnableConfig) -> Any:
            try:
                if semaphore is None:
                    return await self.ainvoke(item, cfg, **kwargs)
                async with semaphore:
                    return await self.ainvoke(item, cfg, **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return exc
                raise

        return list(
            await asyncio.gather(*(one(i, c) for i, c in zip(inputs, configs, strict=True)))
        )

    def astream_events(
        self,
        input: Input,
        config: RunnableConfig | None = None,
        *,
        version: str = "v2",
        **kwargs: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield LangChain-style events (`on_chain_start`, `on_chat_model_stream`, ...) of a run."""
        from actloop.runnables._events import astream_events

        return astream_events(self, input, config, version=version, **kwargs)

    def astream_log(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Yield the run's state changes as JSON-patch `RunLogPatch`es (langchain-core's)."""
        from actloop.runnables._log import astream_log

        return astream_log(self, input, config, **kwargs)

    # -- composition ---------------------------------------------------------------------------

    def __or__(self, other: Any) -> Runnable[Input, Any]:
        from actloop.runnables._compose import RunnableSequence

        return RunnableSequence(self, coerce_to_runnable(other))

    def __ror__(self, other: Any) -> Runnable[Any, Output]:
        from actloop.runnables._compose import RunnableSequence

        return RunnableSequence(coerce_to_runnable(other), self)

    def pipe(self, *others: Any, name: str | None = None) -> Runnable[Input, Any]:
        """`self | others[0] | ...` as one sequence."""
        from actloop.runnables._compose import RunnableSequence

        return RunnableSequence(self, *(coerce_to_runnable(o) for o in others), name=name)

    def bind(self, **kwargs: Any) -> Runnable[Input, Output]:
        """This runnable with keyword arguments fixed for every call (e.g. `stop=[...]`)."""
        return RunnableBinding(self, kwargs=kwargs)

    def with_config(
        self, config: RunnableConfig | None = None, **fields: Any
    ) -> Runnable[Input, Output]:
        """This runnable with a config merged into every call's config."""
        return RunnableBinding(self, config=merge_configs(config, cast(RunnableConfig, fields)))


_Base: type[Runnable[Any, Any]] = Runnable
"""The base class with its parameters given, to check whether a subclass overrides `_stream` etc."""


def _configs_for(
    config: RunnableConfig | list[RunnableConfig] | None, n: int
) -> list[RunnableConfig]:
    if isinstance(config, list):
        if len(config) != n:
            raise ValueError(f"batch got {len(config)} configs for {n} inputs; pass one per input")
        return [ensure_config(c) for c in config]
    return [ensure_config(config)] * n


class RunnableBinding(Runnable[Input, Output]):
    """A runnable with fixed call kwargs and config; made by `bind`, `with_config`, `bind_tools`."""

    def __init__(
        self,
        bound: Runnable[Input, Output],
        *,
        kwargs: Mapping[str, Any] | None = None,
        config: RunnableConfig | None = None,
    ) -> None:
        if isinstance(bound, RunnableBinding):
            kwargs = {**bound.kwargs, **(kwargs or {})}
            config = merge_configs(bound.config, config)
            bound = bound.bound
        self.bound: Runnable[Input, Output] = bound
        self.kwargs: dict[str, Any] = dict(kwargs or {})
        self.config: RunnableConfig = config or {}
        quiet = self.config.get("callbacks") is None and bound._fast
        self._fast_buffers = quiet and bound._fast_buffers
        self._fast_single = quiet and bound._fast_single

    def get_name(self) -> str:
        return self.name or self.bound.get_name()

    def __getattr__(self, name: str) -> Any:
        # Delegate model-specific helpers (e.g. `bind_tools`) to the bound runnable.
        if name.startswith("_") or name in ("bound", "kwargs", "config"):
            raise AttributeError(name)
        attr = getattr(self.bound, name)
        if callable(attr) and name in ("bind_tools", "with_structured_output"):
            method = cast("Callable[..., Runnable[Any, Any]]", attr)

            def rebind(*args: Any, **kwargs: Any) -> RunnableBinding[Any, Any]:
                return RunnableBinding(
                    method(*args, **kwargs), kwargs=self.kwargs, config=self.config
                )

            return rebind
        return attr

    @property
    def InputType(self) -> Any:
        return self.bound.InputType

    @property
    def OutputType(self) -> Any:
        return self.bound.OutputType

    def _merge(self, config: RunnableConfig | None) -> RunnableConfig:
        return merge_configs(self.config, config) if self.config else ensure_config(config)

    def _with(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The bound kwargs with a call's: the bound dict itself when the call brings none (the
        callee's `**` copies it anyway; merging would copy it twice)."""
        return {**self.kwargs, **kwargs} if kwargs else self.kwargs

    def invoke(self, input: Input, config: RunnableConfig | None = None, **kwargs: Any) -> Output:
        return self.bound.invoke(input, self._merge(config), **self._with(kwargs))

    async def ainvoke(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Output:
        return await self.bound.ainvoke(input, self._merge(config), **self._with(kwargs))

    def stream(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Output]:
        return self.bound.stream(input, self._merge(config), **self._with(kwargs))

    def astream(
        self, input: Input, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Output]:
        return self.bound.astream(input, self._merge(config), **self._with(kwargs))

    def transform(
        self, chunks: Iterator[Input], config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Output]:
        return self.bound.transform(chunks, self._merge(config), **self._with(kwargs))

    def atransform(
        self, chunks: AsyncIterator[Input], config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Output]:
        return self.bound.atransform(chunks, self._merge(config), **self._with(kwargs))

    _fast_guard = ("astream", "atransform")

    def _afast_merged(
        self, input: Input, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> Awaitable[Any]:
        merged = self._merge(config)
        if self.bound._fast:
            return self.bound._afast_merged(input, merged, {**self.kwargs, **kwargs})
        return amerge_chunks(self.bound.astream(input, merged, **self._with(kwargs)), NOTHING)

    def __repr__(self) -> str:
        return (
            f"RunnableBinding(bound={self.bound!r}, kwargs={self.kwargs!r}, config={self.config!r})"
        )


def coerce_to_runnable(thing: Any) -> Runnable[Any, Any]:
    """A Runnable from a Runnable, a callable (RunnableLambda) or a dict (RunnableParallel)."""
    if isinstance(thing, Runnable):
        return cast("Runnable[Any, Any]", thing)
    from actloop.runnables._foreign import adopt, is_langchain

    if is_langchain(thing) and isinstance(adopted := adopt(thing), Runnable):
        return cast("Runnable[Any, Any]", adopted)
    from actloop.runnables._compose import RunnableLambda, RunnableParallel

    if callable(thing):
        return RunnableLambda(thing)
    if isinstance(thing, dict):
        return RunnableParallel(cast("dict[str, Any]", thing))
    raise TypeError(f"Expected a Runnable, callable or dict, got {type(thing).__name__}: {thing!r}")
