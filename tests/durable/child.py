"""Child process for the crash tests: `child.py DB LOG THREAD invoke|resume sync|async [SCENARIO]`.

Writes `r` to the fd in $ACTLOOP_READY_FD once imports are done, runs (or resumes) the thread,
then prints `result <dumps of the result>`
(a SQLite store opens with `locking_mode` $ACTLOOP_TEST_LOCKING when set)
(DB: a checkpoint file or a postgresql:// URL). The parent kills it with SIGKILL at random moments.
Scenarios: `count` (CountingAgent), `stall` (the same, each call working 0.2 s), `approve` (a tool
that needs approval), `pause-wait` (invoke until paused, then wait to be killed), `block` (a tool
that blocks until killed), `unsafe` (a non-idempotent tool that kills its own process the first
time it runs).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from actloop import AgentExecutor, dumps
from actloop.checkpoint import BaseCheckpointer, connect

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario import TwoCalls, build, mark_process, side_effect_tool


def _suicide(text: str) -> str:
    """Side effect, then the process dies before the observation is saved (first time only)."""
    log = Path(os.environ["ACTLOOP_TEST_LOG"])
    with open(log, "a") as f:
        f.write(f"charge:{text}\n")
    if text == "two" and not (log.parent / "died").exists():
        (log.parent / "died").write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return f"charged {text}"


def executor(scenario: str, log: Path, store: BaseCheckpointer) -> AgentExecutor:
    """The executor of `scenario` (see the module docstring)."""
    if scenario == "count":
        return build(log, store)
    if scenario == "stall":
        return build(log, store, delay=0.2)
    if scenario in ("approve", "pause-wait"):
        tool = side_effect_tool("send", log, delay=0.3, requires_approval=True)
        return AgentExecutor(agent=TwoCalls("send"), tools=[tool], checkpointer=store)
    if scenario == "block":
        tool = side_effect_tool("slow", log, delay=60.0)
        return AgentExecutor(agent=TwoCalls("slow"), tools=[tool], checkpointer=store)
    os.environ["ACTLOOP_TEST_LOG"] = str(log)
    tool = side_effect_tool("charge", log, delay=0.0, idempotent=False)
    tool.func = _suicide
    return AgentExecutor(agent=TwoCalls("charge"), tools=[tool], checkpointer=store)


def main() -> None:
    db, log, thread, mode, flavour = sys.argv[1:6]
    scenario = sys.argv[6] if len(sys.argv) > 6 else "count"
    log_path = Path(log)
    mark_process(log_path)
    ttl = os.environ.get("ACTLOOP_TEST_TTL")
    options: dict[str, Any] = {"lease_ttl": float(ttl)} if ttl else {}
    if locking := os.environ.get("ACTLOOP_TEST_LOCKING"):  # SQLite's locking_mode
        options["locking_mode"] = locking
    store = connect(db, **options)
    if db.startswith("postgresql://"):
        store.list_runs()  # connected (and psycopg imported) before the child says it is ready
    ex = executor(scenario, log_path, store)
    config = {"configurable": {"thread_id": thread}}
    ready = int(os.environ.get("ACTLOOP_READY_FD", "-1"))
    if ready >= 0:
        os.write(ready, b"r")
        os.close(ready)
    record = store.get(thread) if mode == "resume" else None
    if mode == "resume" and record is None:
        mode = "invoke"  # killed before the run was saved: it never started
    if record is not None and record.status == "finished":
        print("finished", flush=True)  # killed after the run was saved as finished
        return
    if flavour == "async":
        call = ex.ainvoke({"input": "go"}, config) if mode == "invoke" else ex.aresume(thread)
        result = asyncio.run(call)
    elif mode == "invoke":
        result = ex.invoke({"input": "go"}, config)
    else:
        result = ex.resume(thread, approve=True if scenario == "approve" else None)
    print("result " + dumps(result), flush=True)
    if scenario == "pause-wait":
        time.sleep(60)


if __name__ == "__main__":
    main()
