"""Before/after: the core workloads on git REF and on the working tree, side by side.

    .venv/bin/python bench/compare.py REF [--rounds 7] [--quick] [--rows loop_sync_10,...] [--json]

REF (a commit, branch or tag) is checked out into a temporary git worktree (removed afterwards);
the working tree is this checkout's `src/`, uncommitted changes included. Every measurement runs in
a fresh interpreter with `PYTHONPATH` pointing at one tree's `src/`, and the two trees alternate
inside every round (REF first in even rounds, the working tree first in odd ones), so background
load hits both alike. The workloads are this file's, the same code on both sides (public API
only, as the LangChain-style workloads of `bench/run.py`).

Each row prints both medians over the rounds, their ratio (working tree / REF: below 1 is faster)
and the spread of the per-round ratios (lowest-highest). Rows:

- `loop_{sync,async}_{10,1000}`: a scripted single-action agent calling a no-op tool N times,
  `invoke`/`ainvoke`, us per step (median of the runs in the process's time budget);
- `agent_{sync,async}_20`: `create_tool_calling_agent` over a scripted chat model, 20 tool calls,
  us per step; `agent_peak_kib`: tracemalloc peak of one such run (KiB; traced from a
  `gc.collect()`, which empties CPython's dict free lists: refilled within the first step, they are
  ~11 KiB of the figure). The peak row's scripted model keeps no call log: `.calls` holds every
  call's message list, so every call's formatted prompt stays alive to the end of the run (18 KiB
  of 83 at 20 steps, quadratic in the steps); that is the test double's bookkeeping, which no
  real model does, not actloop's memory (its time is within noise, so the timed rows keep it);
- `import_ms`: `import actloop` in a fresh interpreter (ms), the fastest of `IMPORTS` fresh
  interpreters a round (one import is a single sample that a scheduler hiccup moves by a third);
- `durable_sqlite`: a 200-step run with a `SqliteCheckpointer` (a fresh file in a temp dir), us
  per step, journal included.

Use it before every merge that touches `executor/`, `runnables/`, `callbacks/`, `tools/`,
`messages/` or the models. Timing on a loaded machine is noisy: the ratio's spread says how much;
decide on a quiet machine (or with callgrind instruction counts) when it straddles 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

ROWS: dict[str, tuple[str, str]] = {
    "loop_sync_10": ("loop sync, N=10", "us/step"),
    "loop_sync_1000": ("loop sync, N=1,000", "us/step"),
    "loop_async_10": ("loop async, N=10", "us/step"),
    "loop_async_1000": ("loop async, N=1,000", "us/step"),
    "agent_sync_20": ("tool-calling agent sync, 20 steps", "us/step"),
    "agent_async_20": ("tool-calling agent async, 20 steps", "us/step"),
    "agent_peak_kib": ("tool-calling agent, traced peak", "KiB"),
    "import_ms": ("import actloop", "ms"),
    "durable_sqlite": ("durable step, SQLite (200 steps)", "us/step"),
}
"""Row key -> (label, unit)."""

DURABLE_STEPS = 200
IMPORTS = 5
"""Fresh interpreters the import row times per round and side (it keeps the fastest)."""
IMPORT_CODE = (
    "import time; t = time.perf_counter(); import actloop; "
    "print((time.perf_counter() - t) * 1e3); assert actloop.__file__"
)

# ------------------------------------------------------------------ child side: one measurement


def _timed_runs(make: Any, steps: int, budget: float, least: int) -> float:
    """Median us per step of `make()()` (only the call is timed: `make` builds a fresh run)
    repeated for `budget` seconds (at least `least` times), after one warm-up run."""
    make()()
    times: list[float] = []
    end = time.perf_counter() + budget
    while len(times) < least or time.perf_counter() < end:
        run = make()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) / steps * 1e6


def noop(x: str) -> str:
    """Does nothing (module-level, as most tools' functions are: built into a tool per run)."""
    return "ok"


async def anoop(x: str) -> str:
    """Does nothing."""
    return "ok"


def _loop_executor(n: int, **kw: Any) -> Any:
    from actloop import (
        AgentAction,
        AgentExecutor,
        AgentFinish,
        BaseSingleActionAgent,
        StructuredTool,
    )

    class Loop(BaseSingleActionAgent):
        @property
        def input_keys(self) -> list[str]:
            return ["input"]

        def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
            if len(intermediate_steps) >= n:
                return AgentFinish({"output": "done"}, "")
            return AgentAction("noop", "x", "")

        async def aplan(self, intermediate_steps: Any, callbacks: Any = None, **kw: Any) -> Any:
            return self.plan(intermediate_steps, callbacks, **kw)

    tool = StructuredTool.from_function(
        func=noop, coroutine=anoop, name="noop", description="Does nothing."
    )
    return AgentExecutor(agent=Loop(), tools=[tool], max_iterations=None, **kw)


def _unrecorded_model(responses: list[Any]) -> Any:
    """A `ScriptedChatModel` without its per-call log (`.calls` stays empty), as a real model."""
    from workloads.common import unrecorded

    from actloop.testing import ScriptedChatModel

    return unrecorded(ScriptedChatModel)(responses=responses)


def _agent_executor(n: int, record: bool = True) -> Any:
    from actloop import (
        AgentExecutor,
        AIMessage,
        ChatPromptTemplate,
        MessagesPlaceholder,
        StructuredTool,
        create_tool_calling_agent,
    )
    from actloop.testing import ScriptedChatModel

    tool = StructuredTool.from_function(
        func=noop, coroutine=anoop, name="noop", description="Does nothing."
    )
    calls = [
        AIMessage(content="", tool_calls=[{"name": "noop", "args": {"x": "x"}, "id": f"c{i}"}])
        for i in range(n)
    ]
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You are a helpful assistant."),
            ("human", "{input}"),
            MessagesPlaceholder("agent_scratchpad"),
        ]
    )
    responses = [*calls, AIMessage(content="final answer")]
    model = ScriptedChatModel(responses=responses) if record else _unrecorded_model(responses)
    agent = create_tool_calling_agent(model, [tool], prompt)
    return AgentExecutor(agent=agent, tools=[tool], max_iterations=None)


