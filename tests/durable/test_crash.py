"""Crash test: a child process runs a journaled agent and is killed with SIGKILL at random moments.

Every trial (seeded) kills the first process at a random time, sometimes kills a resuming process
too, then resumes to the end. The final output and intermediate steps must equal an uninterrupted
run's, and the side-effect log must show each call exactly once, except a call in flight at a kill,
which may appear once more.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from actloop import dumps, loads
from actloop.checkpoint import connect
from support.durable import Stores

from .scenario import STEPS, build

CHILD = Path(__file__).with_name("child.py")
TRIALS = 60
SEED = 20240611


def start(
    db: str, tmp: Path, mode: str, flavour: str, scenario: str = "count", child: Path = CHILD
) -> subprocess.Popen[str]:
    """A child (the script `child`) running `mode` on thread T of store `db` (its log in tmp);
    returns once it is ready to run.

    The child says so on a pipe of its own, so its stdout stays unread until `communicate`.
    """
    args = [sys.executable, str(child), db, str(tmp / "effects.log"), "T"]
    ready, ready_w = os.pipe()
    proc = subprocess.Popen(
        [*args, mode, flavour, scenario],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        pass_fds=[ready_w],
        env={**os.environ, "ACTLOOP_READY_FD": str(ready_w)},
    )
    os.close(ready_w)
    try:
        signal_byte = os.read(ready, 1)
    finally:
        os.close(ready)
    if signal_byte != b"r":
        _, err = proc.communicate()
        raise AssertionError(f"child failed before it was ready: {err}")
    return proc


def run_child(
    db: str,
    tmp: Path,
    mode: str,
    flavour: str,
    kill_at: float | None,
    scenario: str = "count",
    kill_when: Callable[[], bool] | None = None,
    child: Path = CHILD,
) -> tuple[bool, str]:
    """Run a child; SIGKILL it `kill_at` seconds after it is ready (or as soon as `kill_when()`
    holds) unless it ended first. Returns (killed, what it printed)."""
    proc = start(db, tmp, mode, flavour, scenario, child)
    if kill_when is not None:
        deadline = time.monotonic() + 30
        while proc.poll() is None and not kill_when() and time.monotonic() < deadline:
            time.sleep(0.005)
        kill_at = 0.0
    try:
        out, err = proc.communicate(timeout=kill_at if kill_at is not None else 60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
    killed = proc.returncode == -signal.SIGKILL
    assert killed or proc.returncode == 0, err
    return killed, out


def result_of(out: str, db: str) -> dict[str, Any]:
    """The result a child printed at the end.

    A child started after its run was saved as finished prints `finished`: then the result is
    read back from the checkpoint (outputs from the record, steps from the journal).
    """
    lines = out.splitlines()
    if "finished" in lines:
        return saved_result(db)
    line = next(x for x in lines if x.startswith("result "))
    return json.loads(line[len("result ") :])


def saved_result(db: str) -> dict[str, Any]:
    """A finished run's result rebuilt from the checkpoint store."""
    store = connect(db)
    record = store.get("T")
    assert record is not None and record.output is not None
    actions: list[Any] = []
    observations: dict[tuple[int | None, int | None], Any] = {}
    for entry in store.entries("T"):
        if entry.kind == "plan":
            plan = loads(entry.data or "null")["output"]  # a list, or a tuple of two
            actions.extend(plan if isinstance(plan, (list, tuple)) else [])
        elif entry.kind == "obs":
            observations[entry.act, entry.call] = loads(entry.data or "null")
    steps = [[a, observations[key]] for key, a in zip(sorted(observations), actions, strict=True)]
    result = {**loads(record.inputs), **loads(record.output), "intermediate_steps": steps}
    store.close()
    return json.loads(dumps(result))


def segments(log: Path) -> list[list[str]]:
    """The side-effect log split by process."""
    parts: list[list[str]] = []
    for line in log.read_text().splitlines():
        if line.startswith("# process"):
            parts.append([])
        else:
            parts[-1].append(line)
    return parts


def check_effects(log: Path, killed: list[bool], expected: list[str]) -> int:
    """Each call once; a repeat only of a call that was among the last ones of a killed process.

    Returns the number of repeats.
    """
    parts = segments(log)
    counts = Counter(line for part in parts for line in part)
    assert set(counts) == set(expected)
    for key, count in counts.items():
        if count == 1:
            continue
        # every earlier occurrence must be a call in flight when its process was killed
        holders = [i for i, part in enumerate(parts) if key in part]
        for i in holders[:-1]:
            assert killed[i], (key, i)
            assert key in parts[i][-2:], (key, parts[i][-4:])
        assert count == len(holders)
    return sum(counts.values()) - len(counts)


def reference(tmp: Path) -> tuple[dict[str, Any], list[str]]:
    """An uninterrupted run without a checkpointer: its result (as JSON) and its effects."""
    log = tmp / "reference.log"
    result = build(log).invoke({"input": "go"})
    return json.loads(dumps(result)), log.read_text().splitlines()


def calibrated(stores: Stores, tmp: Path, expected: Any) -> float:
    """Seconds an uninterrupted checkpointed child takes from "ready" to its exit."""
    tmp.mkdir()
    proc = start(stores.target(tmp), tmp, "invoke", "sync")
    started = time.monotonic()
    out, _ = proc.communicate(timeout=60)
    span = time.monotonic() - started
    assert result_of(out, stores.target(tmp)) == expected
    return span


def test_sigkill_at_random_moments_then_resume_equals_uninterrupted(
    stores: Stores, tmp_path: Path
) -> None:
    expected, effects = reference(tmp_path)
    assert len(effects) == STEPS
    # Kill moments are seeded fractions of how long an uninterrupted child takes (from "ready" to
    # its exit) on this machine right now, with this store, so most kills land mid-run whether
    # the machine is idle or loaded and whichever store the journal goes to. The fastest of three
    # runs: one slowed by a burst of load elsewhere would push kills past the runs' end.
    span = min(calibrated(stores, tmp_path / f"calibration{i}", expected) for i in range(3))
    rng = random.Random(SEED)
    kills = repeats = 0
    for trial in range(TRIALS):
        tmp = tmp_path / f"t{trial}"
        tmp.mkdir()
        flavour = "async" if trial % 3 == 2 else "sync"
        db = stores.target(tmp)
        killed, out = run_child(db, tmp, "invoke", flavour, rng.uniform(0.0, 0.7) * span)
        history = [killed]
        if not killed:  # it ended before its kill (the machine got quicker since): kill sooner
            span *= 0.8
        if killed and rng.random() < 0.4:  # kill a resuming process too
            killed, out = run_child(db, tmp, "resume", flavour, rng.uniform(0.0, 0.6) * span)
            history.append(killed)
        if killed:
            killed, out = run_child(db, tmp, "resume", flavour, None)
            history.append(killed)
        kills += sum(history)
        assert result_of(out, db) == expected, trial
        repeats += check_effects(tmp / "effects.log", history, effects)
    print(f"trials={TRIALS} kills={kills} repeated in-flight calls={repeats}")
    assert kills >= TRIALS * 0.8, kills  # most trials really crashed mid-run
    # Whether a random kill lands inside a 2 ms tool call depends on the machine's load (0 of 83
    # kills did under a load of 12), so it is not asserted here: a kill inside a call is made
    # certain in test_approval.py (killed once the call's effect is logged, the call reruns once).
