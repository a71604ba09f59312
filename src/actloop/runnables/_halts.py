"""The halt flags of abandoned worker calls: a worker call its caller gave up on (deadline,
Ctrl-C, a sibling's error) raises its flag, and code running inside it (an agent used as a tool,
a batch item) sees `halted()` turn true and starts nothing new.

Apart from the workers (`_workers`, which set the flags), so the loop can test them on every step
without importing the workers and `concurrent.futures` (~5 ms) at `import actloop`.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import threading

__all__ = ["HALTS", "halted"]

HALTS: contextvars.ContextVar[tuple[threading.Event, ...]] = contextvars.ContextVar(
    "actloop_halt", default=()
)
"""The abandon flags of the worker calls the current code runs inside (innermost last); empty
outside any worker call, so testing it first makes `halted()` free on the usual path."""


def halted() -> bool:
    """True inside a worker call that its caller abandoned, or inside anything that call
    started: an agent running there should start nothing new."""
    flags = HALTS.get()
    return bool(flags) and any(event.is_set() for event in flags)
