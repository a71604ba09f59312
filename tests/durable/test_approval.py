"""Human approval of tool calls, and calls that are not safe to repeat after a crash."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from actloop import (
    AgentAction,
    AgentExecutor,
    AgentFinish,
    BaseSingleActionAgent,
    CheckpointError,
    Tool,
)
from actloop.checkpoint import BaseCheckpointer
from actloop.testing import ScriptedMultiActionAgent
from support.durable import Stores

from .scenario import TwoCalls, side_effect_tool
from .test_crash import run_child

REJECTED = "The call to tool 'send' was rejected by a human reviewer and did not run."


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


class TwoSends(BaseSingleActionAgent):
    """Sends "one", then "two", then finishes with the observations; counts its plans."""

    def __init__(self) -> None:
        self.plans = 0

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        self.plans += 1
        if len(intermediate_steps) < 2:
            text = ["one", "two"][len(intermediate_steps)]
            return AgentAction("send", text, f"send {text}")
        return AgentFinish({"output": " | ".join(o for _, o in intermediate_steps)}, "")


def setup(stores: Stores, tmp_path: Path) -> tuple[AgentExecutor, TwoSends, BaseCheckpointer]:
    store = stores.open(tmp_path)
    send = side_effect_tool("send", tmp_path / "effects.log", delay=0.0, requires_approval=True)
    agent = TwoSends()
    executor = AgentExecutor(
        agent=agent, tools=[send], checkpointer=store, return_intermediate_steps=True
    )
    return executor, agent, store


def effects(tmp_path: Path) -> list[str]:
    log = tmp_path / "effects.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if not line.startswith("# process")]


def paused(stores: Stores, tmp_path: Path) -> Callable[[], bool]:
    """True once thread T of the store of tmp_path is saved as paused."""
    target = stores.target(tmp_path)
    opened: list[BaseCheckpointer] = []

    def check() -> bool:
        if stores.kind == "sqlite" and not Path(target).exists():
            return False  # opening the file would create it before the child does
        if not opened:
            opened.append(stores.open(tmp_path))
        record = opened[0].get("T")
        return record is not None and record.status == "paused"

    return check


def pending(ident: str, text: str) -> list[dict[str, Any]]:
    return [{"id": ident, "tool": "send", "tool_input": text, "log": f"send {text}"}]


def test_approve_reject_edit(stores: Stores, tmp_path: Path) -> None:
    executor, agent, store = setup(stores, tmp_path)
    first = executor.invoke({"input": "q"}, cfg("T"))
    assert first == {
        "input": "q",
        "pending_approvals": pending("0-0", "one"),
        "thread_id": "T",
        "status": "paused",
        "intermediate_steps": [],
    }
    assert effects(tmp_path) == []
    record = store.get("T")
    assert record is not None and record.status == "paused"
    second = executor.resume("T", approve=["0-0"])
    assert second["pending_approvals"] == pending("1-0", "two")
    assert second["intermediate_steps"] == [(AgentAction("send", "one", "send one"), "send(one)")]
    edited = executor.resume("T", edit={"1-0": "TWO!"})
    assert edited == {
        "input": "q",
        "output": "send(one) | send(TWO!)",
        "intermediate_steps": [
            (AgentAction("send", "one", "send one"), "send(one)"),
            (AgentAction("send", "TWO!", "send two"), "send(TWO!)"),
        ],
    }
    assert effects(tmp_path) == ["send:one", "send:TWO!"]
    assert agent.plans == 3


def test_reject_with_and_without_reason(stores: Stores, tmp_path: Path) -> None:
    executor, _, _ = setup(stores, tmp_path)
    executor.invoke({"input": "q"}, cfg("R"))
    executor.resume("R", reject=["0-0"])
    result = executor.resume("R", reject={"1-0": "not today"})
    assert result["output"] == f"{REJECTED} | {REJECTED} Reason: not today"
    assert effects(tmp_path) == []


def test_resume_without_decisions_stays_paused(stores: Stores, tmp_path: Path) -> None:
    executor, agent, _ = setup(stores, tmp_path)
    executor.invoke({"input": "q"}, cfg("W"))
    again = executor.resume("W")
    assert again["pending_approvals"] == pending("0-0", "one")
    assert agent.plans == 1  # the saved plan was not asked for again


def test_wrong_decisions_are_clear_errors(stores: Stores, tmp_path: Path) -> None:
    executor, _, _ = setup(stores, tmp_path)
    executor.invoke({"input": "q"}, cfg("X"))
    with pytest.raises(CheckpointError, match=r"no call waiting .* id 9-9; waiting: \['0-0'\]"):
        executor.resume("X", approve=["9-9"])
    with pytest.raises(CheckpointError, match="more than one decision"):
        executor.resume("X", approve=["0-0"], reject=["0-0"])
    assert executor.resume("X", approve=True)["pending_approvals"] == pending("1-0", "two")


def test_multi_action_step_waits_for_every_approval(stores: Stores, tmp_path: Path) -> None:
    def observations(steps: list[tuple[AgentAction, Any]]) -> AgentFinish:
        return AgentFinish({"output": [o for _, o in steps]}, "")

    both = [AgentAction("send", "a", "send a"), AgentAction("free", "b", "free b")]
    agent = ScriptedMultiActionAgent([both, observations])
    store = stores.open(tmp_path)
    log = tmp_path / "effects.log"
    tools = [
        side_effect_tool("send", log, delay=0.0, requires_approval=True),
        side_effect_tool("free", log, delay=0.0),
    ]
    executor = AgentExecutor(agent=agent, tools=tools, checkpointer=store)
    paused = executor.invoke({"input": "q"}, cfg("M"))
    assert paused["pending_approvals"] == [
        {"id": "0-0", "tool": "send", "tool_input": "a", "log": "send a"}
    ]
    assert effects(tmp_path) == []  # nothing of the step ran, not even the free call
    assert executor.resume("M", approve=True)["output"] == ["send(a)", "free(b)"]


async def test_async_approval(stores: Stores, tmp_path: Path) -> None:
    executor, _, _ = setup(stores, tmp_path)
    paused = await executor.ainvoke({"input": "q"}, cfg("A"))
    assert paused["status"] == "paused"
    await executor.aresume("A", approve=True)
    result = await executor.aresume("A", approve=["1-0"])
    assert result["output"] == "send(one) | send(two)"


def test_crash_while_waiting_for_approval_then_approve(stores: Stores, tmp_path: Path) -> None:
    db = stores.target(tmp_path)
    killed, _ = run_child(
        db, tmp_path, "invoke", "sync", None, "pause-wait", paused(stores, tmp_path)
    )
    assert killed
    executor, _, _ = setup(stores, tmp_path)
    assert executor.resume("T", approve=["0-0"])["pending_approvals"] == pending("1-0", "two")
    assert effects(tmp_path) == ["send:one"]


def test_crash_during_an_approved_call_resumes_without_asking_again(
    stores: Stores, tmp_path: Path
) -> None:
    executor, _, _ = setup(stores, tmp_path)
    executor.invoke({"input": "q"}, cfg("T"))
    # the child approves and is killed while `send` works (0.3 s): the decision is saved
    db = stores.target(tmp_path)
    killed, _ = run_child(
        db, tmp_path, "resume", "sync", None, "approve", lambda: bool(effects(tmp_path))
    )
    assert killed
    assert effects(tmp_path) == ["send:one"]
    second = executor.resume("T")  # no new decision needed for 0-0: it reruns (at-least-once)
    assert second["pending_approvals"] == pending("1-0", "two")
    assert effects(tmp_path) == ["send:one", "send:one"]


def test_unsafe_call_in_flight_at_a_crash_stops_with_a_clear_error(
    stores: Stores, tmp_path: Path
) -> None:
    killed, _ = run_child(stores.target(tmp_path), tmp_path, "invoke", "sync", None, "unsafe")
    assert killed  # the tool killed its own process after its side effect
    assert effects(tmp_path) == ["charge:one", "charge:two"]
    charge = Tool(name="charge", func=lambda t: f"charged {t}", description="charge")
    charge.idempotent = False  # type: ignore[attr-defined]
    store = stores.open(tmp_path)
    executor = AgentExecutor(agent=TwoCalls("charge"), tools=[charge], checkpointer=store)
    message = (
        r"tool 'charge' \(call 1-0\) was running when thread 'T' stopped, and it is not safe "
        r"to repeat \(idempotent=False\)"
    )
    with pytest.raises(CheckpointError, match=message):
        executor.resume("T")
    record = store.get("T")
    assert record is not None and record.status == "failed"
    result = executor.resume("T", reject={"1-0": "it went through"})
    reason = "The call to tool 'charge' was rejected by a human reviewer and did not run."
    assert result["output"] == f"charged one {reason} Reason: it went through"
