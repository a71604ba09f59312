"""A `create_agent` agent as the loop core's agent: LangGraph's nodes mapped onto Plan and Act.

The executor's loop (`executor/_loop.py`) and drivers run a `create_agent` agent as they run any
multi-action agent. A Plan effect is one visit of LangGraph's model side: the tool results of the
last step are added to the state (the tools node), then the node hooks and the model call run in
LangGraph's order (before_agent once; before_model; model through the `wrap_model_call` chain;
after_model in reverse; on the way out after_agent in reverse), and the plan returns the model's
tool calls as actions (the loop runs them, in parallel when several) or the final state as the
finish. An Act effect runs `ToolNode`s (`_tool_node`): each wraps one tool with the `wrap_tool_call`
chain and returns LangGraph's `ToolMessage` (or a middleware's `Command`).

The routing is written once as a generator of effects (`_Route.visit`: node hooks and model
calls); `plan` and `aplan` only carry those effects out, sync or async. A node effect that calls
`interrupt()` is thrown back into the route, which knows the node: a durable run's plan is then
a `NodePause` call there, and the plan after its answer runs that node again (`_interrupts`).
Nodes are counted as LangGraph counts super-steps, so `recursion_limit` stops a run at the same
node with the same error text.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, cast

from actloop.agents._compose import (
    ComposedResponse,
    async_hook,
    chain_async_model_call_handlers,
    chain_model_call_handlers,
    node_updates,
    sync_hook,
)
from actloop.agents._events import NodeRun, agent_metadata, in_node, left_node, node_metadata
from actloop.agents._interrupts import (
    NODE_TOOL,
    PAUSE_TOOL,
    SCRATCH,
    Interrupted,
    Scratch,
    ToolInterrupt,
    is_pause,
)
from actloop.agents._state import (
    MessageIndex,
    add_messages,
    apply_update,
    command_of,
    jump_of,
    listed,
    patch_invalid_tool_calls,
    ran_tools,
    rejection_reason,
    turns,
)
from actloop.agents._structured import StructuredOutput, saved
from actloop.agents._tool_node import DYNAMIC_TOOL, EDIT_KEY, EDITS_KEY, INVALID_TOOL
from actloop.agents.middleware.types import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    Runtime,
    can_jump_to,
    omitted_keys,
    overrides,
)
from actloop.agents.types import (
    RECURSION_MESSAGE,
    Command,
    GraphInterrupt,
    GraphRecursionError,
    Interrupt,
)
from actloop.executor import BaseMultiActionAgent
from actloop.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from actloop.steps import AgentFinish, ToolAgentAction

__all__ = ["GraphRun", "GraphSpec"]

LATE = "Error: the run's max_execution_time passed before this tool call finished."
DYNAMIC_TOOL_ERROR = """
Middleware added tools that the agent doesn't know how to execute.

Unknown tools: {unknown_tool_names}
Registered tools: {available_tool_names}

This happens when middleware modifies `request.tools` in `wrap_model_call` to include
tools that weren't passed to `create_agent()`.

How to fix this:

Option 1: Register tools at agent creation (recommended for most cases)
    Pass the tools to `create_agent(tools=[...])` or set them on `middleware.tools`.
    This makes tools available for every agent invocation.

Option 2: Handle dynamic tools in middleware (for tools created at runtime)
    Implement `wrap_tool_call` to execute tools that are added dynamically:

    class MyMiddleware(AgentMiddleware):
        def wrap_tool_call(self, request, handler):
            if request.tool_call["name"] == "dynamic_tool":
                # Execute the dynamic tool yourself or override with tool instance
                return handler(request.override(tool=my_dynamic_tool))
            return handler(request)
