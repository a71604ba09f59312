"""N concurrent durable runs in one event loop: wall time, event-loop stalls and store writes,
with no store, SQLite, PostgreSQL on loopback, and PostgreSQL behind a proxy that delays replies.

    .venv/bin/python bench/durable_concurrency.py [--runs N] [--steps K] [--delay-ms D]
        [--tool-ms T] [--repeat R] [--timeout S] [--fsync on|off] [--rows a,b] [--markdown]
        [--json]

Each run is a scripted agent (`actloop.testing.ScriptedAgent`) that calls one async tool K times
(the tool awaits `asyncio.sleep(T ms)` and answers "ok"), then finishes. The N runs start at
once: `asyncio.gather` of `executor.ainvoke(..., {"configurable": {"thread_id": unique}})` in one
event loop. Rows:

- `no store`: the executor without a checkpointer (and no thread_id): the floor, about K x T.
- `SQLite`: a fresh `SqliteCheckpointer` file in a temp dir.
- `Postgres (loopback)`: a fresh database on a throw-away server (`tests/support/postgres.py`,
  fsync on as `bench/postgres_journal.py` runs it; `--fsync off` to leave the disk out),
  `PostgresCheckpointer` with its defaults (pools of up to 8 connections, 30 s leases).
- `Postgres + proxy D ms`: the same, reached through `bench/delay_proxy.py`, a TCP proxy in its own
  process that forwards every reply chunk of the server D ms after it came (a server D ms away).

Every repetition runs in a fresh process, with a fresh store (new file or new database), so threads
never collide. In that process one warm-up run (1 step, thread "warm-up") opens the store and its
connection pools and warms the code before the clock starts; the counters are then reset.

What is measured:
- wall: from the gather's start to the last run's answer (every answer is checked).
- stall: a ticker task in the same loop sleeps 1 ms at a time; the worst lateness (actual interval
  minus 1 ms) while the runs go is the longest the loop could not run anything else.
- writes/step: the store is a subclass of the row's store class that counts every call of
  `acquire`, `renew`, `release`, `create`, `update` and `append` (writes) and `get`, `entries`
  (reads), sync or `a`-prefixed async twin, once each (a twin that calls its sync method inline
  counts once); writes/step = write calls over all runs / (N x K). journal/step = entries of one
  run's journal (read back after the run) / K. "sync on loop" is the time spent inside the store's
  sync methods on the event loop's thread (called by the engine, or inline by an async twin): the
  loop can do nothing else meanwhile.
- replies/step (proxy row): reply chunks the proxy forwarded during the timed part / (N x K); each
  cost one D ms delay on some connection.

Goal (the durable-runs issue), on the proxy row: wall <= 5 x K x D x writes/step and the worst
stall < 50 ms. Median of R repetitions (stall: median, and the worst of all in brackets; the goal
uses the worst). Each row has an overall time limit (`--timeout`, 120 s): a row that runs out is
killed and reads "timeout". `--markdown` prints the RESULTS.md section, `--json` the raw numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import json
import os
import platform
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "tests"))
sys.path.insert(0, str(BENCH))

ROWS = ("none", "sqlite", "postgres", "proxy")
WRITES = ("acquire", "renew", "release", "create", "update", "append", "append_all")
READS = ("get", "entries")
GOAL_FACTOR = 5.0
GOAL_STALL_MS = 50.0

# ------------------------------------------------------------------ counting store (child side)

_counted: contextvars.ContextVar[bool] = contextvars.ContextVar("_counted", default=False)
"""Set inside a counted call: the store's own calls of its methods are not counted again."""
_timed: contextvars.ContextVar[bool] = contextvars.ContextVar("_timed", default=False)
"""Set inside a timed sync call: nested sync calls are not timed twice."""
_S = TypeVar("_S")


@dataclass
class CallLog:
    """What a counting store saw: calls by method name, by path, and sync time on the loop."""

    calls: Counter[str] = field(default_factory=Counter)
    sync_calls: int = 0
    async_calls: int = 0
    sync_on_loop_s: float = 0.0
    sync_on_loop_max_s: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.calls.clear()
            self.sync_calls = self.async_calls = 0
            self.sync_on_loop_s = self.sync_on_loop_max_s = 0.0


