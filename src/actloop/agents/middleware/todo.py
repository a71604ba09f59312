"""`TodoListMiddleware`: the `write_todos` tool and its system prompt (LangChain 1.5's).

The tool's texts, the `todos` state key, the tool's answer (`Updated todo list to [...]`) and the
error for parallel `write_todos` calls are LangChain 1.5's. The tool returns a `Command` updating
`todos` and answering the call, which the agent's tools node applies as LangGraph does.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from typing_extensions import TypedDict

from actloop.agents.middleware.types import AgentMiddleware, ModelRequest, Runtime
from actloop.agents.types import Command
from actloop.messages import AIMessage, SystemMessage, ToolMessage
from actloop.tools import BaseTool

__all__ = [
    "WRITE_TODOS_SYSTEM_PROMPT",
    "WRITE_TODOS_TOOL_DESCRIPTION",
    "PlanningState",
    "Todo",
    "TodoListMiddleware",
]

PARALLEL_ERROR = (
    "Error: The `write_todos` tool should never be called multiple times in parallel. Please "
    "call it only once per model invocation to update the todo list."
)


class Todo(TypedDict):
    """One todo item: what to do and how far it got."""

    content: str
    status: Literal["pending", "in_progress", "completed"]


class PlanningState(TypedDict, total=False):
    """The agent's state with the todo list."""

    messages: list[Any]
    todos: list[Todo]


@functools.cache
def write_todos_input() -> type[Any]:
    """The `write_todos` tool's arguments schema, `WriteTodosInput` (a pydantic model, built on
    first use: importing actloop does not load pydantic)."""
    from pydantic import create_model

    return create_model("WriteTodosInput", todos=(list[Todo], ...))


WRITE_TODOS_TOOL_DESCRIPTION = """Use this tool to create and manage a structured task list for your current work session. This helps you track progress and organize complex tasks.

Only use this tool if you think it will be helpful in staying organized. If the user's request is trivial and takes less than 3 steps, it is better to NOT use this tool and just do the task directly.

## When to Use This Tool

Use this tool in these scenarios:

1. Complex multi-step tasks - When a task requires 3 or more distinct steps or actions
2. Non-trivial and complex tasks - Tasks that require careful planning or multiple operations
3. User explicitly requests todo list - When the user directly asks you to use the todo list
4. User provides multiple tasks - When users provide a list of things to be done (numbered or comma-separated)
5. The plan may need future revisions or updates based on results from the first few steps

## How to Use This Tool

1. When you start working on a task - Mark it as in_progress BEFORE beginning work.
2. After completing a task - Mark it as completed and add any new follow-up tasks discovered during implementation.
3. You can also update future tasks, such as deleting them if they are no longer necessary, or adding new tasks that are necessary. Don't change previously completed tasks.
4. You can make several updates to the todo list at once. For example, when you complete a task, you can mark the next task you need to start as in_progress.

## When NOT to Use This Tool

It is important to skip using this tool when:
1. There is only a single, straightforward task
2. The task is trivial and tracking it provides no benefit
3. The task can be completed in less than 3 trivial steps
4. The task is purely conversational or informational

## Task States and Management

1. **Task States**: Use these states to track progress:
    - pending: Task not yet started
    - in_progress: Currently working on (you can have multiple tasks in_progress at a time if they are not related to each other and can be run in parallel)
    - completed: Task finished successfully

2. **Task Management**:
    - Update task status in real-time as you work
    - Mark tasks complete IMMEDIATELY after finishing (don't batch completions)
    - Complete current tasks before starting new ones
    - Remove tasks that are no longer relevant from the list entirely
    - IMPORTANT: When you write this todo list, you should mark your first task (or tasks) as in_progress immediately!.
    - IMPORTANT: Unless all tasks are completed, you should always have at least one task in_progress.

3. **Task Completion Requirements**:
    - ONLY mark a task as completed when you have FULLY accomplished it
    - If you encounter errors, blockers, or cannot finish, keep the task as in_progress
    - When blocked, create a new task describing what needs to be resolved
    - Never mark a task as completed if:
        - There are unresolved issues or errors
        - Work is partial or incomplete
        - You encountered blockers that prevent completion
        - You couldn't find necessary resources or dependencies
        - Quality standards haven't been met

4. **Task Breakdown**:
    - Create specific, actionable items
    - Break complex tasks into smaller, manageable steps
    - Use clear, descriptive task names

Being proactive with task management ensures you complete all requirements successfully
Remember: If you only need to make a few tool calls to complete a task, and it is clear what you need to do, it is better to just do the task directly and NOT call this tool at all.

## When You Finish

`write_todos` tracks your work; it does not deliver the answer. Whatever the user asked for — computations, summaries, comparisons, data — must appear as text content in a message after your final `write_todos` call. Marking the last todo complete is not itself an answer to the user."""  # noqa: E501

