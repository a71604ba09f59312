"""Durable runs over a Ray cluster: workers are Ray actors that drive many runs at once.

A `RayRunner` starts `workers` actors. Each builds its executor from an importable zero-argument
factory (`"package.module:function"`), opens the shared store (`connect(store)`: a
`postgresql://` URL for several hosts) and runs each run it is sent on the async path under its
thread id, so every result is journaled. Ray restarts an actor whose process or node died; the
runner sends that actor's runs again (to the next worker) and the worker resumes each from its
journal: the final result is the uninterrupted one, and no call whose observation was saved runs
again (a call in flight at the crash runs again, as after any crash).
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

# The run's data (AgentAction, AgentFinish, ...) reports `actloop.agents`: Ray's cloudpickle sends a
# class by reference only when its module is loaded in the sending process, so a worker loads it
# (else the driver gets copies of the classes, which compare unequal to its own).
import actloop.agents  # noqa: F401  # pyright: ignore[reportUnusedImport]
from actloop.checkpoint import BaseCheckpointer, LeaseHeldError, connect
from actloop.exceptions import ActloopError, ConfigurationError
from actloop.serialization import loads
from actloop.tracing import inject_context

__all__ = ["RayRunner", "RunHandle", "RunnerShutdownError"]

_RETRIES = 20
"""How often a run is sent again after its worker died, before the error is raised."""


def _ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise ConfigurationError("RayRunner needs Ray: pip install 'actloop[ray]'") from exc


def load_factory(path: str) -> Callable[[], Any]:
    """The callable named by `"module:attribute"`; ConfigurationError if it cannot be found."""
    module, _, name = path.partition(":")
    try:
        factory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigurationError(
            f"executor factory {path!r} cannot be imported ({exc}); pass 'module:function' "
            "naming a zero-argument function importable on every node"
        ) from exc
    if not callable(factory):
        raise ConfigurationError(f"executor factory {path!r} is not callable")
    return factory


class Worker:
    """The body of a worker actor: one executor and one store, many runs at a time."""

    def __init__(self, factory: str, store: str, lease_wait: float) -> None:
        self.store: BaseCheckpointer = connect(store)
        self.executor = load_factory(factory)()
        self.executor.checkpointer = self.store
        self.lease_wait = lease_wait

    def where(self) -> tuple[int, str]:
        """(pid, node id) of this worker."""
        import os

        return os.getpid(), _ray().get_runtime_context().get_node_id()

    async def run(
        self,
        thread_id: str,
        inputs: dict[str, Any],
        decisions: dict[str, Any] | None,
        trace: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Run the thread: start it, resume it where its journal ends, or read its outputs; under
        the submitter's trace context (`trace`, from `inject_context`) when tracing is on."""
        from actloop.tracing import continue_trace

        waited = 0.0
        while True:
            try:
                with continue_trace(trace):
                    return await self._run_once(thread_id, inputs, decisions)
            except LeaseHeldError:  # its last owner may be alive elsewhere until its lease ends
                if waited >= self.lease_wait:
                    raise
                await asyncio.sleep(0.5)
                waited += 0.5

    async def _run_once(
        self, thread_id: str, inputs: dict[str, Any], decisions: dict[str, Any] | None
    ) -> dict[str, Any]:
        record = await self.store.aget(thread_id)  # awaited: the actor's other runs go on
        config: Any = {"configurable": {"thread_id": thread_id}}
        if record is None:
            return await self.executor.ainvoke(inputs, config)
        if record.status == "finished" and record.output is not None:
            return {**loads(record.inputs), **loads(record.output)}
        return await self.executor.aresume(thread_id, **(decisions or {}))


class RunnerShutdownError(ActloopError, RuntimeError):
    """The `RayRunner` was shut down with this run in flight (or before it was sent): its journal
    stays in the store, so a new runner's `resume(thread_id)` goes on with it."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"the RayRunner was shut down before run {thread_id!r} finished; resume it with a "
            "new runner: RayRunner(...).resume(thread_id)"
        )
        self.thread_id = thread_id


class RunHandle:
    """One run sent to the cluster: its `result`, `status` and `cancel`."""

    def __init__(
        self,
        runner: RayRunner,
        thread_id: str,
        inputs: dict[str, Any],
        decisions: dict[str, Any] | None,
    ) -> None:
        self.runner, self.thread_id, self.inputs = runner, thread_id, inputs
        self.attempts = 1
        """How many times the run was sent (more than one: a worker died under it)."""
        self.cancelled = False
        self._trace = inject_context()  # the submitter's trace, kept for re-sends
        self._ref = runner.dispatch(thread_id, inputs, decisions, self._trace)

    def result(self, timeout: float | None = None) -> dict[str, Any]:
        """The run's outputs, waiting for them; a run whose worker died is sent again."""
        ray = _ray()
        lost = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                ray.exceptions.NodeDiedError, ray.exceptions.ObjectLostError)  # fmt: skip
        while True:
            try:
                return ray.get(self._ref, timeout=timeout)
            except lost as exc:
                if not self.runner.workers and not self.cancelled:
                    raise RunnerShutdownError(self.thread_id) from exc
                if self.cancelled or self.attempts > _RETRIES:
                    raise
                self.attempts += 1
                self._ref = self.runner.dispatch(self.thread_id, self.inputs, None, self._trace)

    def status(self) -> str:
        """`pending` (not saved yet), `cancelled`, or the saved run's status."""
        if self.cancelled:
            return "cancelled"
        record = self.runner.store.get(self.thread_id)
        return "pending" if record is None else record.status

    def cancel(self) -> None:
        """Stop the run (its journal stays: `RayRunner.resume` can go on with it)."""
        self.cancelled = True
        _ray().cancel(self._ref)