def _on_loop_thread() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _counted_sync(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """Counts the call unless a counted call made it; times it when it runs on a loop's thread
    (called by the engine, or inline by an async twin: either way the loop waits)."""

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        log: CallLog = self.call_log
        count, time_it = not _counted.get(), not _timed.get() and _on_loop_thread()
        tokens = (_counted.set(True), _timed.set(True))
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            took = time.perf_counter() - start
            _timed.reset(tokens[1])
            _counted.reset(tokens[0])
            with log.lock:
                if count:
                    log.calls[name] += 1
                    log.sync_calls += 1
                if time_it:
                    log.sync_on_loop_s += took
                    log.sync_on_loop_max_s = max(log.sync_on_loop_max_s, took)

    wrapper.__name__ = name
    return wrapper


def _counted_async(name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _counted.get():
            return await method(self, *args, **kwargs)
        log: CallLog = self.call_log
        with log.lock:
            log.calls[name] += 1
            log.async_calls += 1
        token = _counted.set(True)
        try:
            return await method(self, *args, **kwargs)
        finally:
            _counted.reset(token)

    wrapper.__name__ = "a" + name
    return wrapper


def counting(cls: type[_S]) -> type[_S]:
    """A subclass of the store class `cls` that logs its calls in `self.call_log` (a `CallLog`);
    every argument is passed on unchanged (`*args, **kwargs`), so new options keep working."""
    namespace: dict[str, Any] = {}
    for name in WRITES + READS:
        namespace[name] = _counted_sync(name, getattr(cls, name))
        namespace["a" + name] = _counted_async(name, getattr(cls, "a" + name))

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self.call_log = CallLog()
        cls.__init__(self, *args, **kwargs)  # type: ignore[misc]

    namespace["__init__"] = __init__
    return type(f"Counting{cls.__name__}", (cls,), namespace)


# ------------------------------------------------------------------ one repetition (child side)


class StallMeter:
    """Sleeps 1 ms at a time in the loop and keeps the worst lateness (seconds)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._stop = False

    async def run(self) -> None:
        while not self._stop:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            self.worst = max(self.worst, time.perf_counter() - start - 0.001)

    def stop(self) -> None:
        self._stop = True


def _open_store(kind: str, target: str) -> Any:
    from actloop.checkpoint import SqliteCheckpointer

    if kind == "none":
        return None
    if kind == "sqlite":
        return counting(SqliteCheckpointer)(target)
    from actloop.checkpoint import PostgresCheckpointer

    return counting(PostgresCheckpointer)(target)


def _wait_tool(tool_ms: float) -> Any:
    from actloop.tools import tool

    @tool
    async def wait(text: str) -> str:
        """Waits a few milliseconds, then answers ok."""
        await asyncio.sleep(tool_ms / 1000)
        return "ok"

    return wait


def _runs(store: Any, tool: Any, runs: int, steps: int, prefix: str) -> list[Awaitable[Any]]:
    """The runs' `ainvoke` coroutines (not started): one executor and scripted agent each."""
    from actloop import AgentAction, AgentExecutor, AgentFinish
    from actloop.testing import ScriptedAgent

    calls: list[Awaitable[Any]] = []
    for i in range(runs):
        plans: list[Any] = [AgentAction("wait", f"s{j}", "") for j in range(steps)]
        agent = ScriptedAgent([*plans, AgentFinish({"output": "done"}, "")])
        executor = AgentExecutor(agent=agent, tools=[tool], max_iterations=None, checkpointer=store)
        config: dict[str, Any] = {}
        if store is not None:
            config = {"configurable": {"thread_id": f"{prefix}{i}"}}
        calls.append(executor.ainvoke({"input": f"q{i}"}, config))
    return calls


async def measure(kind: str, target: str, runs: int, steps: int, tool_ms: float) -> dict[str, Any]:
    """One repetition; prints "ready" after the warm-up and waits for "go" on stdin."""
    store = _open_store(kind, target)
    try:
        tool = _wait_tool(tool_ms)
        await asyncio.gather(*_runs(store, tool, 1, 1, "warm-up"))
        if store is not None:
            store.call_log.reset()
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        calls = _runs(store, tool, runs, steps, "t")  # built before the clock starts
        meter = StallMeter()
        ticker = asyncio.create_task(meter.run())
        await asyncio.sleep(0.005)
        start = time.perf_counter()
        results = await asyncio.gather(*calls)
        wall = time.perf_counter() - start
        meter.stop()
        await ticker
        bad = [r for r in results if r.get("output") != "done"]
        out: dict[str, Any] = {"wall": wall, "stall_ms": meter.worst * 1000, "bad": len(bad)}
        if store is not None:
            out.update(_store_figures(store))
        return out
    finally:
        if store is not None:
            await store.aclose()


def _store_figures(store: Any) -> dict[str, Any]:
    """The call log, and thread t0's journal length and status (read after the clock stopped)."""
    log: CallLog = store.call_log
    with log.lock:
        figures: dict[str, Any] = {
            "calls": dict(log.calls),
            "sync_calls": log.sync_calls,
            "async_calls": log.async_calls,
            "sync_on_loop_s": log.sync_on_loop_s,
            "sync_on_loop_max_ms": log.sync_on_loop_max_s * 1000,
        }
    record = store.get("t0")
    figures["journal_entries"] = len(store.entries("t0"))
    figures["status"] = None if record is None else record.status
    return figures


def child(argv: list[str]) -> None:
    kind, target, runs, steps, tool_ms = argv[0], argv[1], int(argv[2]), int(argv[3]), argv[4]
    result = asyncio.run(measure(kind, target, runs, steps, float(tool_ms)))
    print(json.dumps(result), flush=True)


# ------------------------------------------------------------------ rows (parent side)


@dataclass
class Row:
    key: str
    label: str
    reps: list[dict[str, Any]] = field(default_factory=list)
    replies: list[int] = field(default_factory=list)
    error: str | None = None

    def median(self, key: str) -> float:
        return statistics.median(r[key] for r in self.reps)


class Child:
    """One repetition's process: started, warmed up, told to go, read back; killed on timeout."""

    def __init__(self, args: list[str], deadline: float) -> None:
        self.deadline = deadline
        self.log = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
        )  # fmt: skip

    def line(self) -> str:
        """The next stdout line; TimeoutError past the deadline, RuntimeError if it died."""
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(max(self.deadline - time.monotonic(), 0.0)):
                raise TimeoutError
        text = self.proc.stdout.readline()
        if not text:
            self.proc.wait()
            self.log.seek(0)
            tail = self.log.read().strip().splitlines()[-3:]
            raise RuntimeError(" | ".join(tail) or f"exit code {self.proc.returncode}")
        return text.strip()

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self.log.close()


@dataclass
class Setup:
    args: argparse.Namespace
    server: Any = None
    proxy: Any = None
    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="actloop-dc-")))
    serial: int = 0

    def target(self, key: str) -> str:
        self.serial += 1
        if key == "none":
            return "-"
        if key == "sqlite":
            return str(self.tmp / f"runs-{self.serial}.sqlite")
        url: str = self.server.create_database()
        if key == "proxy":
            parts = urlsplit(url)
            host = parts.netloc.rsplit(":", 1)[0]
            url = urlunsplit(parts._replace(netloc=f"{host}:{self.proxy.port}"))
        return url


