"""The agent loop, written once: an I/O-free state machine that asks its driver for effects.

A driver (sync, async, durable) calls `core.next()` to learn what to do and `core.send(result)` to
report what happened:

    Plan(steps)          -> the agent's output for these (trimmed) steps, or the
                            OutputParserException it raised
    Act(calls, announce) -> one observation per call, in call order (`ActTimeout` if the
                            deadline passed first, with the observations that did finish)
    Stop(method)         -> the AgentFinish of `agent.return_stopped_response(method, ...)`
    Done(finish)         -> nothing: the run is over

All stop rules, parse-error handling, invalid tools, return_direct and trimming live here.
`LoopState` is plain data (inputs, steps, counters, phase), so a durable driver can save it
between effects and restore it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, final

from actloop.agents import AgentAction, AgentFinish
from actloop.callbacks import get_color_mapping
from actloop.exceptions import OutputParserException
from actloop.tools import ExceptionTool, InvalidTool

__all__ = [
    "Act",
    "ActTimeout",
    "Done",
    "LoopCore",
    "LoopSettings",
    "LoopState",
    "Plan",
    "Stop",
    "ToolCall",
]

PARSE_ERROR_MESSAGE = (
    "An output parsing error occurred. In order to pass this error back to the agent and have it "
    "try again, pass `handle_parsing_errors=True` to the AgentExecutor. This is the error: {e!s}"
)


@dataclass(frozen=True)
class LoopSettings:
    """The executor options the loop obeys."""

    tools: dict[str, Any]
    """Tools by name, in the executor's order."""
    max_iterations: int | None = 15
    max_execution_time: float | None = None
    early_stopping_method: str = "force"
    handle_parsing_errors: bool | str | Callable[[Any], str] = False
    trim_intermediate_steps: int | Callable[[list[Any]], list[Any]] = -1
    return_key: str = "output"
    """Key of the output that a return_direct tool fills (first of the agent's return_values)."""
    tool_run_kwargs: dict[str, Any] = field(default_factory=lambda: {})
    """The agent's `tool_run_logging_kwargs()`."""
    colors: dict[str, str] = field(default_factory=lambda: {})
    """Each tool's colour for verbose output."""

    run_kwargs: dict[str, dict[str, Any]] = field(default_factory=lambda: {})
    """Per tool, the extra keywords of its runs (colour, prefixes); computed once per run."""

    def __post_init__(self) -> None:
        if not self.colors:
            colors = get_color_mapping(list(self.tools), excluded_colors=["green", "red"])
            object.__setattr__(self, "colors", colors)
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


class ToolCall(NamedTuple):
    """One tool run: the action, the tool that serves it, its input and extra run kwargs."""

    action: AgentAction
    tool: Any
    tool_input: Any
    run_kwargs: dict[str, Any]


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


@final
class Done(NamedTuple):
    """The run is over."""

    finish: AgentFinish


class ActTimeout(NamedTuple):
    """Sent for an Act whose deadline passed: the observations that finished, by call index."""

    finished: dict[int, Any]


Effect = Plan | Act | Stop | Done


class LoopCore:
    """Decides the next effect from the state; see the module docstring for the protocol."""

    def __init__(
        self, settings: LoopSettings, state: LoopState, clock: Callable[[], float]
    ) -> None:
        self.settings = settings
        self.state = state
        self._clock = clock
        self._started = clock() - state.elapsed

    # -- limits --------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Seconds this run has used, resumes included."""
        return self._clock() - self._started

    def remaining(self) -> float | None:
        """Seconds left before the deadline, or None without one."""
        limit = self.settings.max_execution_time
        return None if limit is None else limit - self.elapsed()

    def _should_continue(self) -> bool:
        s = self.settings
        if s.max_iterations is not None and self.state.iterations >= s.max_iterations:
            return False
        return s.max_execution_time is None or self.state.elapsed < s.max_execution_time

    # -- protocol ------------------------------------------------------------------------------

    def next(self) -> Effect:
        """The effect the driver must carry out now."""
        state = self.state
        if state.phase == "plan":
            if self._should_continue():
                return Plan(self._trimmed(state.steps))
            state.phase = "stop"
        if state.phase == "act":
            return Act([self._call(a) for a in state.pending], state.announce)
        if state.phase == "stop":
            return Stop(self.settings.early_stopping_method)
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

    def deadline_passed(self) -> None:
        """The deadline passed while the driver waited on a Plan: stop now."""
        self.state.elapsed = self.elapsed()
        self.state.phase = "stop"

    # -- transitions ---------------------------------------------------------------------------

    def _planned(self, output: Any) -> None:
        state = self.state
        if isinstance(output, OutputParserException):
            action = self._parse_error_action(output)
            state.pending, state.announce = [action], False
        elif isinstance(output, AgentFinish):
            self._finish(output, stopped=False)
            return
        elif isinstance(output, AgentAction):
            state.pending, state.announce = [output], True
        else:
            state.pending, state.announce = list(output), True
        state.phase = "act"

    def _acted(self, result: Sequence[Any] | ActTimeout) -> None:
        state = self.state
        actions = state.pending
        if isinstance(result, ActTimeout):
            done = [(a, result.finished[i]) for i, a in enumerate(actions) if i in result.finished]
            state.steps.extend(done)
            state.pending, state.phase = [], "stop"
            state.elapsed = self.elapsed()
            return
        state.pending = []
        if len(actions) == 1:
            step = (actions[0], result[0])
            state.steps.append(step)
            if (direct := self._direct_return(*step)) is not None:
                self._finish(direct, stopped=False)
                return
        else:
            state.steps.extend(zip(actions, result, strict=True))
        state.iterations += 1
        state.elapsed = self.elapsed()
        state.phase = "plan"

    def _finish(self, finish: AgentFinish, *, stopped: bool) -> None:
        self.state.finish = finish
        self.state.stopped = stopped
        self.state.elapsed = self.elapsed()
        self.state.phase = "done"

    # -- rules ---------------------------------------------------------------------------------

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
            return ToolCall(action, _EXCEPTION_TOOL.get(ExceptionTool), action.tool_input, kwargs)
        tool = settings.tools.get(action.tool)
        if tool is None:
            payload = {
                "requested_tool_name": action.tool,
                "available_tool_names": list(settings.tools),
            }
            kwargs = {**settings.tool_run_kwargs, "color": None}
            return ToolCall(action, _INVALID_TOOL.get(InvalidTool), payload, kwargs)
        return ToolCall(action, tool, action.tool_input, settings.run_kwargs[action.tool])

    def _direct_return(self, action: AgentAction, observation: Any) -> AgentFinish | None:
        tool = self.settings.tools.get(action.tool)
        if tool is not None and tool.return_direct:
            return AgentFinish({self.settings.return_key: observation}, "")
        return None


class _Lazy:
    """One shared instance of a tool class, built on first use."""

    def __init__(self) -> None:
        self._instance: Any = None

    def get(self, cls: Callable[[], Any]) -> Any:
        if self._instance is None:
            self._instance = cls()
        return self._instance


_EXCEPTION_TOOL = _Lazy()
_INVALID_TOOL = _Lazy()
