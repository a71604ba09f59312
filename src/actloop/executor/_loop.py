"""The agent loop, written once: an I/O-free state machine that asks its driver for effects.

A driver (sync, async, durable) calls `core.next()` to learn what to do and `core.send(result)` to
report what happened:

    Plan(steps)          -> the agent's output for these (trimmed) steps, or the
                            OutputParserException it raised
    Act(calls, announce) -> one observation per call, in call order (`ActTimeout` if the
                            deadline passed first, with the observations that did finish)
    Stop(method, generate, within) -> the AgentFinish of `agent.return_stopped_response(method,
                            ...)`; a `generate` call gets `within` seconds (the deadline covers
                            every model call); if it overruns, `late_stop()` says what instead
    Done(finish)         -> nothing: the run is over

Every loop rule lives here, once: stop rules, parse-error handling, invalid tools, return_direct,
trimming, which events a step emits (`announced`, `stepped`), when `on_agent_action` fires
(`fires_action`), how many calls run at once (`window`) and what a tool failure does (`failed`).
The core imports only the data layer and exceptions: the tools it hands out for invalid calls and
parse errors come in `LoopSettings`. `LoopState` is plain data (inputs, steps, counters, phase),
so a durable run can save it between effects and restore it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, final

from actloop.exceptions import OutputParserException, attach_steps
from actloop.steps import AgentAction, AgentFinish, AgentStep

__all__ = [
    "Act",
    "ActTimeout",
    "Done",
    "Event",
    "LoopCore",
    "LoopSettings",
    "LoopState",
    "Plan",
    "Stop",
    "ToolCall",
]

MAX_WAIT = 86_400.0 * 365
"""The longest a driver waits in one go (a year): a larger timeout overflows thread waits."""

PARSE_ERROR_MESSAGE = (
    "An output parsing error occurred. In order to pass this error back to the agent and have it "
    "try again, pass `handle_parsing_errors=True` to the AgentExecutor. This is the error: {e!s}"
)


@dataclass
class LoopSettings:
    """The executor options the loop obeys; read-only once built (not `frozen=True`: a frozen
    dataclass sets each field through `object.__setattr__`, half of its build on a fresh
    executor's first run)."""

    tools: dict[str, Any]
    """Tools by name, in the executor's order."""
    invalid_tool: Any
    """The tool that answers a call to an unknown tool (`InvalidTool`)."""
    exception_tool: Any
    """The tool that returns a parse error's observation (`ExceptionTool`)."""
    colors: dict[str, str]
    """Each tool's colour for verbose output."""
    max_iterations: int | None = 15
    max_execution_time: float | None = None
    early_stopping_method: str = "force"
    handle_parsing_errors: bool | str | Callable[[Any], str] = False
    trim_intermediate_steps: int | Callable[[list[Any]], list[Any]] = -1
    return_key: str = "output"
    """Key of the output that a return_direct tool fills (first of the agent's return_values)."""
    tool_run_kwargs: dict[str, Any] = field(default_factory=lambda: {})
    """The agent's `tool_run_logging_kwargs()`."""

    run_kwargs: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    """Per tool, the extra keywords of its runs (colour, prefixes); computed once per run."""

    def __post_init__(self) -> None:
        for name, tool in self.tools.items():
            kwargs = {**self.tool_run_kwargs, "color": self.colors[name]}
            if tool.return_direct:
                kwargs["llm_prefix"] = ""
            self.run_kwargs[name] = kwargs


@dataclass
class LoopState:
    """Everything the loop knows between effects; plain data, safe to save and restore."""

    inputs: dict[str, Any]
    steps: list[tuple[AgentAction, Any]] = field(default_factory=lambda: [])
    iterations: int = 0
    elapsed: float = 0.0
    """Seconds used by this run so far (kept across a resume)."""
    phase: str = "plan"
    """"plan", "act", "stop" or "done"."""
    pending: list[AgentAction] = field(default_factory=lambda: [])
    """The actions of the current step, while phase is "act"."""
    announce: bool = True
    """Whether the pending actions are announced (a parse-error step is not)."""
    finish: AgentFinish | None = None
    stopped: bool = False
    """True when the run ended by a limit rather than by the agent."""
    limit: str | None = None
    """The limit that stopped the run: "max_iterations" or "max_execution_time"."""


class ToolCall(NamedTuple):
    """One tool run: the action, the tool that serves it, its input and extra run kwargs."""

    action: AgentAction
    tool: Any
    tool_input: Any
    run_kwargs: dict[str, Any]
    parse_error: bool = False
    """True for the `_Exception` call of a parse-error step."""


# Effects are final: drivers dispatch on `type(effect) is ...`, which then narrows the rest.
@final
class Plan(NamedTuple):
    """Ask the agent for its next move given these (trimmed) steps."""

    steps: list[tuple[AgentAction, Any]]


@final
class Act(NamedTuple):
    """Run these tool calls (concurrently if several); `announce` is False for parse-error steps."""

    calls: list[ToolCall]
    announce: bool


@final
class Stop(NamedTuple):
    """A limit was reached: get the agent's stopped response for this method."""

    method: str
    generate: bool
    """True when the response is one more model call (`"generate"`): it gets the run's callbacks,
    and the async path awaits `areturn_stopped_response`; `"force"` is a plain sync call."""
    within: float | None = None
    """Seconds the `generate` call may take before the deadline (None: no deadline)."""


@final
class Done(NamedTuple):
    """The run is over."""

    finish: AgentFinish


class ActTimeout(NamedTuple):
    """Sent for an Act whose deadline passed: the observations that finished, by call index."""

    finished: dict[int, Any]


Effect = Plan | Act | Stop | Done
_new = tuple.__new__  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
"""Builds a NamedTuple from all its fields without its Python-level `__new__` (hot path only)."""
Event = tuple[str, Any]
"""What a run reports as it goes: `("action", AgentAction)` before a step's tools run,
`("step", AgentStep)` after, `("iteration", [(action, observation), ...])` when the loop goes on
after a step, `("finish", AgentFinish)` last."""


class LoopCore:
    """Decides the next effect from the state; see the module docstring for the protocol."""

    def __init__(
        self,
        settings: LoopSettings,
        state: LoopState,
        clock: Callable[[], float],
        max_concurrency: int | None = None,
    ) -> None:
        self.settings = settings
        self.state = state
        self._clock = clock
        self._started = clock() - state.elapsed
        self.max_concurrency = max_concurrency
        """The run config's `max_concurrency`: at most this many tool calls run at once."""
        self.attached: BaseException | None = None
        """The error `failed` last gave this run's steps (the run must not overwrite them)."""
        trim: Any = settings.trim_intermediate_steps
        self._trims = callable(trim) or (
            isinstance(trim, int) and not isinstance(trim, bool) and trim > 0
        )
        """Whether plans see trimmed steps (settings are read-only: decided once per run)."""

    # -- limits --------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds this run has used, resumes included."""
        return self._clock() - self._started

    def remaining(self) -> float | None:
        """Seconds left before the deadline, or None without one. A deadline further away than
        any wait can be (`inf`, `1e10`) is read as at most `MAX_WAIT` seconds away."""
        limit = self.settings.max_execution_time
        return None if limit is None else min(limit - self.elapsed(), MAX_WAIT)

    def _limit(self) -> str:
        """The limit that ends the run now that it may not go on."""
        limit = self.settings.max_iterations
        if limit is not None and self.state.iterations >= limit:
            return "max_iterations"
        return "max_execution_time"

    @property
    def stop_reason(self) -> str | None:
        """Why the run ended: "finished" (by the agent or a return_direct tool), or the limit
        that stopped it; None while it runs."""
        state = self.state
        if state.phase != "done":
            return None
        return (state.limit or "max_execution_time") if state.stopped else "finished"

    def _should_continue(self) -> bool:
        s = self.settings
        if s.max_iterations is not None and self.state.iterations >= s.max_iterations:
            return False
        return s.max_execution_time is None or self.state.elapsed < s.max_execution_time

    # -- protocol ------------------------------------------------------------------------------

    def next(self) -> Effect:
        """The effect the driver must carry out now (effects are built with `tuple.__new__`:
        a NamedTuple's own `__new__` is a Python call, and this runs twice a step)."""
        state = self.state
        if state.phase == "plan":
            s = self.settings  # `_should_continue`, inlined
            if (s.max_iterations is None or state.iterations < s.max_iterations) and (
                s.max_execution_time is None or state.elapsed < s.max_execution_time
            ):
                steps = state.steps
                return _new(Plan, (self._trimmed(steps) if self._trims else steps,))
            state.phase, state.limit = "stop", self._limit()
        if state.phase == "act":
            pending = state.pending
            if len(pending) == 1:
                return _new(Act, ([self._call(pending[0])], state.announce))
            return _new(Act, ([self._call(a) for a in pending], state.announce))
        if state.phase == "stop":
            return self._stop()
        assert state.finish is not None
        return Done(state.finish)

    def send(self, result: Any) -> None:
        """Report the result of the effect last returned by `next()`."""
        phase = self.state.phase
        if phase == "plan":
            self._planned(result)
        elif phase == "act":
            self._acted(result)
        elif phase == "stop":
            self._finish(result, stopped=True)
        else:
            raise RuntimeError(f"the run is over; nothing to send in phase {phase!r}")

    def late_stop(self) -> Stop:
        """The `generate` stop call overran the deadline (or none was left): the forced stop."""
        return Stop("force", False)

    def deadline_passed(self) -> None:
        """The deadline passed while the driver waited on a Plan: stop now."""
        self.state.elapsed = self.elapsed()
        self.state.phase, self.state.limit = "stop", "max_execution_time"

    # -- what drivers report and how they run a step ------------------------------------------

    def announced(self, effect: Act) -> list[Event]:
        """The events before a step's tools run: one per action, none for a parse-error step."""
        return [("action", call.action) for call in effect.calls] if effect.announce else []

    def stepped(self, before: int) -> list[Event]:
        """The events after a step: each new step, then `iteration` if the loop goes on."""
        steps = self.state.steps
        events: list[Event] = [("step", AgentStep(a, o)) for a, o in steps[before:]]
        if self.state.phase == "plan":
            events.append(("iteration", steps[before:]))
        return events

    @staticmethod
    def fires_action(call: ToolCall, is_async: bool) -> bool:
        """Whether `on_agent_action` fires before this call: always on the sync path; the async
        path fires none for a parse-error step (as LangChain's does)."""
        return not (is_async and call.parse_error)

    def window(self, count: int) -> int:
        """How many of a step's `count` calls may run at once (`max_concurrency`, at least 1)."""
        limit = self.max_concurrency
        return count if limit is None or limit >= count else max(limit, 1)

    def failed(
        self, exc: BaseException, calls: Sequence[ToolCall], finished: dict[int, Any]
    ) -> BaseException:
        """A tool raised: the run ends with that error, carrying every step done so far plus the
        calls of this step that finished (in call order). Returns the error, to raise."""
        done = [(calls[i].action, finished[i]) for i in sorted(finished)]
        self.attached = exc
        return attach_steps(exc, [*self.state.steps, *done])

    # -- transitions ---------------------------------------------------------------------------

    def _planned(self, output: Any) -> None:
        state = self.state
        if isinstance(output, AgentAction):  # the classes are disjoint: the usual ones first
            state.pending, state.announce = [output], True
        elif isinstance(output, AgentFinish):
            self._finish(output, stopped=False)
            return
        elif isinstance(output, OutputParserException):
            action = self._parse_error_action(output)
            state.pending, state.announce = [action], False
        else:
            state.pending, state.announce = list(output), True
        state.phase = "act"

    def _acted(self, result: Sequence[Any] | ActTimeout) -> None:
        state = self.state
        actions = state.pending
        if isinstance(result, ActTimeout):
            done = [(a, result.finished[i]) for i, a in enumerate(actions) if i in result.finished]
            state.steps.extend(done)
            state.pending, state.phase, state.limit = [], "stop", "max_execution_time"
            state.elapsed = self.elapsed()
            return
        state.pending = []
        if len(actions) == 1:
            action, observation = actions[0], result[0]
            state.steps.append((action, observation))
            tool = self.settings.tools.get(action.tool)  # `_direct_return`, inlined
            if tool is not None and tool.return_direct:
                self._finish(self._direct_return(action, observation), stopped=False)
                return
        else:
            state.steps.extend(zip(actions, result, strict=True))
        state.iterations += 1
        state.elapsed = self._clock() - self._started
        state.phase = "plan"

    def _finish(self, finish: AgentFinish, *, stopped: bool) -> None:
        self.state.finish = finish
        self.state.stopped = stopped
        self.state.elapsed = self.elapsed()
        self.state.phase = "done"

    # -- rules ---------------------------------------------------------------------------------

    def _stop(self) -> Stop:
        """The stop call: `generate` is one more model call, so it gets what is left of the
        deadline, and none at all once the deadline has passed."""
        method = self.settings.early_stopping_method
        if method != "generate":
            return Stop(method, False)
        remaining = self.remaining()
        if remaining is not None and remaining <= 0:
            return self.late_stop()
        return Stop(method, True, remaining)

    def _trimmed(self, steps: list[tuple[AgentAction, Any]]) -> list[tuple[AgentAction, Any]]:
        trim = self.settings.trim_intermediate_steps
        if isinstance(trim, int) and not isinstance(trim, bool) and trim > 0:
            return steps[-trim:]
        if callable(trim):
            return trim(steps)
        return steps

    def _parse_error_action(self, exc: OutputParserException) -> AgentAction:
        handler = self.settings.handle_parsing_errors
        if handler is False:
            raise ValueError(PARSE_ERROR_MESSAGE.format(e=exc)) from exc
        text = str(exc)
        if handler is True:
            if exc.send_to_llm:
                observation, text = str(exc.observation), str(exc.llm_output)
            else:
                observation = "Invalid or incomplete response"
        elif isinstance(handler, str):
            observation = handler
        elif callable(handler):
            observation = handler(exc)
        else:
            raise ValueError("Got unexpected type of `handle_parsing_errors`") from exc
        return AgentAction("_Exception", observation, text)

    def _call(self, action: AgentAction) -> ToolCall:
        settings = self.settings
        if action.tool == "_Exception" and not self.state.announce:
            kwargs = {**settings.tool_run_kwargs, "color": None}
            return ToolCall(action, settings.exception_tool, action.tool_input, kwargs, True)
        tool = settings.tools.get(action.tool)
        if tool is None:
            payload = {
                "requested_tool_name": action.tool,
                "available_tool_names": list(settings.tools),
            }
            kwargs = {**settings.tool_run_kwargs, "color": None}
            return ToolCall(action, settings.invalid_tool, payload, kwargs)
        return _new(
            ToolCall, (action, tool, action.tool_input, settings.run_kwargs[action.tool], False)
        )

    def _direct_return(self, action: AgentAction, observation: Any) -> AgentFinish:
        """The finish of a step whose tool is `return_direct`: its observation is the answer."""
        return AgentFinish({self.settings.return_key: observation}, "")
