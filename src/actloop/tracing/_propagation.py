"""Carry a trace across a process boundary: W3C trace-context fields in a plain dict.

A caller injects its context into a dict (`inject_context`), sends it with the work (a Ray task's
arguments, an HTTP request's headers), and the other side runs the work under it
(`continue_trace`), so the spans on both sides form one trace. Without OpenTelemetry installed
these helpers do nothing: there is no trace to carry.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping
from typing import Any

__all__ = ["continue_trace", "extract_context", "inject_context"]


def inject_context(carrier: dict[str, str] | None = None) -> dict[str, str]:
    """The current trace context as propagation fields (`{"traceparent": ...}` with the default
    W3C propagator), added to `carrier` if given; `{}` when there is no active span."""
    out: dict[str, str] = {} if carrier is None else carrier
    try:
        from opentelemetry import propagate
    except ImportError:
        return out
    propagate.inject(out)
    return out


def extract_context(carrier: Mapping[str, str]) -> Any:
    """The OpenTelemetry `Context` the fields in `carrier` describe (None without OpenTelemetry)."""
    try:
        from opentelemetry import propagate
    except ImportError:
        return None
    return propagate.extract(dict(carrier))


@contextlib.contextmanager
def continue_trace(carrier: Mapping[str, str] | None) -> Generator[None]:
    """Run the block under the trace context in `carrier` (from `inject_context` elsewhere): runs
    started inside become children of the remote span. An empty or missing carrier does nothing."""
    if not carrier:
        yield
        return
    try:
        from opentelemetry import context
    except ImportError:
        yield
        return
    token = context.attach(extract_context(carrier))
    try:
        yield
    finally:
        context.detach(token)
