"""`AgentExecutorIterator`: a run as an iterator of output chunks (sync and async).

With `yield_actions` (what `stream` uses) it yields `{"actions", "messages"}` before tools run and
`{"steps", "messages"}` after; otherwise `{"intermediate_step": [...]}` per step. Both end with the
final output plus `"messages"`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, cast

from actloop.callbacks import Callbacks
from actloop.callbacks._manager import RunManager, new_run_id
from actloop.executor._chain_api import RUN_KEY, RunInfo
from actloop.executor._loop import LoopState
from actloop.executor._resume import Resume
from actloop.executor._run import AgentRun, astart_inputs, start_inputs
from actloop.runnables._compose import AddableDict
from actloop.runnables._config import RunnableConfig, ensure_config
from actloop.steps import AgentAction

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor

__all__ = ["AgentExecutorIterator"]


class _ConfigKey:
    """An iterator attribute kept in its run config (LangChain's `callbacks`, `tags`, `metadata`,
    `run_name`, `run_id`); setting None removes it."""

    key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name

    def __get__(self, obj: AgentExecutorIterator | None, owner: type | None = None) -> Any:
        return None if obj is None else cast("dict[str, Any]", obj.config).get(self.key)

    def __set__(self, obj: AgentExecutorIterator, value: Any) -> None:
        config = cast("dict[str, Any]", obj.config)
        if value is None:
            config.pop(self.key, None)
        else:
            config[self.key] = value


class AgentExecutorIterator:
    """Iterates over one run of an AgentExecutor; `reset()` starts it afresh."""

    def __init__(
        self,
        agent_executor: AgentExecutor,
        inputs: Any,
        callbacks: Callbacks = None,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        run_name: str | None = None,
        run_id: Any = None,
        include_run_info: bool = False,
        yield_actions: bool = False,
        config: RunnableConfig | None = None,
    ) -> None:
        self.agent_executor = agent_executor
        self._resume = inputs if isinstance(inputs, Resume) else None
        """A `Resume` input: the run goes on with a saved thread (its inputs are read when the
        iteration starts)."""
        self._inputs = {} if self._resume is not None else agent_executor.prep_inputs(inputs)
        overrides = {
            "callbacks": callbacks,
            "tags": tags,
            "metadata": metadata,
            "run_name": run_name,
            "run_id": run_id,
        }
        given = {k: v for k, v in overrides.items() if v is not None}
        self.config = cast(RunnableConfig, {**ensure_config(config), **given})
        self.include_run_info = include_run_info
        self.yield_actions = yield_actions
        self.reset()

    @property
    def inputs(self) -> dict[str, Any]:
        """The run's inputs (a bare value given is turned into the input dict)."""
        return self._inputs

    @inputs.setter
    def inputs(self, inputs: Any) -> None:
        self._inputs = self.agent_executor.prep_inputs(inputs)

    callbacks = _ConfigKey()
    tags = _ConfigKey()
    metadata = _ConfigKey()
    run_name = _ConfigKey()
    run_id = _ConfigKey()

    def reset(self) -> None:
        """Forget the steps taken; the next iteration starts a new run."""
        self._state = LoopState(self.inputs)

    @property
    def intermediate_steps(self) -> list[tuple[AgentAction, Any]]:
        """Steps finished so far."""
        return self._state.steps

    @property
    def iterations(self) -> int:
        """Iterations finished so far."""
        return self._state.iterations

    @property
    def stopped(self) -> bool:
        """True when a limit (iterations or time) ended the run rather than the agent."""
        return self._state.stopped

    @property
    def time_elapsed(self) -> float:
        """Seconds the run has used so far."""
        return self._state.elapsed

    def _chunk(self, run: AgentRun, kind: str, value: Any) -> AddableDict | None:
        if kind == "action":
            return (
                AddableDict(actions=[value], messages=value.messages)
                if self.yield_actions
                else None
            )
        if kind == "step":
            return (
                AddableDict(steps=[value], messages=value.messages) if self.yield_actions else None
            )
        if kind == "iteration":
            return None if self.yield_actions else AddableDict(intermediate_step=list(value))
        outputs = run.outputs(value)
        outputs["messages"] = value.messages
        return AddableDict(outputs)

    def _with_run_info(self, chunk: AddableDict, run: RunManager | None) -> AddableDict:
        """The final output gets `RUN_KEY: RunInfo(run_id)` when asked, with or without handlers."""
        if self.include_run_info:
            run_id = run.run_id if run is not None else self.run_id
            chunk[RUN_KEY] = RunInfo(run_id if run_id is not None else new_run_id())
        return chunk

    def _start(self, inputs: dict[str, Any]) -> AgentRun:
        self._inputs = inputs
        self.reset()
        return AgentRun(
            self.agent_executor,
            inputs,
            self.config,
            state=self._state,
            iterating=True,
            resume=self._resume,
        )

    def _given(self) -> dict[str, Any] | None:
        """The inputs when they are known (memory loaded once, when they were set); None for a
        `Resume`, whose inputs are the saved ones."""
        return None if self._resume is not None else self._inputs

    def __iter__(self) -> Iterator[AddableDict]:
        given = self._given()
        if given is None:
            given = start_inputs(self.agent_executor, self._resume, self.config)[0]
        run = self._start(given)
        manager = run.manager
        try:
            if manager is not None:
                manager.flush()
            for kind, value in run.events(emit=True):
                chunk = self._chunk(run, kind, value)
                if chunk is None:
                    continue
                if manager is not None:
                    if kind == "finish":
                        manager.fire("on_chain_end", dict(chunk))
                    manager.fire("_on_stream", chunk)
                if kind == "finish" and self.agent_executor.memory is not None:
                    self.agent_executor.save_memory(run.inputs, dict(chunk))
                yield self._with_run_info(chunk, manager) if kind == "finish" else chunk
        except BaseException as exc:
            run.failed(exc)
            if manager is not None and not isinstance(exc, GeneratorExit):
                manager.fire("on_chain_error", exc)
            raise

    async def __aiter__(self) -> AsyncIterator[AddableDict]:
        given = self._given()
        if given is None:
            given = (await astart_inputs(self.agent_executor, self._resume, self.config))[0]
        run = self._start(given)
        manager = run.manager
        try:
            if manager is not None:
                await manager.aflush()
            async for kind, value in run.aevents(emit=True):
                chunk = self._chunk(run, kind, value)
                if chunk is None:
                    continue
                if manager is not None:
                    if kind == "finish":
                        await manager.afire("on_chain_end", dict(chunk))
                    await manager.afire("_on_stream", chunk)
                if kind == "finish" and self.agent_executor.memory is not None:
                    await self.agent_executor.asave_memory(run.inputs, dict(chunk))
                yield self._with_run_info(chunk, manager) if kind == "finish" else chunk
        except BaseException as exc:
            run.failed(exc)
            if manager is not None and not isinstance(exc, GeneratorExit):
                await manager.afire("on_chain_error", exc)
            raise
