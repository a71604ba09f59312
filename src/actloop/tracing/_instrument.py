"""`instrument()` / `uninstrument()`: spans on or off for every run in the process.

Shaped like OpenTelemetry's instrumentors: `instrument(tracer_provider=...)` (the global provider
when None) adds one handler to every run through `callbacks`' global handlers, so no executor code
knows about tracing. Instrumenting again replaces the provider and settings (one handler, never
two). Off, runs pay one `is None`-style check, as with no callbacks at all.
"""

from __future__ import annotations

import os
from typing import Any

from actloop.callbacks._manager import add_global_handler, remove_global_handler

__all__ = ["CAPTURE_ENV", "instrument", "is_instrumented", "uninstrument"]

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' opt-in for recording prompts, replies and tool arguments."""

_CAPTURE_ON = frozenset({"true", "1", "yes", "span_only", "span_and_event"})
_INSTALLED: list[Any] = []


def _capture_from_env() -> bool:
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON


def instrument(tracer_provider: Any = None, *, capture_content: bool | None = None) -> None:
    """Emit GenAI spans for every agent run, model call and tool call from now on.

    `tracer_provider`: where spans go (the global one when None). `capture_content`: also record
    messages, tool arguments and results (private data); None reads the conventions' opt-in,
    the `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` environment variable ("true").
    """
    try:
        from opentelemetry import trace

        from actloop.tracing._handler import SpanHandler
    except ImportError as exc:
        raise ImportError(
            "actloop.tracing needs OpenTelemetry: pip install 'actloop[otel]'"
        ) from exc
    from actloop import __version__

    tracer = trace.get_tracer("actloop", __version__, tracer_provider)
    capture = _capture_from_env() if capture_content is None else capture_content
    handler = SpanHandler(tracer, capture)
    uninstrument()  # instrumenting again switches to the new provider and settings
    add_global_handler(handler)
    _INSTALLED.append(handler)


def uninstrument() -> None:
    """Stop emitting spans for runs started from now on (open runs finish their spans)."""
    while _INSTALLED:
        remove_global_handler(_INSTALLED.pop())


def is_instrumented() -> bool:
    """Whether `instrument()` is in effect."""
    return bool(_INSTALLED)