def run_row(setup: Setup, row: Row) -> None:
    a = setup.args
    deadline = time.monotonic() + a.timeout
    for _ in range(a.repeat):
        target = setup.target(row.key)
        child_args = [row.key, target, str(a.runs), str(a.steps), str(a.tool_ms)]
        proc = Child(child_args, deadline)
        try:
            if proc.line() != "ready":
                raise RuntimeError("the child did not get ready")
            before = setup.proxy.stats() if row.key == "proxy" else None
            proc.go()
            rep = json.loads(proc.line())
            if before is not None:
                row.replies.append(setup.proxy.stats()["replies"] - before["replies"])
        except TimeoutError:
            row.error = f"timeout ({a.timeout:.0f} s)"
            return
        except (RuntimeError, ValueError) as exc:
            row.error = f"error: {exc}"
            return
        finally:
            proc.close()
        if rep["bad"] or rep.get("status", "finished") != "finished":
            row.error = f"error: {rep['bad']} runs did not answer 'done'; t0 {rep.get('status')}"
            return
        row.reps.append(rep)


# ------------------------------------------------------------------ report (parent side)


def _writes(rep: dict[str, Any]) -> int:
    return sum(n for name, n in rep.get("calls", {}).items() if name in WRITES)


def _figures(row: Row, a: argparse.Namespace) -> dict[str, Any]:
    """The row's medians (None where the row has no such figure)."""
    steps = a.runs * a.steps
    f: dict[str, Any] = {
        "row": row.label,
        "error": row.error,
        "wall_s": row.median("wall"),
        "wall_over_kd": row.median("wall") / (a.steps * a.delay_ms / 1000),
        "stall_ms": row.median("stall_ms"),
        "stall_worst_ms": max(r["stall_ms"] for r in row.reps),
        "repeats": len(row.reps),
    }
    if "calls" in row.reps[0]:
        f["writes_per_step"] = statistics.median(_writes(r) for r in row.reps) / steps
        f["journal_per_step"] = row.median("journal_entries") / a.steps
        f["calls_per_run"] = {
            name: statistics.median(r["calls"].get(name, 0) for r in row.reps) / a.runs
            for name in WRITES + READS
        }
        f["sync_calls"] = row.median("sync_calls")
        f["async_calls"] = row.median("async_calls")
        f["sync_on_loop_s"] = row.median("sync_on_loop_s")
        f["sync_on_loop_max_ms"] = max(r["sync_on_loop_max_ms"] for r in row.reps)
        f["status"] = row.reps[0]["status"]
    if row.replies:
        f["replies_per_step"] = statistics.median(row.replies) / steps
    return f


