"""`InMemorySaver`: LangGraph's in-memory checkpointer name, for `create_agent(checkpointer=...)`.

An SQLite store in memory: threads last as long as the saver (and this process), as in LangGraph.
"""

from __future__ import annotations

from actloop.checkpoint.sqlite import SqliteCheckpointer

__all__ = ["InMemorySaver", "MemorySaver"]


class InMemorySaver(SqliteCheckpointer):
    """Durable runs kept in memory (`langgraph.checkpoint.memory.InMemorySaver`)."""

    def __init__(self) -> None:
        super().__init__(":memory:")

    def __repr__(self) -> str:
        return "InMemorySaver()"


MemorySaver = InMemorySaver
"""LangGraph's older name for `InMemorySaver`."""
