"""The journal of a durable run: encoding, a pinnable clock, the journaling core, and replay.

The loop core is deterministic given the results it is sent, so the journal holds exactly those
(entry kinds in `actloop.checkpoint`). `JournalCore.send` writes a plan or stop result after the
core accepts it (a result the core rejects, such as an unhandled parse error, is not saved, so a
resume asks again); observations are written by the durable drivers as each call returns.
`replay` rebuilds the state from the journal with the clock pinned to each entry's time, so time
limits decide exactly as they did live.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from actloop.checkpoint import BaseCheckpointer, JournalEntry, Lease
from actloop.exceptions import CheckpointError
from actloop.executor._loop import Act, ActTimeout, Done, LoopCore, LoopSettings, LoopState, Stop
from actloop.executor._plans import (
    TOO_DEEP,
    decode_plan,
    encode,
    encode_plan,
    savable_plan,
    too_deep,
)
from actloop.serialization import loads

__all__ = [
    "TOO_DEEP",
    "Clock",
    "Decision",
    "Journal",
    "JournalCore",
    "Request",
    "Tail",
    "apply_edits",
    "approvals",
    "call_id",
    "decode_plan",
    "encode",
    "encode_plan",
    "fingerprint",
    "rejection",
    "rejections",
    "replay",
    "savable_plan",
    "too_deep",
]


class Decision(NamedTuple):
    """A person's decision on one call: approve, reject (with a reason) or edit (new input)."""

    kind: str
    reason: str | None = None
    tool_input: Any = None
    seq: int = -1


class Request(NamedTuple):
    """A person's decisions passed to `resume()`: ids to approve (or True for all), to reject
    (id -> reason or None) and to edit (id -> new tool input)."""

    approve: bool | frozenset[str] = frozenset()
    reject: Mapping[str, str | None] = {}
    edit: Mapping[str, Any] = {}


def call_id(act: int, index: int) -> str:
    """The id of call `index` of step `act`, as shown in `pending_approvals`."""
    return f"{act}-{index}"


def rejection(tool: str, reason: str | None) -> str:
    """The observation of a rejected call."""
    text = f"The call to tool {tool!r} was rejected by a human reviewer and did not run."
    return f"{text} Reason: {reason}" if reason else text


def fingerprint(settings: LoopSettings) -> str:
    """The settings replay depends on, as JSON (callables are only named as such)."""

    def plain(value: Any) -> Any:
        ok = value is None or isinstance(value, (bool, int, float, str))
        return value if ok else "callable"

    return json.dumps(
        {
            "tools": list(settings.tools),
            "max_iterations": settings.max_iterations,
            "max_execution_time": settings.max_execution_time,
            "early_stopping_method": settings.early_stopping_method,
            "handle_parsing_errors": plain(settings.handle_parsing_errors),
            "trim_intermediate_steps": plain(settings.trim_intermediate_steps),
            "return_key": settings.return_key,
        }
    )


# -- clock and core -----------------------------------------------------------------------------


class Clock:
    """The run's clock in seconds: pinned to journal times while replaying or sending, else live."""

    def __init__(self) -> None:
        self.pinned: float | None = 0.0
        self._origin = 0.0

    def __call__(self) -> float:
        pinned = self.pinned
        return pinned if pinned is not None else time.monotonic() - self._origin

    def go_live(self, elapsed: float) -> None:
        """Run on from `elapsed`."""
        self._origin = time.monotonic() - elapsed
        self.pinned = None

    def pin(self, elapsed: float | None) -> float | None:
        """Read `elapsed` from now on (None: live again); returns the previous pin."""
        before, self.pinned = self.pinned, elapsed
        return before


class Journal:
    """Writes one run's entries: numbered, thread-safe, dropped once the run has closed."""

    def __init__(self, store: BaseCheckpointer, thread_id: str, clock: Clock) -> None:
        self.store, self.thread_id, self.clock = store, thread_id, clock
        self.lease: Lease | None = None
        """The run's lease: every entry is written under it (a taken-over run is refused)."""
        self.seq = 0
        self.act = 0
        self.act_elapsed = 0.0
        """Time of the current step: its plan entry or its latest observation."""
        self.closed = False
        self._lock = threading.Lock()

    def write(
        self,
        kind: str,
        act: int | None = None,
        call: int | None = None,
        *,
        data: str | None = None,
        elapsed: float | None = None,
    ) -> float:
        """Append one entry; returns its time (`elapsed` if given, else now)."""
        with self._lock:
            if elapsed is None:
                elapsed = self.clock()
            if self.closed or (act is not None and act != self.act):
                return elapsed  # a call abandoned at a deadline finished late: not part of the run
            entry = JournalEntry(self.seq, kind, act, call, elapsed, data)
            self.store.append(self.thread_id, entry, lease=self.lease)
            self.seq += 1
            if act is not None:
                self.act_elapsed = max(self.act_elapsed, elapsed)
            return elapsed


