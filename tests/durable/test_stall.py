"""A worker that stalls past its lease (SIGSTOP) loses the run to another, and when it wakes
(SIGCONT) its writes are refused: no step is recorded twice and the run ends as if uninterrupted."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from actloop import dumps
from support.durable import Stores

from .scenario import build, mark_process
from .test_crash import reference, start

TTL = 1.0


def test_a_stalled_worker_loses_its_lease_and_its_late_writes_are_refused(
    stores: Stores, tmp_path: Path
) -> None:
    expected, _ = reference(tmp_path)
    db = stores.target(tmp_path)
    store = stores.open(tmp_path)
    store.list_runs()  # connected before the child starts: polling must be quick
    os.environ["ACTLOOP_TEST_TTL"] = str(TTL)
    try:
        proc = start(db, tmp_path, "invoke", "sync", "stall")
    finally:
        del os.environ["ACTLOOP_TEST_TTL"]
    log = tmp_path / "effects.log"
    try:
        # Stop the worker inside its second call (each works 0.2 s after logging its effect):
        # stopped there, it has checked its lease already, and on waking it may only try to save
        # that call's result, which is refused. (Stopped between the check and the effect, it
        # would run the call on waking: no process can see a SIGSTOP coming.)
        while "add:a1" not in log.read_text() and proc.poll() is None:
            time.sleep(0.001)
        proc.send_signal(signal.SIGSTOP)
        stalled = store.entries("T")
        assert proc.poll() is None and {e.epoch for e in stalled} == {1}
        time.sleep(TTL * 1.5)  # the stalled worker's lease expires (it cannot renew it)
        mark_process(log)
        result = build(log, store).resume("T")  # takes the thread over at epoch 2
        assert json.loads(dumps(result)) == expected
        effects = log.read_text()
        written = store.entries("T")
    finally:
        proc.send_signal(signal.SIGCONT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "LeaseLostError: thread 'T': the lease of epoch 1" in err
    assert store.entries("T") == written  # the woken worker wrote nothing more
    assert log.read_text() == effects  # and started no tool call
    assert written[: len(stalled)] == stalled
    assert {e.epoch for e in written[len(stalled) :]} == {2}
    record = store.get("T")
    assert record is not None and record.status == "finished"
