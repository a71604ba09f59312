"""A chat model from what `create_agent` (or a middleware's model option) was given."""

from __future__ import annotations

from typing import Any

__all__ = ["chat_model"]


def chat_model(model: Any) -> Any:
    """An instance as given (LangChain models are adopted); `"openai:NAME"` a `ChatOpenAI`;
    `"local"` / `"local:PATH"` the embedded model."""
    if not isinstance(model, str):
        from actloop.runnables._foreign import adopt

        return adopt(model)
    provider, _, name = model.partition(":")
    if provider == "openai" and name:
        from actloop.models.openai import ChatOpenAI

        return ChatOpenAI(model=name)
    if provider == "local":
        from actloop.models.local import LocalChatModel

        return LocalChatModel(model_path=name) if name else LocalChatModel()
    raise ValueError(
        f"Unable to infer model provider for {model!r}: use 'openai:<model>' or 'local', "
        "or pass a chat model instance"
    )