class JournalCore(LoopCore):
    """The loop core, plus a step counter; when live, every result it accepts is journaled."""

    def __init__(
        self,
        settings: LoopSettings,
        state: LoopState,
        clock: Clock,
        max_concurrency: int | None = None,
    ) -> None:
        super().__init__(settings, state, clock, max_concurrency)
        self.clock = clock
        self.journal: Journal | None = None
        self.act = 0
        """Number of tool steps (Act effects) finished: the `act` of journal entries."""

    def send_at(self, elapsed: float, result: Any) -> None:
        """Send with the clock pinned, so replay reaches the same state."""
        acting = self.state.phase == "act"
        before = self.clock.pin(elapsed)
        try:
            super().send(result)
        finally:
            self.clock.pin(before)
        if acting:
            self.act += 1
            if self.journal is not None:
                self.journal.act = self.act

    def send(self, result: Any) -> None:
        """Report a result (live): observations are already journaled, plans and stops after."""
        journal, phase = self.journal, self.state.phase
        if journal is None or phase not in ("plan", "act", "stop"):
            return super().send(result)
        if phase == "act":
            if isinstance(result, ActTimeout):
                data = json.dumps(sorted(result.finished))
                elapsed = journal.write("timeout", self.act, data=data)
            else:
                elapsed = journal.act_elapsed
            return self.send_at(elapsed, result)
        elapsed = self.clock()
        if phase == "plan":
            result, data = savable_plan(result)
            self.send_at(elapsed, result)
            journal.write("plan", data=data, elapsed=elapsed)
            journal.act_elapsed = elapsed
            return
        self.send_at(elapsed, result)
        journal.write("stop", data=encode({"output": result}, "the stop response"), elapsed=elapsed)

    def deadline_passed(self, elapsed: float | None = None) -> None:
        """The deadline passed during a plan; journaled when live."""
        at = self.clock() if elapsed is None else elapsed
        before = self.clock.pin(at)
        try:
            super().deadline_passed()
        finally:
            self.clock.pin(before)
        if self.journal is not None:
            self.journal.write("deadline", elapsed=at)


# -- replay -------------------------------------------------------------------------------------


class Tail(NamedTuple):
    """What replay leaves for the live run: the current step's known results and decisions."""

    known: dict[int, Any]
    """Observations of the current step's calls, by call index."""
    starts: dict[int, int]
    """Seq of the last "start" entry of each unfinished call of the current step."""
    decisions: dict[tuple[int, int], Decision]
    elapsed: float
    act_elapsed: float
    next_seq: int


def replay(core: JournalCore, entries: list[JournalEntry], thread_id: str) -> Tail:
    """Bring `core` to the journal's last state without running the agent or a tool."""
    ordered = [e for e in entries if e.act is None and e.kind != "context"]
    obs = {(e.act, e.call): e for e in entries if e.kind == "obs"}
    timeouts = {e.act: e for e in entries if e.kind == "timeout"}
    starts = {(e.act, e.call): e.seq for e in entries if e.kind == "start"}
    decisions = {(e.act or 0, e.call or 0): _decision(e) for e in entries if e.kind == "decision"}
    latest = max((e.elapsed for e in entries), default=0.0)
    position, act_elapsed = 0, 0.0
    while True:
        effect = core.next()
        if type(effect) is Done:
            break
        if type(effect) is Act:
            act = core.act
            apply_edits(core.state, act, decisions)
            keys = [(act, i) for i in range(len(effect.calls))]
            done = [obs[k] for k in keys if k in obs]
            act_elapsed = max([act_elapsed, *(e.elapsed for e in done)])
            if act in timeouts:
                finished = json.loads(timeouts[act].data or "[]")
                result: Any = ActTimeout({i: loads(obs[act, i].data or "null") for i in finished})
                core.send_at(timeouts[act].elapsed, result)
            elif len(done) == len(keys):
                core.send_at(act_elapsed, [loads(e.data or "null") for e in done])
            else:
                known = {k[1]: loads(obs[k].data or "null") for k in keys if k in obs}
                running = {k[1]: starts[k] for k in keys if k in starts and k not in obs}
                return Tail(known, running, decisions, latest, act_elapsed, len(entries))
            continue
        if position == len(ordered):
            break
        entry = ordered[position]
        position += 1
        _replay_entry(core, effect, entry, thread_id)
        act_elapsed = entry.elapsed
    return Tail({}, {}, decisions, latest, act_elapsed, len(entries))


def _replay_entry(core: JournalCore, effect: Any, entry: JournalEntry, thread_id: str) -> None:
    expected = ("stop",) if type(effect) is Stop else ("plan", "deadline")
    if entry.kind not in expected:
        raise CheckpointError(
            f"the journal of thread {thread_id!r} does not match this executor: entry "
            f"{entry.seq} is {entry.kind!r} where a {expected[0]!r} was due"
        )
    if entry.kind == "deadline":
        core.deadline_passed(entry.elapsed)
    elif entry.kind == "plan":
        core.send_at(entry.elapsed, decode_plan(entry.data or "null"))
    else:
        core.send_at(entry.elapsed, loads(entry.data or "null")["output"])


def _decision(entry: JournalEntry) -> Decision:
    value = loads(entry.data or "null")
    return Decision(value["decision"], value.get("reason"), value.get("tool_input"), entry.seq)


def apply_edits(state: LoopState, act: int, decisions: Mapping[tuple[int, int], Decision]) -> None:
    """Give the step's edited actions their new input (the saved steps show what really ran)."""
    for i, action in enumerate(state.pending):
        decision = decisions.get((act, i))
        if decision is not None and decision.kind == "edit":
            edited = copy.copy(action)
            edited.tool_input = decision.tool_input
            state.pending[i] = edited


def approvals(approve: bool | Iterable[str] | None) -> bool | frozenset[str]:
    """`approve` as True (all) or a set of ids; a single string is one id."""
    if approve is True:
        return True
    if not approve:
        return frozenset()
    return frozenset([approve] if isinstance(approve, str) else approve)


def rejections(reject: Mapping[str, str | None] | Iterable[str] | None) -> dict[str, str | None]:
    """`reject` as {id: reason or None}; a single string is one id."""
    if reject is None:
        return {}
    if isinstance(reject, str):
        return {reject: None}
    if isinstance(reject, Mapping):
        return dict(reject)  # pyright: ignore[reportUnknownArgumentType]
    return dict.fromkeys(reject)
