# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/stubs.py
# sha256 of the source: 345fc2e76cb332f99bc5d6f0cf7b87eace141e9cceba26bfba71d59bde915d34
# Only the imports are changed (scripts/port_upstream.py).
# Rewritten for actloop's __slots__ messages (see OVERRIDES in the script).
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage


class _AnyIDMixin:
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BaseMessage):
            fields = [f for f in type(other)._fields if f != "id"]
            return type(self).__mro__[2] is type(other) and all(
                getattr(self, f) == getattr(other, f) for f in fields
            )
        return False

    __hash__ = None  # type: ignore[assignment]


class _AnyIdAIMessage(_AnyIDMixin, AIMessage):
    """AIMessage with any ID."""

    __slots__ = ()


class _AnyIdAIMessageChunk(_AnyIDMixin, AIMessageChunk):
    """AIMessageChunk with any ID."""

    __slots__ = ()
