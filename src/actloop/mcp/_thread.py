"""A private event loop on a daemon thread: where an MCP toolset's connection lives.

The SDK's transports are anyio task groups that must be opened and closed by one task, so the
connection gets a task of its own on a loop of its own. Sync callers block on a future; async
callers await it from any event loop (a toolset outlives `asyncio.run` calls). The thread is a
daemon: a server that never answers cannot keep the interpreter from exiting.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """An event loop running on its own daemon thread until `stop`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self._cancel_leftovers()
            self.loop.close()

    def _cancel_leftovers(self) -> None:
        """Cancel what is still running and give it a moment to unwind (bounded)."""
        tasks = asyncio.all_tasks(self.loop)
        for task in tasks:
            task.cancel()
        if tasks:
            waiter = asyncio.wait(tasks, timeout=5.0)
            self.loop.run_until_complete(waiter)
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())

    @property
    def alive(self) -> bool:
        """True while the loop thread runs."""
        return self._thread.is_alive()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule `coro` on the loop; the future can be waited on from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop and wait (at most `timeout`) for the thread to end."""
        if not self._thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
