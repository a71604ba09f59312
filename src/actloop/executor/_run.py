"""One run of an `AgentExecutor`: the seam the facade, the iterator and durable runs share.

`AgentRun` gathers what a run needs from the executor's public fields (the loop settings,
cached per executor; the callback run; the driver, with journaling hooks for a durable run) and
offers the few things every caller does: open the run, turn the finish into outputs, attach the
steps to an escaping exception. `events()` / `aevents()` wrap the driver's events with the
durable run's bookkeeping (lease, record, pause, failure), so drivers never know about storage.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from actloop.agents import AgentFinish
from actloop.callbacks import get_color_mapping
from actloop.callbacks._manager import RunManager, configure
from actloop.exceptions import ConfigurationError, attach_steps
from actloop.executor._drivers import AsyncDriver, SyncDriver
from actloop.executor._loop import Event, LoopCore, LoopSettings, LoopState
from actloop.runnables._config import RunnableConfig
from actloop.tools import ExceptionTool, InvalidTool

if TYPE_CHECKING:
    from actloop.executor._agent_executor import AgentExecutor
    from actloop.executor._durable import DurableRun

__all__ = ["AgentRun", "loop_settings"]

_D = TypeVar("_D", SyncDriver, AsyncDriver)

_SETTINGS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], LoopSettings]] = (
    weakref.WeakKeyDictionary()
)
_SPECIAL_TOOLS: list[Any] = []


def _special_tools() -> tuple[Any, Any]:
    """The shared InvalidTool and ExceptionTool instances, built on first use."""
    if not _SPECIAL_TOOLS:
        _SPECIAL_TOOLS.extend((InvalidTool(), ExceptionTool()))
    return _SPECIAL_TOOLS[0], _SPECIAL_TOOLS[1]


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
    names = [tool.name for tool in executor.tools]
    invalid_tool, exception_tool = _special_tools()
    settings = LoopSettings(
        tools=dict(zip(names, executor.tools, strict=True)),
        invalid_tool=invalid_tool,
        exception_tool=exception_tool,
        colors=get_color_mapping(names, excluded_colors=["green", "red"]),
        max_iterations=executor.max_iterations,
        max_execution_time=executor.max_execution_time,
        early_stopping_method=executor.early_stopping_method,
        handle_parsing_errors=executor.handle_parsing_errors,
        trim_intermediate_steps=executor.trim_intermediate_steps,
        return_key=values[0] if values else "output",
        tool_run_kwargs=executor.agent.tool_run_logging_kwargs(),
    )
    _SETTINGS[executor] = (key, settings)
    return settings


def _open_callbacks(
    executor: AgentExecutor, config: RunnableConfig, inputs: dict[str, Any], iterating: bool
) -> RunManager | None:
    """Start the executor's chain run. Like LangChain, `stream`/`iter` runs report
    `name=run_name` (None unless given) and carry the executor's name in `serialized`."""
    cm = configure(
        config.get("callbacks"),
        executor.callbacks,
        verbose=executor.verbose,
        tags=[*config.get("tags", ()), *(executor.tags or ())],
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
    return cm.start("on_chain_start", serialized, inputs, run_id=config.get("run_id"), name=name)


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


class AgentRun:
    """One run: its settings, state, core, callback run and (for durable runs) journaling hooks."""

    def __init__(
        self,
        executor: AgentExecutor,
        inputs: dict[str, Any],
        config: RunnableConfig,
        *,
        state: LoopState | None = None,
        iterating: bool = False,
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
        self.durable: DurableRun | None = None
        if store is not None and durable:
            from actloop.executor._durable import durable_run

            self.durable, config = durable_run(store, self, config)
            self.core: LoopCore = self.durable.core
        else:
            limit = config.get("max_concurrency")
            self.core = LoopCore(self.settings, self.state, time.monotonic, limit)
        self.config = config
        if self.manager is not None:
            self.manager.notify("_on_agent_run", self)  # e.g. actloop.tracing's invoke_agent span

    def _driver(self, cls: type[_D], emit: bool) -> _D:
        """A driver of this run's core, with the durable run's hooks if any."""
        executor = self.executor
        driver = cls(executor.agent, self.core, self.manager, self.config, executor.verbose, emit)
        driver.hooks = self.durable
        return driver

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

    def events(self, *, emit: bool) -> Iterator[Event]:
        """The run's events on the sync driver (`emit=False`: only the finish, for invoke); a
        durable run journals them and may end paused."""
        driver, durable = self._driver(SyncDriver, emit), self.durable
        if durable is None:
            yield from driver.events()
            return
        from actloop.executor._durable import Paused

        try:
            durable.open()
            for kind, value in driver.events():
                if kind == "finish":
                    durable.finished(value)
                yield kind, value
        except Paused as paused:
            yield ("finish", durable.pause(paused))
        except BaseException as exc:
            durable.failed(exc)
            raise
        finally:
            durable.close()

    async def aevents(self, *, emit: bool) -> AsyncIterator[Event]:
        """Async twin of `events`, on the async driver."""
        driver, durable = self._driver(AsyncDriver, emit), self.durable
        if durable is None:
            async for event in driver.events():
                yield event
            return
        from actloop.executor._durable import Paused

        try:
            durable.open()
            async for kind, value in driver.events():
                if kind == "finish":
                    durable.finished(value)
                yield kind, value
        except Paused as paused:
            yield ("finish", durable.pause(paused))
        except BaseException as exc:
            durable.failed(exc)
            raise
        finally:
            durable.close()
