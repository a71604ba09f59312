"""One durable-thread service under every protocol the server speaks.

Every protocol route (the threads API, Agent Protocol, OpenAI Responses, A2A, MCP, AG-UI) starts,
resumes, reads, follows and cancels runs through `ThreadService`, so a thread started over one
protocol is the same thread over the others and the page.

A thread is a chain of durable runs, one per turn: the first turn is stored under the thread's
own id `T`, later ones under `T:2`, `T:3`, ... (a `:` no client-chosen id may hold, so the ids
never collide). A new turn starts only when the thread's latest run has finished; a paused or
failed one is resumed instead. When the agent takes a `chat_history` input, a new turn gets the
earlier turns as messages (each turn's input and output), so a conversation goes on.

Events: each thread has one event log in this process (`_hub`), numbered across its turns; items
are the executor's stream chunks (`actions`, `steps`, `output`, or `pending_approvals` for a paused
run) plus `{"token": text}` for each piece of model text, as JSON text in LangServe's wire shape.

Several server processes may share one store (Postgres): a thread whose latest run this process
did not run (or did, but another process went on with it since) is followed from the store
(`_remote`: its journal read every `poll` seconds, ids made from the store). A run held by
another live process is not started again here (409). With `taking_over(every)`, the process
looks every `every` seconds for runs left `running` by a process that died (their lease expired,
or their owner is known dead) and goes on with them; the lease's epoch lets one process win.
Paused and failed runs wait for a person, and a run stopped on purpose (its lease given back) is
never taken over.

An executor served without a checkpointer gets an in-memory one here (`InMemorySaver`): its
threads last as long as the server process.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import os
import random
import socket
import threading
import uuid
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from actloop.callbacks import BaseCallbackHandler
from actloop.checkpoint import (
    BaseCheckpointer,
    LeaseHeldError,
    Owner,
    RunRecord,
    StoreTimeoutError,
    ThreadHistory,
    normalized_answers,
    thread_history,
)
from actloop.checkpoint._entries import DAMAGE
from actloop.exceptions import CheckpointError
from actloop.executor import PAUSED_KEY, Resume
from actloop.server._http import HttpError, one_line
from actloop.server._hub import ERROR_EVENT, Event, EventLog, RunHub
from actloop.server._langserve import check_thread_id, prepare
from actloop.server._remote import STORE_IDS, newer, run_events
from actloop.server._wire import dumps

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor
    from actloop.runnables._config import RunnableConfig

__all__ = [
    "STORE_WAIT",
    "Started",
    "ThreadService",
    "decode_event",
    "error_type",
    "public_id",
    "read",
    "takes_history",
    "turn_id",
]

_T = TypeVar("_T")
log = logging.getLogger("actloop.server")

STORE_WAIT = 5.0
"""Seconds the server waits for one of its own store reads before answering 503."""

POLL = 0.2
"""Seconds between two store reads of a thread followed from the store (run by another process)."""


def turn_id(thread_id: str, turn: int) -> str:
    """The store id of turn `turn` (1-based) of `thread_id`."""
    return thread_id if turn == 1 else f"{thread_id}:{turn}"


def public_id(run_id: str) -> tuple[str, int]:
    """The thread id and turn number a store id names (`T:3` -> `("T", 3)`)."""
    head, sep, tail = run_id.rpartition(":")
    if sep and tail.isdigit():
        return head, int(tail)
    return run_id, 1


def takes_history(executor: AgentExecutor) -> bool:
    """Whether the agent takes a `chat_history` input: a declared input key, or, for an agent
    built on a Runnable (which declares none), a variable of a prompt in its chain."""
    keys = executor.input_keys
    if keys:
        return "chat_history" in keys
    runnable: Any = getattr(executor.agent, "runnable", None)
    for step in cast("list[Any]", getattr(runnable, "steps", [runnable])):
        names = [*getattr(step, "input_variables", ()), *getattr(step, "optional_variables", ())]
        if "chat_history" in names:
            return True
    return False


def error_type(error: str | None) -> str | None:
    """What a client sees of a failed run's error (`"Type: message"`): the type alone. The
    message may hold a key or an internal address; it stays in the store and the server log."""
    if error is None:
        return None
    name = error.partition(":")[0].strip()
    return name if name.isidentifier() else "Error"


async def read(call: Awaitable[_T]) -> _T:
    """A store read of the server's own: 503 when the store does not answer in time or fails
    (the reason is logged, never sent: it names the store's address)."""
    try:
        return await call
    except StoreTimeoutError:
        raise HttpError(503, "the checkpoint store did not answer in time; try again") from None
    except CheckpointError:
        log.exception("a checkpoint store read failed")
        raise HttpError(503, "the checkpoint store is unavailable; see the server log") from None


@dataclass(frozen=True)
class Started:
    """A run just started on a thread: follow it from event `first_event` of `log`."""

    thread_id: str
    run_id: str
    turn: int
    log: EventLog
    first_event: int


class ThreadService:
    """Starts, resumes, reads, follows and cancels the runs of durable threads."""

    def __init__(self, executor: AgentExecutor, hub: RunHub, poll: float = POLL) -> None:
        if executor.checkpointer is None:
            from actloop.checkpoint.memory import InMemorySaver

            executor = copy.copy(executor)
            executor.checkpointer = InMemorySaver()
        self.executor = executor
        self.hub = hub
        self._started: weakref.WeakKeyDictionary[EventLog, tuple[str, int, int]]
        self._started = weakref.WeakKeyDictionary()
        """(run id, turn, first event) of the latest run started on each event log (a value that
        does not hold the log, so an entry goes with its log)."""
        self.poll = poll
        """Seconds between two store reads of a thread followed from the store."""
        self._ended: dict[str, tuple[str, float | None]] = {}
        """For each thread whose latest run here is over: that run's id and the `updated` time
        its record had then (the store changed since: another process went on with it), None
        until read."""
        self._notes: set[asyncio.Task[None]] = set()

    @property
    def store(self) -> BaseCheckpointer:
        """The store of every thread."""
        assert self.executor.checkpointer is not None
        return self.executor.checkpointer

    # reading

    async def records(self) -> list[RunRecord]:
        """Every saved run (each turn of each thread), newest first."""
        found = await read(self.store.alist_runs(timeout=STORE_WAIT))
        found.sort(key=lambda r: r.updated, reverse=True)
        return found

    async def threads(self) -> list[RunRecord]:
        """The latest run of each thread, newest first."""
        latest: dict[str, RunRecord] = {}
        for record in await self.records():
            thread, turn = public_id(record.thread_id)
            if thread not in latest or public_id(latest[thread].thread_id)[1] < turn:
                latest[thread] = record
        return sorted(latest.values(), key=lambda r: r.updated, reverse=True)

    async def turns(self, thread_id: str) -> list[RunRecord]:
        """The saved runs of `thread_id`, oldest turn first (empty: no such thread)."""
        check_thread_id(thread_id)
        first = await read(self.store.aget(thread_id, timeout=STORE_WAIT))
        if first is None:
            return []
        runs = [first]
        while True:  # turns are numbered without gaps
            record = await read(
                self.store.aget(turn_id(thread_id, len(runs) + 1), timeout=STORE_WAIT)
            )
            if record is None:
                return runs
            runs.append(record)

    async def history(self, thread_id: str, turn: int | None = None) -> ThreadHistory:
        """The decoded history of a turn of `thread_id` (its latest by default); 404 if none."""
        if turn is not None:  # its record by its id: one read, not a walk of the thread's turns
            check_thread_id(thread_id)
            run_id = turn_id(thread_id, turn)
            record = await read(self.store.aget(run_id, timeout=STORE_WAIT)) if turn > 0 else None
            if record is None:
                raise HttpError(404, f"no thread {thread_id!r}")
            return await self.decode(record)
        runs = await self.turns(thread_id)
        if not runs:
            raise HttpError(404, f"no thread {thread_id!r}")
        return await self.decode(runs[-1])

    async def decode(self, record: RunRecord) -> ThreadHistory:
        """The history of one saved run; damage is a 500 naming the entry (as `runs show`)."""
        entries = await read(self.store.aentries(record.thread_id, timeout=STORE_WAIT))
        try:
            return thread_history(record, entries)
        except CheckpointError as exc:
            raise HttpError(500, one_line(exc, 400)) from None

    def log(self, thread_id: str) -> EventLog | None:
        """The thread's event log in this process, if a run of it was started here."""
        return self.hub.thread_log(thread_id)

    def live(self, thread_id: str) -> bool:
        """Whether a run of `thread_id` is going on in this process (`held_elsewhere` tells of
        the others)."""
        event_log = self.hub.thread_log(thread_id)
        return bool(event_log and event_log.live)

    def running(self, thread_id: str) -> Started | None:
        """The run of `thread_id` going on in this process (its turn, where its events start)."""
        event_log = self.hub.thread_log(thread_id)
        if event_log is None or not event_log.live or event_log not in self._started:
            return None
        run_id, turn, first = self._started[event_log]
        return Started(thread_id, run_id, turn, event_log, first)

    async def held_elsewhere(self, record: RunRecord) -> bool:
        """Whether another live process holds the lease of the run `record` (it runs it, or
        is just letting go of it): a run of it must not start here."""
        if record.owner is None or self.live(public_id(record.thread_id)[0]):
            return False
        try:
            held = await read(self.store.aheld(record.thread_id, timeout=STORE_WAIT))
        except NotImplementedError:
            return True  # a store that cannot tell: its holder may be alive
        return held.live()

    def follow(self, thread_id: str, after: int = -1) -> AsyncIterator[Event]:
        """The thread's events after event `after`: from this process's log while it holds the
        thread's latest run, else from the store (`_remote`, whose ids start at `STORE_IDS`:
        an `after` that high is always followed from the store). A thread unknown to both
        raises HttpError 404 when iterated (`events` raises it before)."""
        return self._follow(thread_id, after)

    async def events(self, thread_id: str, after: int = -1) -> AsyncIterator[Event]:
        """`follow`, with the 404 for an unknown thread raised now (before a response starts)."""
        if self.hub.thread_log(thread_id) is None and not await self.turns(thread_id):
            raise HttpError(404, f"no thread {thread_id!r}")
        return self.follow(thread_id, after)

    async def _follow(self, thread_id: str, after: int) -> AsyncIterator[Event]:
        event_log = self.hub.thread_log(thread_id)
        if event_log is not None and after < STORE_IDS and await self._current(thread_id):
            async for event in event_log.follow(after + 1):
                yield event
            return
        async for event in self._from_store(thread_id, after):
            yield event

    async def _current(self, thread_id: str) -> bool:
        """Whether this process's log of the thread tells its latest run: it runs it, or its
        run here was the last to change the store."""
        if self.live(thread_id):
            return True
        ended = self._ended.get(thread_id)
        runs = await self.turns(thread_id)
        if not runs or ended is None or ended[0] != runs[-1].thread_id:
            return False
        return ended[1] is None or ended[1] == runs[-1].updated

    async def _from_store(self, thread_id: str, after: int) -> AsyncIterator[Event]:
        """The thread's events told from the store, polled every `poll` seconds until its
        latest run is over (see `_remote`)."""
        runs = await self.turns(thread_id)
        if not runs:
            raise HttpError(404, f"no thread {thread_id!r}")
        for turn, record in enumerate(runs, 1):
            unheld = 0
            while True:
                found = await read(self.store.aget(record.thread_id, timeout=STORE_WAIT))
                if found is None:  # deleted (`actloop runs delete`) while followed
                    return
                entries = await read(self.store.aentries(found.thread_id, timeout=STORE_WAIT))
                unheld = unheld + 1 if found.owner is None else 0
                stopped = unheld > 1  # running, and twice in a row nobody held it: stopped
                events, damaged = self._told(turn, found, entries, stopped)
                for event in newer(events, after):
                    yield event
                    after = event[0]
                if damaged or stopped or found.status != "running":
                    break
                await asyncio.sleep(self.poll)
            if damaged or found.status != "finished":
                return  # a later turn starts only after this one finished

    def _told(
        self, turn: int, record: RunRecord, entries: list[Any], stopped: bool
    ) -> tuple[list[Event], bool]:
        """`run_events`, and whether the journal is damaged (then told as the run's failure,
        and logged)."""
        try:
            return run_events(turn, record, entries, stopped), False
        except (CheckpointError, *DAMAGE):
            log.exception("the journal of %r cannot be told", record.thread_id)
            return [(STORE_IDS * (turn + 1) - 1, "error", ERROR_EVENT)], True

    # running

    async def start(self, value: Any, thread_id: str | None = None) -> Started:
        """Start a turn of `thread_id` (a new thread when None or unknown) on the client's input
        `value`; 409 when the thread has a run going on, paused or failed (resume it instead)."""
        thread_id = check_thread_id(thread_id) if thread_id is not None else uuid.uuid4().hex[:12]
        inputs = prepare(self.executor, value)
        runs = await self.turns(thread_id)
        if runs:
            latest = runs[-1]
            if self.live(thread_id) or latest.status != "finished":
                raise HttpError(
                    409,
                    f"thread {thread_id!r} has a run {_state(latest.status)}; resume it instead",
                )
            if takes_history(self.executor) and "chat_history" not in inputs:
                inputs["chat_history"] = await self._conversation(runs)
        return self._run(thread_id, len(runs) + 1, inputs)

    async def resume(
        self,
        thread_id: str,
        approve: Any = None,
        reject: Any = None,
        edit: Any = None,
        answer: Any = None,
    ) -> Started:
        """Go on with the thread's paused or failed latest run with a person's decisions (and
        answers to the questions of calls that asked for input); 409 when it finished or is going
        on, 422 when a decision names a call that does not wait or an answer does not fit."""
        found = await self.history(thread_id)
        if self.live(thread_id):
            raise HttpError(409, f"thread {thread_id!r} has a run going on")
        if await self.held_elsewhere(found.record):
            raise HttpError(409, f"thread {thread_id!r} has a run going on in another process")
        if found.status == "finished":
            raise HttpError(
                409, f"thread {thread_id!r} already finished; there is nothing to resume"
            )
        if found.pending:  # a call waiting for an answer takes no decision (`_check_answers`)
            deciding = {str(p.get("id")) for p in found.pending if "questions" not in p}
            _check_ids((approve, reject, edit), deciding)
        _check_answers(answer, found.pending)
        _, turn = public_id(found.record.thread_id)
        return self._run(thread_id, turn, Resume.of(approve, reject, edit, answer))

    async def delete(self, thread_id: str) -> bool:
        """Forget every turn of the thread and its events here (409 while a run of it goes on;
        501 for a store that cannot delete); False when there was none."""
        runs = await self.turns(thread_id)
        if self.live(thread_id):
            raise HttpError(409, f"thread {thread_id!r} has a run going on; cancel it first")
        try:
            for record in reversed(runs):
                await read(self.store.adelete(record.thread_id, timeout=STORE_WAIT))
        except NotImplementedError:
            raise HttpError(501, "this checkpoint store cannot delete threads") from None
        self.hub.threads.pop(thread_id, None)
        return bool(runs)

    async def cancel(self, thread_id: str) -> bool:
        """Stop the thread's run going on in this process (it stays resumable); False if none."""
        if not await self.hub.cancel(thread_id):
            return False
        ended = self._ended.get(thread_id)
        if ended is not None:
            await self._note_end(thread_id, ended[0])
        return True

    async def failure(self, started: Started) -> str:
        """The type of the error `started`'s failed run saved, as clients see it (`error_type`;
        `Error` when the record holds none)."""
        found = await self.history(started.thread_id, started.turn)
        return error_type(found.record.error) or "Error"

    async def wait(self, started: Started) -> ThreadHistory:
        """Wait until `started`'s run is over; its saved history."""
        async for _ in started.log.follow(started.first_event):
            pass
        return await self.history(started.thread_id, started.turn)

    def _run(self, thread_id: str, turn: int, inputs: Any, takeover: bool = False) -> Started:
        run_id = turn_id(thread_id, turn)
        config = cast("RunnableConfig", {"configurable": {"thread_id": run_id}})
        tokens = _Tokens()
        source = _chunks(self.executor, inputs, config, tokens)
        self._ended.pop(thread_id, None)
        if len(self._ended) > self.hub.keep:  # only threads whose log is kept matter
            self._ended = {k: v for k, v in self._ended.items() if k in self.hub.threads}
        event_log = self.hub.start(self._tracked(source, thread_id, run_id, takeover), thread_id)
        tokens.log = event_log  # the run's task has not started yet: no token comes before
        first = len(event_log.events)
        self._started[event_log] = (run_id, turn, first)
        return Started(thread_id, run_id, turn, event_log, first)

    def _tracked(
        self,
        source: Callable[[], AsyncIterator[Any]],
        thread_id: str,
        run_id: str,
        takeover: bool,
    ) -> Callable[[], AsyncIterator[Any]]:
        """`source`, noting the run's record once it is over (`_current`); a take-over that
        another process won (its lease) leaves no log here."""

        async def tracked() -> AsyncIterator[Any]:
            try:
                async for item in source():
                    yield item
            except LeaseHeldError:
                if takeover:
                    self._forget(thread_id)
                    return
                raise
            except asyncio.CancelledError:
                self._ended[thread_id] = (run_id, None)  # `cancel` notes its record
                raise
            except Exception:
                self._ended[thread_id] = (run_id, None)  # its terminal event waits for no read
                task = asyncio.get_running_loop().create_task(self._note_end(thread_id, run_id))
                self._notes.add(task)
                task.add_done_callback(self._notes.discard)
                raise
            await self._note_end(thread_id, run_id)

        return tracked

    async def _note_end(self, thread_id: str, run_id: str) -> None:
        """Note the record of `run_id`, just over here (unnoted when the store fails: then
        this process's log counts as the thread's latest)."""
        with contextlib.suppress(CheckpointError):
            record = await self.store.aget(run_id, timeout=STORE_WAIT)
            if record is not None and self._ended.get(thread_id, (run_id,))[0] == run_id:
                self._ended[thread_id] = (run_id, record.updated)

    def _forget(self, thread_id: str) -> None:
        """Drop the thread's log here (another process runs the thread)."""
        self.hub.threads.pop(thread_id, None)
        self._ended.pop(thread_id, None)

    # taking over the runs of processes that died

    async def take_over(self) -> list[str]:
        """One sweep: go on here with each run left `running` whose lease holder is gone (its
        lease expired, or it is known dead); the threads taken. Runs given back on purpose
        (stopped: no holder), runs that ended in this process (the store did not take their
        end) and paused or failed runs are left alone."""
        taken: list[str] = []
        for record in await read(self.store.alist_running(timeout=STORE_WAIT)):
            if record.status != "running" or record.owner is None:
                continue
            thread_id, turn = public_id(record.thread_id)
            if self.live(thread_id):
                continue
            held = await read(self.store.aheld(record.thread_id, timeout=STORE_WAIT))
            if held.owner is None or _ours(held.owner) or held.live():
                continue  # given back, or ended here without a word to the store: a person's
            log.warning("taking over thread %r (its process %s is gone)", thread_id, held.owner)
            self._run(thread_id, turn, Resume.of(None, None, None), takeover=True)
            taken.append(thread_id)
        return taken

    @contextlib.asynccontextmanager
    async def taking_over(self, every: float | None) -> AsyncGenerator[None]:
        """While open, `take_over` every `every` seconds (a little jitter, so processes started
        together do not sweep together); None or 0: never."""
        if not every:
            yield
            return
        task = asyncio.get_running_loop().create_task(self._sweep(every))
        try:
            yield
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _sweep(self, every: float) -> None:
        while True:
            await asyncio.sleep(every * random.uniform(0.8, 1.2))
            try:
                await self.take_over()
            except Exception as exc:  # the sweeper goes on: the store may answer next time
                log.warning("the take-over sweep failed: %s", type(exc).__name__)

    async def _conversation(self, runs: list[RunRecord]) -> list[Any]:
        """The earlier turns as messages: each turn's input and its output, in order."""
        from actloop.messages import AIMessage, HumanMessage

        messages: list[Any] = []
        for record in runs:
            found = await self.decode(record)
            messages.extend(
                cast(list[Any], found.inputs.get("chat_history") or [])[len(messages) :]
            )
            question = found.inputs.get("input")
            answer = (found.output or {}).get("output")
            if question is not None:
                messages.append(HumanMessage(content=str(question)))
            if answer is not None:
                messages.append(AIMessage(content=str(answer)))
        return messages


def _ours(owner: Owner) -> bool:
    """Whether `owner` is this process (a run of ours that ended, its lease not given back:
    the store did not answer; it waits for a person as a failed run does)."""
    return owner.pid == os.getpid() and owner.host == socket.gethostname()


def _state(status: str) -> str:
    return {"paused": "waiting for approval", "failed": "that failed"}.get(status, "going on")


def _check_ids(decisions: tuple[Any, Any, Any], waiting: set[str]) -> None:
    """422 before the run starts when a decision names a call that is not waiting."""
    for value in decisions:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, dict)):
            continue
        ids = [str(v) for v in cast("list[Any] | dict[Any, Any]", value)]
        unknown = sorted(set(ids) - waiting)
        if unknown:
            raise HttpError(
                422,
                f"no call waits with id {unknown[0]!r} "
                f"(waiting: {', '.join(sorted(waiting)) or 'none'})",
            )


