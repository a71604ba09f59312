"""Child process for the task-resume test: `task_child.py DB URL THREAD invoke|resume`.

A durable agent (SQLite store DB) whose scripted model calls the tasks server's `slow_sum` at URL,
which runs as a task for 4 s, then answers with what the tool returned. Writes `r` to the fd in
$ACTLOOP_READY_FD once imports are done, runs (or resumes) thread THREAD, and prints
`result <dumps of the result>`. The parent kills it with SIGKILL while the task is polled.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from actloop import AgentExecutor, dumps
from actloop.checkpoint import connect
from actloop.mcp import MCPToolset
from actloop.messages import AIMessage, BaseMessage, ToolMessage
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import FunctionChatModel
from actloop.tool_calling import create_tool_calling_agent

PROMPT = ChatPromptTemplate.from_messages(
    [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
)


def reply(messages: list[BaseMessage]) -> Any:
    """Call slow_sum once; once its result is in, answer with it."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return f"the answer: {last.content}"
    args = {"a": 2, "b": 40, "seconds": 4}
    return AIMessage("", tool_calls=[{"name": "slow_sum", "args": args, "id": "c1"}])


def main() -> None:
    db, url, thread, mode = sys.argv[1:5]
    store = connect(db)
    with MCPToolset.http(url, timeout=10.0) as toolset:
        tools = toolset.get_tools()
        agent = create_tool_calling_agent(FunctionChatModel(reply), tools, PROMPT)
        executor = AgentExecutor(
            agent=agent, tools=tools, checkpointer=store, return_intermediate_steps=True
        )
        ready = int(os.environ["ACTLOOP_READY_FD"])
        os.write(ready, b"r")
        os.close(ready)
        if mode == "invoke":
            result = executor.invoke({"input": "2 + 40?"}, {"configurable": {"thread_id": thread}})
        else:
            result = executor.resume(thread)
    print("result " + dumps(result), flush=True)
    store.close()


if __name__ == "__main__":
    main()