def _check(out: dict[str, Any], expected: str) -> None:
    if out.get("output") != expected:
        raise AssertionError(f"wrong output: {out!r}")


def _runner(build: Any, expected: str, is_async: bool) -> Any:
    """A factory of runs: each builds its executor (untimed) and returns the call to time."""
    import asyncio

    loop = asyncio.new_event_loop() if is_async else None

    def make() -> Any:
        ex = build()
        if loop is None:
            return lambda: _check(ex.invoke({"input": "q"}), expected)
        return lambda: _check(loop.run_until_complete(ex.ainvoke({"input": "q"})), expected)

    return make


def _peak_kib() -> float:
    import gc
    import tracemalloc

    make = _runner(lambda: _agent_executor(20, record=False), "final answer", is_async=False)
    for _ in range(2):
        make()()
    run = make()
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - base) / 1024


def _durable(budget: float) -> float:
    from actloop.checkpoint import SqliteCheckpointer

    folder = tempfile.mkdtemp(prefix="actloop-compare-")
    store = SqliteCheckpointer(os.path.join(folder, "runs.db"))
    ex = _loop_executor(DURABLE_STEPS, checkpointer=store)
    count = iter(range(1_000_000))

    def make() -> Any:
        config = {"configurable": {"thread_id": f"t{next(count)}"}}
        return lambda: _check(ex.invoke({"input": "q"}, config), "done")

    try:
        return _timed_runs(make, DURABLE_STEPS, budget, 3)
    finally:
        store.close()
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)


def measure(row: str, budget: float) -> float:
    """One measurement of `row` in this process (actloop from PYTHONPATH)."""
    kind, _, size = row.rpartition("_")
    if row == "agent_peak_kib":
        return _peak_kib()
    if row == "durable_sqlite":
        return _durable(budget)
    n = int(size)
    if kind.startswith("loop"):
        make = _runner(lambda: _loop_executor(n), "done", kind.endswith("async"))
    else:
        make = _runner(lambda: _agent_executor(n), "final answer", kind.endswith("async"))
    return _timed_runs(make, n, budget, 5 if n >= 1000 else 20)


# ------------------------------------------------------------------ parent side


