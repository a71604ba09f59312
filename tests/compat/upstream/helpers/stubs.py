# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/stubs.py
# sha256 of the source: 345fc2e76cb332f99bc5d6f0cf7b87eace141e9cceba26bfba71d59bde915d34
# Only the imports are changed (scripts/port_upstream.py).
from actloop.messages import AIMessage, AIMessageChunk
from pydantic import BaseModel


class _AnyIDMixin(BaseModel):
    def __eq__(self, other: object) -> bool:
        if isinstance(other, BaseModel):
            dump = self.model_dump()
            dump.pop("id")
            other_dump = other.model_dump()
            other_dump.pop("id")
            return dump == other_dump
        return False

    __hash__ = None  # type: ignore[assignment]


class _AnyIdAIMessage(AIMessage, _AnyIDMixin):
    """AIMessage with any ID."""


class _AnyIdAIMessageChunk(AIMessageChunk, _AnyIDMixin):
    """AIMessageChunk with any ID."""
