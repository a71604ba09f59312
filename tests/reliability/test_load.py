"""Load: many concurrent async runs in one process, random latencies, 1% tool failures.

Every run must end with its own answer (which names its input) or its own error; none may be
lost or mixed with another. The full 10,000-run version is `bench/load_full.py`.
"""

from __future__ import annotations

import asyncio
import os
import time

from ._load import check, run_load
from ._support import SEED

RUNS = int(os.environ.get("ACTLOOP_LOAD_RUNS", "3000"))


async def test_concurrent_runs_end_with_their_own_output_or_error() -> None:
    start = time.monotonic()
    plan, results = await run_load(RUNS, SEED)
    elapsed = time.monotonic() - start
    assert len(results) == RUNS
    problems = check(plan, results)
    assert not problems, f"seed {SEED}: {len(problems)} bad runs, e.g. {problems[:3]}"
    assert plan.failing, f"seed {SEED}: no failing run was drawn; raise ACTLOOP_LOAD_RUNS"
    assert asyncio.all_tasks() == {asyncio.current_task()}  # no run left anything running
    print(f"load: {RUNS} runs ({len(plan.failing)} failing) in {elapsed:.2f}s, seed {SEED}")
