"""Composition: sequences (`a | b`), parallel maps (dicts), lambdas and passthroughs."""

from __future__ import annotations

import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any, cast

from actloop.callbacks._manager import CallbackManager
from actloop.runnables._base import (
    NOTHING,
    Input,
    Output,
    Runnable,
    add_chunks,
    amerge_chunks,
    coerce_to_runnable,
    merge_chunks,
)
from actloop.runnables._config import RunnableConfig, ensure_config

__all__ = [
    "AddableDict",
    "RunnableAssign",
    "RunnableLambda",
    "RunnableParallel",
    "RunnablePassthrough",
    "RunnableSequence",
]


class AddableDict(dict[str, Any]):
    """A dict whose `+` merges keys, adding the values of keys present in both."""

    def __add__(self, other: Mapping[str, Any]) -> AddableDict:
        out = AddableDict(self.items())  # not `AddableDict(self)`: see `_one`
        for key, value in other.items():
            if key in out and out[key] is not None and value is not None:
                try:
                    out[key] = out[key] + value
                except TypeError:
                    out[key] = value
            else:
                out[key] = value
        return out

    def __radd__(self, other: Mapping[str, Any]) -> AddableDict:
        return AddableDict(other) + self


def _one(key: str, value: Any) -> AddableDict:
    """`AddableDict({key: value})` without the literal: a dict built from another dict clones the
    other's key table with a fresh allocation, which CPython keeps on its dict-keys free list once
    either dict is gone (a copy per chunk fills that list in a few agent steps); filled item by
    item, a dict takes its table from that list."""
    out = AddableDict()
    out[key] = value
    return out


def _tagged(config: RunnableConfig, tag: str) -> RunnableConfig:
    """Config for a child whose run gets `tag` (e.g. `seq:step:2`) when handlers listen."""
    callbacks = config.get("callbacks")
    if isinstance(callbacks, CallbackManager):
        return {**config, "callbacks": callbacks.tagged(tag)}
    return config


