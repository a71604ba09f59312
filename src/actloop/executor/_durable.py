"""Durable runs, written once and without I/O: this module decides what to read and write; the
drivers carry it out (`_storage`: the sync driver with the store's sync methods, the async
driver by awaiting its async twins, each call bounded by what is left of the run's deadline).

A run (`_run.AgentRun`) is durable when its executor has a checkpointer and the config names a
`configurable.thread_id`. Its `DurableRun` wraps the loop core. Every transition that touches the
store is an `Ops` generator, the shape of httpx's auth flows and of the Postgres store's
operations: it yields a `StoreCall`, is sent the store's answer (or has its error thrown in), and
returns its value. In order:

    open()                      take the lease, read the record; create it (a new run), or
                                replay the journal and record the decisions (a `Resume` input)
    next() / send()             the loop's effects; a result that makes a journal entry (a plan,
                                a stop, a deadline) is followed by a `Write` effect
    gate(calls)                 before a step's tools run: pause for approval, refuse an unsafe
                                repeat (no I/O: raises `Paused` or CheckpointError)
    before_call / after_call    around each tool call: known results, rejections, "start" and
                                "obs" entries
    note / saved_note           a running call's "note" entries (`_notes`): written mid-call,
                                the latest given back on resume
    finished / pause / failed   the run record's end
    close()                     give the lease back

Every entry is made by `_entry` (numbered, dropped once the run closed) and every write carries
the run's lease, so a run whose lease was taken over is refused instead of writing twice. A step
with a `requires_approval` call that has no decision pauses the run: `invoke` returns
`{**inputs, "pending_approvals": [{"id", "tool", "tool_input", "log"}], "thread_id", "status":
"paused"}`, and a `Resume` input (`executor.resume(thread_id, approve=..., reject=..., edit=...)`)
goes on. A call whose tool raised `NeedsInput` (it asks a person) is journaled as an "ask" entry
and the run pauses once the step's calls are done, the call in `pending_approvals` with its
`questions`; `resume(thread_id, answer={id: ...})` journals an "answer" entry and runs the call
again with the answers (`_input`).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, final

from actloop.checkpoint import (
    JournalEntry,
    Lease,
    Owner,
    RunRecord,
    StoreTimeoutError,
)
from actloop.checkpoint._entries import (
    DAMAGE,
    call_id,
    encode,
    encode_decision,
    json_string,
    savable_plan,
)
from actloop.exceptions import CheckpointError
from actloop.executor._approvals import Approvals, Paused
from actloop.executor._input import NOTHING_ASKED, Answered, ask_data, asked_calls, asking_item
from actloop.executor._journal import Clock, apply_edits, fingerprint, replay
from actloop.executor._loop import Act, ActTimeout, Effect, LoopCore, ToolCall
from actloop.executor._notes import saved_notes
from actloop.executor._resume import PAUSED_KEY, Resume
from actloop.serialization import dumps, loads
from actloop.steps import AgentFinish
from actloop.tools._input import InputCall, NeedsInput

if TYPE_CHECKING:
    from actloop.executor._run import AgentRun

__all__ = [
    "GRACE",
    "PAUSED_KEY",
    "DurableRun",
    "Ops",
    "StoreCall",
    "Write",
    "Writes",
    "durable_run",
    "saved_inputs",
]

_T = TypeVar("_T")

GRACE = 0.5
"""Seconds a store call gets when the deadline has (nearly) passed: what a run that stopped at
its deadline still writes (its stop, its record, its lease) on a store that answers."""


class StoreCall(NamedTuple):
    """One store call a durable run asks its driver to make: `store.<method>(*args, **kwargs)`
    (or `await store.a<method>(...)`), bounded by the run's `bound()`."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = {}


Ops = Generator[StoreCall, Any, _T]
"""A durable transition: yields store calls, is sent each one's result, returns its value."""

Writes = Ops[None] | StoreCall
"""Journal writes: a transition, or the one store call that is the usual step's only write
(carried out without a generator's cost)."""


