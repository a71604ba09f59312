from typing import TYPE_CHECKING, Any

import pytest
from _model import FakeToolCallingModel

from actloop.agents.factory import create_agent
from actloop.agents.middleware.human_in_the_loop import (
    EDIT_NOTICE as _EDIT_NOTICE,
)
from actloop.agents.middleware.human_in_the_loop import (
    HumanInTheLoopMiddleware,
)
from actloop.agents.types import Command
from actloop.checkpoint.memory import InMemorySaver
from actloop.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from actloop.tools import tool

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig


def test_human_in_the_loop_middleware_initialization() -> None:
    """Test HumanInTheLoopMiddleware initialization."""
    middleware = HumanInTheLoopMiddleware(
        interrupt_on={"test_tool": {"allowed_decisions": ["approve", "edit", "reject"]}},
        description_prefix="Custom prefix",
    )

    assert middleware.interrupt_on == {
        "test_tool": {"allowed_decisions": ["approve", "edit", "reject"]}
    }
    assert middleware.description_prefix == "Custom prefix"


def test_human_in_the_loop_middleware_rejects_empty_allowed_decisions() -> None:
    """Test that an empty `allowed_decisions` list raises instead of silently disabling the gate."""
    with pytest.raises(ValueError, match="test_tool"):
        HumanInTheLoopMiddleware(interrupt_on={"test_tool": {"allowed_decisions": []}})


def test_human_in_the_loop_middleware_rejects_missing_allowed_decisions() -> None:
    """Test that a config missing `allowed_decisions` (e.g. `when`-only) raises."""
    with pytest.raises(ValueError, match="test_tool"):
        HumanInTheLoopMiddleware(
            interrupt_on={"test_tool": {"when": lambda _req: True}}  # type: ignore[dict-item]
        )


def test_human_in_the_loop_middleware_rejects_typoed_key() -> None:
    """Test that a misspelled `allowed_decisions` key raises instead of being silently dropped."""
    with pytest.raises(ValueError, match="test_tool"):
        HumanInTheLoopMiddleware(
            interrupt_on={"test_tool": {"alowed_decisions": ["approve"]}}  # type: ignore[dict-item]
        )


def _assert_tool_messages_are_paired(messages: list[Any]) -> None:
    """Assert every `ToolMessage` answers a call declared by the preceding `AIMessage`.

    Model providers (e.g. OpenAI) reject a request where a `ToolMessage`'s
    `tool_call_id` has no matching entry in the immediately preceding `AIMessage`'s
    `tool_calls`, that pairing must hold for every model turn, not just the last.
    """
    pending_ids: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            pending_ids = {tc["id"] for tc in message.tool_calls if tc["id"] is not None}
        elif isinstance(message, ToolMessage):
            assert message.tool_call_id in pending_ids, (
                f"ToolMessage {message.tool_call_id!r} has no matching tool call in the "
                "preceding AIMessage"
            )
            pending_ids.discard(message.tool_call_id)


def test_human_in_the_loop_middleware_rejected_call_not_executed_and_stays_paired() -> None:
    """A rejected tool call must never execute, and the message history must stay valid.

    Exercises the real `create_agent` graph (not just the middleware in isolation) to
    confirm two things at once: the underlying tool is never invoked, and the agent can
    still take its next model turn afterward which requires every `ToolMessage` to
    answer a tool call the preceding `AIMessage` actually declared.
    """
    calls: list[str] = []

    @tool
    def risky_tool(value: str) -> str:
        """A tool that would be dangerous to run without approval."""
        calls.append(value)
        return f"Executed: {value}"

    model = FakeToolCallingModel(
        tool_calls=[
            [ToolCall(name="risky_tool", args={"value": "test"}, id="1")],
            [],
        ]
    )

    agent = create_agent(
        model=model,
        tools=[risky_tool],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"risky_tool": {"allowed_decisions": ["approve", "reject"]}}
            )
        ],
        checkpointer=InMemorySaver(),
    )
    interrupted = agent.invoke(
        {"messages": [HumanMessage("Please run risky_tool")]},
        {"configurable": {"thread_id": "reject-not-executed"}},
    )
    assert "__interrupt__" in interrupted

    final = agent.invoke(
        Command(resume={"decisions": [{"type": "reject", "message": "denied"}]}),
        {"configurable": {"thread_id": "reject-not-executed"}},
    )

    # The graph must complete the next model turn rather than getting stuck or erroring.
    assert "__interrupt__" not in final
    # The tool itself must never run.
    assert calls == []
    # The message history must remain protocol-valid throughout, including the rejection turn.
    _assert_tool_messages_are_paired(final["messages"])


