"""LangGraph's interrupts on actloop's durable pause: static ones (`interrupt_before`/
`interrupt_after` of "model" or "tools") and `interrupt(value)` called in a tool.

A static interrupt is a plan of one action: a call of the `PauseNode`, which needs approval, so
the durable run pauses on it as on any gated call (its journal keeps what the run did so far).
The call's input says where the graph goes on (`to`); its message log holds the state's messages,
so a resumed run, which replays its journal, has them back. `invoke(None, config)` (or any
`Command`) approves it: the pause "runs" (nothing), and the next plan goes on at `to`. A run
without a checkpointer and a thread id cannot pause: it ends there, as LangGraph's does.

`interrupt(value)` in a tool call is the tool asking a person (`NeedsInput`): the durable run
journals an "ask" entry (the value, and the resume values the call had) and pauses once the
step's other calls are done (their results are journaled, never run again). `Command(resume=v)`
is the answer: the call runs again and its n-th `interrupt()` returns the n-th resume value
(LangGraph's replay). Without a durable run the call ends with an `Interrupted` marker and the
run ends with `__interrupt__` in its state, as LangGraph's does without a checkpointer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar, cast

from actloop.agents.types import GraphInterrupt, Interrupt
from actloop.tools._input import NeedsInput, Question, current_input

if TYPE_CHECKING:
    from actloop.executor import Resume

__all__ = [
    "NODE_TOOL",
    "PAUSE_TOOL",
    "Interrupted",
    "NodePause",
    "PauseNode",
    "Scratch",
    "ToolInterrupt",
    "interrupted",
    "is_pause",
    "next_node",
    "validated",
]

T = TypeVar("T")

PAUSE_TOOL = "__interrupt__"
"""The pause's tool name (no user tool may have it: LangGraph reserves it too)."""
NODE_TOOL = "__interrupt_node__"
"""The tool a node's `interrupt()` calls: it asks, and answers with the node's resume values."""

NODES = ("model", "tools")


def validated(names: list[str] | None, middleware: list[Any]) -> frozenset[str]:
    """The node names asked for: LangGraph's error for a node that does not exist; middleware
    nodes (`"Name.before_model"`, ...) are not supported yet."""
    hooks = ("before_agent", "before_model", "after_model", "after_agent")
    known = {f"{m.name}.{h}" for m in middleware for h in hooks}
    for name in names or []:
        if name in known:
            raise NotImplementedError(
                f"interrupts at middleware nodes ({name!r}) are not supported yet; "
                "use 'model' or 'tools'"
            )
        if name not in NODES:
            raise ValueError(f"Interrupt node `{name}` not found")
    return frozenset(names or [])


def is_pause(action: Any) -> bool:
    """Whether a planned action is a pause (a static interrupt's, or a node's `interrupt()`)."""
    return getattr(action, "tool", None) in (PAUSE_TOOL, NODE_TOOL)


def next_node(spec: Any, to: str) -> str:
    """LangGraph's name of the node a pause goes on with (`StateSnapshot.next`)."""
    hooks = spec.hooks
    if to == "model" and hooks["before_model"]:
        return f"{hooks['before_model'][0].name}.before_model"
    if to == "after_model":
        return f"{hooks['after_model'][-1].name}.after_model"
    if to == "end":
        return f"{hooks['after_agent'][-1].name}.after_agent"
    return "model" if to in ("model", "model_node") else to


class PauseNode:
    """The tool a pause calls: it needs approval (so the durable run pauses) and does nothing."""

    name = PAUSE_TOOL
    return_direct = False
    requires_approval = True
    idempotent = True

    def run(self, tool_input: dict[str, Any], **kwargs: Any) -> str:
        return ""

    async def arun(self, tool_input: dict[str, Any], **kwargs: Any) -> str:
        return ""


# -- interrupt() in a tool call ------------------------------------------------------------------

ASK_PREFIX = "__interrupt__:"
"""The key of an interrupt's question: the prefix, then the interrupt's index in its call."""
HEX_ID = re.compile(r"^[0-9a-f]{32}$")
"""An interrupt id (LangGraph's are 32 hex digits too: a resume map is keyed by them)."""
MANY_PENDING = (
    "When there are multiple pending interrupts, you must specify the interrupt id when "
    "resuming. Docs: https://docs.langchain.com/oss/python/langgraph/interrupts"
    "#handling-multiple-interrupts."
)


class Scratch:
    """One tool call's resume values, handed out in order to its `interrupt()` calls."""

    def __init__(self, resumes: list[Any], durable: bool, call_id: str) -> None:
        self.resumes = resumes
        self.durable = durable
        """Whether the run can pause (a durable run: else the run ends at the interrupt)."""
        self.call_id = call_id
        self.used = 0
        self.refused: Exception | None = None
        """The error of a resume value its `response_schema` refused (asked again)."""


