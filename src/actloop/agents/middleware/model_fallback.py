"""`ModelFallbackMiddleware`: on a model error, try the fallback models in order.

As LangChain 1.5's: the primary model first, then each fallback (an instance or a
`"provider:model"` string); the last error is raised when all fail. LangChain also strips
Anthropic/Fireworks prompt-cache settings before a fallback; actloop has neither provider, so
requests go to the fallback unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from actloop.agents._models import chat_model
from actloop.agents.middleware.types import AgentMiddleware, ModelRequest, ModelResponse
from actloop.agents.types import GraphInterrupt

__all__ = ["ModelFallbackMiddleware"]


class ModelFallbackMiddleware(AgentMiddleware):
    """Try `first_model`, then each of `additional_models`, when a model call fails."""

    def __init__(self, first_model: Any, *additional_models: Any) -> None:
        self.models = [chat_model(m) for m in (first_model, *additional_models)]

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Any]
    ) -> ModelResponse:
        last: Exception
        try:
            return handler(request)
        except GraphInterrupt:
            raise
        except Exception as exc:
            last = exc
        for model in self.models:
            try:
                return handler(request.override(model=model))
            except GraphInterrupt:
                raise
            except Exception as exc:
                last = exc
        raise last

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> ModelResponse:
        last: Exception
        try:
            return await handler(request)
        except GraphInterrupt:
            raise
        except Exception as exc:
            last = exc
        for model in self.models:
            try:
                return await handler(request.override(model=model))
            except GraphInterrupt:
                raise
            except Exception as exc:
                last = exc
        raise last
