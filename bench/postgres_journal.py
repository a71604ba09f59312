"""Journal cost per step on PostgreSQL: actloop's PostgresCheckpointer next to LangGraph's
PostgresSaver (`langgraph-checkpoint-postgres`), on the same throw-away server.

    .venv/bin/python bench/postgres_journal.py [STEPS] [--concurrent N] [--json]

Both sides run the same loop shape: a planner that asks for a no-op tool STEPS times, then
finishes. actloop: `AgentExecutor` with and without a checkpointer. LangGraph: a `plan` node and
an `act` node in a StateGraph (the steps kept in state, as an agent's are), compiled with and
without a `PostgresSaver`. Journal cost per step = (with - without) / STEPS, median of 5 runs.
`--concurrent N` also times N runs at once (actloop: `abatch`-like gather on the async path;
LangGraph: `AsyncPostgresSaver`), as a cost per step over all runs. The server starts from
`tests/support/postgres.py` (fsync on, as in production), on loopback TCP.
"""

from __future__ import annotations

import asyncio
import json
import operator
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from actloop import AgentAction, AgentExecutor, AgentFinish, BaseSingleActionAgent, Tool
from actloop.checkpoint import PostgresCheckpointer
from support.postgres import PostgresServer

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
STEPS = int(ARGS[0]) if ARGS else 200
CONCURRENT = int(sys.argv[sys.argv.index("--concurrent") + 1]) if "--concurrent" in sys.argv else 0
REPEATS = 5


class Loop(BaseSingleActionAgent):
    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        if len(intermediate_steps) < STEPS:
            return AgentAction("noop", "x", "")
        return AgentFinish({"output": "done"}, "")

    async def aplan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        return self.plan(intermediate_steps, callbacks, **kwargs)


NOOP = Tool(name="noop", func=lambda text: "ok", description="does nothing")


def actloop_executor(store: PostgresCheckpointer | None) -> AgentExecutor:
    return AgentExecutor(agent=Loop(), tools=[NOOP], max_iterations=None, checkpointer=store)


class State(TypedDict):
    steps: Annotated[list[tuple[str, str]], operator.add]
    todo: list[str]


def langgraph_graph(checkpointer: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    def plan(state: State) -> dict[str, Any]:
        return {"todo": ["x"] if len(state["steps"]) < STEPS else []}

    def act(state: State) -> dict[str, Any]:
        return {"steps": [(t, "ok") for t in state["todo"]]}

    graph = StateGraph(State)
    graph.add_node("plan", plan)
    graph.add_node("act", act)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", lambda s: "act" if s["todo"] else END)
    graph.add_edge("act", "plan")
    return graph.compile(checkpointer=checkpointer)


def timed(fn: Any, *args: Any, **kwargs: Any) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def sequential(url: str) -> dict[str, float]:
    from langgraph.checkpoint.postgres import PostgresSaver

    store = PostgresCheckpointer(url)
    limit = {"recursion_limit": 2 * STEPS + 10}
    times: dict[str, list[float]] = {k: [] for k in ("a0", "a1", "l0", "l1")}
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        plain_graph, saved_graph = langgraph_graph(None), langgraph_graph(saver)
        for i in range(REPEATS):
            times["a0"].append(timed(actloop_executor(None).invoke, {"input": "q"}))
            config: Any = {"configurable": {"thread_id": f"a{i}"}}
            times["a1"].append(timed(actloop_executor(store).invoke, {"input": "q"}, config))
            times["l0"].append(timed(plain_graph.invoke, {"steps": [], "todo": []}, limit))
            config = {**limit, "configurable": {"thread_id": f"l{i}"}}
            times["l1"].append(timed(saved_graph.invoke, {"steps": [], "todo": []}, config))
    store.close()
    m = {k: statistics.median(v) / STEPS * 1e6 for k, v in times.items()}
    return {
        "actloop_plain": m["a0"], "actloop_journaled": m["a1"],
        "actloop_journal_cost": m["a1"] - m["a0"],
        "langgraph_plain": m["l0"], "langgraph_checkpointed": m["l1"],
        "langgraph_checkpoint_cost": m["l1"] - m["l0"],
    }  # fmt: skip


async def concurrent(url: str, runs: int) -> dict[str, float]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool

    store = PostgresCheckpointer(url, max_connections=16)
    executor = actloop_executor(store)
    start = time.perf_counter()
    await asyncio.gather(
        *(executor.ainvoke({"input": "q"}, {"configurable": {"thread_id": f"c{i}"}})
          for i in range(runs))
    )  # fmt: skip
    actloop = time.perf_counter() - start
    store.close()
    limit = {"recursion_limit": 2 * STEPS + 10}
    kwargs = {"autocommit": True, "prepare_threshold": 0}
    async with AsyncConnectionPool(url, max_size=16, kwargs=kwargs, open=False) as pool:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        graph = langgraph_graph(saver)
        start = time.perf_counter()
        await asyncio.gather(
            *(graph.ainvoke({"steps": [], "todo": []},
                            {**limit, "configurable": {"thread_id": f"c{i}"}})
              for i in range(runs))
        )  # fmt: skip
        langgraph = time.perf_counter() - start
    per = runs * STEPS
    return {"runs": runs, "actloop_us_per_step": actloop / per * 1e6,
            "langgraph_us_per_step": langgraph / per * 1e6}  # fmt: skip


def main() -> None:
    server = PostgresServer(fsync=True).start()
    try:
        result: dict[str, Any] = {"steps": STEPS, **sequential(server.create_database())}
        if CONCURRENT:
            result["concurrent"] = asyncio.run(concurrent(server.create_database(), CONCURRENT))
    finally:
        server.stop()
    if "--json" in sys.argv:
        print(json.dumps(result))
        return
    print(f"PostgreSQL journal cost, {STEPS}-step runs, µs per step (median of {REPEATS}):")
    for key, value in result.items():
        if isinstance(value, float):
            print(f"  {key:28s} {value:10.1f}")
    if CONCURRENT:
        print(f"  {CONCURRENT} concurrent runs: {result['concurrent']}")
    ratio = result["actloop_journal_cost"] / result["langgraph_checkpoint_cost"]
    print(f"  actloop / LangGraph journal cost per step: {ratio:.2f}")


if __name__ == "__main__":
    main()
