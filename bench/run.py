#!/usr/bin/env python3
"""Benchmark entry point (``make bench`` runs ``python3 bench/run.py``).

Creates ``bench/.venv`` on first use (reference libraries + actloop from the repo), then, in ONE
run, measures every workload for actloop and each reference, alternating libraries within every
repetition, and writes ``bench/RESULTS.md`` and ``bench/results.png``. It measures and reports;
it asserts nothing. Options: ``--quick`` (smaller, for a smoke run), ``--libs a,b``,
``--workloads a,b``, ``--report-only`` (re-render from ``bench/out/results.json``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
VENV = BENCH / ".venv"
VPY = VENV / "bin" / "python"
OUT = BENCH / "out"
REQS = BENCH / "requirements-ref.txt"

WORKLOADS = [
    "import",
    "loop",
    "agent",
    "stream",
    "parallel",
    "hung",
    "mem",
    "many",
    "local",
    "journal",
    "tracing",
]
HUNG_CAP = 5.0  # seconds we wait for a reference stuck on the hung tool
CALL_TIMEOUT = 240.0  # any single in-worker measurement
# Largest loop N per reference: their per-step cost grows with N (quadratic runs), so bigger N
# would take minutes; the report says where a cap applied.
MAX_LOOP_N = {"langgraph": 1000, "pydantic_ai": 1000, "smolagents": 1000, "openai_agents": 100}
MANY_COUNT = {
    "actloop": 10_000,
    "langchain": 10_000,
    "langgraph": 1000,
    "pydantic_ai": 500,
    "openai_agents": 300,
}


# ---------------------------------------------------------------- bootstrap


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VPY), "-m", "pip", *args], text=True, capture_output=True)


def bootstrap(argv: list[str]) -> None:
    """Create/refresh bench/.venv, then re-exec this script inside it."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    t0 = time.time()
    did = False
    if not VPY.exists():
        print(f"bench: creating {VENV}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    stamp, want = VENV / ".installed-ref", _digest(REQS)
    if not stamp.exists() or stamp.read_text() != want:
        print("bench: installing reference libraries (first run: ~1 min)", flush=True)
        _pip("install", "-q", "--upgrade", "pip")
        r = _pip("install", "-q", "-r", str(REQS))
        if r.returncode != 0:
            sys.exit(f"bench: pip install -r {REQS.name} failed:\n{r.stdout}\n{r.stderr}")
        stamp.write_text(want)
        did = True
    astamp, awant = (
        VENV / ".installed-actloop",
        _digest(REPO / "pyproject.toml", REPO / "README.md"),
    )
    if not astamp.exists() or astamp.read_text() != awant:
        print("bench: installing actloop from the repo (pip install -e ..[local])", flush=True)
        r = _pip("install", "-q", "-e", f"{REPO}[local]")
        if r.returncode == 0:
            astamp.write_text(awant)
        else:
            tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
            print(
                "bench: actloop did not install; using src/ on PYTHONPATH instead:",
                *tail,
                sep="\n  ",
                flush=True,
            )
        did = True
    if did:
        OUT.mkdir(exist_ok=True)
        (OUT / "install.json").write_text(json.dumps({"seconds": time.time() - t0}))
    os.execv(str(VPY), [str(VPY), str(Path(__file__).resolve()), *argv])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH), str(REPO / "src")])
    env["PYTHONDONTWRITEBYTECODE"] = "0"
    env.pop("OPENAI_API_KEY", None)  # nothing here may reach a network
    return env


# ---------------------------------------------------------------- processes


