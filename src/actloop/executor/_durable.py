"""Durable runs: the journaling sync and async drivers, and what `resume()` asks of them.

`AgentExecutor` hands a run to these drivers when it has a checkpointer and the config names a
`configurable.thread_id`. A `DurableRun` takes the thread's lease, creates the run record (new
run) or replays the journal (resume, see `_journal`), records a person's decisions, and then lets
the ordinary SyncDriver/AsyncDriver loop go on with three hooks: `gate` before a step's tools
run (edits, approvals, unfinished unsafe calls), `before_call`/`after_call` around each tool call
(known results, rejections, "start" and "obs" entries). A step with a `requires_approval` call
that has no decision pauses the run: `invoke` returns
`{**inputs, "pending_approvals": [{"id", "tool", "tool_input", "log"}], "thread_id", "status":
"paused"}` and `resume(thread_id, approve=..., reject=..., edit=...)` goes on.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from actloop.agents import AgentFinish
from actloop.callbacks._manager import RunManager
from actloop.checkpoint import BaseCheckpointer, Owner, RunRecord
from actloop.exceptions import CheckpointError, ConfigurationError
from actloop.executor._drivers import AsyncDriver, Event, SyncDriver
from actloop.executor._journal import (
    Clock,
    Decision,
    Journal,
    JournalCore,
    Request,
    apply_edits,
    approvals,
    call_id,
    encode,
    fingerprint,
    rejection,
    rejections,
    replay,
)
from actloop.executor._loop import Act, ActTimeout, LoopState, ToolCall
from actloop.runnables._config import RunnableConfig, ensure_config
from actloop.serialization import dumps, loads

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor

__all__ = [
    "PAUSED_KEY",
    "DurableAsyncDriver",
    "DurableSyncDriver",
    "durable_driver",
    "resume_request",
]

PAUSED_KEY = "pending_approvals"
"""Key of a paused run's result that lists the calls waiting for a decision."""
RESUME_KEY = "__actloop_resume__"
"""`configurable` key by which `resume()` hands its Request to the driver (removed before tools)."""


class Paused(Exception):
    """Raised by `gate` when a step waits for approval; the driver turns it into the result."""

    def __init__(self, pending: list[dict[str, Any]]) -> None:
        super().__init__(f"{len(pending)} tool call(s) wait for approval")
        self.pending = pending


def _idempotent(call: ToolCall) -> bool:
    return bool(getattr(call.tool, "idempotent", True))


def _needs_approval(call: ToolCall) -> bool:
    return bool(getattr(call.tool, "requires_approval", False))