class RayRunner:
    """Many durable runs over a Ray cluster.

    `factory` is `"module:function"`, a zero-argument function returning an `AgentExecutor`,
    importable on every node. `store` is a store target for `connect` (a `postgresql://` URL so
    that every node sees the same runs). `address` goes to `ray.init` (None: the cluster this
    process already joined, else a new local one). Workers are spread over the nodes (best
    effort); `actor_options` go to Ray's `.options()`, e.g. `{"resources": {"agents": 1}}` to
    keep them on the nodes that offer that resource.
    """

    def __init__(
        self,
        factory: str,
        store: str,
        *,
        workers: int = 2,
        concurrency: int = 256,
        address: str | None = None,
        actor_options: Mapping[str, Any] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers={workers!r}: use 1 or more")
        load_factory(factory)  # fail here, not in a remote actor
        ray = _ray()
        if not ray.is_initialized():
            ray.init(address=address)
        self.store = connect(store)
        remote = ray.remote(max_restarts=-1, max_task_retries=0, max_concurrency=concurrency)(
            Worker
        )
        lease_wait = (getattr(self.store, "lease_ttl", None) or 0.0) + 5.0
        options = {"num_cpus": 0, "scheduling_strategy": "SPREAD", **(actor_options or {})}
        self.workers: list[Any] = [
            remote.options(**options).remote(factory, store, lease_wait) for _ in range(workers)
        ]
        self._next = itertools.cycle(range(workers))

    def dispatch(
        self,
        thread_id: str,
        inputs: dict[str, Any],
        decisions: dict[str, Any] | None,
        trace: dict[str, str] | None = None,
    ) -> Any:
        """Send one run to the next worker (with the caller's trace context); its Ray object ref."""
        if not self.workers:
            raise RunnerShutdownError(thread_id)
        worker = self.workers[next(self._next)]
        return worker.run.remote(thread_id, inputs, decisions, trace)

    def submit(self, inputs: dict[str, Any], *, thread_id: str | None = None) -> RunHandle:
        """Start one run (under a new thread id unless given)."""
        return RunHandle(self, thread_id or uuid.uuid4().hex, dict(inputs), None)

    def resume(
        self,
        thread_id: str,
        *,
        approve: bool | Iterable[str] | None = None,
        reject: Mapping[str, str | None] | Iterable[str] | None = None,
        edit: Mapping[str, Any] | None = None,
    ) -> RunHandle:
        """Go on with a saved thread on the cluster, with decisions as `AgentExecutor.resume`."""
        decisions: dict[str, Any] = {"approve": approve, "reject": reject, "edit": edit}
        if approve is not None and not isinstance(approve, bool):
            decisions["approve"] = list(approve)  # sent to another process: no iterators
        if reject is not None and not isinstance(reject, Mapping):
            decisions["reject"] = list(reject)
        return RunHandle(self, thread_id, {}, decisions)

    def map(
        self,
        inputs: Iterable[dict[str, Any]],
        *,
        thread_ids: Iterable[str] | None = None,
        progress: bool | None = None,
    ) -> list[dict[str, Any]]:
        """Run every input; the results in input order (a progress bar on a terminal)."""
        items = list(inputs)
        ids = list(thread_ids) if thread_ids is not None else [None] * len(items)
        if len(ids) != len(items):
            raise ValueError(f"{len(ids)} thread ids for {len(items)} inputs")
        handles = [self.submit(i, thread_id=t) for i, t in zip(items, ids, strict=True)]
        show = sys.stderr.isatty() if progress is None else progress
        if not show:
            return [h.result() for h in handles]
        from rich.progress import Progress

        results: list[dict[str, Any]] = []
        with Progress(transient=True) as bar:
            task = bar.add_task("runs", total=len(handles))
            for handle in handles:
                results.append(handle.result())
                bar.advance(task)
        return results

    def shutdown(self) -> None:
        """Stop the workers. Runs in flight are left to be resumed: their handles' `result()`
        raises `RunnerShutdownError`, as do `submit` and `resume` from now on."""
        ray = _ray()
        for worker in self.workers:
            ray.kill(worker, no_restart=True)
        self.workers = []
        self.store.close()
