"""Child process for the `create_agent` crash test: `create_agent_child.py DB LOG THREAD MODE
sync|async [SCENARIO]` (the argument order of child.py, so test_crash's `start` runs it).

MODE `invoke` starts thread THREAD on store DB (a checkpoint file or a postgresql:// URL, opened
with LangGraph's saver names), `resume` goes on with `invoke(None, config)` as LangGraph users do,
`plain` runs without a checkpointer (the reference). Writes `r` to the fd in $ACTLOOP_READY_FD
once imports are done, then prints `result <dumps of the final state>`. The model is played by
a function of the messages alone, so a resumed run asks it what an uninterrupted run would; the
tools are scenario.py's side-effect tools, each call logging `name:input` to LOG.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from actloop import dumps
from actloop.agents import create_agent
from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from actloop.testing import FunctionChatModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario import STEPS, mark_process, side_effect_tool

INPUT = {"messages": [HumanMessage("go", id="h1")]}


def call(name: str, text: str) -> ToolCall:
    """A tool call of `name` with `text`, its id the text (a0, m2, ...)."""
    return {"name": name, "args": {"text": text}, "id": text, "type": "tool_call"}


def reply(messages: list[BaseMessage]) -> AIMessage:
    """CountingAgent's plan as a tool-calling model: `add` calls (an `add` and a `mul` at once
    every third step) until STEPS tool results exist, then an answer naming all of them."""
    results = [m for m in messages if isinstance(m, ToolMessage)]
    n = len(results)
    if n >= STEPS:
        return AIMessage("go: " + " ".join(str(m.content) for m in results), id=f"r{n}")
    calls = [call("add", f"a{n}")]
    if n % 3 == 2 and n + 2 <= STEPS:
        calls.append(call("mul", f"m{n}"))
    return AIMessage("", tool_calls=calls, id=f"r{n}")


def saver(db: str) -> Any:
    """LangGraph's saver name for the store `db` names."""
    if db.startswith("postgresql://"):
        from actloop.checkpoint.postgres import PostgresSaver

        store: Any = PostgresSaver(db)
        store.list_runs()  # connected (and psycopg imported) before the child says it is ready
        return store
    from actloop.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(db)


def run(agent: Any, input: Any, config: Any, flavour: str) -> dict[str, Any]:
    """`invoke` or `ainvoke` by flavour."""
    if flavour == "async":
        return asyncio.run(agent.ainvoke(input, config))
    return agent.invoke(input, config)


def main() -> None:
    db, log, thread, mode, flavour = sys.argv[1:6]
    log_path = Path(log)
    mark_process(log_path)
    store = None if mode == "plain" else saver(db)
    tools = [side_effect_tool("add", log_path), side_effect_tool("mul", log_path)]
    agent = create_agent(FunctionChatModel(reply), tools, checkpointer=store)
    config = {"configurable": {"thread_id": thread}}
    ready = int(os.environ.get("ACTLOOP_READY_FD", "-1"))
    if ready >= 0:
        os.write(ready, b"r")
        os.close(ready)
    record = store.get(thread) if store is not None and mode == "resume" else None
    if mode == "resume" and record is None:
        mode = "invoke"  # killed before the turn was saved: it never started
    if record is not None and record.status == "finished":
        result = agent.get_state(config).values  # killed after the turn was saved as finished
    else:
        result = run(agent, INPUT if mode != "resume" else None, config, flavour)
    print("result " + dumps(result), flush=True)
    if store is not None:
        store.close()


if __name__ == "__main__":
    main()