def _readline(proc: subprocess.Popen[str], timeout: float) -> dict[str, Any] | None:
    """One JSON line from the worker, or None on timeout / exit."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        if not sel.select(timeout):
            return None
        line = proc.stdout.readline()
    finally:
        sel.close()
    return json.loads(line) if line else None


def _spawn(args: list[str], log: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(BENCH / "worker.py"), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log.open("a"),
        text=True,
        env=_env(),
        cwd=str(BENCH),
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()  # only processes this runner started, by handle
    proc.wait()


class Worker:
    """A long-lived process holding one library; calls are answered in order."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        self.proc: subprocess.Popen[str] | None = None
        self.info: dict[str, Any] = {}
        self.fatal: str | None = None

    def start(self) -> None:
        self.proc = _spawn(["serve", self.lib], OUT / f"{self.lib}.log")
        msg = _readline(self.proc, 180)
        if msg is None or not msg.get("ok"):
            err = (msg or {}).get("error", "worker did not start")
            self.fatal = f"n/a: not importable ({err})"
            _stop(self.proc)
            self.proc = None
        else:
            self.info = msg

    def has(self, fn: str) -> str | None:
        """None if fn can run, else the reason it cannot."""
        if self.fatal:
            return self.fatal
        if fn in self.info.get("unsupported", {}):
            return "n/a: " + self.info["unsupported"][fn]
        if fn not in self.info.get("functions", []):
            return "n/a: not written"
        return None

    def call(self, fn: str, *args: Any, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        if self.proc is None and not self.fatal:
            self.start()
        if self.proc is None:
            return {"ok": False, "error": self.fatal}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"fn": fn, "args": list(args)}) + "\n")
        self.proc.stdin.flush()
        msg = _readline(self.proc, timeout)
        if msg is None:
            _stop(self.proc)
            self.proc = None
            return {"ok": False, "error": f"timeout (> {timeout:.0f} s) or worker died"}
        return msg

    def close(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                _stop(self.proc)


def oneshot(
    lib: str, kind: str, args: list[Any], start_timeout: float, cap: float
) -> dict[str, Any]:
    """An isolated process for one measurement; a hung one is killed after ``cap`` seconds."""
    proc = _spawn(["oneshot", lib, kind, json.dumps(args)], OUT / f"{lib}.log")
    try:
        msg = _readline(proc, start_timeout)
        if msg is not None and msg.get("event") == "start":
            msg = _readline(proc, cap)
            if msg is None:
                return {"ok": False, "hung": True, "error": f"hangs (> {cap:g} s cap)"}
        if msg is None:
            return {"ok": False, "error": "worker died or timed out"}
        return msg
    finally:
        _stop(proc)


# ---------------------------------------------------------------- measurement


class Bench:
    def __init__(self, libs: list[str], quick: bool) -> None:
        self.libs = libs
        self.quick = quick
        self.workers = {lib: Worker(lib) for lib in libs}
        self.results: dict[str, Any] = {}

    def cell(self, workload: str, lib: str, param: str) -> dict[str, Any]:
        return (
            self.results.setdefault(workload, {})
            .setdefault(lib, {})
            .setdefault(param, {"values": []})
        )

    def log(self, text: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)

    def series(
        self,
        workload: str,
        fn: str,
        params: list[int | None],
        reps: int,
        budget: float,
        warm: int | None = None,
        caps: dict[str, int] | None = None,
    ) -> None:
        """Alternate libraries inside every repetition; stop repeating a cell past ``budget`` s."""
        caps = caps or {}
        for param in params:
            key = "-" if param is None else str(param)
            args = [] if param is None else [param]
            live = []
            for lib in self.libs:
                w = self.workers[lib]
                reason = w.has(fn)
                if reason is None and param is not None and param > caps.get(lib, 1 << 30):
                    reason = f"skipped: N capped at {caps[lib]} (per-step cost grows with N)"
                if reason:
                    self.cell(workload, lib, key)["skipped"] = reason
                    continue
                if warm is not None:  # warm-up call, discarded
                    w.call(fn, *([] if param is None else [min(param, warm)]))
                live.append(lib)
            spent = dict.fromkeys(live, 0.0)
            for rep in range(reps):
                for lib in live:
                    c = self.cell(workload, lib, key)
                    if c.get("error") or (rep > 0 and spent[lib] > budget):
                        continue
                    t0 = time.perf_counter()
                    msg = self.workers[lib].call(fn, *args)
                    spent[lib] += time.perf_counter() - t0
                    if msg.get("ok"):
                        c["values"].append(msg["value"])
                    else:
                        c["error"] = msg.get("error")
            for lib in live:
                c = self.cell(workload, lib, key)
                shown = f"{statistics.median(c['values']):.4g}s" if c["values"] else c.get("error")
                self.log(f"{workload} {key:>5} {lib:<14} {shown}")

    # each workload -------------------------------------------------------

    def w_import(self) -> None:
        from workloads import EXTRA_IMPORTS, IMPORTS

        reps = 3 if self.quick else 10
        jobs = [(lib, "-", IMPORTS[lib]) for lib in self.libs]
        jobs += [(lib, "full", EXTRA_IMPORTS[lib]) for lib in self.libs if lib in EXTRA_IMPORTS]
        for _ in range(reps):
            for lib, key, stmt in jobs:
                c = self.cell("import", lib, key)
                if c.get("error"):
                    continue
                code = (
                    f"import time; t = time.perf_counter(); {stmt}; print(time.perf_counter() - t)"
                )
                if lib == "actloop" and key == "-":
                    code += "; assert actloop.__file__, 'namespace package only'"
                t0 = time.perf_counter()
                r = subprocess.run(
                    [sys.executable, "-c", code],
                    capture_output=True,
                    text=True,
                    env=_env(),
                    cwd="/",
                )
                wall = time.perf_counter() - t0
                if r.returncode != 0:
                    last = (r.stderr.strip().splitlines() or ["?"])[-1]
                    c["error"] = f"n/a: not importable ({last})"
                    continue
                c["values"].append(float(r.stdout.strip().splitlines()[-1]))
                c.setdefault("process", []).append(wall)
        for lib, key, _ in jobs:
            c = self.cell("import", lib, key)
            self.log(f"import {lib:<8} {key:<4} {c.get('error') or statistics.median(c['values'])}")

    def w_loop(self) -> None:
        ns = [10, 100, 1000] if self.quick else [10, 100, 1000, 10_000]
        reps, budget = (2, 4.0) if self.quick else (5, 8.0)
        self.series("loop_sync", "loop_sync", ns, reps, budget, warm=10, caps=MAX_LOOP_N)
        self.series("loop_async", "loop_async", ns, reps, budget, warm=10, caps=MAX_LOOP_N)
        self.series("loop_async_synctool", "loop_async_synctool", [100], reps, budget, warm=10)

    def w_agent(self) -> None:
        reps, budget = (2, 4.0) if self.quick else (5, 8.0)
        self.series("agent_sync", "agent_sync", [20, 100], reps, budget, warm=2)
        self.series("agent_async", "agent_async", [20, 100], reps, budget, warm=2)

    def w_stream(self) -> None:
        self.series("stream", "stream_first", [20], 2 if self.quick else 5, 5.0, warm=2)

    def w_parallel(self) -> None:
        reps = 1 if self.quick else 2
        self.series("parallel_sync", "parallel_sync", [None], reps, 1.0)
        self.series("parallel_async", "parallel_async", [None], reps, 1.0)

    def w_hung(self) -> None:
        for fn in ("hung_sync", "hung_async"):
            for rep in range(1 if self.quick else 2):
                for lib in self.libs:
                    c = self.cell(fn, lib, "-")
                    reason = self.workers[lib].has(fn)
                    if reason:
                        c["skipped"] = reason
                        continue
                    if rep > 0 and not c["values"]:
                        continue  # hung or failed: once is enough
                    msg = oneshot(lib, fn, [], 180, HUNG_CAP)
                    if msg.get("ok"):
                        seconds, outcome = msg["value"]
                        c["values"].append(seconds)
                        c["outcome"] = outcome
                    else:
                        c["error"] = msg.get("error")
                        c["hung"] = bool(msg.get("hung"))
                    if rep == 0:
                        self.log(f"{fn} {lib:<14} {c.get('outcome') or c.get('error')}")

    def w_mem(self) -> None:
        for lib in self.libs:
            c = self.cell("mem", lib, "-")
            reason = self.workers[lib].has("mem_case")
            if reason:
                c["skipped"] = reason
                continue
            msg = oneshot(lib, "mem", [], 300, 300)
            if msg.get("ok"):
                c["values"].append(msg["value"])
            else:
                c["error"] = msg.get("error")
            self.log(f"mem {lib:<14} {c['values'] or c.get('error')}")

    def w_many(self) -> None:
        for lib in self.libs:
            c = self.cell("many", lib, "-")
            reason = self.workers[lib].has("many_async")
            if reason:
                c["skipped"] = reason
                continue
            count = MANY_COUNT.get(lib, 1000) // (10 if self.quick else 1)
            msg = oneshot(lib, "many", [count, 5], 300, 300)
            if msg.get("ok"):
                c["values"].append(msg["value"])
            else:
                c["error"] = msg.get("error")
            self.log(f"many {lib:<14} {c['values'] or c.get('error')}")

    def w_local(self) -> None:
        for lib in self.libs:
            c = self.cell("local", lib, "-")
            reason = self.workers[lib].has("local_model")
            if reason:
                c["skipped"] = "n/a: no local-model workload" if lib != "actloop" else reason
                continue
            msg = self.workers[lib].call("local_model", timeout=900)
            if msg.get("ok"):
                c["values"].append(msg["value"])
            else:
                c["error"] = msg.get("error")

    def w_journal(self) -> None:
        """actloop only: the durable journal's cost per step (SQLite on this disk)."""
        if "actloop" not in self.libs:
            return
        c = self.cell("journal", "actloop", "-")
        r = subprocess.run(
            [sys.executable, str(BENCH / "journal_cost.py"), "1000", "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            env=_env(),
        )
        if r.returncode == 0:
            c["values"].append(json.loads(r.stdout.strip().splitlines()[-1]))
        else:
            c["error"] = (r.stderr.strip().splitlines() or ["?"])[-1]
        self.log(f"journal actloop {c['values'] or c.get('error')}")

    def w_tracing(self) -> None:
        """actloop only: what OpenTelemetry spans cost per step, off and on."""
        if "actloop" not in self.libs:
            return
        c = self.cell("tracing", "actloop", "-")
        r = subprocess.run(
            [sys.executable, str(BENCH / "tracing_cost.py"), "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            env=_env(),
        )
        if r.returncode == 0:
            c["values"].append(json.loads(r.stdout.strip().splitlines()[-1]))
        else:
            c["error"] = (r.stderr.strip().splitlines() or ["?"])[-1]
        self.log(f"tracing actloop {c['values'] or c.get('error')}")

    def run(self, workloads: list[str]) -> None:
        OUT.mkdir(exist_ok=True)
        for lib in self.libs:
            (OUT / f"{lib}.log").write_text("")
            self.workers[lib].start()
            if self.workers[lib].fatal:
                self.log(f"{lib}: {self.workers[lib].fatal}")
        try:
            for name in WORKLOADS:
                if name in workloads:
                    t0 = time.perf_counter()
                    getattr(self, f"w_{name}")()
                    self.log(f"== {name} done in {time.perf_counter() - t0:.1f} s")
        finally:
            for w in self.workers.values():
                w.close()
        self.results["_meta"] = {
            lib: {"notes": w.info.get("notes", {}), "fatal": w.fatal}
            for lib, w in self.workers.items()
        }


def _versions() -> dict[str, str]:
    from importlib import metadata

    names = [
        "actloop",
        "langchain-classic",
        "langchain-core",
        "langchain",
        "langgraph",
        "pydantic-ai-slim",
        "smolagents",
        "openai-agents",
        "matplotlib",
    ]
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "not installed"
    return out


def main(argv: list[str]) -> None:
    from workloads import LIBRARIES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller N and fewer repetitions")
    ap.add_argument("--libs", default=",".join(LIBRARIES))
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--report-only", action="store_true")
    opts = ap.parse_args(argv)
    res_file = OUT / "results.json"
    if not opts.report_only:
        t0 = time.time()
        load_start = round(os.getloadavg()[0], 2)
        bench = Bench([x for x in opts.libs.split(",") if x], opts.quick)
        bench.run(opts.workloads.split(","))
        install = OUT / "install.json"
        data = {
            "results": bench.results,
            "env": {
                "python": platform.python_version(),
                "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
                "date": time.strftime("%Y-%m-%d %H:%M"),
                "bench_seconds": time.time() - t0,
                "install_seconds": json.loads(install.read_text())["seconds"]
                if install.exists()
                else None,
                "quick": opts.quick,
                "load_start": load_start,
                "load_end": round(os.getloadavg()[0], 2),
                "versions": _versions(),
            },
        }
        chosen = opts.workloads.split(",")
        if set(WORKLOADS) - set(chosen) and res_file.exists():  # a partial run updates the last one
            old = json.loads(res_file.read_text())
            meta = {**old["results"].get("_meta", {}), **data["results"]["_meta"]}
            data["results"] = {**old["results"], **data["results"], "_meta": meta}
        res_file.write_text(json.dumps(data, indent=1, default=str))
    if not res_file.exists():
        sys.exit(f"bench: no {res_file} yet; run without --report-only first")
    import report

    report.write(json.loads(res_file.read_text()), BENCH)
    print(f"bench: wrote {BENCH / 'RESULTS.md'} and {BENCH / 'results.png'}")


if __name__ == "__main__":
    bootstrap(sys.argv[1:])
    sys.path.insert(0, str(BENCH))
    main(sys.argv[1:])