def _check_answers(answer: Any, pending: list[dict[str, Any]]) -> None:
    """422 before the run starts for an answer to a call that asks nothing, or one that does not
    fit its questions (`{id: the form's content | "decline" | "cancel"}`)."""
    if answer is None:
        return
    if not isinstance(answer, dict):
        raise HttpError(422, "'answer' must be {call id: answer}")
    asking = {str(p.get("id")): p for p in pending if isinstance(p.get("questions"), list)}
    for ident, given in cast("dict[Any, Any]", answer).items():
        if str(ident) not in asking:
            waiting = ", ".join(sorted(asking)) or "none"
            raise HttpError(
                422, f"no call waits for an answer with id {str(ident)[:40]!r} (waiting: {waiting})"
            )
        try:
            normalized_answers(str(ident), asking[str(ident)]["questions"], given)
        except CheckpointError as exc:
            raise HttpError(422, str(exc)) from None


def _chunks(
    executor: AgentExecutor, inputs: Any, config: RunnableConfig, tokens: _Tokens
) -> Callable[[], AsyncIterator[Any]]:
    """The run's top-level chunks (its final one as a plain dict, as its `on_chain_end` says
    it); `tokens` pushes `{"token": text}` for each piece of model text as it comes.

    `astream` with one light handler, not `astream_events` (whose handler builds an event dict
    for every child run, queues it and filters it again here: about twice the CPU of a run)."""

    async def source() -> AsyncIterator[Any]:
        """The chunks; once they end (or fail), the handler pushes nothing more."""
        try:
            async for chunk in executor.astream(inputs, {**config, "callbacks": [tokens]}):
                yield dict(chunk) if _final(chunk) else chunk
        finally:
            tokens.done = True

    return source


