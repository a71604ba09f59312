"""Runs over Ray: throughput on 1, 2 and 4 workers against the same runs in one process, and
the per-run dispatch overhead.

    .venv/bin/python bench/ray_scale.py [RUNS] [--json]

Each run: a scripted planner that takes 50 ms per call (asyncio.sleep, as a remote model does)
asks for one no-op tool call, then finishes (two model calls). Every run is durable, on a
throw-away PostgreSQL server (fsync off: this measures dispatch, not the disk). One process:
`asyncio.gather` of `ainvoke` on one executor. Ray: `RayRunner.map` on a local Ray started by the
script. Dispatch overhead: the same runs with a 0 ms model, (Ray wall time - one-process wall
time) / RUNS, on one worker.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Tool  # noqa: E402
from actloop.checkpoint import connect  # noqa: E402
from support.postgres import PostgresServer  # noqa: E402

RUNS = int(next((a for a in sys.argv[1:] if not a.startswith("--")), "400"))


class Slow(BaseSingleActionAgent):
    """One tool call, then the finish; each plan takes $BENCH_MODEL_MS milliseconds."""

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError("async only")

    async def aplan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        await asyncio.sleep(float(os.environ.get("BENCH_MODEL_MS", "50")) / 1000)
        if not intermediate_steps:
            return AgentAction("noop", kwargs["input"], "")
        return AgentFinish({"output": intermediate_steps[0][1]}, "")


def make_executor() -> AgentExecutor:
    """The factory the Ray workers import (`ray_scale:make_executor`)."""
    noop = Tool(name="noop", func=lambda text: f"ok {text}", description="does nothing")
    return AgentExecutor(agent=Slow(), tools=[noop])


async def one_process(url: str, runs: int, prefix: str) -> float:
    executor = make_executor()
    executor.checkpointer = store = connect(url)
    start = time.perf_counter()
    await asyncio.gather(
        *(executor.ainvoke({"input": str(i)}, {"configurable": {"thread_id": f"{prefix}{i}"}})
          for i in range(runs))
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    store.close()
    return elapsed


def on_ray(url: str, runs: int, workers: int, prefix: str) -> float:
    from actloop.distributed import RayRunner

    runner = RayRunner("ray_scale:make_executor", url, workers=workers)
    for w in runner.workers:  # started and warm before the clock starts
        __import__("ray").get(w.where.remote())
    start = time.perf_counter()
    results = runner.map(
        [{"input": str(i)} for i in range(runs)],
        thread_ids=[f"{prefix}{i}" for i in range(runs)],
        progress=False,
    )
    elapsed = time.perf_counter() - start
    assert results[-1] == {"input": str(runs - 1), "output": f"ok {runs - 1}"}
    runner.shutdown()
    return elapsed


def main() -> None:
    import ray

    server = PostgresServer().start()
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    out: dict[str, Any] = {"runs": RUNS, "model_ms": 50}
    try:
        url = server.create_database()
        base = asyncio.run(one_process(url, RUNS, "p"))
        out["one_process_runs_per_s"] = RUNS / base
        for workers in (1, 2, 4):
            elapsed = on_ray(url, RUNS, workers, f"w{workers}-")
            out[f"ray_{workers}_runs_per_s"] = RUNS / elapsed
        os.environ["BENCH_MODEL_MS"] = "0"
        ray.shutdown()  # workers read BENCH_MODEL_MS when they start
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
        fast = asyncio.run(one_process(url, RUNS, "fp"))
        fast_ray = on_ray(url, RUNS, 1, "fr")
        out["dispatch_overhead_ms_per_run"] = (fast_ray - fast) / RUNS * 1000
        out["zero_ms_one_process_ms_per_run"] = fast / RUNS * 1000
        out["zero_ms_ray_ms_per_run"] = fast_ray / RUNS * 1000
    finally:
        ray.shutdown()
        server.stop()
    if "--json" in sys.argv:
        print(json.dumps(out))
        return
    for key, value in out.items():
        print(f"  {key:34s} {value:10.2f}" if isinstance(value, float) else f"  {key:34s} {value}")


if __name__ == "__main__":
    main()