def goal(f: dict[str, Any], a: argparse.Namespace) -> tuple[float, bool]:
    """(the wall-time bound, whether the proxy row met the goal)."""
    bound = GOAL_FACTOR * a.steps * a.delay_ms / 1000 * f["writes_per_step"]
    return bound, f["wall_s"] <= bound and f["stall_worst_ms"] < GOAL_STALL_MS


def _cell(f: dict[str, Any], key: str, fmt: str) -> str:
    value = f.get(key)
    return "–" if value is None else format(value, fmt)


def print_table(rows: list[Row], a: argparse.Namespace) -> None:
    head = ("row", "wall s", "wall/(K·D)", "stall ms (worst)", "writes/step", "journal/step",
            "replies/step")  # fmt: skip
    print(f"{head[0]:24s}{head[1]:>9s}{head[2]:>12s}{head[3]:>19s}{head[4]:>13s}{head[5]:>14s}"
          f"{head[6]:>14s}")  # fmt: skip
    for row in rows:
        if not row.reps:
            print(f"{row.label:24s} {row.error}")
            continue
        f = _figures(row, a)
        stall = f"{f['stall_ms']:.1f} ({f['stall_worst_ms']:.1f})"
        print(
            f"{row.label:24s}{f['wall_s']:9.3f}{f['wall_over_kd']:12.1f}{stall:>19s}"
            f"{_cell(f, 'writes_per_step', '.2f'):>13s}{_cell(f, 'journal_per_step', '.2f'):>14s}"
            f"{_cell(f, 'replies_per_step', '.1f'):>14s}" + (f"  {row.error}" if row.error else "")
        )
    print()
    print("store calls per run (median), and time in sync store calls on the event loop's thread:")
    names = WRITES + READS
    print(f"{'row':24s}" + "".join(f"{n:>9s}" for n in names) + f"{'sync/async':>13s}"
          f"{'sync on loop s':>16s}{'longest ms':>12s}")  # fmt: skip
    for row in rows:
        if not row.reps or "calls" not in row.reps[0]:
            continue
        f = _figures(row, a)
        per = f["calls_per_run"]
        split = f"{f['sync_calls']:.0f}/{f['async_calls']:.0f}"
        print(f"{row.label:24s}" + "".join(f"{per[n]:9.2f}" for n in names) + f"{split:>13s}"
              f"{f['sync_on_loop_s']:16.3f}{f['sync_on_loop_max_ms']:12.1f}")  # fmt: skip
    print()
    print_goal(rows, a)


def print_goal(rows: list[Row], a: argparse.Namespace) -> None:
    proxy = next((r for r in rows if r.key == "proxy"), None)
    if proxy is None:
        return
    if not proxy.reps:
        print(f"goal (proxy row): missed ({proxy.error})")
        return
    f = _figures(proxy, a)
    bound, met = goal(f, a)
    print(
        f"goal (proxy row): wall <= {GOAL_FACTOR:g} x K x D x writes/step = {GOAL_FACTOR:g} x "
        f"{a.steps} x {a.delay_ms:g} ms x {f['writes_per_step']:.2f} = {bound:.3f} s and worst "
        f"stall < {GOAL_STALL_MS:g} ms: {'met' if met else 'missed'} (wall {f['wall_s']:.3f} s, "
        f"worst stall {f['stall_worst_ms']:.1f} ms)"
    )


