"""Errors raised by model providers; all are `actloop.exceptions.ModelError`s.

    ModelError
    ├── MissingDependencyError (also ImportError): a provider's optional extra is not installed
    ├── ModelRefusalError: the model refused (a refusal content block); `raw_message` is the reply
    └── ModelAPIError: the provider's API failed; carries `status_code` and `body`
        ├── BadRequestError: a 4xx other than 401/403/429 (bad parameters, unknown model, ...)
        │   └── ContextOverflowError: the input is longer than the model's context window
        ├── AuthenticationError: 401 or 403 (missing or wrong API key)
        ├── RateLimitError: 429, still after the retries
        ├── ServerError: a 5xx, still after the retries
        ├── ModelConnectionError: no response (refused, reset, timed out), still after the retries
        ├── InvalidResponseError: a reply that is not what the API promises (e.g. not JSON)
        └── StreamInterruptedError: a stream that broke off; `partial` holds what had arrived

Retryable failures (429, 5xx, connection errors) are raised only once the retries are spent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from actloop.exceptions import ModelError

if TYPE_CHECKING:
    from actloop.messages import AIMessageChunk, BaseMessage

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "ContextOverflowError",
    "InvalidResponseError",
    "MissingDependencyError",
    "ModelAPIError",
    "ModelConnectionError",
    "ModelRefusalError",
    "RateLimitError",
    "ServerError",
    "StreamInterruptedError",
    "is_context_overflow",
]


class MissingDependencyError(ModelError, ImportError):
    """A provider needs a package that is not installed; the message names the pip command."""


class ModelRefusalError(ModelError):
    """The model declined to produce the requested output (langchain-core's `ModelRefusalError`):
    providers report a refusal as a successful reply, which `ModelRefusalMiddleware` turns into
    this error. Retrying the same request is unlikely to succeed."""

    is_retryable = False
    """Whether retrying the same model request may succeed (langchain-core's flag)."""

    def __init__(
        self,
        message: str = "Model refused to produce the requested output",
        *,
        raw_message: BaseMessage | None = None,
    ) -> None:
        self.raw_message = raw_message
        """The reply that held the refusal."""
        super().__init__(message)

    @classmethod
    def from_refusal(
        cls, refusal: dict[str, Any], *, raw_message: BaseMessage
    ) -> ModelRefusalError:
        """The error of a refusal block (`{"type": "refusal", "refusal": text, "extras": ...}`):
        its message names the block's category and text, as langchain-core's."""
        message = "Model refused to produce the requested output"
        if category := refusal.get("extras", {}).get("category"):
            message += f" (category={category!r})"
        if text := refusal.get("refusal"):
            message += f": {text}"
        return cls(message, raw_message=raw_message)


class ModelAPIError(ModelError):
    """A provider API call failed; `status_code` is None when no HTTP status was received."""

    def __init__(self, message: str, *, status_code: int | None = None, body: Any = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        """The HTTP status of the failed response, if there was one."""
        self.body = body
        """The response body: the parsed JSON when it was JSON, else the text (or None)."""


class BadRequestError(ModelAPIError):
    """The API rejected the request (a 4xx other than 401, 403 and 429); not retried."""


class ContextOverflowError(BadRequestError):
    """The input exceeds the model's context window (langchain-core's `ContextOverflowError`:
    OpenAI's `context_length_exceeded` and the same complaint in other servers' words)."""


OVERFLOW_SIGNS = (
    "context_length_exceeded",
    "Input tokens exceed the configured limit",
    "prompt is too long",
    "ContextWindowExceededError",
)
"""Texts in a 400 answer that langchain-openai reads as a context overflow."""


def is_context_overflow(exc: BaseException) -> bool:
    """Whether `exc` says the input overflowed the model's context: actloop's
    `ContextOverflowError`, or langchain-core's (raised by an adopted LangChain model)."""
    return any(c.__name__ == "ContextOverflowError" for c in type(exc).__mro__)


class AuthenticationError(ModelAPIError):
    """The API refused the credentials (401 or 403); not retried."""


class RateLimitError(ModelAPIError):
    """The API kept answering 429 (rate limit or quota) through every retry."""


class ServerError(ModelAPIError):
    """The API kept failing with a 5xx through every retry."""


class ModelConnectionError(ModelAPIError):
    """No response arrived (connection refused or reset, or a timeout) through every retry."""


class InvalidResponseError(ModelAPIError):
    """The API answered with something it should not (not JSON, no choices, ...)."""


class StreamInterruptedError(ModelAPIError):
    """A streamed reply broke off before its end; what arrived is kept, never passed as whole."""

    def __init__(
        self,
        message: str,
        *,
        partial: AIMessageChunk | None = None,
        status_code: int | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message, status_code=status_code, body=body)
        self.partial = partial
        """The chunks received before the break, merged (None if nothing arrived)."""

    @property
    def partial_text(self) -> str:
        """The text received before the break."""
        return self.partial.text if self.partial is not None else ""