class _Tokens(BaseCallbackHandler):
    """Pushes each piece of text a chat model streams, as `{"token": text}`, to the run's event
    log the moment it comes (so it precedes the chunk that follows it, as the run made them);
    what comes from another thread goes through the loop, and nothing once the run is over."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.log: EventLog | None = None
        """The run's event log (set once the hub made it, before the run starts)."""
        self.chat_runs: set[uuid.UUID] = set()
        """The chat-model runs seen start: only their tokens count (as `astream_events`'s
        `on_chat_model_stream`, never a text model's)."""
        self.done = False

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: uuid.UUID, **kw: Any
    ) -> None:
        """Note a chat-model run (its tokens count)."""
        self.chat_runs.add(run_id)

    def on_llm_new_token(
        self, token: str, *, chunk: Any = None, run_id: uuid.UUID, **kw: Any
    ) -> None:
        """Push the piece's text, if any, of a chat model's streamed chunk."""
        if chunk is None or run_id not in self.chat_runs:
            return
        text = getattr(getattr(chunk, "message", chunk), "text", "")
        if not text:
            return
        data = dumps({"token": text})
        if threading.get_ident() == self.thread:
            self._push(data)
        else:
            self.loop.call_soon_threadsafe(self._push, data)

    def _on_stream(self, chunk: Any, **kw: Any) -> None:
        """Nothing: defined so that a chat model invoked inside the run streams its reply (a
        model does when a handler consumes streamed output), as under `astream_events`."""

    def _push(self, data: str) -> None:
        """Append a token event to the run's log, unless the run is over."""
        if self.log is not None and not self.done:
            self.log.push("data", data)


def _final(chunk: Any) -> bool:
    return isinstance(chunk, dict) and ("output" in chunk or PAUSED_KEY in chunk)


def decode_event(data: str) -> Any:
    """An event's data back as plain JSON data (`""` for the end event: None)."""
    return json.loads(data) if data else None