SCRATCH: ContextVar[Scratch | None] = ContextVar("actloop_interrupt_scratch", default=None)
"""Set by `ToolNode` around a call (the `wrap_tool_call` chain and the tool)."""


class ToolInterrupt(NeedsInput, GraphInterrupt):
    """`interrupt()` in a durable run's tool call: the tool asks a person (the journal keeps the
    value and the resume values the call had so far). A `GraphInterrupt`, so middleware that
    lets LangGraph's interrupts through (retries, fallbacks) lets it through too."""

    def __init__(
        self, value: Any, index: int, resumes: list[Any], schema: dict[str, Any] | None = None
    ) -> None:
        from actloop.serialization import dumps

        Exception.__init__(self, value)
        self.questions = [Question(f"{ASK_PREFIX}{index}", dumps(value), schema)]
        self.state = {"resumes": resumes}
        self.interrupts = [Interrupt(value, response_schema=schema)]


class Interrupted:
    """The result of a tool call that interrupted in a run that cannot pause (no checkpointer
    or no thread id): the run ends with these `interrupts` in its state."""

    def __init__(self, interrupts: list[Interrupt]) -> None:
        self.interrupts = interrupts


def interrupted(value: Any, response_schema: Any = None) -> Any:
    """`interrupt(value)`: the call's next resume value (checked against `response_schema`),
    else the pause (see the module)."""
    schema = json_schema(response_schema)
    scratch = SCRATCH.get()
    if scratch is None:  # outside a create_agent tool call: nothing can resume it
        raise GraphInterrupt([Interrupt(value, interrupt_id("", "", 0), response_schema=schema)])
    index = scratch.used
    scratch.used += 1
    if index < len(scratch.resumes):
        if response_schema is None:
            return scratch.resumes[index]
        return _checked(scratch, index, value, response_schema, schema)
    if scratch.durable:
        raise ToolInterrupt(value, index, list(scratch.resumes), schema)
    found = Interrupt(value, interrupt_id("", scratch.call_id, index), response_schema=schema)
    raise GraphInterrupt([found])


def _checked(scratch: Scratch, index: int, value: Any, response_schema: Any, schema: Any) -> Any:
    """The resume value, checked against `response_schema`. A durable run's newest answer
    that fails asks again (the run pauses on the same interrupt; the error is the caller's),
    as LangGraph refuses an answer before saving it."""
    from pydantic import TypeAdapter, ValidationError

    try:
        return TypeAdapter(response_schema).validate_python(scratch.resumes[index])
    except ValidationError as exc:
        if not scratch.durable or index != len(scratch.resumes) - 1:
            raise
        scratch.refused = exc
        raise ToolInterrupt(value, index, scratch.resumes[:index], schema) from None


def json_schema(response_schema: Any) -> dict[str, Any] | None:
    """The JSON schema an interrupt shows for its `response_schema` (None: none given)."""
    if response_schema is None or isinstance(response_schema, dict):
        return cast("dict[str, Any] | None", response_schema)
    from pydantic import TypeAdapter

    return TypeAdapter(response_schema).json_schema()


def interrupt_id(run_id: str, call_id: str, index: int) -> str:
    """The id of a call's `index`-th interrupt in the durable run `run_id` (32 hex digits)."""
    return hashlib.md5(f"{run_id}|{call_id}|{index}".encode(), usedforsecurity=False).hexdigest()


def _resume_value(answer: Any) -> Any:
    """The resume value an answer to an interrupt's question carries (`{"resume": value}`; a
    person's decline or cancel through another surface: its action)."""
    if not isinstance(answer, dict):
        return None
    found = cast("dict[str, Any]", answer)
    content = found.get("content")
    if isinstance(content, dict):
        shown = cast("dict[str, Any]", content)
        return shown["resume"] if "resume" in shown else shown
    return None if found.get("action") == "accept" else found.get("action")


def scratch_of(call_id: str) -> Scratch:
    """The scratch a tool call runs with: the resume values of its interrupts so far (the
    journaled ones, and the answer to its latest one), in a durable run."""
    given = current_input()
    if given is None:
        return Scratch([], False, call_id)
    resumes: list[Any] = []
    state: Any = given.state
    if given.answers is not None and isinstance(state, dict):
        keys = [k for k in given.answers if k.startswith(ASK_PREFIX)]
        if keys:
            before = cast("dict[str, list[Any]]", state).get("resumes", [])
            resumes = [*before, _resume_value(given.answers[keys[0]])]
    return Scratch(resumes, True, call_id)


