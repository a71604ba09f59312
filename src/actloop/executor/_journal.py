"""What a durable run's journal means to the loop: a pinnable clock, the settings a replay depends
on, and replay itself.

The loop core is deterministic given the results it is sent, so the journal holds exactly those
(entry kinds in `actloop.checkpoint`). `replay` rebuilds a run's state from its journal with the
clock pinned to each entry's time, so time limits decide exactly as they did live. Nothing here
reads or writes a store. Loaded with the first durable run (not by `import actloop`).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from actloop.exceptions import CheckpointError
from actloop.executor._loop import Act, ActTimeout, Done, LoopCore, LoopSettings, LoopState, Stop
from actloop.serialization import loads

if TYPE_CHECKING:
    from actloop.checkpoint import Decision, JournalEntry

__all__ = [
    "Clock",
    "Replayed",
    "apply_edits",
    "fingerprint",
    "rejection",
    "replay",
]


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

    def at(self, elapsed: float, fn: Callable[..., Any], *args: Any) -> None:
        """`fn(*args)` with the clock reading `elapsed` (a result sent as of a journal entry's
        time), live again after."""
        before, self.pinned = self.pinned, elapsed
        try:
            fn(*args)
        finally:
            self.pinned = before


def apply_edits(state: LoopState, act: int, decisions: Mapping[tuple[int, int], Decision]) -> None:
    """Give the step's edited actions their new input (the saved steps show what really ran)."""
    for i, action in enumerate(state.pending):
        decision = decisions.get((act, i))
        if decision is not None and decision.kind == "edit":
            edited = copy.copy(action)
            edited.tool_input = decision.tool_input
            state.pending[i] = edited


# -- replay -------------------------------------------------------------------------------------


class Replayed(NamedTuple):
    """Where replay left the run: its step count and what the current step already has."""

    act: int
    """Tool steps finished (the `act` of the next entries)."""
    known: dict[int, Any]
    """Observations of the current step's calls, by call index."""
    starts: dict[int, int]
    """Seq of the last "start" entry of each unfinished call of the current step."""
    decisions: dict[tuple[int, int], Decision]
    elapsed: float
    """The latest time in the journal."""
    act_elapsed: float
    """Time of the current step: its plan entry or its latest observation."""


class _Journal(NamedTuple):
    """A journal's entries, indexed the way replay reads them."""

    ordered: list[JournalEntry]
    obs: dict[tuple[int | None, int | None], JournalEntry]
    timeouts: dict[int | None, JournalEntry]
    starts: dict[tuple[int | None, int | None], int]
    decisions: dict[tuple[int, int], Decision]

    @classmethod
    def of(cls, entries: list[JournalEntry]) -> _Journal:
        from actloop.checkpoint._entries import decode_decision

        return cls(
            [e for e in entries if e.act is None and e.kind != "context"],
            {(e.act, e.call): e for e in entries if e.kind == "obs"},
            {e.act: e for e in entries if e.kind == "timeout"},
            {(e.act, e.call): e.seq for e in entries if e.kind == "start"},
            {
                (e.act or 0, e.call or 0): decode_decision(e.data, e.seq)
                for e in entries
                if e.kind == "decision"
            },
        )

    def result(self, act: int, keys: list[tuple[int, int]]) -> Any:
        """What step `act`'s calls returned, per the journal; None when it has no full answer."""
        timeout = self.timeouts.get(act)
        if timeout is not None:
            finished = json.loads(timeout.data or "[]")
            return ActTimeout({i: loads(self.obs[act, i].data or "null") for i in finished})
        if all(k in self.obs for k in keys):
            return [loads(self.obs[k].data or "null") for k in keys]
        return None

    def unfinished(self, keys: list[tuple[int, int]]) -> tuple[dict[int, Any], dict[int, int]]:
        """For a step cut short: the observations it has, and the seq of the "start" entry of
        each call that started and did not finish."""
        known = {k[1]: loads(self.obs[k].data or "null") for k in keys if k in self.obs}
        running = {k[1]: self.starts[k] for k in keys if k in self.starts and k not in self.obs}
        return known, running


def replay(core: LoopCore, clock: Clock, entries: list[JournalEntry], thread_id: str) -> Replayed:
    """Bring `core` to the journal's last state without running the agent or a tool."""
    journal = _Journal.of(entries)
    latest = max((e.elapsed for e in entries), default=0.0)
    act, position, act_elapsed = 0, 0, 0.0
    while True:
        effect = core.next()
        if type(effect) is Done:
            break
        if type(effect) is Act:
            apply_edits(core.state, act, journal.decisions)
            keys = [(act, i) for i in range(len(effect.calls))]
            done = [journal.obs[k].elapsed for k in keys if k in journal.obs]
            act_elapsed = max([act_elapsed, *done])
            result = journal.result(act, keys)
            if result is None:  # the step was cut short: the live run finishes it
                known, running = journal.unfinished(keys)
                return Replayed(act, known, running, journal.decisions, latest, act_elapsed)
            timeout = journal.timeouts.get(act)
            clock.at(act_elapsed if timeout is None else timeout.elapsed, core.send, result)
            act += 1
            continue
        if position == len(journal.ordered):
            break
        entry = journal.ordered[position]
        position += 1
        _replay_entry(core, clock, effect, entry, thread_id)
        act_elapsed = entry.elapsed
    return Replayed(act, {}, {}, journal.decisions, latest, act_elapsed)


def _replay_entry(
    core: LoopCore, clock: Clock, effect: Any, entry: JournalEntry, thread_id: str
) -> None:
    expected = ("stop",) if type(effect) is Stop else ("plan", "deadline")
    if entry.kind not in expected:
        raise CheckpointError(
            f"the journal of thread {thread_id!r} does not match this executor: entry "
            f"{entry.seq} is {entry.kind!r} where a {expected[0]!r} was due"
        )
    from actloop.checkpoint._entries import decode_plan

    if entry.kind == "deadline":
        clock.at(entry.elapsed, core.deadline_passed)
    elif entry.kind == "plan":
        clock.at(entry.elapsed, core.send, decode_plan(entry.data or "null"))
    else:
        clock.at(entry.elapsed, core.send, loads(entry.data or "null")["output"])