# ---------------------------------------------------------------------------
# when predicate
# ---------------------------------------------------------------------------


def test_human_in_the_loop_middleware_edit_annotates_tool_result() -> None:
    """An edited call runs the reviewer's args and its result is attributed to them."""
    executed: list[dict[str, Any]] = []

    @tool
    def write_file_tool(path: str, content: str) -> str:
        """Write content to a file."""
        executed.append({"path": path, "content": content})
        return f"File written to {path}"

    model = FakeToolCallingModel(
        tool_calls=[
            [
                ToolCall(
                    name="write_file_tool",
                    args={"path": "notes.txt", "content": "Hello, world!"},
                    id="1",
                )
            ],
            [],
        ]
    )
    agent = create_agent(
        model=model,
        tools=[write_file_tool],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"write_file_tool": {"allowed_decisions": ["approve", "edit"]}}
            )
        ],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "edit-annotates-result"}}

    interrupted = agent.invoke(
        {"messages": [HumanMessage("Write notes.txt with 'Hello, world!'")]}, config
    )
    assert "__interrupt__" in interrupted

    final = agent.invoke(
        Command(
            resume={
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {
                            "name": "write_file_tool",
                            "args": {"path": "notes.txt", "content": "reviewer value"},
                        },
                    }
                ]
            }
        ),
        config,
    )

    assert executed == [{"path": "notes.txt", "content": "reviewer value"}]

    tool_messages = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1
    content = tool_messages[0].content
    assert isinstance(content, str)
    assert content.endswith("File written to notes.txt")
    assert _EDIT_NOTICE in content
    # The original, untrusted args must not be echoed back.
    assert "Hello, world!" not in content
    assert "__interrupt__" not in final
    _assert_tool_messages_are_paired(final["messages"])


def test_human_in_the_loop_middleware_approve_does_not_annotate() -> None:
    """An approved call was the model's own, so its result must not be annotated."""

    @tool
    def write_file_tool(path: str, content: str) -> str:
        """Write content to a file."""
        return f"File written to {path} ({len(content)} chars)"

    model = FakeToolCallingModel(
        tool_calls=[
            [ToolCall(name="write_file_tool", args={"path": "/p", "content": "c"}, id="1")],
            [],
        ]
    )
    agent = create_agent(
        model=model,
        tools=[write_file_tool],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"write_file_tool": {"allowed_decisions": ["approve", "edit"]}}
            )
        ],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "approve-no-annotation"}}
    agent.invoke({"messages": [HumanMessage("write it")]}, config)
    final = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)

    tool_messages = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert tool_messages[0].content == "File written to /p (1 chars)"


