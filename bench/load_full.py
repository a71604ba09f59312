"""The reliability load test at full size: 10,000 concurrent async runs in one process.

Random model and tool latencies (seeded), 1% tool failures; every run must end with its own
answer (which names its input) or its own error. Prints the wall time, the peak RSS and how many
runs were checked; exits 1 if any run was lost or mixed up. The workload is shared with
`tests/reliability/test_load.py` (which runs it at a smaller size inside `make test`).

    .venv/bin/python bench/load_full.py [--runs 10000] [--seed 20260711]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from reliability._load import check, run_load  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20260711)
    args = parser.parse_args()
    start = time.perf_counter()
    plan, results = asyncio.run(run_load(args.runs, args.seed))
    wall = time.perf_counter() - start
    problems = check(plan, results)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    checked = len(results) - len(problems)
    print(f"runs: {args.runs} (seed {args.seed}), {len(plan.failing)} with a failing tool")
    print(f"wall time: {wall:.2f} s ({args.runs / wall:,.0f} runs/s)")
    print(f"peak RSS: {peak_mb:.0f} MB")
    print(f"checked: {checked}/{len(results)} runs ended with their own output or error")
    for problem in problems[:10]:
        print(f"  BAD {problem}")
    return 0 if not problems and len(results) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
