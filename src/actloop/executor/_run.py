"""One run of an `AgentExecutor`: the seam the facade, the iterator and durable runs share.

`AgentRun` gathers what a run needs from the executor's public fields (the loop settings,
cached per executor; the callback run; the driver, with journaling hooks for a durable run) and
offers the few things every caller does: open the run, turn the finish into outputs, attach the
steps to an escaping exception. `events()` / `aevents()` wrap the driver's events with the
durable run's bookkeeping (open, finish, pause, failure, close), carried out by a `SyncStore` or
`AsyncStore` (`_storage`). A run that goes on with a saved thread gets its `Resume` input
explicitly (`resume=`), never through the config.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from actloop.callbacks import get_color_mapping
from actloop.callbacks._manager import RunManager, configure, unheard
from actloop.exceptions import ConfigurationError, attach_steps
from actloop.executor._drivers import AsyncDriver, SyncDriver
from actloop.executor._loop import Event, LoopCore, LoopSettings, LoopState
from actloop.executor._resume import Resume
from actloop.runnables._config import RunnableConfig
from actloop.steps import AgentFinish
from actloop.tools import ExceptionTool, InvalidTool

if TYPE_CHECKING:
    from actloop.checkpoint import BaseCheckpointer
    from actloop.executor._agent_executor import AgentExecutor
    from actloop.executor._durable import DurableRun

__all__ = ["AgentRun", "RunView", "astart_inputs", "loop_settings", "start_inputs"]

_D = TypeVar("_D", SyncDriver, AsyncDriver)

_SETTINGS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], LoopSettings]] = (
    weakref.WeakKeyDictionary()
)
_SPECIAL_TOOLS: list[Any] = []
_COLORS: dict[tuple[str, ...], dict[str, str]] = {}
_COLORS_KEPT = 64
"""How many lists of tool names `_colors` keeps (it starts over past that)."""


def _special_tools() -> tuple[Any, Any]:
    """The shared InvalidTool and ExceptionTool instances, built on first use."""
    if not _SPECIAL_TOOLS:
        _SPECIAL_TOOLS.extend((InvalidTool(), ExceptionTool()))
    return _SPECIAL_TOOLS[0], _SPECIAL_TOOLS[1]


def _colors(names: tuple[str, ...]) -> dict[str, str]:
    """Each tool's colour (LangChain's mapping, green and red left out), kept per list of tool
    names: a fresh executor with the usual tools (an executor per request) skips the mapping.
    The mapping is shared and only read (`LoopSettings` turns it into each tool's run keywords)."""
    colors = _COLORS.get(names)
    if colors is None:
        if len(_COLORS) >= _COLORS_KEPT:
            _COLORS.clear()
        colors = _COLORS[names] = get_color_mapping(list(names), excluded_colors=["green", "red"])
    return colors


def _settings_key(executor: AgentExecutor) -> tuple[Any, ...]:
    return (
        id(executor.agent),
        *map(id, executor.tools),
        executor.max_iterations,
        executor.max_execution_time,
        executor.early_stopping_method,
        executor.handle_parsing_errors,
        executor.trim_intermediate_steps,
    )


def loop_settings(executor: AgentExecutor) -> LoopSettings:
    """The loop's settings for `executor`, built once and reused until a field it depends on
    (agent, tools, limits, error handling, trimming) changes."""
    key = _settings_key(executor)
    cached = _SETTINGS.get(executor)
    if cached is not None and cached[0] == key:
        return cached[1]
    values = executor.agent.return_values
    tools = executor.tools
    names = tuple([tool.name for tool in tools])
    invalid_tool, exception_tool = _special_tools()
    settings = LoopSettings(  # by position, in field order: binding 11 keywords costs twice as much
        dict(zip(names, tools, strict=False)),  # tools (names are theirs: the same length)
        invalid_tool,
        exception_tool,
        _colors(names),  # colors
        executor.max_iterations,
        executor.max_execution_time,
        executor.early_stopping_method,
        executor.handle_parsing_errors,
        executor.trim_intermediate_steps,
        values[0] if values else "output",  # return_key
        executor.agent.tool_run_logging_kwargs(),  # tool_run_kwargs
    )
    _SETTINGS[executor] = (key, settings)
    return settings


def _open_callbacks(
    executor: AgentExecutor, config: RunnableConfig, inputs: dict[str, Any], iterating: bool
) -> RunManager | None:
    """Start the executor's chain run. Like LangChain, `stream`/`iter` runs report
    `name=run_name` (None unless given) and carry the executor's name in `serialized`."""
    callbacks = config.get("callbacks")
    if unheard(callbacks, executor.callbacks, executor.verbose):
        return None
    cm = configure(
        callbacks,
        executor.callbacks,
        verbose=executor.verbose,
        tags=list(config.get("tags", ())),
        metadata={**executor.metadata, **config.get("metadata", {})},
    )
    if cm is None:
        return None
    if iterating:
        serialized = {
            "lc": 1,
            "type": "not_implemented",
            "name": executor.get_name(),
            "id": ["langchain_classic", "agents", "agent", "AgentExecutor"],
        }
        name = config.get("run_name")
    else:
        serialized, name = None, config.get("run_name") or executor.get_name()
    return cm.start(
        "on_chain_start",
        serialized,
        inputs,
        run_id=config.get("run_id"),
        name=name,
        own_tags=executor.tags,  # LangChain's local tags: the executor's run only
    )


def _refuse_approval_tools(executor: AgentExecutor) -> None:
    """A tool needs approval but the run cannot pause for it: refuse the run rather than ever
    run the tool unapproved (checked on every run: the flag may change after the first)."""
    for tool in executor.tools:
        if getattr(tool, "requires_approval", False):
            raise _approval_needs_durable(tool.name, executor)


def _approval_needs_durable(name: str, executor: AgentExecutor) -> ConfigurationError:
    where = (
        "pass config={'configurable': {'thread_id': ...}}"
        if executor.checkpointer is not None
        else "pass AgentExecutor(..., checkpointer=SqliteCheckpointer(path)) and "
        "config={'configurable': {'thread_id': ...}}"
    )
    return ConfigurationError(
        f"tool {name!r} has requires_approval=True, and only a durable run can pause for "
        f"approval; {where}, or set requires_approval=False. Nothing ran."
    )


def _resumed(executor: AgentExecutor, config: RunnableConfig) -> tuple[BaseCheckpointer, str]:
    """The store and thread a `Resume` input goes on with (ConfigurationError without)."""
    if executor.checkpointer is None:
        raise ConfigurationError(
            "resume() needs a checkpointer: pass AgentExecutor(..., "
            "checkpointer=SqliteCheckpointer(path))"
        )
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if thread_id is None:
        raise ConfigurationError(
            "a Resume input goes on with a saved thread: pass "
            "config={'configurable': {'thread_id': ...}}"
        )
    return executor.checkpointer, str(thread_id)


def start_inputs(
    executor: AgentExecutor, input: Any, config: RunnableConfig
) -> tuple[dict[str, Any], Resume | None]:
    """The run's inputs and, for a `Resume` input, the decisions it brings (the inputs are then
    the saved ones, read from the store within the executor's time limit)."""
    if not isinstance(input, Resume):
        return executor.prep_inputs(input), None
    from actloop.executor._durable import saved_inputs
    from actloop.executor._storage import carry

    store, thread_id = _resumed(executor, config)
    limit = executor.max_execution_time
    return carry(store, saved_inputs(thread_id), lambda: limit), input


async def astart_inputs(
    executor: AgentExecutor, input: Any, config: RunnableConfig
) -> tuple[dict[str, Any], Resume | None]:
    """Async twin of `start_inputs` (awaits the store and the memory)."""
    if not isinstance(input, Resume):
        return await executor.aprep_inputs(input), None
    from actloop.executor._durable import saved_inputs
    from actloop.executor._storage import acarry

    store, thread_id = _resumed(executor, config)
    limit = executor.max_execution_time
    return await acarry(store, saved_inputs(thread_id), lambda: limit), input


class RunView:
    """What a callback handler may know of an executor run: its name, its thread, whether it
    resumes one, its trace links, and how it ended as the run itself decided it. A run hands it
    to handlers once, with the private `_on_agent_run` event (`actloop.tracing` opens its span
    there); it lives as long as the run does, so a weak reference to it ends with the run."""

    __slots__ = (
        "__weakref__",
        "_core",
        "_durable",
        "name",
        "resumed",
        "thread_id",
    )

    def __init__(self, name: str, core: LoopCore, durable: DurableRun | None) -> None:
        self.name = name
        """The run's name: the config's `run_name`, else the executor's name."""
        self._core, self._durable = core, durable
        self.thread_id = durable.thread_id if durable is not None else None
        """A durable run's thread id (None: not durable)."""
        self.resumed = durable is not None and durable.resume is not None
        """Whether the run goes on with a saved thread."""

    @property
    def trace_context(self) -> dict[str, str] | None:
        """A durable run's trace propagation fields (None: not durable): what a handler writes
        here (a W3C `traceparent`) is journaled when the run opens, so a resume can link to it."""
        return self._durable.context if self._durable is not None else None

    @property
    def previous_trace_context(self) -> dict[str, str]:
        """For a resumed run: the trace fields of the thread's latest run before this one
        (known once the run has opened)."""
        return self._durable.previous_context if self._durable is not None else {}

    @property
    def iterations(self) -> int:
        """Tool steps the loop has taken."""
        return self._core.state.iterations

    @property
    def stop_reason(self) -> str | None:
        """Why the run ended: "finished", "max_iterations", "max_execution_time", "paused"
        (waiting for approval); None while it runs."""
        if self._durable is not None and self._durable.paused:
            return "paused"
        return self._core.stop_reason


class AgentRun:
    """One run: its settings, state, core, callback run and (for durable runs) its DurableRun."""

    def __init__(
        self,
        executor: AgentExecutor,
        inputs: dict[str, Any],
        config: RunnableConfig,
        *,
        state: LoopState | None = None,
        iterating: bool = False,
        resume: Resume | None = None,
    ) -> None:
        self.executor = executor
        self.inputs = inputs
        self.settings = loop_settings(executor)
        self.state = state if state is not None else LoopState(inputs)
        store, configurable = executor.checkpointer, config.get("configurable") or {}
        durable = store is not None and "thread_id" in configurable
        if not durable:
            _refuse_approval_tools(executor)
        self.manager = _open_callbacks(executor, config, inputs, iterating)
        self.config = config
        self.durable: DurableRun | None = None
        if durable:
            from actloop.executor._durable import durable_run

            self.durable = durable_run(self, str(configurable["thread_id"]), resume)
            self.core: LoopCore = self.durable.loop
        else:
            limit = config.get("max_concurrency")
            self.core = LoopCore(self.settings, self.state, time.monotonic, limit)
        self.view: RunView | None = None
        """What handlers learn of this run (made when the run has handlers)."""
        if self.manager is not None:
            name = config.get("run_name") or executor.get_name()
            self.view = RunView(name, self.core, self.durable)
            self.manager.notify("_on_agent_run", self.view)  # e.g. actloop.tracing's span

    def _driver(self, cls: type[_D], emit: bool) -> _D:
        """A driver of this run's core."""
        executor = self.executor
        return cls(executor.agent, self.core, self.manager, self.config, executor.verbose, emit)

    def outputs(self, finish: AgentFinish) -> dict[str, Any]:
        """The run's outputs: a new dict (the agent's AgentFinish is never mutated)."""
        outputs = dict(finish.return_values)
        if self.executor.return_intermediate_steps:
            outputs["intermediate_steps"] = list(self.state.steps)
        return outputs

    def failed(self, exc: BaseException) -> None:
        """An exception escapes the run: it carries the steps finished so far (unless the core
        already attached this run's steps to it; an instance raised again by a later run gets
        that run's steps, never the earlier one's)."""
        if exc is not self.core.attached:
            attach_steps(exc, self.state.steps)

    def finish(self) -> AgentFinish:
        """The run to its end, without events (`invoke`): the driver's finish; a durable run
        goes through its events (it journals them)."""
        if self.durable is None:
            try:
                return self._driver(SyncDriver, False).finish()
            except StopIteration as exc:  # as it leaves `events()` and any coroutine (PEP 479)
                raise RuntimeError("generator raised StopIteration") from exc
        finish: AgentFinish | None = None
        for kind, value in self.events(emit=False):
            if kind == "finish":
                finish = value
        assert finish is not None
        return finish

    def afinish(self) -> Awaitable[AgentFinish]:
        """Async twin of `finish` (the driver's own coroutine when not durable: one layer less)."""
        if self.durable is None:
            return self._driver(AsyncDriver, False).finish()
        return self._adurable_finish()

    async def _adurable_finish(self) -> AgentFinish:
        """A durable run's finish, through its (journaled) events."""
        finish: AgentFinish | None = None
        async for kind, value in self.aevents(emit=False):
            if kind == "finish":
                finish = value
        assert finish is not None
        return finish

    def events(self, *, emit: bool) -> Iterator[Event]:
        """The run's events on the sync driver (`emit=False`: only the finish, for invoke); a
        durable run journals them and may end paused."""
        driver, durable = self._driver(SyncDriver, emit), self.durable
        if durable is None:
            yield from driver.events()
            return
        from actloop.executor._approvals import Paused
        from actloop.executor._storage import SyncStore

        assert self.executor.checkpointer is not None
        store = SyncStore(self.executor.checkpointer, durable)
        driver.attach(store)
        try:
            store.open()
            for kind, value in driver.events():
                if kind == "finish":
                    store.carry(durable.finished(value))
                yield kind, value
        except Paused as paused:
            yield ("finish", store.carry(durable.pause(paused)))
        except BaseException as exc:
            store.carry(durable.failed(exc))
            raise
        finally:
            store.close()

    async def aevents(self, *, emit: bool) -> AsyncIterator[Event]:
        """Async twin of `events`, on the async driver; a durable run awaits its store."""
        driver, durable = self._driver(AsyncDriver, emit), self.durable
        if durable is None:
            async for event in driver.events():
                yield event
            return
        from actloop.executor._approvals import Paused
        from actloop.executor._storage import AsyncStore

        assert self.executor.checkpointer is not None
        store = AsyncStore(self.executor.checkpointer, durable)
        driver.attach(store)
        try:
            await store.open()
            async for kind, value in driver.events():
                if kind == "finish":
                    await store.carry(durable.finished(value))
                yield kind, value
        except Paused as paused:
            yield ("finish", await store.carry(durable.pause(paused)))
        except BaseException as exc:
            await store.carry(durable.failed(exc))
            raise
        finally:
            await store.close()
