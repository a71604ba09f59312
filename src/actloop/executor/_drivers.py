"""Thin sync and async drivers of the loop core: they carry out its effects and report its events.

The two are mirrors; only the thread-versus-task part differs. Every rule (which events a step
emits, the stop call, when `on_agent_action` fires, how many calls run at once, what a tool
failure does) is asked of the core (`_loop`). Sync: one tool runs inline; several run on daemon
workers (`actloop.runnables._workers`), results in action order. With a deadline every plan and
tool call runs on a worker and the driver stops waiting when the deadline passes: a hung call is
abandoned, never joined (how it waits is in `_waits`). Async: calls are tasks; at the deadline
pending tasks are cancelled.

A durable run is attached with `durable`: its effects come from the durable run (`flow`), which
adds `Write` effects (journal entries to write) to the loop's, and its store calls (around each
tool call, and for a `Write`) are carried out by the run's `SyncStore` or `AsyncStore`; each of
its tool calls runs with its note handle (`actloop.tools.call_note`, see `_notes`).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from actloop.exceptions import OutputParserException
from actloop.executor._agents import RUNNABLE_PLAN, plan_with
from actloop.executor._loop import Act, ActTimeout, Done, Event, LoopCore, Plan, Stop, ToolCall
from actloop.executor._waits import (
    HALTS,
    Deadline,
    Fatal,
    collect,
    run_window,
    stop_if_halted,
    wait_one,
    within,
)
from actloop.runnables._config import RunnableConfig
from actloop.tools._input import CURRENT, NeedsInput
from actloop.tools._notes import NOTE

if TYPE_CHECKING:
    import asyncio

    from actloop.callbacks._manager import CallbackManager, RunManager
    from actloop.executor._durable import DurableRun, Write
    from actloop.executor._storage import AsyncStore, SyncStore
    from actloop.steps import AgentFinish

__all__ = ["AsyncDriver", "SyncDriver"]

Calls = list[ToolCall]


class _DriverBase:
    """What both drivers share: the agent, the core, the run's callbacks and tool config."""

    durable: Any
    """A durable run's store calls (`SyncStore` or `AsyncStore`), None when not durable."""

    def __init__(
        self,
        agent: Any,
        core: LoopCore,
        run: RunManager | None,
        config: RunnableConfig,
        verbose: bool = False,
        emit: bool = True,
    ) -> None:
        self.agent = agent
        self.core = core
        self.run = run
        self.verbose = verbose
        self.emit = emit
        """False when only the finish matters (invoke): no action/step events are built."""
        self.flow: LoopCore | DurableRun = core
        """Where effects come from and results go: the core, or a durable run around it."""
        self.durable = None  # an instance attribute: read on every tool call
        self.timed = core.settings.max_execution_time is not None
        """Whether the run has a deadline (otherwise no clock reads for it)."""
        self.inputs = core.state.inputs
        tool_config = {
            k: v for k, v in config.items() if k not in ("callbacks", "run_name", "run_id")
        }
        self._tool_base: dict[str, Any] = {"verbose": verbose}
        if tool_config:
            self._tool_base["config"] = tool_config

    def _child(self) -> CallbackManager | None:
        return self.run.get_child() if self.run is not None else None

    def _tool_kwargs(self, call: ToolCall) -> dict[str, Any]:
        run = self.run
        if run is None:
            return {**call.run_kwargs, **self._tool_base}
        return {**call.run_kwargs, **self._tool_base, "callbacks": run.get_child()}

    def _stop_args(self, effect: Stop) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Arguments of the stopped-response call; `generate` is a model call with callbacks."""
        steps = self.core.state.steps
        if effect.generate:
            return (effect.method, steps, self._child()), self.inputs
        return (effect.method, steps), self.inputs


class SyncDriver(_DriverBase):
    """Runs the core on the calling thread; tools on daemon workers when several or deadlined."""

    durable: SyncStore | None

    def attach(self, durable: SyncStore) -> None:
        """Run a durable run: its effects, and its store calls around each tool call."""
        self.durable, self.flow = durable, durable.run

    def events(self) -> Iterator[Event]:
        """Carry out effects until the run is done, yielding its events."""
        core, flow = self.core, self.flow
        while True:
            effect = flow.next()
            if type(effect) is Plan:
                self._plan(effect)
            elif type(effect) is Act:
                if not self.emit:
                    flow.send(self._act(effect.calls))
                    continue
                yield from core.announced(effect)
                before = len(core.state.steps)
                flow.send(self._act(effect.calls))
                yield from core.stepped(before)
            elif type(effect) is Done:
                self._finished(effect)
                yield ("finish", effect.finish)
                return
            else:
                self._carry(effect)

    def finish(self) -> AgentFinish:
        """Carry out effects until the run is done and return its finish: `events()` without
        events, for `invoke` (no generator to step through)."""
        flow = self.flow
        while True:
            effect = flow.next()
            if type(effect) is Act:
                flow.send(self._act(effect.calls))
            elif type(effect) is Plan:
                self._plan(effect)
            elif type(effect) is Done:
                self._finished(effect)
                return effect.finish
            else:
                self._carry(effect)

    def _finished(self, effect: Done) -> None:
        if self.run is not None:
            self.run.fire("on_agent_finish", effect.finish, color="green", verbose=self.verbose)

    def _carry(self, effect: Stop | Write) -> None:
        """The rarer effects: the stop call, a durable run's journal entries."""
        if type(effect) is Stop:
            if HALTS.get():
                stop_if_halted()
            self.flow.send(self._stop(effect))
        else:
            self._write(effect)

    def _write(self, effect: Write) -> None:
        """A durable run's journal entries, written before the loop goes on."""
        assert self.durable is not None
        self.durable.carry(effect.ops)

    def _stop(self, effect: Stop) -> Any:
        """The stopped response; a `generate` call past the deadline gives way to `late_stop`."""
        args, kwargs = self._stop_args(effect)
        call = functools.partial(self.agent.return_stopped_response, *args, **kwargs)
        if effect.within is None:
            return call()
        try:
            return wait_one(call, (), effect.within)
        except Deadline:
            return self._stop(self.core.late_stop())

    def _plan(self, effect: Plan) -> None:
        if HALTS.get():  # inside a worker call: was it abandoned? (then no new step)
            stop_if_halted()
        remaining = self.core.remaining() if self.timed else None
        try:
            if remaining is None:
                run = self.run
                child = run.get_child() if run is not None else None
                agent = self.agent
                if type(agent).plan is RUNNABLE_PLAN:  # pyright: ignore[reportUnknownMemberType]
                    output = plan_with(agent, effect.steps, child, self.inputs)
                else:
                    output = agent.plan(effect.steps, child, **self.inputs)
            else:
                output = wait_one(self._plan_call, (effect.steps,), remaining)
        except OutputParserException as exc:
            output = exc
        except Deadline:
            self.flow.deadline_passed()
            return
        self.flow.send(output)

    def _plan_call(self, steps: list[Any]) -> Any:
        return self.agent.plan(steps, self._child(), **self.inputs)

    def _run_tool(self, call: ToolCall, index: int) -> Any:
        durable = self.durable
        ticket: Any = None
        if durable is not None:
            found, ticket, writes = durable.run.before_call(index, call)
            if writes is not None:
                durable.carry(writes)
            if found:
                return ticket
        if HALTS.get():
            stop_if_halted()
        run = self.run
        if run is None:
            kwargs = {**call.run_kwargs, **self._tool_base}
        else:
            if self.core.fires_action(call, is_async=False):
                run.fire("on_agent_action", call.action, color="green")
            kwargs = self._tool_kwargs(call)
        if durable is None:
            return call.tool.run(call.tool_input, **kwargs)
        if durable.run.lapsed():
            durable.carry(durable.run.renew())
        asking = CURRENT.set(durable.run.input_for(index))  # the tool may ask a person
        noting = NOTE.set((durable, ticket, index, call))  # or leave a note (`_notes`)
        try:
            observation = call.tool.run(call.tool_input, **kwargs)
        except NeedsInput as asked:
            observation = asked  # journaled as its question; the run pauses after the step
        finally:
            NOTE.reset(noting)
            CURRENT.reset(asking)
        durable.carry(durable.run.after_call(ticket, index, call, observation))
        return observation

    def _act(self, calls: Calls) -> list[Any] | ActTimeout:
        if self.durable is not None:
            calls = self.durable.run.gate(calls)
        if len(calls) == 1 and not self.timed:  # the usual step: one call, inline
            try:
                return [self._run_tool(calls[0], 0)]
            except BaseException as exc:
                self.core.failed(exc, calls, {})
                raise
        remaining = self.core.remaining() if self.timed else None
        limit = 1 if len(calls) == 1 else self.core.window(len(calls))
        if remaining is None and limit == 1:
            return self._act_inline(calls)
        timeout = None if remaining is None else max(remaining, 0.0)
        futures, done = run_window(self._run_tool, calls, limit, timeout)
        finished, error = collect(futures, done)
        if error is not None:
            raise self.core.failed(error, calls, finished)
        if len(done) < len(calls):
            return ActTimeout(finished)
        return [finished[i] for i in range(len(calls))]

    def _act_inline(self, calls: Calls) -> list[Any]:
        results: list[Any] = []
        for call in calls:
            try:
                results.append(self._run_tool(call, len(results)))
            except BaseException as exc:
                self.core.failed(exc, calls, dict(enumerate(results)))
                raise
        return results


