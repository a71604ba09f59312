"""Waiting in tests on what a store or an event loop does: a lease given back, a loop that keeps
turning while a call waits (the frozen-store and store-bound tests)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from actloop import CheckpointError
from actloop.checkpoint import BaseCheckpointer

__all__ = ["beside_a_ticker", "released"]

T = TypeVar("T")


def released(store: BaseCheckpointer, thread: str, within: float = 30.0) -> bool:
    """Whether the thread's lease is given back (polled every 0.1 s) within `within` seconds."""
    until = time.monotonic() + within
    while time.monotonic() < until:
        record = store.get(thread)
        if record is not None and record.owner is None:
            return True
        time.sleep(0.1)
    return False


async def beside_a_ticker(call: Awaitable[T]) -> tuple[T | CheckpointError, float]:
    """Await `call` beside a 10 ms ticker: (its result, or the CheckpointError it raised; the
    event loop's worst stall in seconds while it ran)."""
    worst, running = 0.0, True

    async def tick() -> None:
        nonlocal worst
        last = time.monotonic()
        while running:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            worst, last = max(worst, now - last - 0.01), now

    ticker = asyncio.ensure_future(tick())
    try:
        outcome: Any = await call
    except CheckpointError as exc:
        outcome = exc
    finally:
        running = False
        await ticker
    return outcome, worst
