"""Thin sync and async drivers of the loop core: they carry out its effects and report events.

Both are generators of `(kind, value)` events — `("action", AgentAction)` before tools run,
`("step", AgentStep)` after, `("iteration", [(action, observation), ...])` when the loop goes on
after a step, `("finish", AgentFinish)` last — which `invoke`, `stream`, `iter`
and `astream_events` consume. Sync: one tool runs inline; several run on daemon workers
(`_workers`), results in action order. With a deadline every plan and tool call runs on a worker
and the driver stops waiting when the deadline passes: a hung call is abandoned, never joined.
Async: calls are tasks; at the deadline pending tasks are cancelled.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from actloop.agents import AgentAction, AgentFinish, AgentStep
from actloop.callbacks._manager import RunManager
from actloop.exceptions import OutputParserException, attach_steps
from actloop.executor._loop import (
    _EXCEPTION_TOOL,  # pyright: ignore[reportPrivateUsage]
    Act,
    ActTimeout,
    Done,
    LoopCore,
    LoopSettings,
    LoopState,
    Plan,
    ToolCall,
)
from actloop.runnables._config import RunnableConfig
from actloop.tools import ExceptionTool

__all__ = ["AsyncDriver", "Event", "SyncDriver"]

Event = tuple[str, Any]


class _DriverBase:
    """State shared by both drivers: the agent, the core, the run's callbacks and tool config."""

    def __init__(
        self,
        agent: Any,
        settings: LoopSettings,
        state: LoopState,
        run: RunManager | None,
        config: RunnableConfig,
        verbose: bool = False,
        emit: bool = True,
    ) -> None:
        self.agent = agent
        self.emit = emit
        """False when only the finish matters (invoke): no action/step events are built."""
        self.core = LoopCore(settings, state, time.monotonic)
        self.timed = settings.max_execution_time is not None
        """Whether the run has a deadline (otherwise no clock reads for it)."""
        self.run = run
        self.inputs = state.inputs
        self.verbose = verbose
        self.max_concurrency = config.get("max_concurrency")
        tool_config = {
            k: v for k, v in config.items() if k not in ("callbacks", "run_name", "run_id")
        }
        self._tool_base: dict[str, Any] = {"verbose": verbose}
        if tool_config:
            self._tool_base["config"] = tool_config

    def _child(self) -> Any:
        return self.run.get_child() if self.run is not None else None

    def _tool_kwargs(self, call: ToolCall) -> dict[str, Any]:
        if self.run is None:
            return {**call.run_kwargs, **self._tool_base}
        return {**call.run_kwargs, **self._tool_base, "callbacks": self.run.get_child()}

    def _new_steps(self, before: int) -> list[Event]:
        return [("step", AgentStep(a, o)) for a, o in self.core.state.steps[before:]]

    def _fail(self, exc: BaseException, extra: list[tuple[AgentAction, Any]]) -> None:
        attach_steps(exc, [*self.core.state.steps, *extra])