def test_human_in_the_loop_middleware_edit_executes_reviewers_call() -> None:
    """The reviewer's args run while the model's own call stays in the message."""
    executed: list[dict[str, Any]] = []

    @tool
    def write_file_tool(path: str, content: str) -> str:
        """Write content to a file."""
        executed.append({"path": path, "content": content})
        return f"File written to {path}"

    model = FakeToolCallingModel(
        tool_calls=[
            [
                ToolCall(
                    name="write_file_tool", args={"path": "notes.txt", "content": "mine"}, id="1"
                )
            ],
            [],
        ]
    )
    agent = create_agent(
        model=model,
        tools=[write_file_tool],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"write_file_tool": {"allowed_decisions": ["approve", "edit"]}}
            )
        ],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "executes-reviewer-call"}}
    agent.invoke({"messages": [HumanMessage("write it")]}, config)
    final = agent.invoke(
        Command(
            resume={
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {
                            "name": "write_file_tool",
                            "args": {"path": "notes.txt", "content": "reviewers"},
                        },
                    }
                ]
            }
        ),
        config,
    )

    assert executed == [{"path": "notes.txt", "content": "reviewers"}]
    ai_message = next(m for m in final["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai_message.tool_calls[0]["args"] == {"path": "notes.txt", "content": "mine"}
    tool_message = next(m for m in final["messages"] if isinstance(m, ToolMessage))
    assert "reviewers" in tool_message.content
    _assert_tool_messages_are_paired(final["messages"])


def test_human_in_the_loop_middleware_edit_can_redirect_to_another_tool() -> None:
    """A reviewer may redirect the call to a different tool."""
    executed: list[str] = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        executed.append("send_email")
        return f"sent to {to}"

    @tool
    def draft_email(to: str) -> str:
        """Draft an email."""
        executed.append("draft_email")
        return f"drafted to {to}"

    model = FakeToolCallingModel(
        tool_calls=[[ToolCall(name="send_email", args={"to": "a@b.c"}, id="1")], []]
    )
    agent = create_agent(
        model=model,
        tools=[send_email, draft_email],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={"send_email": {"allowed_decisions": ["approve", "edit"]}}
            )
        ],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "edit-redirects-tool"}}
    agent.invoke({"messages": [HumanMessage("send it")]}, config)
    final = agent.invoke(
        Command(
            resume={
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {"name": "draft_email", "args": {"to": "a@b.c"}},
                    }
                ]
            }
        ),
        config,
    )

    assert executed == ["draft_email"]
    ai_message = next(m for m in final["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert ai_message.tool_calls[0]["name"] == "send_email"
    tool_message = next(m for m in final["messages"] if isinstance(m, ToolMessage))
    assert "drafted" in tool_message.content
    assert "draft_email" in tool_message.content  # the notice names what ran


@pytest.mark.parametrize(
    ("requested", "replacement", "expected_turns_after_tool"),
    [("direct_tool", "normal_tool", 1), ("normal_tool", "direct_tool", 0)],
    ids=["direct-to-normal", "normal-to-direct"],
)
def test_human_in_the_loop_middleware_edit_routes_on_executed_tool(
    requested: str, replacement: str, expected_turns_after_tool: int
) -> None:
    """`return_direct` termination must follow the tool that ran, not the one requested."""

    @tool(return_direct=True)
    def direct_tool(x: str) -> str:
        """Return directly."""
        return f"direct {x}"

    @tool
    def normal_tool(x: str) -> str:
        """Do not return directly."""
        return f"normal {x}"

    model = FakeToolCallingModel(
        tool_calls=[[ToolCall(name=requested, args={"x": "1"}, id="1")], []]
    )
    agent = create_agent(
        model=model,
        tools=[direct_tool, normal_tool],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={requested: {"allowed_decisions": ["approve", "edit"]}}
            )
        ],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": f"route-{requested}-{replacement}"}}
    agent.invoke({"messages": [HumanMessage("go")]}, config)
    final = agent.invoke(
        Command(
            resume={
                "decisions": [
                    {"type": "edit", "edited_action": {"name": replacement, "args": {"x": "1"}}}
                ]
            }
        ),
        config,
    )

    tool_idx = max(i for i, m in enumerate(final["messages"]) if isinstance(m, ToolMessage))
    model_turns = sum(isinstance(m, AIMessage) for m in final["messages"][tool_idx + 1 :])
    assert model_turns == expected_turns_after_tool


def test_reused_tool_call_id_does_not_replay_a_previous_turns_edit() -> None:
    """End to end: a later call reusing an edited call's ID runs the model's own args."""
    executed: list[tuple[str, str]] = []

    @tool
    def write_file_tool(path: str, content: str) -> str:
        """Write content to a file."""
        executed.append(("write", content))
        return f"File written to {path}"

    @tool
    def read_file_tool(path: str) -> str:
        """Read a file."""
        executed.append(("read", path))
        return f"Contents of {path}"

    model = FakeToolCallingModel(
        tool_calls=[
            [ToolCall(name="write_file_tool", args={"path": "a.txt", "content": "model"}, id="1")],
            # The same ID on a tool that is not gated, so this turn reviews nothing.
            [ToolCall(name="read_file_tool", args={"path": "b.txt"}, id="1")],
            [],
        ]
    )
    agent = create_agent(
        model=model,
        tools=[write_file_tool, read_file_tool],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"write_file_tool": True})],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": "reused-tool-call-id"}}

    agent.invoke({"messages": [HumanMessage("write it, then read it")]}, config)
    final = agent.invoke(
        Command(
            resume={
                "decisions": [
                    {
                        "type": "edit",
                        "edited_action": {
                            "name": "write_file_tool",
                            "args": {"path": "a.txt", "content": "reviewer"},
                        },
                    }
                ]
            }
        ),
        config,
    )

    assert executed == [("write", "reviewer"), ("read", "b.txt")]
    read_result = [m for m in final["messages"] if isinstance(m, ToolMessage)][-1]
    # The read was never edited, so its result carries no notice.
    assert read_result.content == "Contents of b.txt"


# --- Per-call mode (interrupt_mode="per_call") ---
