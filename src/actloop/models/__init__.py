"""Model providers, each imported only when first used, and the errors they raise.

`from actloop.models import ChatOpenAI` loads `actloop.models.openai` on access; the `openai`
package itself is imported when a `ChatOpenAI` is built, and a missing one raises
`MissingDependencyError` naming the extra to install. The error classes are always importable.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from actloop.models._errors import (
    AuthenticationError,
    BadRequestError,
    ContextOverflowError,
    InvalidResponseError,
    MissingDependencyError,
    ModelAPIError,
    ModelConnectionError,
    ModelRefusalError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
    is_context_overflow,
)

if TYPE_CHECKING:
    from actloop.models.local import LocalChatModel
    from actloop.models.openai import ChatOpenAI
    from actloop.models.openai_completions import OpenAI

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ChatOpenAI",
    "ContextOverflowError",
    "InvalidResponseError",
    "LocalChatModel",
    "MissingDependencyError",
    "ModelAPIError",
    "ModelConnectionError",
    "ModelRefusalError",
    "OpenAI",
    "RateLimitError",
    "ServerError",
    "StreamInterruptedError",
    "is_context_overflow",
]

_LAZY = {
    "ChatOpenAI": "actloop.models.openai",
    "LocalChatModel": "actloop.models.local",
    "OpenAI": "actloop.models.openai_completions",
}
"""Provider classes and the module that defines each."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'actloop.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
