"""What a server process reads before it goes on with another's run: `held` (a thread's lease as
it stands) and `list_running` (the runs left `running`), on both stores, sync and async."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from actloop.checkpoint import BaseCheckpointer, Owner, RunRecord
from support.durable import Stores

HOST = socket.gethostname()
_T = TypeVar("_T")


async def _closing(store: BaseCheckpointer, call: Awaitable[_T]) -> _T:
    """`await call`, then the store's async pool closed within the same loop."""
    try:
        return await call
    finally:
        await store.aclose()


def _dead_owner() -> Owner:
    """An owner on this host whose process has exited."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], stdout=-1)
    return Owner(int(proc.stdout), HOST, "")


def test_held_tells_the_holder_its_epoch_and_whether_it_keeps_others_out(
    stores: Stores, tmp_path: Path
) -> None:
    store = stores.open(tmp_path, lease_ttl=60.0)
    never = store.held("never")
    assert (never.owner, never.epoch, never.live()) == (None, 0, False)
    me = Owner.current()
    lease = store.acquire("t", me)
    held = store.held("t")
    assert (held.owner, held.epoch, held.live()) == (me, 1, True)
    assert held.expires is not None and held.expires > (held.now or 0.0)
    store.release(lease)
    released = asyncio.run(_closing(store, store.aheld("t")))
    assert (released.owner, released.epoch, released.live()) == (None, 1, False)
    gone = _dead_owner()
    store.acquire("dead", gone)
    dead = store.held("dead")
    assert (dead.owner, dead.epoch, dead.live()) == (gone, 1, False)  # unexpired, owner dead


def test_list_running_lists_only_running_runs_newest_first(stores: Stores, tmp_path: Path) -> None:
    store = stores.open(tmp_path)
    for name, status in [("a", "running"), ("b", "paused"), ("c", "running"), ("d", "failed")]:
        store.create(RunRecord(name, "running", "{}", "{}"))
        if status != "running":
            store.update(name, status)
    store.update("a", "running")  # now the most recently updated
    assert [r.thread_id for r in store.list_running()] == ["a", "c"]
    found = asyncio.run(_closing(store, store.alist_running()))
    assert [(r.thread_id, r.status, r.owner) for r in found] == [
        ("a", "running", None),
        ("c", "running", None),
    ]