class AsyncDriver(_DriverBase):
    """Runs the core on the event loop; tool calls are tasks, cancelled at the deadline."""

    durable: AsyncStore | None

    def attach(self, durable: AsyncStore) -> None:
        """Run a durable run: its effects, and its store calls around each tool call."""
        self.durable, self.flow = durable, durable.run

    async def events(self) -> AsyncIterator[Event]:
        """Carry out effects until the run is done, yielding its events."""
        core, flow = self.core, self.flow
        while True:
            effect = flow.next()
            if type(effect) is Plan:
                await self._plan(effect)
            elif type(effect) is Act:
                if not self.emit:
                    flow.send(await self._act(effect.calls))
                    continue
                for event in core.announced(effect):
                    yield event
                before = len(core.state.steps)
                flow.send(await self._act(effect.calls))
                for event in core.stepped(before):
                    yield event
            elif type(effect) is Done:
                await self._finished(effect)
                yield ("finish", effect.finish)
                return
            else:
                await self._carry(effect)

    async def finish(self) -> AgentFinish:
        """Async twin of `SyncDriver.finish`: no async generator (and its event-loop hooks).

        A run without callbacks, deadline or journal has `_plan` and a one-call `_act` (with its
        `_run_tool`) inlined: a coroutine costs more than the call it replaces."""
        flow = self.flow
        plain = self.run is None and not self.timed and self.durable is None
        while True:
            effect = flow.next()
            if type(effect) is Act:
                calls = effect.calls
                if not plain or len(calls) != 1:
                    flow.send(await self._act(calls))
                    continue
                call = calls[0]
                try:
                    if HALTS.get():
                        stop_if_halted()
                    kwargs = {**call.run_kwargs, **self._tool_base}
                    observation = await call.tool.arun(call.tool_input, **kwargs)
                except BaseException as exc:
                    self.core.failed(exc, calls, {})
                    raise
                flow.send([observation])
            elif type(effect) is Plan:
                if not plain:
                    await self._plan(effect)
                    continue
                if HALTS.get():
                    stop_if_halted()
                planned = self.agent.aplan(effect.steps, None, **self.inputs)
                try:
                    output = await planned
                except OutputParserException as exc:
                    output = exc
                except Deadline:
                    flow.deadline_passed()
                    continue
                flow.send(output)
            elif type(effect) is Done:
                await self._finished(effect)
                return effect.finish
            else:
                await self._carry(effect)

    async def _finished(self, effect: Done) -> None:
        if self.run is not None:
            await self.run.afire(
                "on_agent_finish", effect.finish, color="green", verbose=self.verbose
            )

    async def _carry(self, effect: Stop | Write) -> None:
        """The rarer effects: the stop call, a durable run's journal entries."""
        if type(effect) is Stop:
            if HALTS.get():
                stop_if_halted()
            self.flow.send(await self._stop(effect))
        else:
            await self._write(effect)

    async def _write(self, effect: Write) -> None:
        """A durable run's journal entries, written (awaited) before the loop goes on."""
        assert self.durable is not None
        await self.durable.carry(effect.ops)

    async def _stop(self, effect: Stop) -> Any:
        """Async twin of `SyncDriver._stop` (`generate` awaits `areturn_stopped_response`)."""
        args, kwargs = self._stop_args(effect)
        if not effect.generate:
            return self.agent.return_stopped_response(*args, **kwargs)
        call = self.agent.areturn_stopped_response(*args, **kwargs)
        if effect.within is None:
            return await call
        try:
            return await within(call, effect.within)
        except Deadline:
            return await self._stop(self.core.late_stop())

    async def _plan(self, effect: Plan) -> None:
        if HALTS.get():  # inside a worker call: was it abandoned? (then no new step)
            stop_if_halted()
        remaining = self.core.remaining() if self.timed else None
        run = self.run
        child = run.get_child() if run is not None else None
        call = self.agent.aplan(effect.steps, child, **self.inputs)
        try:
            if remaining is None:
                output = await call
            else:
                output = await within(call, remaining)
        except OutputParserException as exc:
            output = exc
        except Deadline:
            self.flow.deadline_passed()
            return
        self.flow.send(output)

    async def _run_tool(self, call: ToolCall, index: int) -> Any:
        durable = self.durable
        ticket: Any = None
        if durable is not None:
            found, ticket, writes = durable.run.before_call(index, call)
            if writes is not None:
                await durable.carry(writes)
            if found:
                return ticket
        if HALTS.get():
            stop_if_halted()
        run = self.run
        if run is None:
            kwargs = {**call.run_kwargs, **self._tool_base}
        else:
            if self.core.fires_action(call, is_async=True):
                await run.afire("on_agent_action", call.action, verbose=self.verbose, color="green")
            kwargs = self._tool_kwargs(call)
        if durable is None:
            return await call.tool.arun(call.tool_input, **kwargs)
        if durable.run.lapsed():
            await durable.carry(durable.run.renew())
        asking = CURRENT.set(durable.run.input_for(index))  # the tool may ask a person
        noting = NOTE.set((durable, ticket, index, call))  # or leave a note (`_notes`)
        try:
            observation = await call.tool.arun(call.tool_input, **kwargs)
        except NeedsInput as asked:
            observation = asked  # journaled as its question; the run pauses after the step
        finally:
            NOTE.reset(noting)
            CURRENT.reset(asking)
        await durable.carry(durable.run.after_call(ticket, index, call, observation))
        return observation

    async def _run_tool_task(
        self, call: ToolCall, index: int, gate: asyncio.Semaphore | None
    ) -> Any:
        """`_run_tool` as a child task: KeyboardInterrupt and SystemExit go to the run's task.

        asyncio raises them out of the event loop from the child task, past the run's error
        handling (no steps attached, no `on_chain_error`); boxed, `_act` re-raises them.
        `gate` holds the call back while `max_concurrency` calls are running.
        """
        try:
            if gate is None:
                return await self._run_tool(call, index)
            async with gate:
                return await self._run_tool(call, index)
        except (KeyboardInterrupt, SystemExit) as exc:
            raise Fatal(exc) from None

    async def _act(self, calls: Calls) -> list[Any] | ActTimeout:
        if self.durable is not None:
            calls = self.durable.run.gate(calls)
        remaining = self.core.remaining() if self.timed else None
        if remaining is None and len(calls) == 1:  # the usual step: no import statement run
            try:
                return [await self._run_tool(calls[0], 0)]
            except BaseException as exc:
                self.core.failed(exc, calls, {})
                raise
        import asyncio

        from actloop.runnables._workers import abandon, tracking

        limit = self.core.window(len(calls))
        gate = asyncio.Semaphore(limit) if limit < len(calls) else None
        with tracking() as started:  # the tasks' sync tools record their worker calls here
            tasks = [
                asyncio.ensure_future(self._run_tool_task(call, i, gate))
                for i, call in enumerate(calls)
            ]
        timeout = None if remaining is None else max(remaining, 0.0)
        pending: set[asyncio.Task[Any]] = set(tasks)  # all of them, if the wait is interrupted
        try:
            done, pending = await asyncio.wait(
                tasks, timeout=timeout, return_when=asyncio.FIRST_EXCEPTION
            )
        finally:
            if pending:  # no queued call may start once we stop waiting
                abandon(started)
                for task in pending:
                    task.cancel()
        finished, error = collect(tasks, done)
        if error is not None:
            raise self.core.failed(error, calls, finished)
        if pending:
            return ActTimeout(finished)
        return [finished[i] for i in range(len(calls))]
