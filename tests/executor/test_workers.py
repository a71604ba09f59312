"""The daemon worker pool: bounded, reused, and never blocked by calls that hang."""

from __future__ import annotations

import threading

from actloop.runnables import _workers


def test_pool_is_bounded_and_queued_calls_still_run() -> None:
    gate = threading.Event()
    futures = [_workers.submit(gate.wait, 10) for _ in range(_workers.MAX_WORKERS + 40)]
    assert _workers._started <= _workers.MAX_WORKERS  # pyright: ignore[reportPrivateUsage]
    gate.set()
    assert [f.result(timeout=10) for f in futures] == [True] * (_workers.MAX_WORKERS + 40)


def test_idle_workers_are_reused() -> None:
    first = _workers.submit(lambda: threading.current_thread().name).result(timeout=5)
    started = _workers._started  # pyright: ignore[reportPrivateUsage]
    names = {
        _workers.submit(lambda: threading.current_thread().name).result(timeout=5)
        for _ in range(20)
    }
    assert _workers._started == started  # pyright: ignore[reportPrivateUsage]
    assert names == {first} or all(n == "actloop-worker" for n in names)
    assert all(t.daemon for t in threading.enumerate() if t.name == "actloop-worker")
