"""BaseTool: LangChain's tool contract (run/arun, invoke/ainvoke, callbacks, error handling).

With no callback handler attached, `run` does no callback work and builds no schema: it checks
the arguments (only when the tool has a schema) and calls `_run`. Tool functions that declare a
parameter annotated `RunnableConfig` receive the run's config (SPEC B5): the caller's config with
`callbacks` set to this tool run's child manager, `run_name`/`run_id` dropped, and the run's tags
and metadata merged in. Arguments that fail validation become an observation (SPEC B10, wording
in `actloop.tools._validate`).
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias, TypeVar, cast, overload

from actloop.callbacks._manager import CallbackManager, RunManager, configure
from actloop.exceptions import ConfigurationError, ToolException
from actloop.runnables._base import Runnable
from actloop.runnables._config import RunnableConfig
from actloop.runnables._deadlines import Deadline, wait_one, within
from actloop.tools import _schema
from actloop.tools._calls import (
    Injection,
    Outcome,
    format_output,
    injection,
    prep_run_args,
    tool_config,
)
from actloop.tools._input import NeedsInput, current_input
from actloop.tools._validate import InvalidArguments, parse_input

if TYPE_CHECKING:
    import uuid
    from collections.abc import AsyncIterator, Iterator

    from pydantic import BaseModel

    from actloop.callbacks import Callbacks

__all__ = ["ArgsSchema", "BaseTool"]

ArgsSchema: TypeAlias = "type[BaseModel] | dict[str, Any]"
"""A pydantic model class or a JSON-schema dict."""
_SCHEMA_FIELDS = frozenset(
    ("name", "description", "args_schema", "func", "coroutine", "_run", "_arun")
)
_CACHED = ("_sync_injection", "_async_injection", "_tool_call_schema", "_sync_call", "_async_call")


_FIELDS: dict[type, frozenset[str]] = {}
_T = TypeVar("_T")


class cached(Generic[_T]):
    """`functools.cached_property` without its lock (3.11 takes an RLock on every first read,
    a third of the read: a fresh executor's tools read four of these on its first run). The
    value goes in the instance's `__dict__`; computing it twice in a race does no harm here."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached[_T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...
    def __get__(self, instance: object, owner: type | None = None) -> _T | cached[_T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


def _public_fields(cls: type) -> frozenset[str]:
    """Names of the annotated public attributes of `cls` and its bases: the constructor keywords
    (computed once per class)."""
    names = _FIELDS.get(cls)
    if names is None:
        found: set[str] = set()
        for klass in cls.__mro__:
            annotations = vars(klass).get("__annotations__", {})
            found.update(n for n in annotations if not n.startswith("_"))
        names = _FIELDS[cls] = frozenset(found)
    return names


def timed_out(name: str, timeout: float | None) -> str:
    """The observation of a call that outlived its tool's `timeout`."""
    return f"Tool {name!r} timed out after {timeout:g} s."


def _check_timeout(name: str, timeout: Any) -> None:
    """A tool's `timeout` must be a positive, finite number of seconds."""
    ok = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if not ok or not 0 < timeout < float("inf"):
        raise ConfigurationError(
            f"tool {name!r} has timeout={timeout!r}; pass a positive number of seconds, or None "
            "for no limit"
        )


def _inject(
    kwargs: dict[str, Any],
    wants: Injection,
    run: RunManager | None,
    config: RunnableConfig | None,
    tags: list[str] | None,
    metadata: dict[str, Any] | None,
) -> None:
    """Fill in what the tool function wants besides its arguments (config, run manager,
    callbacks)."""
    if wants.config:
        kwargs[wants.config] = tool_config(config, run, tags, metadata)
    if wants.run_manager:
        kwargs["run_manager"] = run
    if wants.callbacks:
        kwargs["callbacks"] = run.get_child() if run is not None else None


async def _afailed(run: RunManager | None, exc: BaseException, tool_call_id: str | None) -> None:
    """An async tool call raised: its handlers hear of it (`on_tool_error`), if it has any."""
    if run is not None:
        await run.afire("on_tool_error", exc, tool_call_id=tool_call_id)


class BaseTool(Runnable[Any, Any]):
    """A tool an agent can call; subclasses implement `_run` and optionally `_arun`."""

    name: str  # pyright: ignore[reportIncompatibleVariableOverride]
    """The unique name the model calls the tool by."""
    description: str = ""
    """Tells the model what the tool does and when to use it."""
    args_schema: ArgsSchema | None = None
    """The arguments' schema: a pydantic model class, a JSON-schema dict, or None."""
    return_direct: bool = False
    """The executor finishes with this tool's output as the answer."""
    verbose: bool = False
    """Print the tool's progress (adds a StdOutCallbackHandler)."""
    callbacks: Callbacks = None
    """Handlers for this tool's runs only."""
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None
    handle_tool_error: bool | str | Callable[[ToolException], Any] | None = False
    """On ToolException: False re-raises; True, a string or a function gives the observation."""
    handle_validation_error: bool | str | Callable[[Exception], str] | None = False
    """On invalid arguments: falsy gives actloop's observation (B10); else as LangChain."""
    response_format: Literal["content", "content_and_artifact"] = "content"
    extras: dict[str, Any] | None = None
    idempotent: bool = True
    """Safe to run twice: a durable run re-runs a call that was in flight at a crash only if so."""
    requires_approval: bool = False
    """A durable run pauses before this tool runs until a person approves (`executor.resume`)."""
    timeout: float | None = None
    """Seconds one call may take (None: no limit of its own). A call still running then is given
    up on, as the run's deadline does (a sync one abandoned on its worker, an async one
    cancelled), and the model gets the observation `Tool 'NAME' timed out after N s.`"""

    def __init__(self, **kwargs: Any) -> None:
        fields = _public_fields(type(self))
        for key, value in kwargs.items():
            if key not in fields:
                raise TypeError(f"{type(self).__name__} got an unexpected keyword argument {key!r}")
            setattr(self, key, value)
        if not isinstance(getattr(self, "name", None), str):
            raise ConfigurationError(
                f"{type(self).__name__} needs a name; pass name=... or set the class attribute"
            )
        if self.timeout is not None:
            _check_timeout(self.name, self.timeout)
        schema = self.args_schema
        if (
            schema is not None
            and not isinstance(schema, dict)
            and not _schema.is_model_class(schema)
        ):
            raise TypeError(
                "args_schema must be a subclass of pydantic BaseModel or a JSON schema dict. "
                f"Got: {schema}."
            )

    def __setattr__(self, key: str, value: Any) -> None:
        super().__setattr__(key, value)
        if key in _SCHEMA_FIELDS:
            for cached in _CACHED:
                self.__dict__.pop(cached, None)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, description={self.description!r})"

    # -- schema --------------------------------------------------------------------------------

    def get_input_schema(self, config: RunnableConfig | None = None) -> ArgsSchema:
        """The arguments' schema: `args_schema`, or one inferred from `_run`'s signature."""
        if self.args_schema is not None:
            return self.args_schema
        return _schema.function_schema(self.name, self._run)

    @functools.cached_property
    def _tool_call_schema(self) -> ArgsSchema:
        schema = self.get_input_schema()
        if isinstance(schema, dict):
            return {**schema, "description": self.description} if self.description else schema
        from actloop.tools._injected import injected_fields

        injected = injected_fields(schema)
        fields = [f for f in _schema.model_fields(schema) if f not in injected]
        return _schema.copy_subset_model(self.name, schema, fields, fn_description=self.description)

    @property
    def tool_call_schema(self) -> ArgsSchema:
        """The schema a model sees: name and description of the tool, injected args left out."""
        return self._tool_call_schema

    @property
    def args(self) -> dict[str, Any]:
        """The JSON-schema `properties` of the tool's arguments."""
        schema = self.tool_call_schema
        if isinstance(schema, dict):
            return schema["properties"]
        return _schema.model_json_schema(schema)["properties"]

    @property
    def is_single_input(self) -> bool:
        """True when the tool takes exactly one argument."""
        return len({k for k in self.args if k != "kwargs"}) == 1

    # -- what subclasses implement -----------------------------------------------------------

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement _run")

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        """Run the sync `_run` on a daemon worker, so the event loop is never blocked.

        Daemon workers (`actloop.runnables._workers`) are never joined: a sync tool that hangs
        forever cannot keep `asyncio.run()` or the process from exiting (`asyncio.to_thread` would).
        """
        from actloop.runnables._workers import run_in_worker

        return await run_in_worker(functools.partial(self._run, *args, **kwargs))

    def _sync_target(self) -> Callable[..., Any] | None:
        """The callable whose parameters decide what `run` injects."""
        return self._run

    def _async_target(self) -> Callable[..., Any] | None:
        """The callable whose parameters decide what `arun` injects."""
        return self._arun if type(self)._arun is not BaseTool._arun else self._run

    @cached
    def _sync_call(self) -> Callable[..., Any]:
        """What a sync call runs: `_run` (a function tool: its function, one frame less)."""
        return self._run

    @cached
    def _async_call(self) -> Callable[..., Any]:
        """What an async call awaits: `_arun` (a function tool: its coroutine function)."""
        return self._arun

    @cached
    def _sync_injection(self) -> Injection | None:
        return injection(self._sync_target())

    @cached
    def _async_injection(self) -> Injection | None:
        return injection(self._async_target())

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Positional and keyword arguments for `_run`; raises InvalidArguments (B10)."""
        schema = self.args_schema
        if schema is None:
            if isinstance(tool_input, str):
                return (tool_input,), {}
            if isinstance(tool_input, dict):  # pyright: ignore[reportUnnecessaryIsInstance]
                return (), dict(tool_input)
            raise TypeError(f"Invalid tool input type: {type(tool_input)}")
        if not isinstance(schema, dict) and not (
            _schema.HAS_FIELDS.get(schema) or _schema.has_fields(schema)
        ):
            return (), {}
        return parse_input(self.name, schema, tool_input)

    # -- running ---------------------------------------------------------------------------------

    def _manager(
        self,
        callbacks: Callbacks,
        verbose: bool | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> CallbackManager | None:
        return configure(
            callbacks,
            self.callbacks,
            verbose=self.verbose or bool(verbose),
            tags=[*(tags or ()), *(self.tags or ())],
            metadata={**(metadata or {}), **(self.metadata or {})},
        )

    def _start(
        self,
        manager: CallbackManager,
        tool_input: str | dict[str, Any],
        color: str | None,
        run_name: str | None,
        run_id: uuid.UUID | None,
        tool_call_id: str | None,
        kwargs: dict[str, Any],
    ) -> RunManager:
        inputs = None
        if isinstance(tool_input, dict):
            inputs = {k: v for k, v in tool_input.items() if k not in _schema.FILTERED_ARGS}
        return manager.start(
            "on_tool_start",
            {"name": self.name, "description": self.description},
            tool_input if isinstance(tool_input, str) else str(inputs),
            run_id=run_id,
            inputs=inputs,
            color=color,
            name=run_name,
            tool_call_id=tool_call_id,
            **kwargs,
        )

    def _invalid(self, exc: InvalidArguments) -> Outcome:
        flag = self.handle_validation_error
        if not flag:
            return (str(exc), None, "error")
        if isinstance(flag, bool):
            return ("Tool input validation error", None, "error")
        if isinstance(flag, str):
            return (flag, None, "error")
        return (flag(exc.cause or exc), None, "error")

    def _handled(self, exc: ToolException) -> Outcome:
        flag = self.handle_tool_error
        if not flag:
            raise exc
        if isinstance(flag, bool):
            return (exc.args[0] if exc.args else "Tool execution error", None, "error")
        if isinstance(flag, str):
            return (flag, None, "error")
        return (flag(exc), None, "error")

    def _unasked(self, exc: NeedsInput) -> Outcome:
        """A tool asked for a person's input: a durable run pauses on it (re-raised), any other
        run gets an observation saying what was asked."""
        if current_input() is not None:
            raise exc
        return (exc.observation(self.name), None, "error")

    def _outcome(self, response: Any) -> Outcome:
        if self.response_format != "content_and_artifact":
            return (response, None, "success")
        if isinstance(response, tuple):
            pair = cast("tuple[Any, ...]", response)
            if len(pair) == 2:
                return (pair[0], pair[1], "success")
        raise ValueError(
            "Since response_format='content_and_artifact' a two-tuple of the message content and "
            "raw tool output is expected. Instead, generated response is of type: "
            f"{type(cast(Any, response))}."
        )

    def _execute(
        self,
        tool_input: str | dict[str, Any],
        tool_call_id: str | None,
        run: RunManager | None,
        config: RunnableConfig | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> Outcome:
        try:  # `_prepare`, inlined: this is every tool call's path
            args, kwargs = self._to_args_and_kwargs(tool_input, tool_call_id)
            wants = self._sync_injection
            if wants is not None:
                _inject(kwargs, wants, run, config, tags, metadata)
        except InvalidArguments as exc:
            return self._invalid(exc)
        try:
            # in a copy of the caller's context, as LangChain does: what the tool sets stays there
            if self.timeout is None:
                response = contextvars.copy_context().run(self._sync_call, *args, **kwargs)
            else:
                context = contextvars.copy_context()
                call = functools.partial(context.run, self._sync_call, *args, **kwargs)
                response = wait_one(call, (), self.timeout)
        except ToolException as exc:
            return self._handled(exc)
        except Deadline:
            return (timed_out(self.name, self.timeout), None, "error")
        except NeedsInput as exc:
            return self._unasked(exc)
        if self.response_format == "content":
            return (response, None, "success")
        return self._outcome(response)

    def run(
        self,
        tool_input: str | dict[str, Any],
        verbose: bool | None = None,
        start_color: str | None = "green",
        color: str | None = "green",
        callbacks: Callbacks = None,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        run_name: str | None = None,
        run_id: uuid.UUID | None = None,
        config: RunnableConfig | None = None,
        tool_call_id: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the tool on `tool_input` (a string or a dict of args); kwargs go to callbacks."""
        manager = None
        if callbacks is not None or self.callbacks or verbose or self.verbose:
            manager = self._manager(callbacks, verbose, tags, metadata)
        if manager is None:
            outcome = self._execute(tool_input, tool_call_id, None, config, tags, metadata)
            if tool_call_id is None:  # `format_output`'s first case: the content as it is
                return outcome[0]
            return format_output(outcome, tool_call_id, self.name)
        run = self._start(manager, tool_input, start_color, run_name, run_id, tool_call_id, kwargs)
        run.flush()
        try:
            outcome = self._execute(tool_input, tool_call_id, run, config, tags, metadata)
            output = format_output(outcome, tool_call_id, self.name)
        except BaseException as exc:
            run.fire("on_tool_error", exc, tool_call_id=tool_call_id)
            raise
        run.fire("on_tool_end", output, color=color, name=self.name, **kwargs)
        return output

    async def arun(
        self,
        tool_input: str | dict[str, Any],
        verbose: bool | None = None,
        start_color: str | None = "green",
        color: str | None = "green",
        callbacks: Callbacks = None,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        run_name: str | None = None,
        run_id: uuid.UUID | None = None,
        config: RunnableConfig | None = None,
        tool_call_id: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the tool (async): `_arun` is awaited; a sync-only tool runs in a worker thread.

        The call is carried out here (what `_execute` does for `run`), not in a helper coroutine:
        every async tool call takes this path, and a coroutine layer costs more than the work it
        would wrap."""
        run = manager = None
        if callbacks is not None or self.callbacks or verbose or self.verbose:
            manager = self._manager(callbacks, verbose, tags, metadata)
        if manager is not None:
            run = self._start(
                manager, tool_input, start_color, run_name, run_id, tool_call_id, kwargs
            )
            await run.aflush()
        try:
            try:
                args, call_kwargs = self._to_args_and_kwargs(tool_input, tool_call_id)
                wants = self._async_injection
                if wants is not None:
                    _inject(call_kwargs, wants, run, config, tags, metadata)
            except InvalidArguments as exc:
                outcome = self._invalid(exc)
            else:
                try:
                    call = self._async_call(*args, **call_kwargs)
                    response = await (call if self.timeout is None else within(call, self.timeout))
                except ToolException as exc:
                    outcome = self._handled(exc)
                except Deadline:
                    outcome = (timed_out(self.name, self.timeout), None, "error")
                except NeedsInput as exc:
                    outcome = self._unasked(exc)
                else:
                    content = self.response_format == "content"
                    outcome = (response, None, "success") if content else self._outcome(response)
            plain = run is None and tool_call_id is None  # `format_output`'s first case
            output = outcome[0] if plain else format_output(outcome, tool_call_id, self.name)
        except BaseException as exc:
            await _afailed(run, exc, tool_call_id)
            raise
        if run is not None:
            await run.afire("on_tool_end", output, color=color, name=self.name, **kwargs)
        return output

    # -- Runnable ----------------------------------------------------------------------------

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run on a string, a dict of arguments, or a ToolCall (then a ToolMessage is returned)."""
        tool_input, run_kwargs = prep_run_args(input, config, kwargs)
        return self.run(tool_input, **run_kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async `invoke`."""
        tool_input, run_kwargs = prep_run_args(input, config, kwargs)
        return await self.arun(tool_input, **run_kwargs)

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        return self.invoke(input, config, **kwargs)

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        return await self.ainvoke(input, config, **kwargs)

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Yield the single result of `invoke` (tools do not stream), as LangChain does."""
        yield self.invoke(input, config, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Yield the single result of `ainvoke`."""
        yield await self.ainvoke(input, config, **kwargs)