class SyncDriver(_DriverBase):
    """Runs the core on the calling thread; tools on daemon workers when several or deadlined."""

    def events(self) -> Iterator[Event]:
        """Carry out effects until the run is done, yielding its events."""
        core = self.core
        while True:
            effect = core.next()
            if type(effect) is Plan:
                self._plan(effect)
            elif type(effect) is Act:
                if not self.emit:
                    core.send(self._act(effect.calls))
                    continue
                if effect.announce:
                    for call in effect.calls:
                        yield ("action", call.action)
                before = len(core.state.steps)
                core.send(self._act(effect.calls))
                yield from self._new_steps(before)
                if core.state.phase == "plan":
                    yield ("iteration", core.state.steps[before:])
            elif type(effect) is Done:
                self._finish(effect.finish)
                yield ("finish", effect.finish)
                return
            else:
                core.send(self._stopped_response(effect.method))

    def _plan(self, effect: Plan) -> None:
        remaining = self.core.remaining() if self.timed else None
        try:
            if remaining is None:
                output = self.agent.plan(effect.steps, self._child(), **self.inputs)
            else:
                output = _wait_one(self._plan_call, effect.steps, remaining)
        except OutputParserException as exc:
            output = exc
        except _Deadline:
            self.core.deadline_passed()
            return
        self.core.send(output)

    def _plan_call(self, steps: list[tuple[AgentAction, Any]]) -> Any:
        return self.agent.plan(steps, self._child(), **self.inputs)

    def _run_tool(self, call: ToolCall) -> Any:
        if self.run is not None:
            self.run.fire("on_agent_action", call.action, color="green")
        return call.tool.run(call.tool_input, **self._tool_kwargs(call))

    def _act(self, calls: list[ToolCall]) -> list[Any] | ActTimeout:
        remaining = self.core.remaining() if self.timed else None
        if remaining is None and (len(calls) == 1 or self.max_concurrency == 1):
            return self._act_inline(calls)
        import concurrent.futures

        from actloop.runnables._workers import submit

        futures = [submit(self._run_tool, call) for call in calls]
        timeout = None if remaining is None else max(remaining, 0.0)
        done, _ = concurrent.futures.wait(
            futures, timeout=timeout, return_when=concurrent.futures.FIRST_EXCEPTION
        )
        finished, error = _collect(futures, done)
        if error is not None:
            self._fail(error, [(calls[i].action, obs) for i, obs in sorted(finished.items())])
            raise error
        if len(done) < len(futures):
            return ActTimeout(finished)
        return [finished[i] for i in range(len(calls))]

    def _act_inline(self, calls: list[ToolCall]) -> list[Any]:
        results: list[Any] = []
        for call in calls:
            try:
                results.append(self._run_tool(call))
            except BaseException as exc:
                # The calls before this one finished: pair them with their results.
                self._fail(exc, [(c.action, o) for c, o in zip(calls, results, strict=False)])
                raise
        return results

    def _stopped_response(self, method: str) -> AgentFinish:
        steps = self.core.state.steps
        if method == "generate":
            return self.agent.return_stopped_response(method, steps, self._child(), **self.inputs)
        return self.agent.return_stopped_response(method, steps, **self.inputs)

    def _finish(self, finish: AgentFinish) -> None:
        if self.run is not None:
            self.run.fire("on_agent_finish", finish, color="green", verbose=self.verbose)


class _Deadline(Exception):
    """The deadline passed while waiting on a worker."""


def _wait_one(fn: Any, arg: Any, remaining: float) -> Any:
    """Run `fn(arg)` on a daemon worker and wait at most `remaining` seconds."""
    import concurrent.futures

    from actloop.runnables._workers import submit

    future = submit(fn, arg)
    try:
        return future.result(timeout=max(remaining, 0.0))
    except concurrent.futures.TimeoutError:
        if not future.done():
            raise _Deadline from None
        return future.result()  # `fn` itself raised TimeoutError (or finished just now)