""".strip()

INTERRUPTS = "__interrupt__"
"""The state key of a run's interrupts (LangGraph's)."""

Effect = tuple[str, Any, Any]
"""("node", middleware, hook name) or ("model", request, None)."""


@dataclass
class GraphSpec:
    """What `create_agent` compiled: model, tools, middleware by hook, prompt, name."""

    model: Any
    tools: dict[str, Any]
    middleware: list[AgentMiddleware]
    system_message: SystemMessage | None
    name: str | None
    structured: StructuredOutput = field(default_factory=StructuredOutput)
    """The `response_format`, compiled."""
    has_tool_node: bool = True
    """Whether LangGraph's graph has a tools node (tools, or middleware wrapping tool calls)."""
    interrupt_before: frozenset[str] = frozenset()
    interrupt_after: frozenset[str] = frozenset()
    """The nodes ("model", "tools") a run pauses before / after (LangGraph's static interrupts)."""
    hooks: dict[str, list[AgentMiddleware]] = field(default_factory=lambda: {})
    model_wrappers: list[AgentMiddleware] = field(default_factory=lambda: [])
    tool_wrappers: list[AgentMiddleware] = field(default_factory=lambda: [])

    private: frozenset[str] = frozenset()
    """State keys left out of a run's output (middleware's private state)."""
    untracked: frozenset[str] = frozenset()
    """State keys no run keeps (middleware's per-run state)."""
    no_input: frozenset[str] = frozenset()
    """State keys an input may not set (`OmitFromInput`, `PrivateStateAttr` annotations)."""

    state_schema: Any = None
    """`create_agent`'s own `state_schema` (its annotated keys count as middleware's do)."""

    def __post_init__(self) -> None:
        schemas = [m.state_schema for m in self.middleware]
        marked = [omitted_keys(schema) for schema in [*schemas, self.state_schema]]
        self.no_input = frozenset(k for no_input, _ in marked for k in no_input)
        private = (k for m in self.middleware for k in m.private_state)
        self.private = frozenset([*private, *(k for _, no_output in marked for k in no_output)])
        self.untracked = frozenset(k for m in self.middleware for k in m.run_state)
        for hook in ("before_agent", "before_model", "after_model", "after_agent"):
            self.hooks[hook] = [m for m in self.middleware if any(overrides(m, hook))]
        self.model_wrappers = [m for m in self.middleware if any(overrides(m, "wrap_model_call"))]
        self.tool_wrappers = [m for m in self.middleware if any(overrides(m, "wrap_tool_call"))]