WRITE_TODOS_SYSTEM_PROMPT = """## `write_todos`

You have access to the `write_todos` tool to help you manage and plan complex objectives.
Use this tool for complex objectives to ensure that you are tracking each necessary step.
This tool is very helpful for planning complex objectives, and for breaking down these larger complex objectives into smaller steps.

It is critical that you mark todos as completed as soon as you are done with a step. Do not batch up multiple steps before marking them as completed.
For simple objectives that only require a few steps, it is better to just complete the objective directly and NOT use this tool.
Writing todos takes time and tokens, use it when it is helpful for managing complex many-step problems! But not for simple few-step requests.

## Important To-Do List Usage Notes to Remember

- The `write_todos` tool should never be called multiple times in parallel.
- Don't be afraid to revise the To-Do list as you go. New information may reveal new tasks that need to be done, or old tasks that are irrelevant.

## Finishing a task

When you finish all work, write your final answer in the message AFTER your last `write_todos` call — not in the same turn as that call. Start the final message with the substantive content the user asked for — the data, computation, summary, or analysis. The user wants the result, not confirmation that the work is done."""  # noqa: E501


def todos_update(todos: list[Any], tool_call_id: str | None) -> Command:
    """The state update of one `write_todos` call: the new list and the call's answer (named
    after the tool, as LangGraph's tools node names it)."""
    text = f"Updated todo list to {todos}"
    answer = ToolMessage(text, tool_call_id=tool_call_id or "", name="write_todos")
    return Command(update={"todos": todos, "messages": [answer]})


class WriteTodosTool(BaseTool):
    """The `write_todos` tool: its arguments checked against `WriteTodosInput`, its result the
    `Command` that sets the state's `todos` (LangChain's tool returns the same Command)."""

    name: str = "write_todos"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{"args_schema": write_todos_input(), **kwargs})

    def _todos(self, tool_input: Any, tool_call_id: str | None) -> Command:
        _, kwargs = self._to_args_and_kwargs(tool_input, tool_call_id)
        return todos_update(kwargs["todos"], tool_call_id)

    def run(self, tool_input: Any, *args: Any, tool_call_id: str | None = None, **_: Any) -> Any:
        """The call's Command (no callbacks: the agent's tools node reports the call)."""
        return self._todos(tool_input, tool_call_id)

    async def arun(
        self, tool_input: Any, *args: Any, tool_call_id: str | None = None, **_: Any
    ) -> Any:
        """Async `run`."""
        return self._todos(tool_input, tool_call_id)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        return todos_update(kwargs["todos"], None)


def __getattr__(name: str) -> Any:
    """`write_todos`: the tool with LangChain's description (LangChain's module-level tool),
    built on first use."""
    if name == "write_todos":
        tool = WriteTodosTool(description=WRITE_TODOS_TOOL_DESCRIPTION)
        globals()["write_todos"] = tool
        return tool
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def with_prompt(system_message: SystemMessage | None, prompt: str) -> SystemMessage:
    """The system message with `prompt` added as a text block (LangChain's content blocks)."""
    if system_message is None:
        return SystemMessage(content=[{"type": "text", "text": prompt}])
    return SystemMessage(
        content=[*_blocks(system_message), {"type": "text", "text": "\n\n" + prompt}]
    )


def _blocks(message: SystemMessage) -> list[Any]:
    """The message's content as text blocks (LangChain's `content_blocks` of text content)."""
    content = message.content
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [{"type": "text", "text": b} if isinstance(b, str) else b for b in content]


def parallel_errors(messages: list[Any]) -> dict[str, Any] | None:
    """Error answers for every `write_todos` call when the last AI message has more than one."""
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if last is None or not last.tool_calls:
        return None
    calls = [c for c in last.tool_calls if c["name"] == "write_todos"]
    if len(calls) <= 1:
        return None
    errors = [ToolMessage(PARALLEL_ERROR, tool_call_id=c["id"], status="error") for c in calls]
    return {"messages": errors}


class TodoListMiddleware(AgentMiddleware):
    """Give the agent the `write_todos` tool, its prompt in every model call, a `todos` list in
    its state; reject parallel `write_todos` calls."""

    state_schema = PlanningState

    def __init__(
        self,
        *,
        system_prompt: str = WRITE_TODOS_SYSTEM_PROMPT,
        tool_description: str = WRITE_TODOS_TOOL_DESCRIPTION,
    ) -> None:
        self.system_prompt = system_prompt
        self.tool_description = tool_description
        self.tools = [WriteTodosTool(description=tool_description)]

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[Any], Any]) -> Any:
        """The call with the todo prompt added to its system message."""
        return handler(self._prompted(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Async `wrap_model_call`."""
        return await handler(self._prompted(request))

    def _prompted(self, request: ModelRequest) -> ModelRequest:
        return request.override(
            system_message=with_prompt(request.system_message, self.system_prompt)
        )

    def after_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Answer every `write_todos` call with an error when the model made several at once."""
        messages = state["messages"]
        return parallel_errors(messages) if messages else None

    async def aafter_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `after_model`."""
        return self.after_model(state, runtime)