class _Fatal(Exception):
    """Carries a tool's KeyboardInterrupt or SystemExit out of a child task (see AsyncDriver)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(error)
        self.error = error


def _collect(futures: list[Any], done: set[Any]) -> tuple[dict[int, Any], BaseException | None]:
    """Results of the finished futures by index, and the first error in action order."""
    finished: dict[int, Any] = {}
    error: BaseException | None = None
    for i, future in enumerate(futures):
        if future not in done:
            continue
        exc = future.exception()
        if exc is None:
            finished[i] = future.result()
        elif error is None:
            error = exc.error if isinstance(exc, _Fatal) else exc
    return finished, error


async def _within(call: Any, remaining: float) -> Any:
    """Await `call` for at most `remaining` seconds, then cancel it and raise `_Deadline`.

    Unlike `asyncio.wait_for`, a TimeoutError raised by the call itself is not taken for the
    deadline, and a call that ignores its cancellation is abandoned rather than awaited.
    """
    import asyncio

    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait((task,), timeout=max(remaining, 0.0))
    except BaseException:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise _Deadline
    return task.result()


class AsyncDriver(_DriverBase):
    """Runs the core on the event loop; tool calls are tasks, cancelled at the deadline."""

    async def events(self) -> AsyncIterator[Event]:
        """Carry out effects until the run is done, yielding its events."""
        core = self.core
        while True:
            effect = core.next()
            if type(effect) is Plan:
                await self._plan(effect)
            elif type(effect) is Act:
                if not self.emit:
                    core.send(await self._act(effect.calls))
                    continue
                if effect.announce:
                    for call in effect.calls:
                        yield ("action", call.action)
                before = len(core.state.steps)
                core.send(await self._act(effect.calls))
                for event in self._new_steps(before):
                    yield event
                if core.state.phase == "plan":
                    yield ("iteration", core.state.steps[before:])
            elif type(effect) is Done:
                if self.run is not None:
                    await self.run.afire(
                        "on_agent_finish", effect.finish, color="green", verbose=self.verbose
                    )
                yield ("finish", effect.finish)
                return
            else:
                core.send(await self._stopped_response(effect.method))

    async def _plan(self, effect: Plan) -> None:
        remaining = self.core.remaining() if self.timed else None
        call = self.agent.aplan(effect.steps, self._child(), **self.inputs)
        try:
            if remaining is None:
                output = await call
            else:
                output = await _within(call, remaining)
        except OutputParserException as exc:
            output = exc
        except _Deadline:
            self.core.deadline_passed()
            return
        self.core.send(output)

    async def _run_tool(self, call: ToolCall) -> Any:
        # LangChain's async path fires no on_agent_action for a parse-error (_Exception) step.
        if self.run is not None and call.tool is not _EXCEPTION_TOOL.get(ExceptionTool):
            await self.run.afire(
                "on_agent_action", call.action, verbose=self.verbose, color="green"
            )
        return await call.tool.arun(call.tool_input, **self._tool_kwargs(call))

    async def _run_tool_task(self, call: ToolCall) -> Any:
        """`_run_tool` as a child task: KeyboardInterrupt and SystemExit go to the run's task.

        asyncio raises them out of the event loop from the child task, past the run's error
        handling (no steps attached, no `on_chain_error`); boxed, `_act` re-raises them.
        """
        try:
            return await self._run_tool(call)
        except (KeyboardInterrupt, SystemExit) as exc:
            raise _Fatal(exc) from None

    async def _act(self, calls: list[ToolCall]) -> list[Any] | ActTimeout:
        import asyncio

        remaining = self.core.remaining() if self.timed else None
        if remaining is None and len(calls) == 1:
            try:
                return [await self._run_tool(calls[0])]
            except BaseException as exc:
                self._fail(exc, [])
                raise
        tasks = [asyncio.ensure_future(self._run_tool_task(call)) for call in calls]
        timeout = None if remaining is None else max(remaining, 0.0)
        try:
            done, pending = await asyncio.wait(
                tasks, timeout=timeout, return_when=asyncio.FIRST_EXCEPTION
            )
        except BaseException:
            for task in tasks:
                task.cancel()
            raise
        for task in pending:
            task.cancel()
        finished, error = _collect(tasks, done)
        if error is not None:
            self._fail(error, [(calls[i].action, obs) for i, obs in sorted(finished.items())])
            raise error
        if pending:
            return ActTimeout(finished)
        return [finished[i] for i in range(len(calls))]

    async def _stopped_response(self, method: str) -> AgentFinish:
        steps = self.core.state.steps
        if method == "generate":
            return await self.agent.areturn_stopped_response(
                method, steps, self._child(), **self.inputs
            )
        return self.agent.return_stopped_response(method, steps, **self.inputs)
