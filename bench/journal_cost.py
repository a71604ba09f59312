"""The durable journal's cost per step: a 1,000-step run with a no-op tool, with and without a
SqliteCheckpointer (on this disk), plus the cost of replaying it on resume.

    .venv/bin/python bench/journal_cost.py [STEPS] [DIR] [--json] [--exclusive]

Prints the median of 7 runs of each, per step (`--json`: one JSON object, for `make bench`);
`--exclusive` opens the store with `locking_mode="EXCLUSIVE"` (one process keeps the file).

Two floors under the journal cost, from the run's own entries written again back to back under a
new lease (nothing else between the writes, so caches stay warm: lower bounds, not shares):
- `store write`: the store's `append_all` of one step's entries (a plan and its observation);
- `SQLite commit`: the fenced INSERT that `append_all` runs, executed on the store's connection.
The executor's bookkeeping is what the journal cost adds beyond them.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Any

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Tool
from actloop.checkpoint import JournalEntry, Owner, SqliteCheckpointer
from actloop.checkpoint.sqlite import _fenced_insert  # pyright: ignore[reportPrivateUsage]

ARGS = [a for a in sys.argv[1:] if a not in ("--json", "--exclusive")]
LOCKING = "EXCLUSIVE" if "--exclusive" in sys.argv else "NORMAL"
STEPS = int(ARGS[0]) if ARGS else 1000
REPEATS = 7


class Loop(BaseSingleActionAgent):
    """Calls the no-op tool STEPS times, then finishes; raises once at `fail_at` if set."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.fail_at = fail_at

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        if len(intermediate_steps) == self.fail_at:
            self.fail_at = None
            raise RuntimeError("stop here")
        if len(intermediate_steps) < STEPS:
            return AgentAction("noop", "x", "")
        return AgentFinish({"output": "done"}, "")


NOOP = Tool(name="noop", func=lambda text: "ok", description="does nothing")


def executor(store: SqliteCheckpointer | None, fail_at: int | None = None) -> AgentExecutor:
    """A 1,000-step run's executor."""
    return AgentExecutor(agent=Loop(fail_at), tools=[NOOP], max_iterations=None, checkpointer=store)


def timed(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def floors(store: SqliteCheckpointer, steps: list[list[JournalEntry]]) -> tuple[float, float]:
    """Per step: the store's write of `steps` (its entries under a new lease), then SQLite's
    own execution of the same statements (the median of REPEATS passes each)."""
    writes, commits = [], []
    for i in range(REPEATS):
        thread = f"floor{i}"
        lease = store.acquire(thread, Owner.current())
        start = time.perf_counter()
        for entries in steps:
            store.append_all(thread, entries, lease=lease)
        writes.append(time.perf_counter() - start)
        thread = f"sql{i}"
        lease = store.acquire(thread, Owner.current())
        statements = [_fenced_insert(thread, entries, lease) for entries in steps]
        conn = store._conn  # pyright: ignore[reportPrivateUsage]  # open: acquire used it
        assert conn is not None
        start = time.perf_counter()
        for sql, values in statements:
            conn.execute(sql, values)
        commits.append(time.perf_counter() - start)
    return (
        statistics.median(writes) / len(steps) * 1e6,
        statistics.median(commits) / len(steps) * 1e6,
    )


def step_entries(store: SqliteCheckpointer, thread: str) -> list[list[JournalEntry]]:
    """The thread's journal as the run wrote it: one list per step (plan and observation)."""
    saved = store.entries(thread)
    return [list(saved[i : i + 2]) for i in range(0, 2 * STEPS, 2)]


def main() -> None:
    folder = tempfile.mkdtemp(dir=ARGS[1] if len(ARGS) > 1 else None)
    store = SqliteCheckpointer(os.path.join(folder, "runs.db"), locking_mode=LOCKING)
    plain, durable, replay = [], [], []
    for i in range(REPEATS):
        plain.append(timed(executor(None).invoke, {"input": "q"}))
        config = {"configurable": {"thread_id": f"t{i}"}}
        durable.append(timed(executor(store).invoke, {"input": "q"}, config))
        failing = executor(store, fail_at=STEPS)
        try:
            failing.invoke({"input": "q"}, {"configurable": {"thread_id": f"r{i}"}})
        except RuntimeError:
            pass
        replay.append(timed(failing.resume, f"r{i}"))  # replays STEPS steps, then plans once
    per_step = {k: statistics.median(v) / STEPS * 1e6 for k, v in
                (("plain", plain), ("journaled", durable), ("replay", replay))}  # fmt: skip
    size = os.path.getsize(store.path) / (2 * REPEATS * STEPS)
    per_step["store_write"], per_step["sqlite_commit"] = floors(store, step_entries(store, "t0"))
    if "--json" in sys.argv:
        import json

        print(json.dumps({**per_step, "bytes_per_step": size, "steps": STEPS, "locking": LOCKING}))
        return
    print(f"{STEPS} steps, no-op tool, SQLite file in {folder} (WAL, synchronous=NORMAL, "
          f"locking_mode={LOCKING})")  # fmt: skip
    print(f"  without checkpointer: {per_step['plain']:8.1f} us/step")
    print(f"  with checkpointer:    {per_step['journaled']:8.1f} us/step")
    print(f"  journal cost:         {per_step['journaled'] - per_step['plain']:8.1f} us/step")
    print(f"  floor, store write:   {per_step['store_write']:8.1f} us/step (append_all alone)")
    print(f"  floor, SQLite commit: {per_step['sqlite_commit']:8.1f} us/step (its INSERT alone)")
    print(f"  resume (replay):      {per_step['replay']:8.1f} us/step replayed")
    print(f"  file size:            {size:8.0f} B/step")


if __name__ == "__main__":
    main()