def _child(src: Path, row: str, budget: float) -> float:
    """`row` measured in a fresh interpreter with `src` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    if row == "import_ms":
        args = [sys.executable, "-c", IMPORT_CODE]
        env = _with_bytecode(env, src)
        return min(_run_child(row, src, args, env) for _ in range(IMPORTS))
    args = [sys.executable, str(Path(__file__).resolve()), "--child", row, str(budget)]
    return _run_child(row, src, args, env)


def _run_child(row: str, src: Path, args: list[str], env: dict[str, str]) -> float:
    """The number the child process `args` prints last."""
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{row} on {src}: {done.stderr.strip().splitlines()[-1:]}")
    return float(done.stdout.strip().splitlines()[-1])


def _with_bytecode(env: dict[str, str], src: Path) -> dict[str, str]:
    """`env` for the import row: bytecode cached out of the trees (`PYTHONPYCACHEPREFIX`), and
    written once before the first timed import, so the row times an import as users have it
    (with `PYTHONDONTWRITEBYTECODE` set, as on some machines, it would time compiling)."""
    prefix = Path(tempfile.gettempdir()) / "actloop-compare-pyc" / str(src).strip("/")
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    if src not in _WARMED:  # (re)written for this run's sources
        subprocess.run([sys.executable, "-c", "import actloop"], env=env, check=True, timeout=600)
        _WARMED.add(src)
    return env


_WARMED: set[Path] = set()


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def compare(ref: str, rows: list[str], rounds: int, budget: float) -> dict[str, Any]:
    """Measure `rows` on REF and on the working tree, `rounds` times each, alternating."""
    commit = _git("rev-parse", "--verify", f"{ref}^{{commit}}")
    head = _git("rev-parse", "--short", "HEAD")
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no", "src"))
    load_start = _load()
    with tempfile.TemporaryDirectory(prefix="actloop-ref-") as tmp:
        tree = Path(tmp) / "ref"
        _git("worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            sides = {"ref": tree / "src", "tree": ROOT / "src"}
            values: dict[str, dict[str, list[float]]] = {r: {"ref": [], "tree": []} for r in rows}
            errors: dict[str, str] = {}
            for i in range(rounds):
                order = ("ref", "tree") if i % 2 == 0 else ("tree", "ref")
                for row in rows:
                    if row in errors:
                        continue
                    for side in order:
                        try:
                            values[row][side].append(_child(sides[side], row, budget))
                        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                            errors[row] = f"{side}: {exc}"
                            break
        finally:
            _git("worktree", "remove", "--force", str(tree))
    table = [_row(row, values[row], errors.get(row)) for row in rows]
    return {
        "ref": ref,
        "ref_commit": commit[:10],
        "tree": head + (" + uncommitted changes" if dirty else ""),
        "rounds": rounds,
        "load": [load_start, _load()],
        "rows": table,
    }


def _row(row: str, values: dict[str, list[float]], error: str | None) -> dict[str, Any]:
    label, unit = ROWS[row]
    out: dict[str, Any] = {"row": row, "label": label, "unit": unit}
    if error is not None:
        return {**out, "error": error}
    ref, tree = values["ref"], values["tree"]
    ratios = sorted(t / r for r, t in zip(ref, tree, strict=True) if r > 0)
    out.update(
        ref=statistics.median(ref),
        tree=statistics.median(tree),
        ratio=statistics.median(tree) / statistics.median(ref),
        spread=[ratios[0], ratios[-1]],
    )
    return out


def render(result: dict[str, Any]) -> str:
    """The comparison as a plain-text table."""
    lines = [
        f"compare.py: REF {result['ref']} ({result['ref_commit']}) vs working tree "
        f"({result['tree']}); {result['rounds']} rounds, fresh processes, alternating; "
        f"load average {result['load'][0]} -> {result['load'][1]}",
        f"{'row':<36} {'unit':<8} {'REF':>9} {'tree':>9} {'ratio':>6}  spread",
    ]
    for r in result["rows"]:
        if "error" in r:
            lines.append(f"{r['label']:<36} {r['unit']:<8} n/a: {r['error']}")
            continue
        low, high = r["spread"]
        lines.append(
            f"{r['label']:<36} {r['unit']:<8} {r['ref']:>9.2f} {r['tree']:>9.2f} "
            f"{r['ratio']:>6.3f}  {low:.3f}-{high:.3f}"
        )
    lines.append("ratio = tree / REF (median of rounds); spread = lowest-highest per-round ratio")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(measure(argv[1], float(argv[2])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ref", help="git commit, branch or tag to compare the working tree with")
    parser.add_argument("--rounds", type=int, default=None, help="fresh-process rounds (7)")
    parser.add_argument("--quick", action="store_true", help="2 rounds, short time budgets")
    parser.add_argument("--rows", default=",".join(ROWS), help="comma-separated row keys")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    rows = [r for r in args.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        parser.error(f"unknown rows {unknown}; known: {', '.join(ROWS)}")
    rounds = args.rounds or (2 if args.quick else 7)
    budget = 0.05 if args.quick else 0.5
    result = compare(args.ref, rows, rounds, budget)
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
