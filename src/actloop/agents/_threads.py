"""LangGraph threads on actloop's durable runs: a conversation is one durable run per turn.

An actloop thread holds one run; a LangGraph thread holds a conversation. So turn 1 of thread
`t` is the durable run `t`, turn n the run `t#n`, and a turn starts from the state the previous
turn finished with (its saved outputs) plus the new input's messages. A turn that did not finish
(paused for approval, failed, killed) goes on with `Command(resume=...)` or a `None` input, as
in LangGraph; the journal then replays its finished calls instead of running them again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, cast

from actloop.agents._interrupts import (
    NODE_TOOL,
    PAUSE_TOOL,
    asked,
    interrupt_resume,
    node_name,
    pending_interrupts,
)
from actloop.agents._interrupts import next_node as next_node_of
from actloop.agents.types import Command, Interrupt
from actloop.exceptions import CheckpointError
from actloop.executor import PAUSED_KEY, Resume

if TYPE_CHECKING:
    from actloop.checkpoint import BaseCheckpointer, ThreadHistory

__all__ = ["PregelTask", "StateSnapshot", "Turn", "alatest", "latest"]

Latest = tuple[int, "ThreadHistory | None"]
"""How many turns the thread has, and the history of the last one (None: a new thread)."""


class PregelTask(NamedTuple):
    """One task of a paused step (LangGraph's `PregelTask`: a tool call of the tools node)."""

    id: str
    name: str
    path: tuple[Any, ...]
    interrupts: tuple[Interrupt, ...] = ()
    result: Any = None
    error: Exception | None = None
    state: Any = None


class StateSnapshot(NamedTuple):
    """A thread's state as `get_state` gives it (LangGraph's `StateSnapshot` fields)."""

    values: dict[str, Any]
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any] | None
    created_at: str | None
    parent_config: dict[str, Any] | None
    tasks: tuple[Any, ...]
    interrupts: tuple[Interrupt, ...]


def run_id(thread: str, turn: int) -> str:
    """The durable run of turn `turn` (1-based) of `thread`."""
    return thread if turn == 1 else f"{thread}#{turn}"


def latest(store: BaseCheckpointer, thread: str) -> Latest:
    """The thread's turn count and last turn, read from `store`."""
    from actloop.checkpoint import read_thread

    turns = 0
    while store.get(run_id(thread, turns + 1)) is not None:
        turns += 1
    return turns, (read_thread(store, run_id(thread, turns)) if turns else None)


async def alatest(store: BaseCheckpointer, thread: str) -> Latest:
    """Async `latest`."""
    from actloop.checkpoint import aread_thread

    turns = 0
    while await store.aget(run_id(thread, turns + 1)) is not None:
        turns += 1
    return turns, (await aread_thread(store, run_id(thread, turns)) if turns else None)


