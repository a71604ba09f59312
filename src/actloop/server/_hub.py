"""Runs that outlive their HTTP request: each runs in its own task and logs its events.

A stream response only follows a run's event log, so a client that disconnects stops following
but never stops the run; another client (or the same one, with `Last-Event-ID`) can follow the
log again from any event. A finished run's task is dropped, so nothing accumulates but the logs
of at most `keep` threads: a new thread's log replaces the oldest one whose run is over, and when
every kept thread has a run going on, a run on a new thread is refused (`Busy`, a 503) until one
ends (a live log is never dropped: its followers would lose events).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

from actloop.server._wire import dumps

__all__ = ["ERROR_EVENT", "Busy", "Event", "EventLog", "RunHub"]

log = logging.getLogger("actloop.server")

ERROR_EVENT = '{"status_code":500,"message":"Internal Server Error"}'
"""What a failed run's stream says: LangServe's event, never the exception's text."""

Event = tuple[int, str, str]
"""(id, event name, data as JSON text). Names: `data` (an item of the run), then exactly one of
`end` (the run is over: finished or paused), `error` (it failed) or `cancelled` (it was stopped)."""


class Busy(Exception):
    """Every kept thread has a run going on: a run on a new thread must wait (503)."""


class EventLog:
    """The events of one thread's runs, in order, with a wake-up for followers."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.live = False
        self._changed: asyncio.Event | None = None
        """What followers wait on, made when one waits: the pushes of one burst (a step's
        several events before a follower runs again) make one event, not one each."""

    def push(self, name: str, data: str) -> None:
        """Append one event and wake every follower."""
        self.events.append((len(self.events), name, data))
        self._wake()

    def close(self) -> None:
        """Mark the current run as over (its last event was pushed)."""
        self.live = False
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    async def follow(self, start: int = 0) -> AsyncIterator[Event]:
        """Every event from id `start` on, waiting for new ones while a run is live."""
        index = max(start, 0)
        while True:
            while index < len(self.events):
                yield self.events[index]
                index += 1
            if not self.live:
                return
            if self._changed is None:
                self._changed = asyncio.Event()
            await self._changed.wait()


class RunHub:
    """Starts runs as tasks writing to event logs; keeps the logs of at most `keep` threads."""

    def __init__(self, keep: int = 200) -> None:
        self.keep = keep
        self.tasks: set[asyncio.Task[None]] = set()
        self.threads: OrderedDict[str, EventLog] = OrderedDict()
        self.running: dict[str, asyncio.Task[None]] = {}
        """The task of each thread's run going on."""

    @property
    def active(self) -> int:
        """How many runs are going on."""
        return len(self.tasks)

    def thread_log(self, thread_id: str) -> EventLog | None:
        """The event log of `thread_id` in this process, if a run of it was started here."""
        return self.threads.get(thread_id)

    def start(
        self,
        source: Callable[[], AsyncIterator[Any]],
        thread_id: str | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> EventLog:
        """Run `source()` in a task; each item it yields becomes a `data` event of the log."""
        event_log = self._log_for(thread_id)
        event_log.live = True
        task = asyncio.get_running_loop().create_task(_pump(source, event_log, on_end))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        if thread_id is not None:
            self.running[thread_id] = task
            task.add_done_callback(lambda t: self._ended(thread_id, t))
        return event_log

    def _ended(self, thread_id: str, task: asyncio.Task[None]) -> None:
        if self.running.get(thread_id) is task:
            del self.running[thread_id]

    async def cancel(self, thread_id: str) -> bool:
        """Cancel the run of `thread_id` going on and wait for it to end; False if none."""
        task = self.running.get(thread_id)
        if task is None:
            return False
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return True

    def _log_for(self, thread_id: str | None) -> EventLog:
        if thread_id is None:
            return EventLog()
        event_log = self.threads.pop(thread_id, None)
        if event_log is None:
            if len(self.threads) >= self.keep:
                self._evict()
            event_log = EventLog()
        self.threads[thread_id] = event_log  # now the newest
        return event_log

    def _evict(self) -> None:
        """Drop the oldest log whose run is over; `Busy` when every run goes on."""
        done = next((k for k, v in self.threads.items() if not v.live), None)
        if done is None:
            raise Busy(f"{self.keep} threads have a run going on; try again when one ends")
        del self.threads[done]

    async def stop(self) -> None:
        """Cancel the runs still going (server shutdown) and wait for them."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _pump(
    source: Callable[[], AsyncIterator[Any]],
    event_log: EventLog,
    on_end: Callable[[], None] | None,
) -> None:
    try:
        async for item in source():
            event_log.push("data", dumps(item))
        event_log.push("end", "")
    except asyncio.CancelledError:
        event_log.push("cancelled", "")  # stopped by a client or the server's shutdown
        raise
    except Exception:
        log.exception("a run failed")
        event_log.push("error", ERROR_EVENT)
    finally:
        event_log.close()
        if on_end is not None:
            on_end()