class DurableRun:
    """One durable run's bookkeeping around the loop: lease, record, replay, decisions, status."""

    def __init__(
        self,
        store: BaseCheckpointer,
        thread_id: str,
        core: JournalCore,
        fingerprint: str,
        request: Request | None,
    ) -> None:
        self.store, self.thread_id, self.core = store, thread_id, core
        self.fingerprint = fingerprint
        self.request = request
        """None for a new run (invoke, stream), else what `resume()` was given."""
        self.owner = Owner.current()
        self.journal = Journal(store, thread_id, core.clock)
        self.leased = self.started = False
        self.tail_act = 0
        self.known: dict[int, Any] = {}
        self.starts: dict[int, int] = {}
        self.decisions: dict[tuple[int, int], Decision] = {}

    # -- opening -------------------------------------------------------------------------------

    def open(self) -> None:
        """Take the lease, then create the run or bring it back to where it stopped."""
        self.store.acquire(self.thread_id, self.owner)
        self.leased = True
        record = self.store.get(self.thread_id)
        if self.request is None:
            self._create(record)
        else:
            self._resume(record, self.request)

    def _create(self, record: RunRecord | None) -> None:
        name = self.thread_id
        if record is not None and record.status == "finished":
            raise CheckpointError(
                f"thread {name!r} already finished; start a new run under a new thread_id "
                f"(or delete it with checkpointer.delete({name!r}))"
            )
        if record is not None:
            raise CheckpointError(
                f"thread {name!r} has an unfinished run ({record.status}); resume it with "
                f"executor.resume({name!r}) instead of invoking it again"
            )
        inputs = encode(self.core.state.inputs, "the run's inputs")
        self.store.create(RunRecord(name, "running", inputs, self.fingerprint))
        self._go_live(0.0)

    def _resume(self, record: RunRecord | None, request: Request) -> None:
        check_resumable(record, self.thread_id, self.store)
        assert record is not None
        self._check_fingerprint(record.fingerprint)
        entries = self.store.entries(self.thread_id)
        tail = replay(self.core, entries, self.thread_id)
        self.known, self.starts, self.decisions = tail.known, tail.starts, tail.decisions
        self.tail_act = self.core.act
        self.journal.seq = entries[-1].seq + 1 if entries else 0
        self.journal.act, self.journal.act_elapsed = self.core.act, tail.act_elapsed
        self._go_live(max(tail.elapsed, self.core.state.elapsed))
        self.store.update(self.thread_id, "running")
        self._decide(request)

    def _go_live(self, elapsed: float) -> None:
        self.core.journal = self.journal
        self.core.clock.go_live(elapsed)
        self.started = True

    def _check_fingerprint(self, saved: str) -> None:
        old, new = json.loads(saved), json.loads(self.fingerprint)
        for key, value in new.items():
            if old.get(key) != value:
                raise CheckpointError(
                    f"thread {self.thread_id!r} was saved by an executor with {key}="
                    f"{old.get(key)!r}; this one has {value!r}. Resume it with the same tools "
                    "and limits."
                )

    # -- decisions -----------------------------------------------------------------------------

    def _waiting(self, calls: list[ToolCall]) -> tuple[list[int], list[int]]:
        """Indices of the step's calls that need a decision: (unfinished unsafe, unapproved)."""
        act = self.core.act
        unsafe: list[int] = []
        unapproved: list[int] = []
        for i, call in enumerate(calls):
            if i in self.known:
                continue
            decision = self.decisions.get((act, i))
            started = self.starts.get(i)
            if started is not None and not _idempotent(call):
                if decision is None or decision.seq < started:
                    unsafe.append(i)
            elif decision is None and _needs_approval(call):
                unapproved.append(i)
        return unsafe, unapproved

    def _decide(self, request: Request) -> None:
        """Journal the decisions `resume()` was given, after checking they fit the waiting calls."""
        effect = self.core.next() if self.core.state.phase == "act" else None
        unsafe, unapproved = self._waiting(effect.calls if isinstance(effect, Act) else [])
        waiting = {call_id(self.core.act, i): i for i in [*unsafe, *unapproved]}
        approve = request.approve
        if approve is True:
            approve = frozenset(waiting) - set(request.reject) - set(request.edit)
        chosen = [
            *((i, "approve") for i in (approve or frozenset[str]())),
            *((i, "reject") for i in request.reject),
            *((i, "edit") for i in request.edit),
        ]
        ids = [i for i, _ in chosen]
        unknown = sorted(set(ids) - set(waiting))
        if unknown:
            raise CheckpointError(
                f"thread {self.thread_id!r} has no call waiting for a decision with id "
                f"{', '.join(unknown)}; waiting: {sorted(waiting) or 'none'}"
            )
        if len(set(ids)) < len(ids):
            raise CheckpointError(f"a call got more than one decision: {sorted(ids)}")
        for ident, kind in chosen:
            self._record_decision(waiting[ident], kind, request)
        apply_edits(self.core.state, self.core.act, self.decisions)

    def _record_decision(self, index: int, kind: str, request: Request) -> None:
        ident = call_id(self.core.act, index)
        reason = request.reject.get(ident) if kind == "reject" else None
        tool_input = request.edit.get(ident) if kind == "edit" else None
        data = {"decision": kind, "reason": reason, "tool_input": tool_input}
        decision = Decision(kind, reason, tool_input, self.journal.seq)
        self.journal.write("decision", self.core.act, index, data=encode(data, "the decision"))
        self.decisions[self.core.act, index] = decision

    # -- hooks around a step -------------------------------------------------------------------

    def gate(self, calls: list[ToolCall]) -> list[ToolCall]:
        """Before a step's tools run (edits are already in the step): stop for unsafe repeats or
        missing approvals."""
        act = self.core.act
        if act != self.tail_act:
            self.known, self.starts = {}, {}
        unsafe, unapproved = self._waiting(calls)
        if unsafe:
            i = unsafe[0]
            ident = call_id(act, i)
            raise CheckpointError(
                f"tool {calls[i].action.tool!r} (call {ident}) was running when thread "
                f"{self.thread_id!r} stopped, and it is not safe to repeat (idempotent=False). "
                f"Check whether it took effect, then resume with approve=[{ident!r}] to run it "
                f"again, or reject={{{ident!r}: 'what happened'}} to go on without it"
            )
        if unapproved:
            raise Paused([self._pending(act, i, calls[i]) for i in unapproved])
        return calls

    @staticmethod
    def _pending(act: int, index: int, call: ToolCall) -> dict[str, Any]:
        action = call.action
        return {
            "id": call_id(act, index),
            "tool": action.tool,
            "tool_input": action.tool_input,
            "log": action.log,
        }

    def before_call(self, call: ToolCall, calls: list[ToolCall]) -> tuple[int, int, bool, Any]:
        """(act, index, found, observation): a known or rejected call is not run."""
        act = self.core.act
        index = next(i for i, c in enumerate(calls) if c is call)
        if act == self.tail_act and index in self.known:
            return act, index, True, self.known[index]
        decision = self.decisions.get((act, index))
        if decision is not None and decision.kind == "reject":
            observation = rejection(call.action.tool, decision.reason)
            self.after_call(act, index, call, observation)
            return act, index, True, observation
        if not _idempotent(call):
            self.journal.write("start", act, index)
        return act, index, False, None

    def after_call(self, act: int, index: int, call: ToolCall, observation: Any) -> None:
        """Journal a call's observation (its own transaction)."""
        data = encode(observation, f"the observation of tool {call.action.tool!r}")
        self.journal.write("obs", act, index, data=data)

    # -- ending --------------------------------------------------------------------------------

    def finished(self, finish: AgentFinish) -> None:
        """The run is done: save its outputs."""
        output = dumps(finish.return_values)
        self.store.update(self.thread_id, "finished", output=output)

    def pause(self, paused: Paused) -> AgentFinish:
        """Save the paused state; the finish whose values `invoke` returns."""
        self.store.update(self.thread_id, "paused", pending=dumps(paused.pending))
        values = {PAUSED_KEY: paused.pending, "thread_id": self.thread_id, "status": "paused"}
        return AgentFinish(values, "")

    def failed(self, exc: BaseException) -> None:
        """An exception ends the run: mark it failed (resumable), unless it was not ours."""
        if not self.started or isinstance(exc, GeneratorExit):
            return
        with contextlib.suppress(CheckpointError):
            self.store.update(self.thread_id, "failed", error=f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Stop journaling and give up the lease."""
        self.journal.closed = True
        if self.leased:
            with contextlib.suppress(CheckpointError):
                self.store.release(self.thread_id, self.owner)
            self.leased = False


def check_resumable(record: RunRecord | None, thread_id: str, store: BaseCheckpointer) -> None:
    """CheckpointError unless `record` is an unfinished run."""
    if record is None:
        raise CheckpointError(f"no run is saved under thread {thread_id!r} in {store!r}")
    if record.status == "finished":
        raise CheckpointError(f"thread {thread_id!r} already finished; there is nothing to resume")


class DurableSyncDriver(SyncDriver):
    """SyncDriver that journals its run; see the module docstring."""

    durable: DurableRun
    _calls: list[ToolCall]

    def events(self) -> Iterator[Event]:
        """The run's events; a pause ends them with the pending-approvals finish."""
        run = self.durable
        try:
            run.open()
            for kind, value in super().events():
                if kind == "finish":
                    run.finished(value)
                yield kind, value
        except Paused as paused:
            yield ("finish", run.pause(paused))
        except BaseException as exc:
            run.failed(exc)
            raise
        finally:
            run.close()

    def _act(self, calls: list[ToolCall]) -> list[Any] | ActTimeout:
        self._calls = self.durable.gate(calls)
        return super()._act(self._calls)

    def _run_tool(self, call: ToolCall) -> Any:
        act, index, found, observation = self.durable.before_call(call, self._calls)
        if found:
            return observation
        observation = super()._run_tool(call)
        self.durable.after_call(act, index, call, observation)
        return observation


class DurableAsyncDriver(AsyncDriver):
    """AsyncDriver that journals its run (the SQLite writes are inline: microseconds each)."""

    durable: DurableRun
    _calls: list[ToolCall]

    async def events(self) -> AsyncIterator[Event]:
        """The run's events; a pause ends them with the pending-approvals finish."""
        run = self.durable
        try:
            run.open()
            async for kind, value in super().events():
                if kind == "finish":
                    run.finished(value)
                yield kind, value
        except Paused as paused:
            yield ("finish", run.pause(paused))
        except BaseException as exc:
            run.failed(exc)
            raise
        finally:
            run.close()

    async def _act(self, calls: list[ToolCall]) -> list[Any] | ActTimeout:
        self._calls = self.durable.gate(calls)
        return await super()._act(self._calls)

    async def _run_tool(self, call: ToolCall) -> Any:
        act, index, found, observation = self.durable.before_call(call, self._calls)
        if found:
            return observation
        observation = await super()._run_tool(call)
        self.durable.after_call(act, index, call, observation)
        return observation


def durable_driver(
    executor: AgentExecutor,
    cls: type[SyncDriver] | type[AsyncDriver],
    state: LoopState,
    run: RunManager | None,
    config: RunnableConfig,
    emit: bool,
) -> DurableSyncDriver | DurableAsyncDriver:
    """A journaling driver for `executor`'s run under `config["configurable"]["thread_id"]`."""
    configurable = dict(config.get("configurable") or {})
    thread_id = str(configurable["thread_id"])
    request: Request | None = configurable.pop(RESUME_KEY, None)
    config = {**config, "configurable": configurable}
    settings = executor._settings()  # pyright: ignore[reportPrivateUsage]
    durable_cls = DurableSyncDriver if issubclass(cls, SyncDriver) else DurableAsyncDriver
    driver = durable_cls(executor.agent, settings, state, run, config, executor.verbose, emit)
    core = JournalCore(settings, state, Clock())
    driver.core = core
    store = executor.checkpointer
    assert store is not None
    driver.durable = DurableRun(store, thread_id, core, fingerprint(settings), request)
    return driver


def resume_request(
    executor: AgentExecutor,
    thread_id: str,
    config: RunnableConfig | None,
    approve: bool | Iterable[str] | None,
    reject: Mapping[str, str | None] | Iterable[str] | None,
    edit: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], RunnableConfig]:
    """The saved inputs and the config that make `invoke` resume `thread_id` with decisions."""
    store: BaseCheckpointer | None = executor.checkpointer
    if store is None:
        raise ConfigurationError(
            "resume() needs a checkpointer: pass AgentExecutor(..., "
            "checkpointer=SqliteCheckpointer(path))"
        )
    record = store.get(thread_id)
    check_resumable(record, thread_id, store)
    assert record is not None
    request = Request(approvals(approve), rejections(reject), dict(edit or {}))
    base: dict[str, Any] = dict(ensure_config(config))
    configurable = {**base.get("configurable", {}), "thread_id": thread_id, RESUME_KEY: request}
    return loads(record.inputs), cast(RunnableConfig, {**base, "configurable": configurable})