def with_scratch(call_id: str, run: Callable[[], T], owner: Any = None) -> T:
    """`run()` (a tool call's chain, sync or a coroutine's start) with its call's scratch set;
    a run that cannot pause turns an interrupt into `Interrupted`; an answer refused by its
    schema is kept on `owner` (the `GraphRun`: `refused`)."""
    scratch = scratch_of(call_id)
    token = SCRATCH.set(scratch)
    try:
        return run()
    except GraphInterrupt as exc:
        return cast("T", _stopped(exc, scratch, owner))
    finally:
        SCRATCH.reset(token)


async def awith_scratch(call_id: str, run: Callable[[], Any], owner: Any = None) -> Any:
    """Async `with_scratch` (`run()` returns the awaitable of the call's chain)."""
    scratch = scratch_of(call_id)
    token = SCRATCH.set(scratch)
    try:
        return await run()
    except GraphInterrupt as exc:
        return _stopped(exc, scratch, owner)
    finally:
        SCRATCH.reset(token)


def _stopped(exc: GraphInterrupt, scratch: Scratch, owner: Any) -> Interrupted:
    """A call's interrupt: re-raised in a durable run (it asks), else `Interrupted`."""
    if scratch.refused is not None and owner is not None:
        owner.refused = scratch.refused
    if isinstance(exc, NeedsInput):
        raise exc
    return Interrupted(exc.interrupts)


def asked(pending: list[dict[str, Any]]) -> list[tuple[dict[str, Any], int, Any, Any]]:
    """The interrupts a paused run waits on: (pending item, index in its call, value, the
    JSON schema of the answer or None)."""
    from actloop.serialization import loads

    found: list[tuple[dict[str, Any], int, Any, Any]] = []
    for entry in pending:
        questions: list[dict[str, Any]] = entry.get("questions") or []
        for question in questions:
            key = str(question["key"])
            if key.startswith(ASK_PREFIX):
                index = int(key[len(ASK_PREFIX) :])
                found.append((entry, index, loads(question["message"]), question.get("schema")))
    return found


def pending_interrupts(run_id: str, pending: list[dict[str, Any]]) -> list[Interrupt]:
    """The `Interrupt`s of a run paused on tool interrupts."""
    return [
        Interrupt(value, interrupt_id(run_id, str(entry["id"]), index), response_schema=schema)
        for entry, index, value, schema in asked(pending)
    ]


def interrupt_resume(run_id: str, resume: Any, pending: list[dict[str, Any]]) -> Resume | None:
    """The executor's `Resume` answering the tool interrupts a paused run waits on (None: it
    waits on none): `resume` is the value of the one waiting, or `{interrupt_id: value}`."""
    from actloop.executor import Resume

    waiting = asked(pending)
    if not waiting:
        return None
    ids = {interrupt_id(run_id, str(e["id"]), i): str(e["id"]) for e, i, _, _ in waiting}
    values: dict[str, Any]
    chosen = cast("dict[Any, Any]", resume) if isinstance(resume, dict) else None
    if chosen and all(HEX_ID.match(str(k)) for k in chosen):
        # ids that name no pending interrupt are left out (LangGraph's default: the run
        # pauses on what it still waits for)
        values = {ids[k]: v for k, v in chosen.items() if k in ids}
    elif len(waiting) > 1:
        raise RuntimeError(MANY_PENDING)
    else:
        values = {str(waiting[0][0]["id"]): resume}
    answers = {call: {"action": "accept", "content": {"resume": v}} for call, v in values.items()}
    return Resume.of(answer=answers)


# -- interrupt() in a node (a middleware hook, the model call) -----------------------------------


class NodePause:
    """The tool a node's `interrupt()` pauses on, in a durable run. Its input is where the
    graph goes on (`to`: `"{hook}:{index}"` or `"model_node"`), the value asked and the node's
    resume values so far; it asks (the run pauses) until answered, then returns the resume
    values, and the next plan runs the node again with them (LangGraph's replay of a node)."""

    name = NODE_TOOL
    return_direct = False
    requires_approval = False
    idempotent = True

    def run(self, tool_input: dict[str, Any], **kwargs: Any) -> list[Any]:
        before: list[Any] = list(tool_input["resumes"])
        found = scratch_of("")
        if len(found.resumes) > len(before):
            return found.resumes
        raise ToolInterrupt(tool_input["value"], len(before), before, tool_input.get("schema"))

    async def arun(self, tool_input: dict[str, Any], **kwargs: Any) -> list[Any]:
        return self.run(tool_input)


def node_name(spec: Any, at: str) -> str:
    """LangGraph's name of the node a node pause waits in (`StateSnapshot.next`)."""
    hook, _, index = at.partition(":")
    if hook == "model_node":
        return "model"
    hooks = spec.hooks[hook]
    ordered = hooks[::-1] if hook in ("after_model", "after_agent") else hooks
    return f"{ordered[int(index)].name}.{hook}"
