#!/usr/bin/env python3
"""The system rows of RESULTS.md: the server against LangServe, the Postgres journal against
LangGraph's PostgresSaver, and the Ray runner's dispatch cost, each run in its own process.

    .venv/bin/python bench/systems.py [--quick]

Runs `serve_bench.py` (every protocol, 50/200/1000 concurrent streams), `postgres_journal.py`
and `ray_scale.py` with the dev venv, keeps their JSON in `bench/out/systems.json`, and rewrites
the section between the `systems` markers of RESULTS.md (appended the first time). Each row says
the load average while it ran: above about 0.5 per core the machine was busy and the absolute
numbers are inflated. `--quick` runs small sizes, to check the scripts, not to report;
`--render` writes the section again from the last results.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
OUT = BENCH / "out"
START = "<!-- systems:start (bench/systems.py writes this section) -->"
END = "<!-- systems:end -->"


def run(script: str, *args: str) -> tuple[Any, list[float]]:
    """The last JSON line `script` prints, and the 1-minute load average before and after."""
    before = os.getloadavg()[0]
    env = {**os.environ, "PYTHONPATH": str(BENCH.parent / "src")}
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    after = os.getloadavg()[0]
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail)}, [before, after]
    lines = [line for line in done.stdout.splitlines() if line.startswith(("{", "["))]
    return json.loads(lines[-1]), [round(before, 2), round(after, 2)]


def _serve_table(rows: list[dict[str, Any]]) -> list[str]:
    out = [
        "| server | protocol | concurrent | runs/s | vs LangServe | server CPU ms/run "
        "| first event p50 / p99 ms | own answer | load before/after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = r.get("throughput_vs_langserve")
        out.append(
            f"| {r['lib']} | {r['protocol']} | {r['concurrency']} | {r['runs_per_s']} "
            f"| {f'{ratio}x' if ratio else '-'} | {r['server_cpu_ms_per_run']} "
            f"| {r['first_event_p50_ms']} / {r['first_event_p99_ms']} "
            f"| {r['own_answer']}/{r['concurrency']} | {r['load_before_after']} |"
        )
    return out


def _pairs(result: dict[str, Any], load: list[float]) -> list[str]:
    if "error" in result:
        return [f"failed: {result['error']}"]
    out = ["| measure | value |", "|---|---|"]
    for key, value in _flat(result):
        shown = f"{value:,.2f}" if isinstance(value, float) else json.dumps(value)
        out.append(f"| {key} | {shown} |")
    out.append(f"| load average before / after | {load[0]} / {load[1]} |")
    return out


def _flat(result: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """`{"a": {"b": 1}}` as `[("a.b", 1)]`."""
    pairs: list[tuple[str, Any]] = []
    for key, value in result.items():
        if isinstance(value, dict):
            pairs += _flat(value, f"{prefix}{key}.")
        else:
            pairs.append((f"{prefix}{key}", value))
    return pairs


def section(results: dict[str, Any], quick: bool = False) -> str:
    """The markdown section of the system rows."""
    serve_rows, _ = results["serve"]
    lines = [
        START,
        "## 13. Systems (`make bench-systems`: `bench/systems.py`)",
        "",
        f"- Machine: {platform.machine()}, {os.cpu_count()} cpus, Python "
        f"{platform.python_version()}; run {time.strftime('%Y-%m-%d %H:%M')}",
        *(
            ["- **Quick mode** (`--quick`): small sizes that check the scripts; not a result."]
            if quick
            else []
        ),
        "",
        "### The server against LangServe serving LangChain's AgentExecutor",
        "",
        "A tool-calling agent with a scripted model (50 ms per reply), each run streamed; the "
        "client is a pool of processes (one per CPU), every stream launched at the same "
        "instant. Throughput counts the runs that ended with their own answer; server CPU is "
        "measured around the runs, after a warm-up. A durable thread's events are kept in memory "
        "for at most `--max-threads` live threads (default 200, `_hub`); the bench starts "
        "actloop's server with `--max-threads` at least the row's concurrency, as a server "
        "sized for that many concurrent threaded runs is. "
        "`bench/serve_bench.py`.",
        "",
    ]
    if isinstance(serve_rows, dict):
        lines.append(f"failed: {serve_rows.get('error')}")
    else:
        lines.extend(_serve_table(serve_rows))
    for key, title in (
        (
            "postgres",
            "The Postgres journal against LangGraph's PostgresSaver (`postgres_journal.py`)",
        ),
        ("ray", "The Ray runner: throughput and dispatch cost per run (`ray_scale.py`)"),
    ):
        lines += ["", f"### {title}", "", *_pairs(*results[key])]
    return "\n".join([*lines, "", END])


def write(text: str) -> None:
    """Put the section into RESULTS.md, replacing the previous one."""
    path = BENCH / "RESULTS.md"
    old = path.read_text() if path.exists() else ""
    if START in old and END in old:
        head, rest = old.split(START, 1)
        new = head + text + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(new)


def main() -> None:
    quick = "--quick" in sys.argv
    if "--render" in sys.argv:  # the section again from bench/out/systems.json
        write(section(json.loads((OUT / "systems.json").read_text()), quick))
        return
    OUT.mkdir(exist_ok=True)
    serve_file = OUT / "serve.json"
    concurrency = "20" if quick else "50,200,1000"
    results: dict[str, Any] = {}
    done, load = run("serve_bench.py", "--concurrency", concurrency, "--out", str(serve_file))
    results["serve"] = (json.loads(serve_file.read_text()) if "error" not in done else done, load)
    results["postgres"] = run("postgres_journal.py", "20" if quick else "200", "--concurrent",
                              "5" if quick else "50", "--json")  # fmt: skip
    results["ray"] = run("ray_scale.py", "20" if quick else "400", "--json")
    (OUT / "systems.json").write_text(json.dumps(results, indent=1))
    write(section(results, quick))
    print(f"systems: wrote {BENCH / 'RESULTS.md'} (section 13) and {OUT / 'systems.json'}")


if __name__ == "__main__":
    main()
