"""Instructions per step of the core workloads under callgrind: the measure load does not change.

    .venv/bin/python bench/callgrind_steps.py [--rows loop_sync,agent_async,...] [--src DIR]
    .venv/bin/python bench/callgrind_steps.py --profile loop_sync [--out FILE]

Each figure is a difference of two runs of `valgrind --tool=callgrind` in fresh interpreters, so
start-up, imports and the executor's construction cancel out; the workloads are `bench/compare.py`'s
(`_loop_executor(n)`, `_agent_executor(n, record=False)`), `invoke` or `ainvoke`, after one
warm-up run of 3 steps. Rows (thousands of instructions):

- `loop_sync`, `loop_async`: per step, (N=1,100 minus N=100) / 1,000;
- `agent_sync`, `agent_async`: per step of the tool-calling agent, (N=45 minus N=5) / 40;
- `loop_sync_10`, `loop_async_10`: per step of a 10-step run on a fresh executor, set-up included:
  (21 executors built and run minus 21 built only) / 21 / 10 (what `compare.py`'s N=10 rows time);
- `durable_sync`, `durable_async`: `loop_sync`'s run with a `SqliteCheckpointer` (a file in a temp
  folder) and a thread id per run; minus `loop_sync`, the journal's instructions per step (SQLite's
  included; the kernel's time in its system calls is not counted).

`--src` measures another checkout's `src/` (default: this one's), e.g. a `git worktree` of main.
`--profile ROW` keeps a callgrind output of the row's larger run for `callgrind_annotate`
(C-level functions; for Python call counts use cProfile on the same workload).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

ROWS: dict[str, tuple[tuple[int, int, bool], tuple[int, int, bool], int]] = {
    "loop_sync": ((1100, 1, False), (100, 1, False), 1000),
    "loop_async": ((1100, 1, False), (100, 1, False), 1000),
    "agent_sync": ((45, 1, False), (5, 1, False), 40),
    "agent_async": ((45, 1, False), (5, 1, False), 40),
    "loop_sync_10": ((10, 21, False), (10, 21, True), 210),
    "loop_async_10": ((10, 21, False), (10, 21, True), 210),
    "durable_sync": ((1100, 1, False), (100, 1, False), 1000),
    "durable_async": ((1100, 1, False), (100, 1, False), 1000),
}
"""Row -> (larger run, smaller run, divisor); a run is (steps, executors, build only)."""
WARM_UP = 3
"""Steps of the warm-up run before the measured ones (the same in both runs of a row)."""


def child(row: str, steps: int, runs: int, build_only: bool) -> None:
    """Build `runs` executors of `steps` steps and (unless `build_only`) run each once."""
    sys.path.insert(0, str(BENCH))
    import compare  # pyright: ignore[reportMissingImports]

    kind, mode = row.split("_")[:2]
    expected = "final answer" if kind == "agent" else "done"
    folder = tempfile.mkdtemp(prefix="actloop-callgrind-")
    store = None
    if kind == "durable":
        from actloop.checkpoint import SqliteCheckpointer

        store = SqliteCheckpointer(os.path.join(folder, "runs.db"))
    threads = itertools.count()

    def build(size: int) -> Any:
        if kind == "agent":
            return compare._agent_executor(size, record=False)  # pyright: ignore[reportPrivateUsage]
        extra = {} if store is None else {"checkpointer": store}
        return compare._loop_executor(size, **extra)  # pyright: ignore[reportPrivateUsage]

    loop = asyncio.new_event_loop()

    def go(executor: Any) -> None:
        config = None if store is None else {"configurable": {"thread_id": f"t{next(threads)}"}}
        if mode == "sync":
            out = executor.invoke({"input": "q"}, config)
        else:
            out = loop.run_until_complete(executor.ainvoke({"input": "q"}, config))
        if out["output"] != expected:
            raise AssertionError(f"wrong output: {out!r}")

    go(build(WARM_UP))
    executors = [build(steps) for _ in range(runs)]
    if not build_only:
        for executor in executors:
            go(executor)
    loop.close()
    if store is not None:
        store.close()
    shutil.rmtree(folder)


def instructions(src: Path, row: str, run: tuple[int, int, bool], out: str = "/dev/null") -> int:
    """Instructions callgrind counts for one child run with `src` first on the path."""
    steps, runs, build_only = run
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTHONHASHSEED"] = "0"  # the same dict layouts in both runs of a row
    args = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        row,
        str(steps),
        str(runs),
        str(int(build_only)),
    ]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=3600)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{row} {run}: {done.stderr.strip().splitlines()[-3:]}")
    return int(found.group(1))


def measure(src: Path, row: str) -> float:
    """Thousands of instructions per step of `row`."""
    large, small, divisor = ROWS[row]
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda run: instructions(src, row, run), (large, small))
    return (a - b) / divisor / 1000


def main(argv: list[str]) -> int:
    """Parse the command line; print one line per row."""
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), int(argv[3]), argv[4] == "1")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated rows")
    parser.add_argument("--src", default=str(ROOT / "src"), help="the src/ to measure")
    parser.add_argument("--profile", default=None, help="keep a callgrind output of this row")
    parser.add_argument("--out", default="callgrind.out", help="where --profile writes")
    args = parser.parse_args(argv)
    src = Path(args.src).resolve()
    if args.profile is not None:
        instructions(src, args.profile, ROWS[args.profile][0], args.out)
        print(f"callgrind_annotate --inclusive=yes {args.out}")
        return 0
    for row in args.rows.split(","):
        print(f"{row:<14} {measure(src, row):9.1f}k instructions/step", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