def print_markdown(rows: list[Row], a: argparse.Namespace, env: dict[str, Any]) -> None:
    print("## 11. Durable runs under concurrency (actloop only; `bench/durable_concurrency.py`)\n")
    print(
        f"{a.runs} concurrent `ainvoke` runs of {a.steps} steps (an async tool sleeping "
        f"{a.tool_ms:g} ms) in one event loop, each under its own thread_id; proxy delay D = "
        f"{a.delay_ms:g} ms per reply. Median of {a.repeat} (a fresh process and store each); "
        "stall = worst lateness of a 1 ms ticker in the same loop, median (worst). "
        f"{env['machine']}, load average {env['load']} at start; command: `{env['command']}`.\n"
    )
    print("| row | wall s | wall / (K×D) | stall ms | writes/step | journal/step | replies/step |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        if not row.reps:
            print(f"| {row.label} | {row.error} | | | | | |")
            continue
        f = _figures(row, a)
        print(
            f"| {row.label} | {f['wall_s']:.3f} | {f['wall_over_kd']:.1f} | "
            f"{f['stall_ms']:.1f} ({f['stall_worst_ms']:.1f}) | "
            f"{_cell(f, 'writes_per_step', '.2f')} | {_cell(f, 'journal_per_step', '.2f')} | "
            f"{_cell(f, 'replies_per_step', '.1f')} |"
        )
    print()
    proxy = next((r for r in rows if r.key == "proxy"), None)
    if proxy is not None and proxy.reps:
        f = _figures(proxy, a)
        bound, met = goal(f, a)
        word = "met" if met else "**not met**"
        print(
            f"Goal (proxy row): wall ≤ {GOAL_FACTOR:g} × K × D × writes/step = {bound:.3f} s and "
            f"worst stall < {GOAL_STALL_MS:g} ms → {word} ({f['wall_s']:.3f} s, "
            f"{f['stall_worst_ms']:.1f} ms).\n"
        )


# ------------------------------------------------------------------ main


def _options(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--runs", type=int, default=20, help="concurrent runs N (20)")
    p.add_argument("--steps", type=int, default=5, help="tool steps per run K (5)")
    p.add_argument("--delay-ms", type=float, default=10.0, help="proxy delay per reply D (10)")
    p.add_argument("--tool-ms", type=float, default=10.0, help="the tool's sleep (10)")
    p.add_argument("--repeat", type=int, default=3, help="repetitions per row, median (3)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per row (120)")
    p.add_argument(
        "--fsync",
        choices=("on", "off"),
        default="on",
        help="the server's fsync (on, as in production)",
    )
    p.add_argument("--rows", default=",".join(ROWS), help=f"subset of {','.join(ROWS)}")
    p.add_argument("--markdown", action="store_true", help="also print the RESULTS.md section")
    p.add_argument("--json", action="store_true", help="print the figures as JSON only")
    return p.parse_args(argv)


LABELS = {"none": "no store", "sqlite": "SQLite", "postgres": "Postgres (loopback)"}


@contextlib.contextmanager
def servers(setup: Setup, keys: list[str]) -> Iterator[Setup]:
    """Start the PostgreSQL server and the proxy the rows need; always stop them."""
    try:
        if {"postgres", "proxy"} & set(keys):
            from support.postgres import PostgresServer

            setup.server = PostgresServer(fsync=setup.args.fsync == "on").start()
        if "proxy" in keys:
            from delay_proxy import DelayProxy

            port = setup.server.port
            setup.proxy = DelayProxy("127.0.0.1", port, setup.args.delay_ms).start()
        yield setup
    finally:
        if setup.proxy is not None:
            setup.proxy.stop()
        if setup.server is not None:
            setup.server.stop()
        shutil.rmtree(setup.tmp, ignore_errors=True)


def main(argv: list[str]) -> None:
    a = _options(argv)
    keys = [k for k in a.rows.split(",") if k]
    unknown = set(keys) - set(ROWS)
    if unknown:
        sys.exit(f"unknown rows {sorted(unknown)}; choose from {','.join(ROWS)}")
    keys = [k for k in ROWS if k in keys]
    load = os.getloadavg()
    python = platform.python_version()
    env = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus, Python {python}",
        "load": f"{load[0]:.2f}",
        "command": "python bench/durable_concurrency.py " + " ".join(argv),
    }
    if not a.json:
        print(f"{a.runs} concurrent durable ainvoke runs x {a.steps} steps (async tool "
              f"{a.tool_ms:g} ms), proxy delay {a.delay_ms:g} ms, median of {a.repeat}; "
              f"{env['machine']}; load average at start {load[0]:.2f} {load[1]:.2f} "
              f"{load[2]:.2f}", flush=True)  # fmt: skip
    labels = {**LABELS, "proxy": f"Postgres + proxy {a.delay_ms:g} ms"}
    rows = [Row(k, labels[k]) for k in keys]
    started = time.monotonic()
    with servers(Setup(a), keys) as setup:
        for row in rows:
            run_row(setup, row)
    if a.json:
        figures = [_figures(r, a) if r.reps else {"row": r.label, "error": r.error} for r in rows]
        print(json.dumps({"env": env, "rows": figures}))
        return
    print(f"(measured in {time.monotonic() - started:.0f} s)\n")
    print_table(rows, a)
    if a.markdown:
        print()
        print_markdown(rows, a, env)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main(sys.argv[1:])