class GraphRun(BaseMultiActionAgent):
    """One run of a `create_agent` agent, as the loop's agent: it holds the graph state."""

    def __init__(
        self, spec: GraphSpec, runtime: Runtime, recursion_limit: int, config: dict[str, Any]
    ) -> None:
        super().__init__()
        self.spec = spec
        self.runtime = runtime
        self.limit = recursion_limit
        self.config = config
        self.state: dict[str, Any] = {}
        self.nodes = 0
        """Nodes run so far (LangGraph's super-steps)."""
        self.absorbed = 0
        """Steps of the loop whose tool results are in the state."""
        self.started = False
        self.sink: Callable[[str, Any], None] | None = None
        """Where stream chunks go: `(mode, payload)`."""
        self.stream_tokens = False
        """Whether model calls stream (stream_mode "messages")."""
        self.durable = False
        """Whether a journal saves the run (its finish must then be plain data; it can pause)."""
        self.paused = False
        """Whether the run paused at a static interrupt."""
        self.skip_at: str | None = None
        """Where a resumed pause goes on: the first pause check there is not made again."""
        self.mark = 0
        """How many messages the state had when this plan began (a pause saves the rest)."""
        self.callbacks: Any = None
        """The loop's callbacks for this plan: node runs open on them (`_events.NodeRun`)."""
        self.node: NodeRun | None = None
        """The node run open now (None when no handler listens)."""
        self.resume_at: tuple[str, list[Any]] | None = None
        """The node a resumed node pause runs again (`"{hook}:{index}"`, `"model_node"`), and
        the resume values its `interrupt()`s return."""
        self.scratch: Scratch | None = None
        """The scratch of the node effect about to run (its resume values)."""
        self.refused: Exception | None = None
        """A resume value an `interrupt()`'s `response_schema` refused: `invoke` raises it
        (the run paused on the same interrupt again, so it can be answered again)."""
        self.interrupts: list[Interrupt] = []
        """Interrupts of tool calls in a run that cannot pause (it ends with them)."""
        self.pushed: dict[str, int] = {}
        """Each pending tool call's index among the step's calls (LangGraph's `Send` index)."""
        self.streamed: set[str | None] = set()
        """Ids of the messages models streamed (stream_mode "messages" shows each once)."""
        self.index = MessageIndex()
        """The state messages' ids and positions, kept between updates (`add_messages`)."""

    @property
    def input_keys(self) -> list[str]:
        return ["messages"]

    @property
    def return_values(self) -> list[str]:
        return ["messages"]

    def tool_run_logging_kwargs(self) -> dict[str, Any]:
        return {}

    # -- the loop's agent protocol ---------------------------------------------------------------

    def plan(
        self, intermediate_steps: list[tuple[Any, Any]], callbacks: Any = None, **kwargs: Any
    ) -> Any:
        """Carry out one visit of the model side, sync."""
        self.callbacks = callbacks
        route = self._route(intermediate_steps, kwargs)
        result: Any = None
        error: GraphInterrupt | None = None
        try:
            while True:
                kind, target, hook = route.send(result) if error is None else route.throw(error)
                error = None
                inside, scratch = in_node(self.node), SCRATCH.set(self.scratch)
                try:
                    if kind == "node":
                        result = getattr(target, hook)(self.state, self.runtime)
                    else:
                        result = self._call_model(target, self._inner(callbacks))
                except GraphInterrupt as exc:  # the node pauses: the route knows where
                    error = exc
                finally:
                    SCRATCH.reset(scratch)
                    left_node(inside)
        except StopIteration as done:
            return done.value
        except BaseException as exc:
            self._failed(exc)
            raise

    async def aplan(
        self, intermediate_steps: list[tuple[Any, Any]], callbacks: Any = None, **kwargs: Any
    ) -> Any:
        """Carry out one visit of the model side, async."""
        self.callbacks = callbacks
        route = self._route(intermediate_steps, kwargs)
        result: Any = None
        error: GraphInterrupt | None = None
        try:
            while True:
                kind, target, hook = route.send(result) if error is None else route.throw(error)
                error = None
                inside, scratch = in_node(self.node), SCRATCH.set(self.scratch)
                try:
                    if kind == "node":
                        result = await self._anode(target, hook)
                    else:
                        result = await self._acall_model(target, self._inner(callbacks))
                except GraphInterrupt as exc:  # the node pauses: the route knows where
                    error = exc
                finally:
                    SCRATCH.reset(scratch)
                    left_node(inside)
        except StopIteration as done:
            return done.value
        except BaseException as exc:
            self._failed(exc)
            raise

    def _inner(self, callbacks: Any) -> Any:
        """The callbacks of a call inside the open node (the loop's when none is open)."""
        return callbacks if self.node is None else self.node.child

    def _open(self, node: str, hook: str | None = None) -> None:
        """Open the run of the node (`node`, or a middleware's `hook` node; the step just
        counted) when a handler listens."""
        if self.callbacks is not None:
            name = node if hook is None else f"{node}.{hook}"
            self.node = NodeRun(self.callbacks, name, self.nodes, self._input())

    def _close(self, output: Any) -> None:
        """End the open node run with the node's output."""
        node, self.node = self.node, None
        if node is not None:
            node.end(output)

    def _failed(self, exc: BaseException) -> None:
        node, self.node = self.node, None
        if node is not None and not isinstance(exc, _Paused):
            node.error(exc)

    def return_stopped_response(
        self,
        early_stopping_method: str,
        intermediate_steps: list[Any],
        callbacks: Any = None,
        **kwargs: Any,
    ) -> AgentFinish:
        """The deadline passed: the state so far, every unanswered tool call answered with an
        error (so the conversation can go on)."""
        self._absorb(intermediate_steps, kwargs)
        last = self._last_ai()
        if last is not None:
            answered = self._answered()
            late = [
                ToolMessage(LATE, tool_call_id=c["id"], name=c["name"], status="error")
                for c in last.tool_calls
                if c["id"] not in answered
            ]
            apply_update(self.state, {"messages": late}, self.index)
        return self._finished()

    # -- state ---------------------------------------------------------------------------------

    def _absorb(self, steps: list[tuple[Any, Any]], inputs: dict[str, Any]) -> bool:
        """Add the tool results of steps not seen yet (the tools node); True if there were. A
        resumed run (a new run over its journal's steps) gets each model turn back from its
        step's message log, before that step's results."""
        replayed = not self.started and bool(steps)
        if not self.started:
            self._begin(inputs)
        new = steps[self.absorbed :]
        self.absorbed = len(steps)
        answered = False
        for turn in turns(new):
            if replayed:
                self._restore(turn[0][0].message_log)
            calls = [
                (a, command_of(o)) for a, o in turn if not is_pause(a) and not self._stopped(o)
            ]
            # LangChain answers rejected calls in after_model, before the tools node runs the rest
            rejected = [s for s in calls if self._rejected(*s)]
            for action, observation in [*rejected, *(s for s in calls if s not in rejected)]:
                update = self._answer(action, observation)
                self._messages("tools", update, self.pushed.get(action.tool_call_id))
                apply_update(self.state, update, self.index)
                self.emit(
                    "updates", {"tools": update.update if isinstance(update, Command) else update}
                )
                answered = True
        if answered:
            self.emit("values", self.public(dict(self.state)))
        self.mark = len(self.state["messages"])
        return answered

    def _stopped(self, observation: Any) -> bool:
        """Whether a call interrupted in a run that cannot pause (its interrupts are kept: the
        run ends with them)."""
        if not isinstance(observation, Interrupted):
            return False
        self.interrupts.extend(observation.interrupts)
        return True

    def replay(
        self, steps: list[tuple[Any, Any]], inputs: dict[str, Any], waiting: list[Any]
    ) -> dict[str, Any]:
        """The state a paused turn stopped at: its input and journaled `steps` replayed as a
        resumed run replays them, then the waiting step's messages (`waiting`)."""
        self._absorb(steps, inputs)
        self._restore(waiting)
        return self._finished().return_values

    def _begin(self, inputs: dict[str, Any]) -> None:
        """The state a run starts from: its inputs (an earlier turn's structured response typed
        again)."""
        self.started = True
        skip = {"messages", *self.spec.untracked}
        self.state = {k: v for k, v in inputs.items() if k not in skip}
        if self.state.get("structured_response") is not None:  # an earlier turn's, saved
            revived = self.spec.structured.revived(self.state["structured_response"])
            self.state["structured_response"] = revived
        self.state["messages"] = add_messages([], inputs.get("messages", []), self.index)
        self.emit("values", self.public(dict(self.state)))

    def _restore(self, messages: list[BaseMessage]) -> None:
        """Add a replayed step's messages the state does not have yet."""
        for message in messages:
            if message not in self.state["messages"]:
                apply_update(self.state, {"messages": [message]}, self.index)

    def emit(self, mode: str, payload: Any) -> None:
        """Report a stream chunk (`stream`/`astream` set the sink; `invoke` has none)."""
        if self.sink is not None:
            self.sink(mode, payload)

    def _rejected(self, action: Any, observation: Any) -> bool:
        """Whether the loop's observation is a reviewer's rejection (a known tool, no result)."""
        return not isinstance(observation, (Command, ToolMessage)) and (
            action.tool in self.spec.tools
        )

    def _answer(self, action: Any, observation: Any) -> Any:
        """The state update of one finished call: its ToolMessage, a middleware's Command, or
        LangChain's message for a call a reviewer rejected or a tool that does not exist."""
        if isinstance(observation, Command):
            return observation
        if isinstance(observation, ToolMessage):
            return {"messages": [observation]}
        if self._rejected(action, observation):
            from actloop.agents.middleware.human_in_the_loop import rejected_message

            return {
                "messages": [rejected_message(action.tool_input, rejection_reason(observation))]
            }
        names = ", ".join(self.spec.tools)  # the loop's invalid-tool answer: LangGraph's text
        text = INVALID_TOOL.format(requested_tool=action.tool, available_tools=names)
        message = ToolMessage(
            text, tool_call_id=action.tool_call_id, name=action.tool, status="error"
        )
        return {"messages": [message]}

    def _last_ai(self) -> AIMessage | None:
        for message in reversed(self.state["messages"]):
            if isinstance(message, AIMessage):
                return message
        return None

    def _after_last_ai(self) -> list[BaseMessage]:
        """The messages after the last AI message."""
        messages = self.state["messages"]
        for i in range(len(messages) - 1, -1, -1):
            if isinstance(messages[i], AIMessage):
                return messages[i + 1 :]
        return []

    def _answered(self) -> set[str]:
        """Ids of the tool calls answered after the last AI message (LangGraph's rule)."""
        return {m.tool_call_id for m in self._after_last_ai() if isinstance(m, ToolMessage)}

    def _pending(self) -> list[dict[str, Any]]:
        """The last AI message's calls still to run (structured output calls never run)."""
        last = self._last_ai()
        if last is None:
            return []
        answered, artificial = self._answered(), self.spec.structured.tools
        return [
            dict(c)
            for c in last.tool_calls
            if c["id"] not in answered and c["name"] not in artificial
        ]

    def _step(self) -> None:
        """One more node: LangGraph's recursion limit counts them."""
        if self.nodes >= self.limit:
            raise GraphRecursionError(RECURSION_MESSAGE.format(limit=self.limit))
        self.nodes += 1

    # -- routing (written once; plan and aplan carry out its effects) -------------------------

    def _route(
        self, steps: list[tuple[Any, Any]], inputs: dict[str, Any]
    ) -> Generator[Effect, Any, Any]:
        """The nodes from where the last step left off to the next tool calls or the end; a
        static interrupt on the way is the plan (see `_interrupts`)."""
        first = not self.started and not steps  # a resumed run goes on after its tools
        self._absorb(steps, inputs)  # the tools node was counted when its calls were planned
        self.skip_at = steps[-1][0].tool_input["to"] if steps and is_pause(steps[-1][0]) else None
        if steps and steps[-1][0].tool == NODE_TOOL:  # a node that interrupted runs again
            self.resume_at, self.skip_at = (self.skip_at or "", list(steps[-1][1])), None
        if self.interrupts:  # LangGraph without a checkpointer: the state, then its interrupts
            return AgentFinish({**self._finished().return_values, INTERRUPTS: self.interrupts}, "")
        try:
            if self.resume_at is not None:
                return (yield from self._resumed(self.resume_at[0]))
            if self.skip_at is not None:
                to = self.skip_at
            elif first:
                hooks = self.spec.hooks["before_agent"]
                to = (yield from self._nodes("before_agent", hooks)) or "model"
            else:
                direct = self._all_direct(steps) or self._structured_answered()
                to = self._pause("after", "tools", "end" if direct else "model")
            return (yield from self._from(to))
        except _Paused as pause:
            return pause.output

    def _resumed(self, at: str) -> Generator[Effect, Any, Any]:
        """Go on from the node a node pause waits in (`at`): that node again, then on."""
        hook, _, index = at.partition(":")
        hooks = self.spec.hooks
        if hook == "model_node":
            return (yield from self._from("model_node"))
        if hook == "after_agent":
            return (yield from self._from("end", int(index)))
        ordered = hooks[hook][::-1] if hook == "after_model" else hooks[hook]
        to = yield from self._nodes(hook, ordered, start=int(index))
        if to is None:
            then = {"before_agent": "model", "before_model": "model_node"}
            to = then[hook] if hook in then else self._after_model_route()
        return (yield from self._from(to))

    def _scratch_for(self, at: str) -> Scratch:
        """The scratch of node `at`: the resume values of a resumed node pause there."""
        resumes: list[Any] = []
        if self.resume_at is not None and self.resume_at[0] == at:
            resumes, self.resume_at = self.resume_at[1], None
        return Scratch(resumes, self.durable, at)

    def _interrupted(self, exc: GraphInterrupt, at: str) -> _Paused:
        """Node `at` interrupted: a durable run pauses on a `NodePause` call (the messages the
        plan added in its log); any other ends with the state and its interrupts."""
        node, self.node = self.node, None
        if node is not None:
            node.error(exc)
        if not self.durable or not isinstance(exc, ToolInterrupt):
            return _Paused(
                AgentFinish({**self._finished().return_values, INTERRUPTS: exc.interrupts}, "")
            )
        messages = self.state["messages"][self.mark :]
        found = exc.interrupts[0]
        pause = {
            "to": at,
            "value": found.value,
            "resumes": exc.state["resumes"],
            "schema": found.response_schema,
        }
        call_id = f"{NODE_TOOL}:{self.absorbed}"
        return _Paused([ToolAgentAction(NODE_TOOL, pause, "", messages, call_id)])

    def _from(self, to: str, agent_start: int = 0) -> Generator[Effect, Any, Any]:
        """Run the model side from `to` ("model": its before_model hooks; "model_node";
        "after_model": its hooks), then the tool calls to make, or the after_agent hooks
        (from the `agent_start`-th)."""
        hooks = self.spec.hooks
        while to in ("model", "model_node", "after_model"):
            if to == "model":
                to = (yield from self._nodes("before_model", hooks["before_model"])) or "model_node"
                continue
            if to == "model_node":
                self._pause("before", "model", "model_node")
                yield from self._model_node()
                to = "after_model" if hooks["after_model"] else self._after_model_route()
                to = self._pause("after", "model", to)
                continue
            after = self._nodes("after_model", hooks["after_model"][::-1])
            to = cast("str | None", (yield from after)) or self._after_model_route()
        pending = self._pending() if to == "tools" else []
        if pending:
            self._pause("before", "tools", "tools")
            self._step()
            self.pushed = {c["id"]: i for i, c in enumerate(pending)}
            last = self._last_ai()
            assert last is not None
            return [
                ToolAgentAction(self._runner(c), self._with_edit(c), "", [last], c["id"])
                for c in pending
            ]
        after = hooks["after_agent"][::-1]
        yield from self._nodes("after_agent", after, jumps=False, start=agent_start)
        return self._finished()

    def _with_edit(self, call: dict[str, Any]) -> dict[str, Any]:
        """The call as planned: with a reviewer's edit of it (HITL's state key), so the journal
        keeps the edit and a resumed run, which rebuilds the state from messages, runs it."""
        edits: dict[str, Any] = self.state.get(EDITS_KEY) or {}
        if call["id"] not in edits:
            return call
        return {**call, EDIT_KEY: edits[call["id"]]}

    def _runner(self, call: dict[str, Any]) -> str:
        """The loop's tool for `call`: its own, or, for a tool `create_agent` was not given
        when middleware wraps tool calls, the dynamic tool node (else the loop's unknown tool)."""
        name: str = call["name"]
        if name in self.spec.tools or not self.spec.tool_wrappers:
            return name
        return DYNAMIC_TOOL

    def _pause(self, when: str, node: str, to: str) -> str:
        """Pause here (raise `_Paused`) if the run is to stop `when` ("before"/"after") `node`
        and a node runs next (`to`; "end" without after_agent hooks is none); else `to`. The
        first check after a resume, at the point it resumed, is not made again."""
        skip = self.skip_at is not None and self._boundary(self.skip_at) == self._boundary(to)
        self.skip_at = None
        names = self.spec.interrupt_before if when == "before" else self.spec.interrupt_after
        if skip or node not in names or (to == "end" and not self.spec.hooks["after_agent"]):
            return to
        if not self.durable:  # nowhere to pause: the run ends here, as LangGraph's does
            raise _Paused(self._finished())
        self.paused = True
        messages = self.state["messages"][self.mark :]
        call_id = f"{PAUSE_TOOL}:{self.absorbed}"
        raise _Paused([ToolAgentAction(PAUSE_TOOL, {"to": to}, "", messages, call_id)])

    def _boundary(self, to: str) -> str:
        """The point between nodes `to` names ("model" is the model node's when no before_model
        hooks come first)."""
        return "model_node" if to == "model" and not self.spec.hooks["before_model"] else to

    def _model_node(self) -> Generator[Effect, Any, None]:
        """The model node: one call through the `wrap_model_call` chain, its updates applied.
        The request's messages are the history with LangChain's error answers for invalid tool
        calls no message answers; when they (or a middleware changing that list in place)
        differ from the history, they become the history (LangChain's "repaired" messages)."""
        self._step()
        self._open("model")
        messages = patch_invalid_tool_calls(self.state["messages"], self.index)
        request = ModelRequest(
            model=self.spec.model,
            messages=messages,
            system_message=self.spec.system_message,
            tools=list(self.spec.tools.values()),
            response_format=self.spec.structured.initial,
            state=self.state,
            runtime=self.runtime,
        )
        self.scratch = self._scratch_for("model_node")
        try:
            composed: ComposedResponse = yield ("model", request, None)
        except GraphInterrupt as exc:
            raise self._interrupted(exc, "model_node") from None
        response = composed.model_response
        update: dict[str, Any] = {"messages": response.result}
        if response.structured_response is not None or self.spec.structured.active:
            update["structured_response"] = response.structured_response
        updates = node_updates(update, composed.commands)
        if messages != self.state["messages"]:
            self.state["messages"] = add_messages([], messages, self.index)
        self._close([Command(update=one) for one in updates])
        self._messages("model", update)
        for one in updates:
            apply_update(self.state, one, self.index)
        self.emit("updates", {"model": update if len(updates) == 1 else updates})
        self.emit("values", self.public(dict(self.state)))

    def _finished(self) -> AgentFinish:
        """The run's finish: the state a thread keeps (every key but per-run ones; a durable
        run's typed structured response as data its journal can save)."""
        untracked = self.spec.untracked
        state = {k: v for k, v in self.state.items() if k not in untracked}
        if self.durable and state.get("structured_response") is not None:
            state["structured_response"] = saved(state["structured_response"])
        return AgentFinish(state, "")

    def public(self, state: dict[str, Any]) -> dict[str, Any]:
        """`state` as `invoke` and the values stream give it: without private keys, the
        structured response typed."""
        private = self.spec.private
        if private:
            state = {k: v for k, v in state.items() if k not in private}
        if state.get("structured_response") is not None:
            revived = self.spec.structured.revived(state["structured_response"])
            state = {**state, "structured_response": revived}
        return state

    def _nodes(
        self, hook: str, middleware: list[AgentMiddleware], *, jumps: bool = True, start: int = 0
    ) -> Generator[Effect, Any, str | None]:
        """Run `hook` of each middleware (from the `start`-th) as a node; the destination of a
        declared jump. A node's `interrupt()` pauses the run there (`_interrupted`)."""
        for index, m in enumerate(middleware):
            if index < start:
                continue
            self._step()
            self._open(m.name, hook)
            self.scratch = self._scratch_for(f"{hook}:{index}")
            try:
                result = yield ("node", m, hook)
            except GraphInterrupt as exc:
                raise self._interrupted(exc, f"{hook}:{index}") from None
            self._close(result)
            self._messages(f"{m.name}.{hook}", result)
            apply_update(self.state, result, self.index)
            self.state.pop("jump_to", None)
            self.emit("updates", {f"{m.name}.{hook}": result})
            if result:
                self.emit("values", self.public(dict(self.state)))
            target = jump_of(result)
            if jumps and target is not None and target in can_jump_to(m, hook):
                return target
        return None

    def _after_model_route(self) -> str:
        """LangGraph's edge out of the model side: tools, model again, or the end."""
        structured = self.state.get("structured_response") is not None
        if not self.spec.has_tool_node:
            if self.spec.structured.tools:  # the model is asked until it gives the output
                return "end" if structured else "model"
            return "end"
        last = self._last_ai()
        if last is None or not last.tool_calls:
            return "end"
        if self._pending():
            return "tools"
        return "end" if structured else "model"

    def _all_direct(self, steps: list[tuple[Any, Any]]) -> bool:
        """Whether every call of the last step that ran a known tool ran a `return_direct` one."""
        last = self._last_ai()
        if last is None or not steps:
            return False
        tools = self.spec.tools
        ids = {c.get("id") for c in last.tool_calls}
        ran = ran_tools(steps, ids)  # a reviewer's edit may have run another tool than the call's
        ran.update(  # LangChain's rule: the tool a result names (a middleware's redirect)
            {
                m.tool_call_id: m.name
                for m in self._after_last_ai()
                if isinstance(m, ToolMessage) and m.name in tools
            }
        )
        names = [n for c in last.tool_calls if (n := ran.get(c.get("id"), c["name"])) in tools]
        return bool(names) and all(tools[n].return_direct for n in names)

    def _structured_answered(self) -> bool:
        """Whether a structured output call of the last model turn was answered without an
        error status (LangGraph then ends after the tools node)."""
        artificial = self.spec.structured.tools
        if not artificial:
            return False
        return any(
            isinstance(m, ToolMessage) and m.name in artificial and m.status != "error"
            for m in self._after_last_ai()
        )

    # -- effects -------------------------------------------------------------------------------

    async def _anode(self, middleware: AgentMiddleware, hook: str) -> Any:
        sync, is_async = overrides(middleware, hook)
        if is_async or not sync:
            return await getattr(middleware, "a" + hook)(self.state, self.runtime)
        return getattr(middleware, hook)(self.state, self.runtime)

    def _bind(self, request: ModelRequest) -> tuple[Any, Any]:
        """The request's model bound (a model a middleware put in the request, if LangChain's,
        adopted) and the call's structured output strategy."""
        model = request.model
        if model is not self.spec.model:
            from actloop.runnables._foreign import adopt

            model = adopt(model)
        if not self.spec.tool_wrappers:
            self._check_known(request.tools)
        return self.spec.structured.bind(request, model)

    def _check_known(self, tools: list[Any]) -> None:
        """LangChain's error for tools a middleware added that no `wrap_tool_call` can run
        (provider tools, given as dicts, are the provider's)."""
        unknown = [
            t.name for t in tools if not isinstance(t, dict) and t.name not in self.spec.tools
        ]
        if unknown:
            raise ValueError(
                DYNAMIC_TOOL_ERROR.format(
                    unknown_tool_names=unknown, available_tool_names=sorted(self.spec.tools)
                )
            )

    def _prompt(self, request: ModelRequest) -> list[BaseMessage]:
        if request.system_message is None:
            return list(request.messages)
        return [request.system_message, *request.messages]

    def _token(self, chunk: Any, run_id: str) -> Any:
        """Report one model chunk (stream_mode "messages") with LangGraph's node metadata; a
        chunk without an id gets the call's `lc_run--` id, as langchain-core gives it, so the
        reply they add up to is known as streamed."""
        if chunk.id is None:
            chunk.id = run_id
        self.streamed.add(chunk.id)
        self.emit("messages", (chunk, self._stream_metadata("model")))
        return chunk

    def _stream_metadata(self, node: str, push: int | None = None) -> dict[str, Any]:
        """The metadata of a `messages` chunk: the graph's and the node's (LangGraph's)."""
        return {
            **agent_metadata(self.config, self.spec.name),
            **node_metadata(node, self.nodes, push),
        }

    def _messages(self, node: str, update: Any, push: int | None = None) -> None:
        """The messages a node wrote that no model streamed (a tool's answer, a middleware's
        message), as LangGraph's `messages` mode gives them when the node ends."""
        if not self.stream_tokens:
            return
        if isinstance(update, Command):
            update = update.update
        if not isinstance(update, dict):
            return
        known = {m.id for m in self.state["messages"]} | self.streamed
        for message in listed(cast("dict[str, Any]", update).get("messages", [])):
            if not isinstance(message, BaseMessage) or (message.id in known and message.id):
                continue
            if message.id is None:
                message.id = str(uuid.uuid4())
            self.emit("messages", (message, self._stream_metadata(node, push)))

    def _input(self) -> dict[str, Any]:
        """A node's input as LangGraph gives it: the state (middleware's private keys too),
        the structured response typed."""
        state = {k: v for k, v in self.state.items() if k != "jump_to"}
        if state.get("structured_response") is not None:
            state["structured_response"] = self.spec.structured.revived(
                state["structured_response"]
            )
        return state

    def _response(self, output: Any, strategy: Any) -> ModelResponse:
        """The model call's response: the reply named after the agent, with structured output."""
        if self.spec.name:
            output.name = self.spec.name
        return self.spec.structured.handle(output, strategy)

    def _call_model(self, request: ModelRequest, callbacks: Any) -> ComposedResponse:
        config: dict[str, Any] = {"callbacks": callbacks}

        def execute(req: ModelRequest) -> ModelResponse:
            (bound, strategy), prompt = self._bind(req), self._prompt(req)
            if not self.stream_tokens:
                return self._response(bound.invoke(prompt, config), strategy)
            run_id = f"lc_run--{uuid.uuid4()}"
            chunks = [self._token(c, run_id) for c in bound.stream(prompt, config)]
            return self._response(_joined(chunks), strategy)

        wrappers = [sync_hook(m, "wrap_model_call") for m in self.spec.model_wrappers]
        chained = chain_model_call_handlers(wrappers)
        if chained is None:
            return ComposedResponse(execute(request))
        return chained(request, execute)

    async def _acall_model(self, request: ModelRequest, callbacks: Any) -> ComposedResponse:
        config: dict[str, Any] = {"callbacks": callbacks}

        async def execute(req: ModelRequest) -> ModelResponse:
            (bound, strategy), prompt = self._bind(req), self._prompt(req)
            if not self.stream_tokens:
                return self._response(await bound.ainvoke(prompt, config), strategy)
            run_id = f"lc_run--{uuid.uuid4()}"
            chunks = [self._token(c, run_id) async for c in bound.astream(prompt, config)]
            return self._response(_joined(chunks), strategy)

        wrappers = [async_hook(m, "wrap_model_call") for m in self.spec.model_wrappers]
        chained = chain_async_model_call_handlers(wrappers)
        if chained is None:
            return ComposedResponse(await execute(request))
        return await chained(request, execute)


class _Paused(Exception):
    """A static interrupt: the plan's output is `output` (a pause, or the finish of a run that
    cannot pause)."""

    def __init__(self, output: Any) -> None:
        super().__init__()
        self.output = output


def _joined(chunks: list[Any]) -> Any:
    """The message a model's streamed chunks add up to."""
    from actloop.messages import message_chunk_to_message

    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return message_chunk_to_message(total)
