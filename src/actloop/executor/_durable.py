"""Durable runs: journaling hooks composed into any driver, and what `resume()` asks of them.

A run (`_run.AgentRun`) becomes durable when its executor has a checkpointer and the config names
a `configurable.thread_id`. A `DurableRun` takes the thread's lease, creates the run record (new
run) or replays the journal (resume, see `_journal`), records a person's decisions, and then lets
the ordinary SyncDriver/AsyncDriver loop go on with its step hooks: `gate` before a step's tools
run (edits, approvals, unfinished unsafe calls), `before_call`/`after_call` around each tool call
(known results, rejections, "start" and "obs" entries). Every write carries the run's lease, so a
run whose lease was taken over is refused instead of writing twice. A step with a
`requires_approval` call that has no decision pauses the run: `invoke` returns
`{**inputs, "pending_approvals": [{"id", "tool", "tool_input", "log"}], "thread_id", "status":
"paused"}` and `resume(thread_id, approve=..., reject=..., edit=...)` goes on.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Generator, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from actloop.agents import AgentFinish
from actloop.checkpoint import BaseCheckpointer, Lease, Owner, RunRecord
from actloop.exceptions import CheckpointError, ConfigurationError
from actloop.executor._journal import (
    TOO_DEEP,
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
    too_deep,
)
from actloop.executor._loop import Act, ToolCall
from actloop.runnables._config import RunnableConfig, ensure_config
from actloop.serialization import dumps, loads

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor
    from actloop.executor._run import AgentRun

__all__ = [
    "PAUSED_KEY",
    "DurableRun",
    "Heartbeat",
    "Paused",
    "durable_run",
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
    """One durable run's bookkeeping around the loop: lease, record, replay, decisions, status.

    Its `gate`, `before_call` and `after_call` are the step hooks (`_drivers.StepHooks`)."""

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
        self.heartbeat: Heartbeat | None = None
        self.journal = Journal(store, thread_id, core.clock)
        self.started = False
        self.tail_act = 0
        self.known: dict[int, Any] = {}
        self.starts: dict[int, int] = {}
        self.decisions: dict[tuple[int, int], Decision] = {}
        self.context: dict[str, str] = {}
        """Trace propagation fields of this run (a W3C `traceparent`), set by a tracing handler
        and journaled when the run opens, so that a resume can link back to it."""
        self.previous_context: dict[str, str] = {}
        """The propagation fields of the latest run of this thread before this one (on resume)."""

    @property
    def lease(self) -> Lease | None:
        """The thread's lease while the run holds it (the journal writes under it too)."""
        return self.journal.lease

    # -- opening -------------------------------------------------------------------------------

    def open(self) -> None:
        """Take the lease, then create the run or bring it back to where it stopped."""
        lease = self.journal.lease = self.store.acquire(self.thread_id, self.owner)
        if lease.expires is not None:
            self.heartbeat = Heartbeat(self.store, lease)
        record = self.store.get(self.thread_id)
        if self.request is None:
            self._create(record)
        else:
            self._resume(record, self.request)
        if self.context:
            self.journal.write("context", data=json.dumps(self.context))

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
        self.store.create(RunRecord(name, "running", inputs, self.fingerprint), lease=self.lease)
        self._go_live(0.0)

    def _resume(self, record: RunRecord | None, request: Request) -> None:
        check_resumable(record, self.thread_id, self.store)
        assert record is not None
        entries = self.store.entries(self.thread_id)
        contexts = [e.data for e in entries if e.kind == "context" and e.data]
        self.previous_context = json.loads(contexts[-1]) if contexts else {}
        with damaged_journal(self.thread_id):
            self._check_fingerprint(record.fingerprint)
            tail = replay(self.core, entries, self.thread_id)
        self.known, self.starts, self.decisions = tail.known, tail.starts, tail.decisions
        self.tail_act = self.core.act
        self.journal.seq = entries[-1].seq + 1 if entries else 0
        self.journal.act, self.journal.act_elapsed = self.core.act, tail.act_elapsed
        self._go_live(max(tail.elapsed, self.core.state.elapsed))
        self.store.update(self.thread_id, "running", lease=self.lease)
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

    def before_call(self, index: int, call: ToolCall) -> tuple[bool, Any]:
        """(True, observation) for a known or rejected call, which is not run; else (False,
        ticket): the ticket (the step number) goes back to `after_call`, so a call abandoned at a
        deadline that finishes late is not journaled into a later step."""
        act = self.core.act
        if act == self.tail_act and index in self.known:
            return True, self.known[index]
        decision = self.decisions.get((act, index))
        if decision is not None and decision.kind == "reject":
            observation = rejection(call.action.tool, decision.reason)
            self.after_call(act, index, call, observation)
            return True, observation
        if isinstance(call.action.tool_input, str) and call.action.tool_input == TOO_DEEP:
            observation = too_deep(call.action.tool)
            self.after_call(act, index, call, observation)
            return True, observation
        if self.heartbeat is not None:
            self.heartbeat.ensure()  # a run that stalled past its lease starts no more calls
        if not _idempotent(call):
            self.journal.write("start", act, index)
        return False, act

    def after_call(self, ticket: int, index: int, call: ToolCall, observation: Any) -> None:
        """Journal a call's observation (its own transaction)."""
        data = encode(observation, f"the observation of tool {call.action.tool!r}")
        self.journal.write("obs", ticket, index, data=data)

    # -- ending --------------------------------------------------------------------------------

    def finished(self, finish: AgentFinish) -> None:
        """The run is done: save its outputs."""
        output = dumps(finish.return_values)
        self.store.update(self.thread_id, "finished", lease=self.lease, output=output)

    def pause(self, paused: Paused) -> AgentFinish:
        """Save the paused state; the finish whose values `invoke` returns."""
        self.store.update(self.thread_id, "paused", lease=self.lease, pending=dumps(paused.pending))
        values = {PAUSED_KEY: paused.pending, "thread_id": self.thread_id, "status": "paused"}
        return AgentFinish(values, "")

    def failed(self, exc: BaseException) -> None:
        """An exception ends the run: mark it failed (resumable), unless it was not ours."""
        if not self.started or isinstance(exc, GeneratorExit):
            return
        with contextlib.suppress(CheckpointError):
            error = f"{type(exc).__name__}: {exc}"
            self.store.update(self.thread_id, "failed", lease=self.lease, error=error)

    def close(self) -> None:
        """Stop journaling and give up the lease."""
        self.journal.closed = True
        if self.heartbeat is not None:
            self.heartbeat.stop()
            self.heartbeat = None
        lease, self.journal.lease = self.journal.lease, None
        if lease is None:
            return
        try:
            self.store.release(lease)
        except Exception:  # the store cannot write now (disk full): keep trying in the background
            release_later(self.store, lease)