class Turn:
    """One run of a thread: which durable run it is and what it starts from."""

    def __init__(self, thread: str, spec: Any, store: BaseCheckpointer | None = None) -> None:
        self.thread = thread
        self.spec = spec
        self.store = store
        """Where the thread is saved (a pause on a tool's interrupt reads its state there)."""
        self.turns = 0
        self.last: ThreadHistory | None = None
        self.run_id = thread

    def begin(self, found: Latest) -> None:
        self.turns, self.last = found

    def input(self, input: Any) -> Any:
        """The executor's input: the new turn's state, or a `Resume` of the unfinished one."""
        last = self.last
        unfinished = last is not None and last.status != "finished"
        if isinstance(input, Command) or input is None:
            if not unfinished:
                raise CheckpointError(f"thread {self.thread!r} has no interrupted run to resume")
            assert last is not None
            self.run_id = run_id(self.thread, self.turns)
            return resume_of(input, last, self.run_id)
        if unfinished:
            assert last is not None
            raise CheckpointError(
                f"thread {self.thread!r} has a {last.status} run: resume it with "
                "Command(resume=...) (or None) before sending new input"
            )
        self.run_id = run_id(self.thread, self.turns + 1)
        state = dict(last.output or {}) if last is not None else {}
        given = dict(cast("dict[str, Any]", input))
        messages = [*state.get("messages", []), *_listed(given.get("messages", []))]
        return {**state, **given, "messages": messages}

    def outputs(
        self, outputs: dict[str, Any], state: dict[str, Any], history: Any = None
    ) -> dict[str, Any]:
        """What `invoke` returns: the state; a paused run's state with its `__interrupt__`
        (a pause on interrupts: the state the thread's `history`, read here when not given,
        holds, the step's finished calls with it)."""
        if outputs.get("status") == "paused" and PAUSED_KEY in outputs:
            pending = outputs[PAUSED_KEY]
            if _static(pending):  # LangGraph's invoke gives a static interrupt's state only
                return dict(state)
            if self._reads(outputs) and history is None:
                from actloop.checkpoint import read_thread

                assert self.store is not None
                history = read_thread(self.store, self.run_id)
            if history is not None:
                state = paused_values(self.spec, history)
            return {**state, "__interrupt__": self.interrupts(pending, state)}
        return outputs

    async def aoutputs(self, outputs: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
        """Async `outputs` (the thread read with the store's async API)."""
        history = None
        if self._reads(outputs):
            from actloop.checkpoint import aread_thread

            assert self.store is not None
            history = await aread_thread(self.store, self.run_id)
        return self.outputs(outputs, state, history)

    def _reads(self, outputs: dict[str, Any]) -> bool:
        """Whether the outputs are a pause on interrupts, whose state the store holds."""
        pending = outputs.get(PAUSED_KEY) if outputs.get("status") == "paused" else None
        return bool(pending) and bool(asked(pending)) and self.store is not None

    def interrupts(self, pending: list[dict[str, Any]], state: Any) -> list[Interrupt]:
        """The interrupts of a run paused on `pending` calls: tools' `interrupt()`s, then the
        human-in-the-loop approvals (one `Interrupt` for them all)."""
        from actloop.agents.middleware.human_in_the_loop import interrupts_of

        found = pending_interrupts(self.run_id, pending)
        gated = [e for e in pending if not e.get("questions")]
        return [*found, *(interrupts_of(self.spec, gated, state) if gated else [])]

    def snapshot(self, found: Latest, config: dict[str, Any]) -> StateSnapshot:
        """The thread's `StateSnapshot` (a paused turn: the state it started from, the tools
        node next, and its interrupts)."""
        self.begin(found)
        last = self.last
        if last is None:
            return StateSnapshot({}, (), config, None, None, None, (), ())
        if last.status == "finished":
            values = dict(last.output or {})
            if values.get("structured_response") is not None:
                values["structured_response"] = self.spec.structured.revived(
                    values["structured_response"]
                )
            return StateSnapshot(values, (), config, None, None, None, (), ())
        interrupts: tuple[Interrupt, ...] = ()
        next_node = "tools"
        if last.status == "paused" and _static(last.pending):
            next_node = next_node_of(self.spec, last.pending[0]["tool_input"]["to"])
        elif last.status == "paused":
            from actloop.agents.middleware.human_in_the_loop import paused_node

            self.run_id = last.thread_id
            interrupts = tuple(self.interrupts(last.pending, last.inputs))
            node = [e["tool_input"]["to"] for e in last.pending if e.get("tool") == NODE_TOOL]
            if node:
                next_node = node_name(self.spec, node[0])
            elif not asked(last.pending):
                next_node = paused_node(self.spec) or next_node
        values = paused_values(self.spec, last)
        tasks = tasks_of(self.spec, last) if last.status == "paused" else ()
        return StateSnapshot(values, (next_node,), config, None, None, None, tasks, interrupts)


def _act(call_id: Any) -> int:
    """The step of a journal call id (`"{step}-{index}"`)."""
    return int(str(call_id).split("-", 1)[0])


def paused_values(spec: Any, last: ThreadHistory) -> dict[str, Any]:
    """The state a paused turn stopped at, as LangGraph's snapshot shows it: the turn's input,
    the model turns and tool results of its finished steps, then the messages of the step
    waiting (the model's calls, not yet run), replayed as a resumed run replays them."""
    from actloop.agents._graph import GraphRun
    from actloop.agents.middleware.types import Runtime
    from actloop.steps import ToolAgentAction

    waiting = min((_act(p["id"]) for p in last.pending), default=None)
    run = GraphRun(spec, Runtime(), 0, {})
    steps = [
        (
            ToolAgentAction(c.tool, c.tool_input, "", c.message_log, _call_id(c.tool_input)),
            c.observation,
        )
        for c in last.calls
        if c.finished and (waiting is None or _act(c.id) <= waiting)
    ]
    waiting_log = [
        m
        for c in last.calls
        if waiting is not None and _act(c.id) == waiting
        for m in c.message_log
    ]
    return run.replay(steps, dict(last.inputs), waiting_log)


def _call_id(tool_input: Any) -> str:
    """The model's id of a planned call (its input is the model's tool call)."""
    if not isinstance(tool_input, dict):
        return ""
    return str(cast("dict[str, Any]", tool_input).get("id", ""))


def _static(pending: list[dict[str, Any]]) -> bool:
    """Whether a paused run waits at a static interrupt (its pause is the one pending call)."""
    return any(entry.get("tool") == PAUSE_TOOL for entry in pending)


def _listed(value: Any) -> list[Any]:
    return cast("list[Any]", value) if isinstance(value, list) else [value]


def tasks_of(spec: Any, last: ThreadHistory) -> tuple[PregelTask, ...]:
    """The tools node's tasks of the step a turn paused on tools' interrupts waits in, one per
    call (LangGraph's `Send`s): a finished call's result, a waiting call's interrupts. Other
    pauses: none (approvals and static interrupts wait between nodes)."""
    from actloop.agents._state import command_of

    if not asked(last.pending):
        return ()
    waiting = min(_act(p["id"]) for p in last.pending)
    pending = {str(p["id"]): p for p in last.pending}
    step = [c for c in last.calls if _act(c.id) == waiting]
    nodes = [p for p in last.pending if p.get("tool") == NODE_TOOL]
    if nodes:  # a node's interrupt: its one task
        name = node_name(spec, nodes[0]["tool_input"]["to"])
        found = tuple(pending_interrupts(last.thread_id, nodes))
        return (PregelTask(str(nodes[0]["id"]), name, ("__pregel_pull", name), found),)
    return tuple(
        PregelTask(
            call.id,
            "tools",
            ("__pregel_push", index, False),
            tuple(pending_interrupts(last.thread_id, [pending[call.id]]))
            if call.id in pending
            else (),
            _result(command_of(call.observation)) if call.finished else None,
        )
        for index, call in enumerate(step)
    )


def _result(observation: Any) -> Any:
    """A finished call's write, as LangGraph's task shows it."""
    from actloop.messages import ToolMessage

    if isinstance(observation, ToolMessage):
        return {"messages": [observation]}
    return observation


def resume_of(command: Command | None, last: ThreadHistory, run: str) -> Resume:
    """The executor's `Resume` for a `Command(resume=...)` (None: go on, deciding nothing)."""
    if _static(last.pending):  # a static interrupt goes on with None or any Command
        return Resume.of(approve=True)
    if command is None or command.resume is None:
        return Resume()
    answered = interrupt_resume(run, command.resume, last.pending)
    if answered is not None:
        return answered
    from actloop.agents.middleware.human_in_the_loop import decisions_to_resume

    return decisions_to_resume(command.resume, last.pending)