@final
class Write(NamedTuple):
    """An effect of a durable run: write these journal entries before the loop goes on."""

    ops: Ops[None]


class DurableRun:
    """One durable run around the loop core: lease, record, journal, decisions, status. No I/O:
    drivers take its effects (`next`, `send`, `deadline_passed`) and carry out its `Ops`."""

    def __init__(
        self,
        loop: LoopCore,
        clock: Clock,
        thread_id: str,
        fingerprint: str,
        resume: Resume | None,
    ) -> None:
        self.loop, self.clock, self.thread_id = loop, clock, thread_id
        self.fingerprint = fingerprint
        self.resume = resume
        """None for a new run, else the decisions a `Resume` input brought."""
        self.owner = Owner.current()
        self.lease: Lease | None = None
        """The thread's lease while the run holds it: every write carries it."""
        self.valid_until = float("inf")
        """By this process's clock, the lease is surely ours until then (renewals push it)."""
        self.ttl = 0.0
        self.started = False
        """The run record exists and the run is live: a failure is recorded."""
        self.timed_out = False
        """A store call outlived its bound: the run writes nothing more."""
        self.closed = False
        self.paused = False
        """The run ended waiting for approval."""
        self.act = 0
        """Tool steps finished: the `act` of journal entries."""
        self.act_elapsed = 0.0
        """Time of the current step: its plan entry or its latest observation."""
        self.approvals = Approvals(thread_id)
        self.asking: dict[int, dict[str, Any]] = {}
        """Calls of the current step that asked for a person's input: the run pauses once the
        step's calls are done (`send`)."""
        self.notes: dict[int, str] = {}
        """The latest note of each unfinished call of the step a resume stopped in (`_notes`)."""
        self.context: dict[str, str] = {}
        """Trace propagation fields of this run (a W3C `traceparent`), set by a tracing handler
        and journaled when the run opens, so that a resume can link back to it."""
        self.previous_context: dict[str, str] = {}
        """The propagation fields of the latest run of this thread before this one (a resume)."""
        self._born = time.monotonic()
        self._seq = 0
        self._unwritten: list[JournalEntry] = []
        self._unsaved: dict[tuple[int, int], str] = {}
        """Calls of the current step whose journal write the store has not answered yet (kept
        only under a deadline, the one thing that can cut a step short while a write is out)."""
        self._tracks = loop.settings.max_execution_time is not None
        self.bounded = self.bound if self._tracks else None
        """`bound` for a run with a deadline; None without one (its store calls take the
        store's own timeout, and no call is made to say so)."""
        self._plain = False
        """The current step needs no decision, known result or "start" entry (`gate`)."""
        self._lock = threading.Lock()

    # -- bounds --------------------------------------------------------------------------------

    def bound(self) -> float | None:
        """Seconds the next store call may take: what is left of the deadline (at least GRACE,
        for the writes of a run stopping at it); None without a deadline (the store's own)."""
        limit = self.loop.settings.max_execution_time
        if limit is None:
            return None
        if self.clock.pinned is None:
            remaining = self.loop.remaining()
            assert remaining is not None
        else:  # opening: the run's time counts from its start
            remaining = limit - (time.monotonic() - self._born)
        return max(remaining, GRACE)

    @property
    def renew_every(self) -> float | None:
        """How often a heartbeat renews the lease (None: it never expires)."""
        if self.lease is None or self.lease.expires is None:
            return None
        return max(self.ttl / 3, 0.01)

    # -- opening -------------------------------------------------------------------------------

    def open(self) -> Ops[None]:
        """Take the lease, then create the run or bring it back to where it stopped."""
        lease: Lease = yield StoreCall("acquire", (self.thread_id, self.owner))
        self.lease = lease
        if lease.expires is not None:
            self.ttl = max(lease.expires - time.time(), 0.0)
            self.valid_until = lease.expires
        record: RunRecord | None = yield StoreCall("get", (self.thread_id,))
        if self.resume is None:
            yield from self._create(record)
        else:
            yield from self._resume(record, self.resume)
        if self.context:
            yield from self._write("context", data=json.dumps(self.context))

    def _create(self, record: RunRecord | None) -> Ops[None]:
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
        inputs = encode(self.loop.state.inputs, "the run's inputs")
        record = RunRecord(name, "running", inputs, self.fingerprint)
        yield StoreCall("create", (record,), {"lease": self.lease})
        self._go_live(0.0)

    def _resume(self, record: RunRecord | None, resume: Resume) -> Ops[None]:
        check_resumable(record, self.thread_id)
        assert record is not None
        entries: list[JournalEntry] = yield StoreCall("entries", (self.thread_id,))
        contexts = [e.data for e in entries if e.kind == "context" and e.data]
        with damaged_journal(self.thread_id):
            self.previous_context = json.loads(contexts[-1]) if contexts else {}
            self._check_fingerprint(record.fingerprint)
            tail = replay(self.loop, self.clock, entries, self.thread_id)
            asked = asked_calls(entries, tail.act)
        self.act = tail.act
        self.approvals.restore(tail)
        self.approvals.asks, self.approvals.answers = asked
        self.notes = saved_notes(entries, tail.act, self.approvals)
        self._seq = entries[-1].seq + 1 if entries else 0
        self.act_elapsed = tail.act_elapsed
        self._go_live(max(tail.elapsed, self.loop.state.elapsed))
        yield StoreCall("update", (self.thread_id, "running"), {"lease": self.lease})
        yield from self._decide(resume)

    def _go_live(self, elapsed: float) -> None:
        """Start the run's clock from `elapsed` plus the time opening took."""
        self.clock.go_live(elapsed + (time.monotonic() - self._born))
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

    def _decide(self, resume: Resume) -> Ops[None]:
        """Journal the decisions of the `Resume` input, after checking they fit the waiting
        calls."""
        effect = self.loop.next() if self.loop.state.phase == "act" else None
        calls = effect.calls if isinstance(effect, Act) else []
        decisions = self.approvals.decisions
        for index, decision in self.approvals.choose(self.act, calls, resume):
            entry = self._entry("decision", self.act, index, encode_decision(decision))
            assert entry is not None
            decisions[self.act, index] = decision._replace(seq=entry.seq)
            yield from self._append(entry)
        for index, answers in self.approvals.answered(self.act, calls, resume):
            entry = self._entry("answer", self.act, index, encode(answers, "the answers"))
            assert entry is not None
            self.approvals.answers[index] = Answered(entry.seq, answers)
            yield from self._append(entry)
        apply_edits(self.loop.state, self.act, decisions)

    # -- the loop's effects, with the journal's writes -----------------------------------------

    def next(self) -> Effect | Write:
        """The effect to carry out now: the pending journal writes first, else the loop's. The
        plan of a step with one call is not written on its own: it goes with that call's first
        entry, in one transaction (`_save`), so a step costs one store write."""
        if self._unwritten:
            state = self.loop.state
            if state.phase != "act" or len(state.pending) != 1:
                return Write(self._flush())
        return self.loop.next()

    def _flush(self) -> Ops[None]:
        """Write the queued entries (one transaction where the store can)."""
        with self._lock:
            entries, self._unwritten = self._unwritten, []
        if entries:
            yield self._appending(entries)

    def send(self, result: Any) -> None:
        """Report the result of the loop's last effect; a plan or stop the core accepts, and a
        step cut short by the deadline, are journaled at the next `Write` (a result the core
        refuses, such as an unhandled parse error, is not saved, so a resume asks again). The
        core takes each result with the clock pinned to its entry's time, as replay sends it."""
        loop = self.loop
        phase = loop.state.phase
        data: str | None = None
        if phase == "act":
            if self.asking:  # a call asked for a person's input: the step waits for the answer
                raise Paused([self.asking[i] for i in sorted(self.asking)])
            elapsed = self.act_elapsed
            if isinstance(result, ActTimeout):
                self._blame_the_store()
                elapsed = self.clock()
                self._queue("timeout", self.act, json.dumps(sorted(result.finished)), elapsed)
        elif phase == "plan":
            elapsed = self.clock()
            result, data = savable_plan(result)
        elif phase == "stop":
            elapsed = self.clock()
            data = encode({"output": result}, "the stop response")
        else:
            loop.send(result)
            return
        clock = self.clock  # `clock.at(elapsed, loop.send, result)`, without its two calls
        before, clock.pinned = clock.pinned, elapsed
        try:
            loop.send(result)
        finally:
            clock.pinned = before
        if phase == "act":
            with self._lock:
                self.act += 1
        else:
            self._queue(phase, None, data, elapsed)
            if phase == "plan":
                self.act_elapsed = elapsed

    def _blame_the_store(self) -> None:
        """A step cut short while the store had not answered one of its journal writes ran out
        of time waiting for the store, not for its tools: the run ends with StoreTimeoutError
        and the deadline is not journaled, so a resume goes on as if it never passed."""
        with self._lock:
            unsaved = sorted(self._unsaved.items())
        if unsaved:
            (act, index), tool = unsaved[0]
            raise StoreTimeoutError(
                f"the checkpoint store did not answer in time: the journal write of call "
                f"{call_id(act, index)} (tool {tool!r}) was not answered by the run's deadline. "
                "What the run saved before stays saved; resume it once the store answers again"
            )

    def deadline_passed(self) -> None:
        """The deadline passed during a plan: stop, and journal that it did."""
        at = self.clock()
        self.clock.at(at, self.loop.deadline_passed)
        self._queue("deadline", None, None, at)

    # -- around a step and its calls -----------------------------------------------------------

    def gate(self, calls: list[ToolCall]) -> list[ToolCall]:
        """Before a step's tools run (edits are already in the step): stop for unsafe repeats
        or missing approvals (`Approvals.gate`). A step with nothing to decide or look up (the
        usual one) is marked plain, so its calls skip `before_call`'s checks."""
        approvals, act = self.approvals, self.act
        self._plain = False
        if approvals.plain(act, calls):
            self._plain = True
            return calls
        return approvals.gate(act, calls)

    def before_call(self, index: int, call: ToolCall) -> tuple[bool, Any, Writes | None]:
        """What to do with call `index` of the step, and the writes to make first (None: none,
        the usual case, so a call costs no store round trip before it runs). (True, observation,
        writes) for a known, rejected or unsavable call, which is not run; else (False, ticket,
        writes): the ticket (the step number) goes back to `after_call`, so a call abandoned at a
        deadline that finishes late is not journaled into a later step."""
        act = self.act
        if self._plain:
            return False, act, None
        found, observation = self.approvals.known(act, index)
        if found:
            return True, observation, None
        observation = self.approvals.settled(act, index, call)
        if observation is not None:
            return True, observation, self.after_call(act, index, call, observation)
        if self.approvals.needs_start(call):
            return False, act, self._save("start", act, index, None, call)
        return False, act, None

    def input_for(self, index: int) -> InputCall:
        """What call `index` of the step runs with (`current_input()`): the answers to what it
        asked, or nothing yet (it may ask)."""
        if not self.approvals.asks:  # the usual call: nothing asked in this step
            return NOTHING_ASKED
        return self.approvals.input_for(self.act, index)

    def after_call(self, ticket: int, index: int, call: ToolCall, observation: Any) -> Writes:
        """Journal a call's observation (its own transaction), or what it asked a person."""
        if type(observation) is str:  # the usual observation: JSON without `encode`'s checks
            data = json_string(observation)
        elif isinstance(observation, NeedsInput):
            return self._asked(ticket, index, call, observation)
        else:
            data = encode(observation, f"the observation of tool {call.action.tool!r}")
        writes = self._save("obs", ticket, index, data, call)
        return _nothing() if writes is None else writes

    def _asked(self, ticket: int, index: int, call: ToolCall, asked: NeedsInput) -> Ops[None]:
        """Journal the questions of a call that needs a person's input, and wait for them."""
        questions, data = ask_data(asked)
        writes = self._save("ask", ticket, index, data, call)
        if writes is None:  # a call abandoned at the deadline: not part of the run
            return
        if isinstance(writes, StoreCall):
            yield writes
        else:
            yield from writes
        with self._lock:
            self.asking[index] = asking_item(ticket, index, call, questions)

    def note(self, ticket: int, index: int, call: ToolCall, text: str) -> Writes:
        """Journal a running call's note (`actloop.tools._notes`), with the step's plan if it is
        not written yet; nothing once the step is over."""
        writes = self._save("note", ticket, index, text, call)
        return _nothing() if writes is None else writes

    def saved_note(self, ticket: int, index: int) -> str | None:
        """The note call `index` of step `ticket` left before the run was resumed, if any."""
        return self.notes.get(index) if ticket == self.approvals.tail_act else None

    def _save(
        self, kind: str, act: int, index: int, data: str | None, call: ToolCall
    ) -> Writes | None:
        """Write a call's entry with the step's plan if it is not written yet (see `next`): all
        or none, so the journal never holds a call's result without its plan. Under a deadline
        the call is known as unanswered until the store answers (see `send`)."""
        with self._lock:
            entry = self._new_entry(kind, act, index, data, None)
            if entry is None:  # the run closed, or a call abandoned at the deadline
                return None
            entries, self._unwritten = self._unwritten, []
            if self._tracks:
                self._unsaved[act, index] = call.action.tool
        entries.append(entry)
        write = self._appending(entries)
        return self._tracked(act, index, write) if self._tracks else write

    def _tracked(self, act: int, index: int, write: StoreCall) -> Ops[None]:
        """`write`, the call known as unanswered until the store answers it."""
        try:
            yield write
        finally:
            with self._lock:
                self._unsaved.pop((act, index), None)

    def lapsed(self) -> bool:
        """Whether the lease may have expired (a process stalled past it: SIGSTOP, a long GC
        pause): a tool call then renews it first (LeaseLostError if it was taken over), so a
        stalled run starts no call another owner may be running. Asked just before each call."""
        return time.time() >= self.valid_until

    def renew(self) -> Ops[None]:
        """Push the lease's expiry (LeaseLostError once another owner took it)."""
        sent = time.time()
        yield StoreCall("renew", (self.lease,))
        self.valid_until = sent + self.ttl

    # -- ending --------------------------------------------------------------------------------

    def finished(self, finish: AgentFinish) -> Ops[None]:
        """The run is done: save its outputs."""
        output = dumps(finish.return_values)
        yield StoreCall(
            "update", (self.thread_id, "finished"), {"lease": self.lease, "output": output}
        )

    def pause(self, paused: Paused) -> Ops[AgentFinish]:
        """Save the paused state; the finish whose values `invoke` returns."""
        fields = {"lease": self.lease, "pending": dumps(paused.pending)}
        yield from self._flush()  # the plan of the step that waits
        yield StoreCall("update", (self.thread_id, "paused"), fields)
        self.paused = True
        values = {PAUSED_KEY: paused.pending, "thread_id": self.thread_id, "status": "paused"}
        return AgentFinish(values, "")

    def failed(self, exc: BaseException) -> Ops[None]:
        """An exception ends the run: mark it failed (resumable), unless it was not ours or the
        store stopped answering (then the record is left as it was: "running", resumable)."""
        if isinstance(exc, StoreTimeoutError):
            self.timed_out = True
        if not self.started or self.timed_out or isinstance(exc, GeneratorExit):
            return
        error = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(CheckpointError):
            yield from self._flush()  # the plan of the step that failed: a resume replays it
            yield StoreCall(
                "update", (self.thread_id, "failed"), {"lease": self.lease, "error": error}
            )

    def close(self) -> Ops[Lease | None]:
        """Stop journaling and give up the lease; returns a lease the store could not release
        now (it did not answer), to be released once it does."""
        with self._lock:
            self.closed = True
        lease, self.lease = self.lease, None
        if lease is None:
            return None
        if self.timed_out:
            return lease
        try:
            yield StoreCall("release", (lease,))
        except Exception:  # the store cannot write now (disk full, down): released later
            return lease
        return None

    # -- entries -------------------------------------------------------------------------------

    def _entry(
        self,
        kind: str,
        act: int | None,
        call: int | None,
        data: str | None,
    ) -> JournalEntry | None:
        """The next journal entry, or None once the run closed or for a step already over (a
        call abandoned at a deadline that finished late is not part of the run)."""
        with self._lock:
            return self._new_entry(kind, act, call, data, None)

    def _new_entry(
        self, kind: str, act: int | None, call: int | None, data: str | None, at: float | None
    ) -> JournalEntry | None:
        """`_entry` with the lock held; `at`: the entry's time (None: now)."""
        if self.closed or (act is not None and act != self.act):
            return None
        elapsed = self.clock() if at is None else at
        entry = JournalEntry(self._seq, kind, act, call, elapsed, data)
        self._seq += 1
        if act is not None and elapsed > self.act_elapsed:
            self.act_elapsed = elapsed
        return entry

    def _queue(self, kind: str, act: int | None, data: str | None, at: float) -> None:
        """An entry for the next `Write` effect (or a call's write, see `next`)."""
        with self._lock:  # a call on a worker may be taking the queue (`_save`)
            entry = self._new_entry(kind, act, None, data, at)
            if entry is not None:
                self._unwritten.append(entry)

    def _write(
        self, kind: str, act: int | None = None, call: int | None = None, data: str | None = None
    ) -> Ops[None]:
        entry = self._entry(kind, act, call, data)
        if entry is not None:
            yield from self._append(entry)

    def _append(self, entry: JournalEntry) -> Ops[None]:
        yield self._appending([entry])

    def _appending(self, entries: list[JournalEntry]) -> StoreCall:
        """The store call writing `entries` in one transaction, under the run's lease."""
        lease = {"lease": self.lease}
        if len(entries) == 1:
            return StoreCall("append", (self.thread_id, entries[0]), lease)
        return StoreCall("append_all", (self.thread_id, entries), lease)