class Heartbeat:
    """Renews a lease that expires, every third of its time to live, until stopped.

    A renewal that fails (the lease was taken over, or the store is unreachable) ends the
    heartbeat; the run's next write is then refused by the store's fencing check. `ensure()`
    guards what no write guards, the start of a tool call: once the lease may have expired (a
    stalled process: SIGSTOP, a long GC pause) it renews first, and raises if it was taken over.
    """

    def __init__(self, store: BaseCheckpointer, lease: Lease) -> None:
        assert lease.expires is not None
        self.store, self.lease = store, lease
        self.ttl = max(lease.expires - time.time(), 0.0)
        self.valid_until = lease.expires
        """By this process's clock, the lease is surely ours until then (renewals push it)."""
        self._stopped = threading.Event()
        thread = threading.Thread(
            target=self._beat, args=(max(self.ttl / 3, 0.01),), name="actloop-lease", daemon=True
        )
        thread.start()

    def _renew(self) -> None:
        sent = time.time()
        self.store.renew(self.lease)
        self.valid_until = sent + self.ttl

    def _beat(self, every: float) -> None:
        while not self._stopped.wait(every):
            try:
                self._renew()
            except CheckpointError:
                return

    def ensure(self) -> None:
        """Return if the lease is surely still ours, else renew it (LeaseLostError if lost)."""
        if time.time() < self.valid_until:
            return
        self._renew()

    def stop(self) -> None:
        """Stop renewing (the run is closing)."""
        self._stopped.set()


RELEASE_RETRY_SECONDS = 3600.0
"""How long a lease the store failed to release is retried before it is left to expire."""


def release_later(store: BaseCheckpointer, lease: Lease) -> None:
    """Retry releasing `lease` on a daemon thread, backing off to every 2 s: a store write that
    failed (disk full, database down) must not keep the thread locked for the rest of the process;
    once the store can write again, another process can resume the run."""

    def retry() -> None:
        delay, give_up = 0.05, time.monotonic() + RELEASE_RETRY_SECONDS
        while time.monotonic() < give_up:
            time.sleep(delay)
            try:
                store.release(lease)
                return
            except Exception:
                delay = min(delay * 2, 2.0)

    threading.Thread(target=retry, name="actloop-release", daemon=True).start()


def check_resumable(record: RunRecord | None, thread_id: str, store: BaseCheckpointer) -> None:
    """CheckpointError unless `record` is an unfinished run."""
    if record is None:
        raise CheckpointError(f"no run is saved under thread {thread_id!r} in {store!r}")
    if record.status == "finished":
        raise CheckpointError(f"thread {thread_id!r} already finished; there is nothing to resume")


def durable_run(
    store: BaseCheckpointer, run: AgentRun, config: RunnableConfig
) -> tuple[DurableRun, RunnableConfig]:
    """The journaling hooks of `run` under `config["configurable"]["thread_id"]`, and the config
    its tools see (without `resume()`'s private request)."""
    configurable = dict(config.get("configurable") or {})
    thread_id = str(configurable["thread_id"])
    request: Request | None = configurable.pop(RESUME_KEY, None)
    config = cast(RunnableConfig, {**config, "configurable": configurable})
    core = JournalCore(run.settings, run.state, Clock(), config.get("max_concurrency"))
    return DurableRun(store, thread_id, core, fingerprint(run.settings), request), config


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
    with damaged_journal(thread_id):
        inputs = loads(record.inputs)
        if not isinstance(inputs, dict):
            raise TypeError(f"the saved inputs are not a dict but {type(inputs).__name__}")
    config = cast(RunnableConfig, {**base, "configurable": configurable})
    return cast("dict[str, Any]", inputs), config


@contextlib.contextmanager
def damaged_journal(thread_id: str) -> Generator[None]:
    """Turn what decoding a damaged or hand-edited saved value raises into a CheckpointError."""
    try:
        yield
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as exc:
        raise CheckpointError(
            f"the saved run of thread {thread_id!r} is damaged and cannot be resumed "
            f"({type(exc).__name__}: {exc}); it was left untouched"
        ) from exc
