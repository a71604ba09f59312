"""Shared retry utilities for agent middleware.

This module contains common constants, utilities, and logic used by both
model and tool retry middleware implementations: `RetryMiddleware` holds their options and
decides, after each failed attempt, whether to wait and try again or give up, so each
middleware's sync and async wrappers only carry that decision out (sleep, or build the
failure message).


Ported from `langchain` 1.5 (MIT license) onto actloop's middleware: the same options and
messages.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

from actloop.agents.middleware.types import AgentMiddleware
from actloop.models import (
    ModelAPIError,
    ModelConnectionError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)

RETRYABLE = (RateLimitError, ServerError, ModelConnectionError, StreamInterruptedError)
"""The provider errors a retry may cure (langchain-core's `ModelError.is_retryable`)."""


# Type aliases
RetryOn = tuple[type[Exception], ...] | Callable[[Exception], bool]
"""Type for specifying which exceptions to retry on.

Can be either:
- A tuple of exception types to retry on (based on `isinstance` checks)
- A callable that takes an exception and returns `True` if it should be retried
"""

OnFailure = Literal["error", "continue"] | Callable[[Exception], str]
"""Type for specifying failure handling behavior.

Can be either:
- A literal action string (`'error'` or `'continue'`)
    - `'error'`: Re-raise the exception, stopping agent execution.
    - `'continue'`: Inject a message with the error details, allowing the agent to continue.

        For tool retries, a `ToolMessage` with the error details will be injected.

        For model retries, an `AIMessage` with the error details will be returned.
- A callable that takes an exception and returns a string for error message content
"""


def validate_retry_params(
    max_retries: int,
    initial_delay: float,
    max_delay: float,
    backoff_factor: float,
) -> None:
    """Validate retry parameters.

    Args:
        max_retries: Maximum number of retry attempts.
        initial_delay: Initial delay in seconds before first retry.
        max_delay: Maximum delay in seconds between retries.
        backoff_factor: Multiplier for exponential backoff.

    Raises:
        ValueError: If any parameter is invalid (negative values).
    """
    if max_retries < 0:
        msg = "max_retries must be >= 0"
        raise ValueError(msg)
    if initial_delay < 0:
        msg = "initial_delay must be >= 0"
        raise ValueError(msg)
    if max_delay < 0:
        msg = "max_delay must be >= 0"
        raise ValueError(msg)
    if backoff_factor < 0:
        msg = "backoff_factor must be >= 0"
        raise ValueError(msg)


def default_retry_on(exc: BaseException) -> bool:
    """Return whether an exception should be retried by default."""
    if not isinstance(exc, Exception):
        return False
    if isinstance(exc, ModelAPIError):
        return isinstance(exc, RETRYABLE)
    retryable = getattr(exc, "is_retryable", None)  # langchain-core's ModelError says
    return retryable if isinstance(retryable, bool) else True


def should_retry_exception(
    exc: Exception,
    retry_on: RetryOn,
) -> bool:
    """Check if an exception should trigger a retry.

    Args:
        exc: The exception that occurred.
        retry_on: Either a tuple of exception types to retry on, or a callable
            that takes an exception and returns `True` if it should be retried.

    Returns:
        `True` if the exception should be retried, `False` otherwise.
    """
    if callable(retry_on):
        return retry_on(exc)
    return isinstance(exc, retry_on)


def calculate_delay(
    retry_number: int,
    *,
    backoff_factor: float,
    initial_delay: float,
    max_delay: float,
    jitter: bool,
) -> float:
    """Calculate delay for a retry attempt with exponential backoff and optional jitter.

    Args:
        retry_number: The retry attempt number (0-indexed).
        backoff_factor: Multiplier for exponential backoff.

            Set to `0.0` for constant delay.
        initial_delay: Initial delay in seconds before first retry.
        max_delay: Maximum delay in seconds between retries.

            Caps exponential backoff growth.
        jitter: Whether to add random jitter to delay to avoid thundering herd.

    Returns:
        Delay in seconds before next retry.
    """
    if backoff_factor == 0.0:
        delay = initial_delay
    else:
        delay = initial_delay * (backoff_factor**retry_number)

    # Cap at max_delay
    delay = min(delay, max_delay)

    if jitter and delay > 0:
        jitter_amount = delay * 0.25  # ±25% jitter
        delay += random.uniform(-jitter_amount, jitter_amount)
        # Ensure delay is not negative after jitter
        delay = max(0, delay)

    return delay


class RetryMiddleware(AgentMiddleware):
    """The options and decisions `ModelRetryMiddleware` and `ToolRetryMiddleware` share."""

    def __init__(
        self,
        *,
        max_retries: int,
        retry_on: RetryOn,
        on_failure: OnFailure,
        backoff_factor: float,
        initial_delay: float,
        max_delay: float,
        jitter: bool,
    ) -> None:
        super().__init__()
        validate_retry_params(max_retries, initial_delay, max_delay, backoff_factor)
        self.max_retries = max_retries
        self.tools = []  # No additional tools registered by this middleware
        self.retry_on = retry_on
        self.on_failure = on_failure
        self.backoff_factor = backoff_factor
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.jitter = jitter

    def next_delay(self, exc: Exception, attempt: int) -> float | None:
        """After attempt `attempt` (0-indexed) failed with `exc`: the seconds to wait before the
        next one, or None when the retries are spent. Re-raises `exc` when `retry_on` does not
        match it (it propagates at once, without `on_failure`)."""
        if not should_retry_exception(exc, self.retry_on):
            raise exc
        if attempt >= self.max_retries:
            return None
        return calculate_delay(
            attempt,
            backoff_factor=self.backoff_factor,
            initial_delay=self.initial_delay,
            max_delay=self.max_delay,
            jitter=self.jitter,
        )

    def failure_content(self, exc: Exception, default: Callable[[], str]) -> str:
        """The message content once the retries are spent: `on_failure`'s text, or `default()`;
        re-raises `exc` when `on_failure` is `'error'`."""
        if self.on_failure == "error":
            raise exc
        if callable(self.on_failure):
            return self.on_failure(exc)
        return default()


def attempt_word(attempts_made: int) -> str:
    """`attempt` or `attempts`, as the failure messages say."""
    return "attempt" if attempts_made == 1 else "attempts"
