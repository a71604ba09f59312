"""`init_chat_model` for middleware options that name a model (`"openai:gpt-5-mini"`): actloop's
providers first, then, for a provider actloop lacks, LangChain's `init_chat_model` (when
`langchain` is installed), its model adopted as any LangChain model."""

from __future__ import annotations

from typing import Any

from actloop.agents._models import chat_model
from actloop.models import MissingDependencyError

__all__ = ["init_chat_model"]


def init_chat_model(model: str, **kwargs: Any) -> Any:
    """The chat model `model` names, built with `kwargs` (LangChain's `init_chat_model`)."""
    provider, _, name = model.partition(":")
    if provider == "openai" and name:
        from actloop.models.openai import ChatOpenAI

        return ChatOpenAI(model=name, **kwargs)
    if provider == "local" and not kwargs:
        return chat_model(model)
    try:
        from langchain.chat_models import init_chat_model as langchain_init
    except ImportError as exc:
        raise MissingDependencyError(
            f"actloop has no provider for {model!r}; install `langchain` (and its provider "
            "package) to build it with LangChain's `init_chat_model`, or pass a chat model"
        ) from exc
    return chat_model(langchain_init(model, **kwargs))
