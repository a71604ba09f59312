"""LangChain objects accepted where actloop expects its own: a langchain-core chat or text model
(bound or not) or tool given to a pipeline, an agent constructor or the executor is wrapped on
the spot.

The wrapping lives in `actloop.integrations.langchain`, a higher layer: `adopt` imports it only
when a LangChain object shows up (so `langchain_core` is never imported unless the caller already
passed one of its objects). That one upward import is declared in the layer contract's
`ignore_imports` in pyproject.toml.
"""

from __future__ import annotations

from typing import Any

__all__ = ["adopt", "adopt_messages", "is_langchain"]


def is_langchain(thing: object) -> bool:
    """True for an instance of a LangChain class or of a subclass of one (a user's `LLM`)."""
    return any(
        cls.__module__.startswith(("langchain_core.", "langchain_")) for cls in type(thing).__mro__
    )


def adopt(thing: Any) -> Any:
    """`thing` as an actloop object when it is a LangChain model or tool, else unchanged."""
    if not is_langchain(thing):
        return thing
    from actloop.integrations.langchain import from_langchain

    try:
        return from_langchain(thing)
    except TypeError:
        return thing


def adopt_messages(messages: Any) -> list[Any]:
    """A list of messages with LangChain's turned into actloop's (a LangChain chat history's or
    memory's messages), others kept as they are; a list without LangChain's is returned itself
    (a memory's buffer is its store's list, as in LangChain)."""
    if not isinstance(messages, list):
        messages = [*messages]
    out: list[Any] = messages  # pyright: ignore[reportUnknownVariableType]
    if not any(is_langchain(m) for m in out):
        return out
    return [adopt(m) for m in out]
