"""Durable runs on a real local Ray cluster (two nodes and more), on a real PostgreSQL store.

Workers are killed with SIGKILL mid-run (a worker process, then a whole node): every run ends
with the uninterrupted result, and the side-effect log shows no call whose observation was saved
running twice (a call repeats only when it was in flight in the killed process). One runner's
store is frozen mid-run (its PostgreSQL server stopped with SIGSTOP): another runner's runs on
another store finish meanwhile, and the frozen run ends at its deadline with StoreTimeoutError,
then resumes once the store answers again.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import ray
from ray.cluster_utils import Cluster

from actloop import AgentAction
from actloop.checkpoint import PostgresCheckpointer, StoreTimeoutError
from actloop.distributed import RayRunner, RunHandle, RunnerShutdownError
from support.postgres import PostgresServer
from support.waits import released

from .ray_scenario import DEADLINE, STEPS, expected, make_executor

HERE = Path(__file__).resolve().parent
FACTORY = "ray_scenario:make_executor"
DEADLINE_FACTORY = "ray_scenario:make_deadline_executor"


class RayCluster:
    def __init__(self, cluster: Cluster, log: Path) -> None:
        self.cluster, self.log = cluster, log

    def runner(self, store: str, factory: str = FACTORY) -> RayRunner:
        """Two workers on the worker nodes (they need the `agents` resource)."""
        return RayRunner(factory, store, workers=2, actor_options={"resources": {"agents": 1}})

    def worker_nodes(self) -> dict[str, Any]:
        """The live non-head nodes by id."""
        head = self.cluster.head_node
        return {n.node_id: n for n in self.cluster.list_all_nodes() if n is not head}

    def lines(self, prefix: str) -> list[tuple[str, int]]:
        """(call input, pid) of every logged call whose input starts with `prefix`."""
        rows = [line.split() for line in self.log.read_text().splitlines()]
        return [(key, int(pid)) for key, pid in rows if key.startswith(prefix)]


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayCluster]:
    log = tmp_path_factory.mktemp("ray") / "effects.log"
    log.touch()
    saved = dict(os.environ)
    os.environ["ACTLOOP_RAY_LOG"] = str(log)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    sys.path.insert(0, str(HERE))  # the runner checks the factory imports here too
    node: dict[str, Any] = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
    system = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={**node, "include_dashboard": False, "_system_config": system},
    )
    for _ in range(2):  # two worker nodes; workers need the "agents" resource, not on the head
        cluster.add_node(**node, resources={"agents": 100})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield RayCluster(cluster, log)
    finally:
        ray.shutdown()
        cluster.shutdown()
        os.environ.clear()
        os.environ.update(saved)
        sys.path.remove(str(HERE))


def check_calls(calls: list[tuple[str, int]], inputs: list[str], killed: set[int]) -> int:
    """Every call of every run ran; a call ran twice only if its first run was in a killed
    process. Returns the number of repeats."""
    counts = Counter(key for key, _ in calls)
    assert set(counts) == {f"{text}-{n}" for text in inputs for n in range(STEPS)}
    for key, count in counts.items():
        pids = [pid for k, pid in calls if k == key]
        assert all(pid in killed for pid in pids[:-1]), (key, pids, killed)
        assert count <= 2, (key, pids)
    return sum(counts.values()) - len(counts)


def wait_for(condition: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_map_runs_every_input_once_in_order(
    ray_cluster: RayCluster, postgres_server: PostgresServer
) -> None:
    runner = ray_cluster.runner(postgres_server.create_database())
    try:
        inputs = [f"map{i}" for i in range(6)]
        results = runner.map([{"input": t} for t in inputs], thread_ids=inputs)
        assert results == [expected(t) for t in inputs]
        nodes = {ray.get(w.where.remote())[1] for w in runner.workers}
        assert nodes <= set(ray_cluster.worker_nodes())  # never on the head (no `agents`)
        assert check_calls(ray_cluster.lines("map"), inputs, set()) == 0
        handle = runner.submit({"input": "map0"}, thread_id="map0")  # already finished
        assert (handle.result(), handle.status()) == (expected("map0"), "finished")
        assert len(ray_cluster.lines("map")) == 6 * STEPS  # read from the store, not run again
    finally:
        runner.shutdown()
    assert make_executor().invoke({"input": "local"}) == expected("local")


def test_a_killed_worker_process_loses_no_run_and_repeats_no_finished_call(
    ray_cluster: RayCluster, postgres_server: PostgresServer
) -> None:
    runner = ray_cluster.runner(postgres_server.create_database())
    try:
        pid, _ = ray.get(runner.workers[0].where.remote())
        inputs = [f"kw{i}" for i in range(6)]
        handles = [runner.submit({"input": t}, thread_id=t) for t in inputs]
        # kill worker 0 once it has finished some calls and is in the middle of others
        wait_for(lambda: sum(p == pid for _, p in ray_cluster.lines("kw")) >= 4, "calls")
        os.kill(pid, signal.SIGKILL)
        assert [h.result(timeout=120) for h in handles] == [expected(t) for t in inputs]
        assert max(h.attempts for h in handles) >= 2  # the kill really hit runs
        check_calls(ray_cluster.lines("kw"), inputs, {pid})
        assert {h.status() for h in handles} == {"finished"}
    finally:
        runner.shutdown()


def test_cancel_then_resume_on_the_cluster(
    ray_cluster: RayCluster, postgres_server: PostgresServer
) -> None:
    runner = ray_cluster.runner(postgres_server.create_database())
    try:
        pids = {ray.get(w.where.remote())[0] for w in runner.workers}
        handle = runner.submit({"input": "cr"}, thread_id="cr")
        assert handle.status() in ("pending", "running")
        wait_for(lambda: len(ray_cluster.lines("cr")) >= 2, "calls")
        handle.cancel()
        with pytest.raises(ray.exceptions.TaskCancelledError):
            handle.result(timeout=60)
        assert handle.status() == "cancelled"
        wait_for(lambda: runner.store.get("cr").status == "failed", "the saved status")  # type: ignore[union-attr]
        done = len(ray_cluster.lines("cr"))
        assert done < STEPS
        again = runner.resume("cr")
        assert again.result(timeout=60) == expected("cr")
        assert again.status() == "finished"
        check_calls(ray_cluster.lines("cr"), ["cr"], pids)  # only the cancelled call reruns
    finally:
        runner.shutdown()


def ended(handle: RunHandle) -> tuple[BaseException | None, float]:
    """Wait for the run: (its error, None when it finished; when it ended)."""
    try:
        handle.result(timeout=120)
    except Exception as exc:
        return exc, time.monotonic()
    return None, time.monotonic()


def test_a_frozen_store_ends_its_run_at_the_deadline_and_holds_up_no_other_run(
    ray_cluster: RayCluster, postgres_server: PostgresServer, frozen_server: PostgresServer
) -> None:
    """Runner A's store (a server of its own) is frozen once A's run saved a call: runner B's runs
    (another store) finish meanwhile, A's workers keep answering, and A's run ends at its deadline
    with StoreTimeoutError; thawed, its lease is given back and it resumes to the uninterrupted
    result, no call whose observation was saved running again."""
    url = frozen_server.create_database()
    runner_a = ray_cluster.runner(url, DEADLINE_FACTORY)
    runner_b = ray_cluster.runner(postgres_server.create_database())
    journal = PostgresCheckpointer(url)
    watcher = ThreadPoolExecutor(1)
    try:
        # every worker started, and each of A's ran a first run (its store open, its code
        # loaded; the warm-ups' results do not matter), so the times below are the run's own
        ray.get([w.where.remote() for w in runner_b.workers], timeout=120)
        for warm in [runner_a.submit({"input": f"fw{i}"}, thread_id=f"fw{i}") for i in range(2)]:
            ended(warm)
        early, late = [f"fb{i}" for i in range(4)], [f"fc{i}" for i in range(4)]
        submitted = time.monotonic()
        waiting = watcher.submit(ended, runner_a.submit({"input": "fz"}, thread_id="fz"))
        handles = [runner_b.submit({"input": t}, thread_id=t) for t in early]
        wait_for(
            lambda: waiting.done() or any(e.kind == "obs" for e in journal.entries("fz")),
            "a saved call",
        )
        assert not waiting.done(), waiting.result()  # still running: it has a call to go
        frozen_server.freeze()
        try:
            handles += [runner_b.submit({"input": t}, thread_id=t) for t in late]
            pings: list[float] = []  # A's workers answer while its run waits: their loop is free
            while not waiting.done():
                sent = time.monotonic()
                ray.get([w.where.remote() for w in runner_a.workers], timeout=10)
                pings.append(time.monotonic() - sent)
                time.sleep(0.1)
            error, at = waiting.result()
            # B's runs, on a store that answers, all finish before A's store is thawed
            assert [h.result(timeout=60) for h in handles] == [expected(t) for t in early + late]
            ray.get([w.where.remote() for w in runner_a.workers], timeout=5)
        finally:
            frozen_server.thaw()
        assert len(pings) >= 3 and max(pings) < 2.0, pings
        # Ray's error is also a StoreTimeoutError, and carries the original with its steps
        assert isinstance(error, ray.exceptions.RayTaskError), repr(error)
        assert isinstance(error, StoreTimeoutError) and isinstance(error.cause, StoreTimeoutError)
        assert "did not answer in time" in str(error.cause)
        assert DEADLINE <= at - submitted < DEADLINE + 3.0
        steps = error.cause.intermediate_steps  # type: ignore[attr-defined]
        assert steps and steps == [  # the calls it finished, in order
            (AgentAction("work", f"fz-{n}", f"step {n}"), f"did(fz-{n})") for n in range(len(steps))
        ]
        assert check_calls(ray_cluster.lines("fb"), early, set()) == 0
        assert check_calls(ray_cluster.lines("fc"), late, set()) == 0

        assert released(journal, "fz")  # given back once the store answers
        record = journal.get("fz")
        assert record is not None and record.status == "running"  # not marked: resumable
        saved = {f"fz-{e.act}" for e in journal.entries("fz") if e.kind == "obs"}
        ran = Counter(key for key, _ in ray_cluster.lines("fz"))
        assert set(ran) == {f"fz-{n}" for n in range(len(ran))} and len(ran) < STEPS, ran
        assert set(ran.values()) == {1} and len(steps) <= len(ran), (steps, ran)
        assert {f"fz-{n}" for n in range(len(steps))} <= saved <= set(ran), (steps, saved, ran)
        assert runner_a.resume("fz").result(timeout=60) == expected("fz")
        # a call runs again only if it ran before and its observation was not saved
        again = Counter(key for key, _ in ray_cluster.lines("fz"))
        keys = [f"fz-{n}" for n in range(STEPS)]
        assert dict(again) == {k: 2 if k in ran and k not in saved else 1 for k in keys}
    finally:
        frozen_server.thaw()
        runner_a.shutdown()
        runner_b.shutdown()
        journal.close()
        watcher.shutdown(wait=False, cancel_futures=True)


def test_a_killed_node_loses_no_run_and_repeats_no_finished_call(
    ray_cluster: RayCluster, postgres_server: PostgresServer
) -> None:
    """Last in this file: it takes a worker node away for good."""
    runner = ray_cluster.runner(postgres_server.create_database())
    try:
        where = [ray.get(w.where.remote()) for w in runner.workers]
        victim = ray_cluster.worker_nodes()[where[0][1]]  # the node of worker 0
        pids = {pid for pid, node in where if node == victim.node_id}
        inputs = [f"kn{i}" for i in range(4)]
        handles = [runner.submit({"input": t}, thread_id=t) for t in inputs]
        wait_for(lambda: sum(p in pids for _, p in ray_cluster.lines("kn")) >= 3, "calls")
        ray_cluster.cluster.remove_node(victim, allow_graceful=False)
        # remove_node kills the node's raylet; its workers notice only at their next check of it
        # (up to a second later), time enough to finish their runs. Kill them too, as a dead
        # machine would.
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert [h.result(timeout=180) for h in handles] == [expected(t) for t in inputs]
        assert max(h.attempts for h in handles) >= 2  # the kill really hit runs
        check_calls(ray_cluster.lines("kn"), inputs, pids)
        moved = {ray.get(w.where.remote())[1] for w in runner.workers}
        assert moved == set(ray_cluster.worker_nodes())  # the one worker node left
    finally:
        runner.shutdown()


def test_shutdown_with_runs_in_flight_gives_each_handle_a_typed_error(
    ray_cluster: RayCluster, postgres_server: PostgresServer
) -> None:
    """Issue 29 (weak item): after `shutdown()` every in-flight handle's `result()` raises
    `RunnerShutdownError` naming its thread (it raised IndexError), and a new runner resumes it."""
    store = postgres_server.create_database()
    runner = ray_cluster.runner(store)
    handles = [runner.submit({"input": f"sd{i}"}, thread_id=f"sd{i}") for i in range(2)]
    wait_for(lambda: all(ray_cluster.lines(f"sd{i}") for i in range(2)), "calls")
    runner.shutdown()
    for i, handle in enumerate(handles):
        with pytest.raises(RunnerShutdownError) as caught:
            handle.result(timeout=60)
        assert caught.value.thread_id == f"sd{i}"
        assert str(caught.value) == (
            f"the RayRunner was shut down before run 'sd{i}' finished; resume it with a new "
            "runner: RayRunner(...).resume(thread_id)"
        )
    with pytest.raises(RunnerShutdownError):
        runner.submit({"input": "late"}, thread_id="late")
    again = ray_cluster.runner(store)
    try:
        assert again.resume("sd0").result(timeout=120) == expected("sd0")
    finally:
        again.shutdown()
