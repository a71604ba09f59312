"""test_crash's kill -9 trial for a `create_agent` agent: a child process runs a checkpointed
thread (create_agent_child.py) and is killed with SIGKILL at seeded random moments, then goes on
with `invoke(None, config)`.

The final state must equal an uninterrupted run's without a checkpointer, message by message
(the model's reply ids, tool call ids and arguments, ToolMessage names, contents and statuses,
the final answer; a ToolMessage's own id is a uuid4 LangGraph draws, so only its form is
compared), and the side-effect log must show each call exactly once, except a call in flight at
a kill, which may appear once more (test_crash's `check_effects`). Beyond test_crash, before each
process starts the journal is read: no call whose result it holds runs again in that process.
"""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path
from typing import Any

from actloop.checkpoint import connect
from support.durable import Stores

from . import test_crash as crash
from .scenario import STEPS

CHILD = Path(__file__).with_name("create_agent_child.py")
TRIALS = 20
SEED = 20261206
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def state_of(out: str) -> dict[str, Any]:
    """The final state a child printed, each ToolMessage's uuid4 id checked and blanked."""
    line = next(x for x in out.splitlines() if x.startswith("result "))
    state = json.loads(line[len("result ") :])
    for message in state["messages"]:
        fields = message["kwargs"]
        if fields["type"] == "tool":
            assert UUID.match(fields["id"]), fields
            fields["id"] = "<uuid>"
    return state


def saved_calls(db: str) -> set[str]:
    """The calls whose ToolMessage the thread's journal holds (`name:input`, as logged)."""
    store = connect(db)
    try:
        found = [
            json.loads(e.data or "null")["kwargs"] for e in store.entries("T") if e.kind == "obs"
        ]
    finally:
        store.close()
    return {f"{m['name']}:{m['tool_call_id']}" for m in found}


def run_checked(
    db: str, tmp: Path, mode: str, flavour: str, kill_at: float | None
) -> tuple[bool, str]:
    """test_crash's `run_child` of create_agent_child.py, checking that no call whose result the
    journal held before the process started runs again in it."""
    saved = saved_calls(db)
    ran = crash.run_child(db, tmp, mode, flavour, kill_at, child=CHILD)
    assert not saved & set(crash.segments(tmp / "effects.log")[-1]), saved
    return ran


def reference(tmp: Path) -> tuple[dict[str, Any], list[str]]:
    """An uninterrupted run without a checkpointer: its final state and its effects (sorted:
    the two calls of a step run at once, in either order)."""
    proc = crash.start("", tmp, "plain", "sync", child=CHILD)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    effects = [x for x in (tmp / "effects.log").read_text().splitlines() if x[0] != "#"]
    return state_of(out), sorted(effects)


def calibrated(stores: Stores, tmp: Path, expected: dict[str, Any]) -> float:
    """Seconds an uninterrupted checkpointed child takes from "ready" to its exit."""
    tmp.mkdir()
    proc = crash.start(stores.target(tmp), tmp, "invoke", "sync", child=CHILD)
    started = time.monotonic()
    out, _ = proc.communicate(timeout=60)
    span = time.monotonic() - started
    assert state_of(out) == expected
    return span


def test_expected_run_shape(tmp_path: Path) -> None:
    expected, effects = reference(tmp_path)
    messages = [m["kwargs"] for m in expected["messages"]]
    calls = [c["id"] for m in messages if m["type"] == "ai" for c in m["tool_calls"]]
    order = ["a0", "a1", "a2", "m2", "a4", "a5", "m5", "a7", "a8", "m8", "a10", "a11", "m11"]
    order += ["a13", "a14", "m14"]
    assert calls == order
    names = {"a": "add", "m": "mul"}
    assert effects == sorted(f"{names[key[0]]}:{key}" for key in order)
    results = [m for m in messages if m["type"] == "tool"]
    assert [(m["tool_call_id"], m["name"], m["content"], m["status"]) for m in results] == [
        (key, names[key[0]], f"{names[key[0]]}({key})", "success") for key in order
    ]
    assert messages[-1]["content"] == "go: " + " ".join(m["content"] for m in results)
    assert [m["id"] for m in messages if m["type"] != "tool"] == [
        "h1",
        *(f"r{n}" for n in (0, 1, 2, 4, 5, 7, 8, 10, 11, 13, 14, 16)),
    ]


def test_create_agent_sigkill_at_random_moments_then_resume_equals_uninterrupted(
    stores: Stores, tmp_path: Path
) -> None:
    (tmp_path / "reference").mkdir()
    expected, effects = reference(tmp_path / "reference")
    assert len(effects) == STEPS
    # kill moments are seeded fractions of an uninterrupted checkpointed child's time (as in
    # test_crash), so most kills land mid-run whatever the store; the fastest of three runs, so
    # a calibration slowed by a burst of load elsewhere does not push kills past the run's end
    span = min(calibrated(stores, tmp_path / f"calibration{i}", expected) for i in range(3))
    rng = random.Random(SEED)
    kills = repeats = 0
    for trial in range(TRIALS):
        tmp = tmp_path / f"t{trial}"
        tmp.mkdir()
        flavour = "async" if trial % 3 == 2 else "sync"
        db = stores.target(tmp)

        killed, out = run_checked(db, tmp, "invoke", flavour, rng.uniform(0.0, 0.7) * span)
        history = [killed]
        if not killed:  # it ended before its kill (the machine got quicker since): kill sooner
            span *= 0.8
        if killed and rng.random() < 0.4:  # kill a resuming process too
            killed, out = run_checked(db, tmp, "resume", flavour, rng.uniform(0.0, 0.6) * span)
            history.append(killed)
        if killed:
            killed, out = run_checked(db, tmp, "resume", flavour, None)
            history.append(killed)
        kills += sum(history)
        assert state_of(out) == expected, trial
        repeats += crash.check_effects(tmp / "effects.log", history, effects)
    print(f"trials={TRIALS} kills={kills} repeated in-flight calls={repeats}")
    assert kills >= TRIALS * 0.8, kills  # most trials really crashed mid-run


def test_a_child_started_after_the_turn_finished_gives_its_saved_state(
    stores: Stores, tmp_path: Path
) -> None:
    """A resuming child finding the turn finished (its process was killed after the save) prints
    `get_state`'s values: the same state, and no call runs again."""
    (tmp_path / "reference").mkdir()
    expected, effects = reference(tmp_path / "reference")
    db = stores.target(tmp_path)
    first = crash.run_child(db, tmp_path, "invoke", "sync", None, child=CHILD)
    again = crash.run_child(db, tmp_path, "resume", "async", None, child=CHILD)
    assert first[0] is False and again[0] is False
    assert state_of(first[1]) == state_of(again[1]) == expected
    assert crash.segments(tmp_path / "effects.log")[1] == []
    assert crash.check_effects(tmp_path / "effects.log", [False, False], effects) == 0