def _nothing() -> Ops[None]:
    """No writes: the entry of a call abandoned at the deadline, or of a run that closed."""
    return
    yield


def durable_run(run: AgentRun, thread_id: str, resume: Resume | None) -> DurableRun:
    """The durable run of `run` under `thread_id` (a `Resume` input: going on with it)."""
    clock = Clock()
    loop = LoopCore(run.settings, run.state, clock, run.config.get("max_concurrency"))
    return DurableRun(loop, clock, thread_id, fingerprint(run.settings), resume)


def check_resumable(record: RunRecord | None, thread_id: str) -> None:
    """CheckpointError unless `record` is an unfinished run."""
    if record is None:
        raise CheckpointError(f"no run is saved under thread {thread_id!r}")
    if record.status == "finished":
        raise CheckpointError(f"thread {thread_id!r} already finished; there is nothing to resume")


def saved_inputs(thread_id: str) -> Ops[dict[str, Any]]:
    """The inputs a resumed run starts from: those saved with the unfinished run."""
    record: RunRecord | None = yield StoreCall("get", (thread_id,))
    check_resumable(record, thread_id)
    assert record is not None
    with damaged_journal(thread_id):
        inputs = loads(record.inputs)
        if not isinstance(inputs, dict):
            raise TypeError(f"the saved inputs are not a dict but {type(inputs).__name__}")
    return inputs  # pyright: ignore[reportUnknownVariableType]


@contextlib.contextmanager
def damaged_journal(thread_id: str) -> Generator[None]:
    """Turn what decoding a damaged or hand-edited saved value raises into a CheckpointError."""
    try:
        yield
    except DAMAGE as exc:
        raise CheckpointError(
            f"the saved run of thread {thread_id!r} is damaged and cannot be resumed "
            f"({type(exc).__name__}: {exc}); it was left untouched"
        ) from exc
