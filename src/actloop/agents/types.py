"""LangGraph's control types for `create_agent` agents: `Command`, `Interrupt`, `interrupt()`
and `GraphRecursionError` (`langgraph.types` / `langgraph.errors` under the same names)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "TAG_NOSTREAM",
    "Command",
    "GraphInterrupt",
    "GraphRecursionError",
    "Interrupt",
    "InvalidUpdateError",
    "interrupt",
]

RECURSION_MESSAGE = (
    "Recursion limit of {limit} reached without hitting a stop condition. You can increase the "
    "limit by setting the `recursion_limit` config key.\n"
    "For troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langgraph/errors/GRAPH_RECURSION_LIMIT"
)


REMOVE_ALL_MESSAGES = "__remove_all__"
"""A `RemoveMessage` with this id clears the messages before it (LangGraph's constant)."""

TAG_NOSTREAM = "nostream"
"""A model call with this tag stays out of the `messages` stream mode (LangGraph's constant)."""


class InvalidUpdateError(Exception):
    """A node's updates set one state key twice in one step (LangGraph's error)."""


def one_value_per_step(key: str) -> str:
    """LangGraph's `InvalidUpdateError` text for two updates of `key` in one step."""
    return (
        f"At key '{key}': Can receive only one value per step. Use an Annotated key to handle "
        "multiple values.\nFor troubleshooting, visit: "
        "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"
    )


class GraphRecursionError(RecursionError):
    """The run took `recursion_limit` steps (nodes, as LangGraph counts them) and would go on."""


@dataclass
class Command:
    """A state update and/or a jump, or (as an input) the answer to an interrupt: `resume`."""

    graph: str | None = None
    update: Any = None
    resume: Any = None
    goto: Any = ()

    PARENT: ClassVar[str] = "__parent__"
    """`graph=Command.PARENT` sends the command to the parent graph (LangGraph's constant)."""

    def __class_getitem__(cls, item: Any) -> type[Command]:
        """`Command[...]` in annotations, as LangGraph's generic `Command` allows."""
        return cls


@dataclass(frozen=True)
class Interrupt:
    """A pause waiting for a person: `value` is what the run asks, `id` names the pause."""

    value: Any
    id: str = field(default="")
    response_schema: Any = field(default=None, kw_only=True)
    """The schema of the value expected on resume, if the graph gave one (LangGraph's field)."""


class GraphInterrupt(Exception):
    """Raised by `interrupt()`: the run pauses and reports its `Interrupt`s."""

    def __init__(self, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(interrupts)
        self.interrupts = list(interrupts)


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the run with `value` for a person; on resume, return what the person sent.

    Called in a tool (or its `wrap_tool_call`) of a `create_agent` agent with a checkpointer
    and a `thread_id`, the durable run journals the question and pauses; `invoke(Command(
    resume=...), config)` runs the call again and this returns the resume value (the n-th
    `interrupt()` of the call returns the n-th value, as in LangGraph). Without a durable run
    the run ends with `__interrupt__` in its state, as LangGraph's does without a checkpointer.
    `response_schema` (a type pydantic knows) is shown on the `Interrupt` as its JSON schema,
    and the resume value is checked against it (pydantic's `ValidationError`)."""
    from actloop.agents._interrupts import interrupted

    return interrupted(value, response_schema)