class RunnableSequence(Runnable[Any, Any]):
    """Steps run one after another, each getting the previous output; streams through all steps."""

    _streams_input = True

    def __init__(self, *steps: Runnable[Any, Any], name: str | None = None) -> None:
        flat: list[Runnable[Any, Any]] = []
        for step in steps:
            flat.extend(step.steps if isinstance(step, RunnableSequence) else [step])
        if len(flat) < 2:
            raise ValueError(f"RunnableSequence needs at least 2 steps, got {len(flat)}")
        self.steps = flat
        self.name = name

    @property
    def first(self) -> Runnable[Any, Any]:
        """The first step."""
        return self.steps[0]

    @property
    def last(self) -> Runnable[Any, Any]:
        """The last step."""
        return self.steps[-1]

    @property
    def InputType(self) -> Any:
        return self.steps[0].InputType

    @property
    def OutputType(self) -> Any:
        return self.steps[-1].OutputType

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        for i, step in enumerate(self.steps, 1):
            input = step.invoke(input, _tagged(config, f"seq:step:{i}"))
        return input

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        for i, step in enumerate(self.steps, 1):
            input = await step.ainvoke(input, _tagged(config, f"seq:step:{i}"))
        return input

    def _stream(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Iterator[Any]:
        return self._transform(iter((input,)), config)

    def _astream(self, input: Any, config: RunnableConfig, **kwargs: Any) -> AsyncIterator[Any]:
        return self._atransform(_aiter_one(input), config)

    def _transform(
        self, chunks: Iterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> Iterator[Any]:
        for i, step in enumerate(self.steps, 1):
            chunks = step.transform(chunks, _tagged(config, f"seq:step:{i}"))
        return chunks

    def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Any]:
        for i, step in enumerate(self.steps, 1):
            chunks = step.atransform(chunks, _tagged(config, f"seq:step:{i}"))
        return chunks

    _fast_guard = (
        "astream",
        "atransform",
        "_atransform",
        "_streams_input",
    )

    _fast_buffers = False  # the first step gets the stream
    _fast_single = False

    def _afast_merged(
        self, input: Any, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> Awaitable[Any]:
        return amerge_chunks(self.astream(input, config, **kwargs), NOTHING)

    def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """`Runnable.astream`; with no callbacks, one async generator for the whole sequence
        (`_aquiet`) instead of one or more per step."""
        config = ensure_config(config)
        if config.get("callbacks") is None and self._fast:
            return self._aquiet(input, config)
        return super().astream(input, config, **kwargs)

    async def _aquiet(self, input: Any, config: RunnableConfig) -> AsyncIterator[Any]:
        """The chunks `astream` yields when nothing listens, from the same calls in the same
        order: a step whose successor merges its input before doing anything with it
        (`_fast_buffers`) has its output merged here (`_afast_merged`, no stream layers); from the
        first step whose successor takes a stream, the steps stream as `_atransform` chains
        them. (`_tagged` leaves a config without callbacks as it is.)"""
        steps = self.steps
        buffers = [step._fast and step._fast_buffers for step in steps]
        value = input
        chunks: AsyncIterator[Any] | None = None
        for i in range(len(steps) - 1):
            if not buffers[i + 1]:
                chunks = _apiped(steps[i:], _aiter_one(value), config)
                break
            step = steps[i]
            if buffers[i]:
                value = await step._afast_merged(value, config, {})
            else:
                value = await amerge_chunks(step.atransform(_aiter_one(value), config), NOTHING)
            if value is NOTHING:  # no chunk: the next steps get an empty stream, as they would
                chunks = _apiped(steps[i + 1 :], _aempty(), config)
                break
        if chunks is None:
            step = steps[-1]
            if not buffers[-1]:
                chunks = step.atransform(_aiter_one(value), config)
            elif step._fast_single:
                yield await step._afast_merged(value, config, {})
                return
            else:
                chunks = step.astream(value, config)
        async for chunk in chunks:
            yield chunk

    def __repr__(self) -> str:
        return " | ".join(repr(s) for s in self.steps)


async def _aiter_one(item: Any) -> AsyncIterator[Any]:
    yield item


async def _aempty() -> AsyncIterator[Any]:
    return
    yield


def _apiped(
    steps: list[Runnable[Any, Any]], chunks: AsyncIterator[Any], config: RunnableConfig
) -> AsyncIterator[Any]:
    """`chunks` through `steps`' `atransform`s, as `RunnableSequence._atransform` chains them."""
    for step in steps:
        chunks = step.atransform(chunks, config)
    return chunks


class _MergedWhenQuiet(Runnable[Any, Any]):
    """A runnable whose chunks, when no callback listens, are added together by its own
    `_amerged` (no stream layers); with callbacks, its stream's chunks are (runs, events)."""

    _fast_single = False

    def _afast_merged(
        self, input: Any, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> Awaitable[Any]:
        if config.get("callbacks") is not None:
            return amerge_chunks(self.astream(input, config, **kwargs), NOTHING)
        return self._amerged(input, ensure_config(config))

    async def _amerged(self, input: Any, config: RunnableConfig) -> Any:
        raise NotImplementedError


class RunnableParallel(_MergedWhenQuiet, Runnable[Any, dict[str, Any]]):
    """Runs each value on the same input and returns a dict of their outputs."""

    _streams_input = True

    def __init__(self, steps: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        self.steps__ = {k: coerce_to_runnable(v) for k, v in {**(steps or {}), **kwargs}.items()}

    def get_name(self) -> str:
        return self.name or f"RunnableParallel<{','.join(self.steps__)}>"

    @property
    def OutputType(self) -> Any:
        return dict[str, Any]

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> dict[str, Any]:
        items = list(self.steps__.items())
        if len(items) == 1:
            key, step = items[0]
            return {key: step.invoke(input, _tagged(config, f"map:key:{key}"))}
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=config.get("max_concurrency") or len(items)) as pool:
            futures = {
                key: pool.submit(step.invoke, input, _tagged(config, f"map:key:{key}"))
                for key, step in items
            }
            return {key: fut.result() for key, fut in futures.items()}

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> dict[str, Any]:
        import asyncio

        keys = list(self.steps__)
        results = await asyncio.gather(
            *(self.steps__[k].ainvoke(input, _tagged(config, f"map:key:{k}")) for k in keys)
        )
        return dict(zip(keys, results, strict=True))

    def _transform(
        self, chunks: Iterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> Iterator[Any]:
        final: Any = merge_chunks(chunks)
        yield from self._stream(final, config)

    async def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Any]:
        final: Any = await amerge_chunks(chunks)
        async for out in self._astream(final, config):
            yield out

    def _stream(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Iterator[Any]:
        for key, step in self.steps__.items():
            for chunk in step.stream(input, _tagged(config, f"map:key:{key}")):
                yield _one(key, chunk)

    async def _astream(
        self, input: Any, config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Any]:
        for key, step in self.steps__.items():
            async for chunk in step.astream(input, _tagged(config, f"map:key:{key}")):
                yield _one(key, chunk)

    _fast_guard = (
        "astream",
        "atransform",
        "_astream",
        "_atransform",
        "_streams_input",
    )

    async def _amerged(self, input: Any, config: RunnableConfig) -> Any:
        """`_astream`'s chunks added together as its consumer adds them, a one-chunk step's
        chunk taken from its `_afast_merged`."""
        out: Any = NOTHING
        for key, step in self.steps__.items():  # `_tagged` leaves this config as is
            if step._fast and step._fast_single:
                piece = _one(key, await step._afast_merged(input, config, {}))
                out = piece if out is NOTHING else add_chunks(out, piece)
                continue
            async for chunk in step.astream(input, config):
                piece = _one(key, chunk)
                out = piece if out is NOTHING else add_chunks(out, piece)
        return out

    def __repr__(self) -> str:
        return f"{{{', '.join(f'{k}: {v!r}' for k, v in self.steps__.items())}}}"


def _wants_config(func: Callable[..., Any] | None) -> bool:
    import inspect

    if func is None:
        return False
    try:
        return "config" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


class RunnableLambda(Runnable[Input, Output]):
    """Wraps a sync or async function; `OutputType` comes from its return annotation."""

    _streams_input = True

    def __init__(
        self,
        func: Callable[..., Any],
        afunc: Callable[..., Awaitable[Any]] | None = None,
        name: str | None = None,
    ) -> None:
        import inspect

        sync: Callable[..., Any] | None = func
        if inspect.iscoroutinefunction(func):
            afunc, sync = func, None
        self.func = sync
        self.afunc = afunc
        target = sync or afunc
        self.name = name or getattr(target, "__name__", None)
        if self.name == "<lambda>":
            self.name = None
        self._config_arg = _wants_config(target)

    @property
    def InputType(self) -> Any:
        import inspect

        target = self.func or self.afunc
        if target is None:
            return Any
        try:
            first = next(iter(inspect.signature(target).parameters), None)
            return typing.get_type_hints(target).get(first, Any) if first else Any
        except Exception:
            return Any

    @property
    def OutputType(self) -> Any:
        target = self.func or self.afunc
        try:
            return typing.get_type_hints(target).get("return", Any)
        except Exception:
            return Any

    def get_name(self) -> str:
        return self.name or "RunnableLambda"

    def _transform(
        self, chunks: Iterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> Iterator[Any]:
        final: Any = merge_chunks(chunks)
        yield self._invoke(final, config)

    async def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Any]:
        final: Any = await amerge_chunks(chunks)
        yield await self._ainvoke(final, config)

    def _call(self, func: Callable[..., Any], input: Any, config: RunnableConfig) -> Any:
        return func(input, config=config) if self._config_arg else func(input)

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        if self.func is None:
            raise TypeError(
                f"RunnableLambda {self.get_name()!r} wraps an async function; use ainvoke/astream"
            )
        out = self._call(self.func, input, config)
        if isinstance(out, Runnable):
            return cast("Runnable[Any, Any]", out).invoke(input, config)
        return out

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        if self.afunc:
            out = await self._call(self.afunc, input, config)
        else:  # the constructor sets `func` whenever `afunc` is unset
            out = self._call(cast("Callable[..., Any]", self.func), input, config)
        if isinstance(out, Runnable):
            return await cast("Runnable[Any, Any]", out).ainvoke(input, config)
        return out

    _fast_guard = (
        "astream",
        "atransform",
        "_atransform",
        "_streams_input",
    )

    def _afast_merged(
        self, input: Any, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> Awaitable[Any]:
        if config.get("callbacks") is not None:
            return amerge_chunks(self.astream(input, config, **kwargs), NOTHING)
        return self._ainvoke(input, ensure_config(config))  # what `_atransform` yields

    def __repr__(self) -> str:
        return f"RunnableLambda({self.get_name()})"


class RunnablePassthrough(Runnable[Any, Any]):
    """Returns its input unchanged (optionally calling `func` on it); `.assign` adds keys."""

    _streams_input = True

    def __init__(self, func: Callable[[Any], Any] | None = None) -> None:
        self.func = func

    @classmethod
    def assign(cls, **kwargs: Any) -> RunnableAssign:
        """A runnable returning the input dict with these keys added (computed from the input)."""
        return RunnableAssign(RunnableParallel(kwargs))

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        if self.func is not None:
            self.func(input)
        return input

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        return self._invoke(input, config)

    def _transform(
        self, chunks: Iterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> Iterator[Any]:
        final: Any = None
        for chunk in chunks:
            final = add_chunks(final, chunk)
            yield chunk
        if self.func is not None:
            self.func(final)

    async def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Any]:
        final: Any = None
        async for chunk in chunks:
            final = add_chunks(final, chunk)
            yield chunk
        if self.func is not None:
            self.func(final)


class RunnableAssign(_MergedWhenQuiet, Runnable[dict[str, Any], dict[str, Any]]):
    """Returns the input dict plus the outputs of a RunnableParallel run on it."""

    _streams_input = True

    def __init__(self, mapper: RunnableParallel) -> None:
        self.mapper = mapper

    def get_name(self) -> str:
        return self.name or f"RunnableAssign<{','.join(self.mapper.steps__)}>"

    @property
    def OutputType(self) -> Any:
        return dict[str, Any]

    def _invoke(
        self, input: dict[str, Any], config: RunnableConfig, **kwargs: Any
    ) -> dict[str, Any]:
        _require_dict(input)
        return {**input, **self.mapper.invoke(input, config)}

    async def _ainvoke(
        self, input: dict[str, Any], config: RunnableConfig, **kwargs: Any
    ) -> dict[str, Any]:
        _require_dict(input)
        return {**input, **await self.mapper.ainvoke(input, config)}

    def _passthrough(self, input: Any) -> AddableDict:
        _require_dict(input)
        computed = self.mapper.steps__
        return AddableDict((k, v) for k, v in input.items() if k not in computed)  # see `_one`

    def _transform(
        self, chunks: Iterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> Iterator[Any]:
        # Like LangChain: the input's own keys stream first, then the computed ones.
        final: Any = merge_chunks(chunks)
        if passthrough := self._passthrough(final):
            yield passthrough
        yield from self.mapper.transform(iter((final,)), config)

    async def _atransform(
        self, chunks: AsyncIterator[Any], config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[Any]:
        final: Any = await amerge_chunks(chunks)
        if passthrough := self._passthrough(final):
            yield passthrough
        mapped = self.mapper.atransform(_aiter_one(final), config)
        async for chunk in mapped:
            yield chunk

    _fast_guard = (
        "astream",
        "atransform",
        "_atransform",
        "_streams_input",
    )

    async def _amerged(self, input: Any, config: RunnableConfig) -> Any:
        """`_atransform`'s chunks added together: the passthrough keys, then the map's chunks
        (merged apart first when the map is a fast one: its keys are not the passthrough's, so
        the sum is the same)."""
        mapper = self.mapper
        passthrough = self._passthrough(input)
        out: Any = passthrough if passthrough else NOTHING
        if not (mapper._fast and mapper._fast_buffers):
            async for chunk in mapper.atransform(_aiter_one(input), config):
                out = chunk if out is NOTHING else add_chunks(out, chunk)
            return out
        mapped = await mapper._afast_merged(input, config, {})
        if mapped is NOTHING:
            return out
        return mapped if out is NOTHING else add_chunks(out, mapped)


def _require_dict(input: Any) -> None:
    if not isinstance(input, dict):
        raise TypeError(
            f"RunnablePassthrough.assign expects a dict input, got {type(input).__name__}"
        )
