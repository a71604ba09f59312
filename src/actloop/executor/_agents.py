"""Agent base classes: single- and multi-action agents and the Runnable adapters.

An agent only decides (`plan`); the executor does everything else. `return_stopped_response`
supports both `"force"` and `"generate"` for every agent (LangChain supports `"generate"` only for
its deprecated LLMChain agents): `"generate"` plans once more with the steps so far plus a step
that asks for the final answer; if the agent still asks for a tool, the text of that reply
becomes the output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from actloop.callbacks import Callbacks
from actloop.exceptions import OutputParserException
from actloop.runnables._base import Runnable, unpackable
from actloop.runnables._config import RunnableConfig
from actloop.steps import AgentAction, AgentActionMessageLog, AgentFinish

__all__ = [
    "RUNNABLE_PLAN",
    "BaseMultiActionAgent",
    "BaseSingleActionAgent",
    "RunnableAgent",
    "RunnableMultiActionAgent",
    "plan_with",
]

Steps = list[tuple[AgentAction, Any]]
PlanOutput = AgentAction | list[AgentAction] | AgentFinish
"""What `plan` returns: one action (single-action agents), a list of them (multi-action agents),
or the finish."""

STOPPED_SINGLE = "Agent stopped due to iteration limit or time limit."
STOPPED_MULTI = "Agent stopped due to max iterations."
GENERATE_LOG = "\n\nI now need to return a final answer based on the previous steps:"
GENERATE_OBSERVATION = (
    "The step or time limit is reached: do not call any more tools. "
    "Give your final answer now, based on the steps so far."
)


def _final_answer_step() -> tuple[AgentAction, str]:
    """The extra step `generate` shows the agent: its log and its observation ask for the answer."""
    return AgentAction("_FinalAnswer", "", GENERATE_LOG), GENERATE_OBSERVATION


def _reply_text(output: Any) -> str:
    """The text of a reply that was not a finish: the model's words, else the action's log."""
    if isinstance(output, OutputParserException):
        return str(output.llm_output) if output.llm_output is not None else str(output)
    action: object = output
    if isinstance(output, list) and output:
        action = cast("list[object]", output)[0]
    if isinstance(action, AgentActionMessageLog) and action.message_log:
        content = getattr(action.message_log[-1], "content", "")
        if isinstance(content, str) and content.strip():
            return content
    return str(getattr(action, "log", ""))


def _as_finish(output: Any, key: str) -> AgentFinish:
    if isinstance(output, AgentFinish):
        return output
    text = _reply_text(output)
    return AgentFinish({key: text}, text)


class _AgentBase:
    """What single- and multi-action agents share: fields from keywords, stop responses."""

    _stopped_text = STOPPED_SINGLE

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)

    @property
    def return_values(self) -> list[str]:
        """Keys of the agent's final output."""
        return ["output"]

    @property
    def input_keys(self) -> list[str]:
        """Keys the agent expects in its inputs."""
        return []

    def get_allowed_tools(self) -> list[str] | None:
        """Tool names this agent may call, or None for any."""
        return None

    def tool_run_logging_kwargs(self) -> dict[str, Any]:
        """Extra keywords for tool runs (verbose prefixes)."""
        return {}

    def plan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> PlanOutput:
        """The next move given the steps so far: an action, several, or the finish."""
        raise NotImplementedError(f"{type(self).__name__} must implement plan()")

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> PlanOutput:
        """Async plan; by default calls `plan` inline (override for real async work)."""
        return self.plan(intermediate_steps, callbacks, **kwargs)

    def _stop_key(self) -> str:
        return self.return_values[0] if self.return_values else "output"

    def return_stopped_response(
        self,
        early_stopping_method: str,
        intermediate_steps: Steps,
        callbacks: Callbacks = None,
        **kwargs: Any,
    ) -> AgentFinish:
        """The finish of a run stopped by a limit: a fixed text, or one more model call."""
        if early_stopping_method == "force":
            return AgentFinish({"output": self._stopped_text}, "")
        if early_stopping_method == "generate":
            steps = [*intermediate_steps, _final_answer_step()]
            try:
                output = self.plan(steps, callbacks, **kwargs)
            except OutputParserException as exc:
                output = exc
            return _as_finish(output, self._stop_key())
        raise ValueError(f"Got unsupported early_stopping_method `{early_stopping_method}`")

    async def areturn_stopped_response(
        self,
        early_stopping_method: str,
        intermediate_steps: Steps,
        callbacks: Callbacks = None,
        **kwargs: Any,
    ) -> AgentFinish:
        """Async twin of `return_stopped_response`."""
        if early_stopping_method != "generate":
            return self.return_stopped_response(early_stopping_method, intermediate_steps)
        steps = [*intermediate_steps, _final_answer_step()]
        try:
            output = await self.aplan(steps, callbacks, **kwargs)
        except OutputParserException as exc:
            output = exc
        return _as_finish(output, self._stop_key())


class BaseSingleActionAgent(_AgentBase):
    """An agent that returns one AgentAction (or an AgentFinish) per step."""


class BaseMultiActionAgent(_AgentBase):
    """An agent that returns a list of AgentActions (or an AgentFinish) per step."""

    _stopped_text = STOPPED_MULTI


class _RunnableMixin:
    """`plan` by calling a Runnable with `{**inputs, "intermediate_steps": steps}`."""

    runnable: Runnable[Any, Any]
    stream_runnable: bool
    input_keys_arg: list[str]
    return_keys_arg: list[str]

    def _init(
        self,
        runnable: Runnable[Any, Any],
        input_keys_arg: Sequence[str] | None,
        return_keys_arg: Sequence[str] | None,
        stream_runnable: bool,
    ) -> None:
        self.runnable = runnable
        self.input_keys_arg = list(input_keys_arg or [])
        self.return_keys_arg = list(return_keys_arg or [])
        self.stream_runnable = stream_runnable

    @property
    def return_values(self) -> list[str]:
        return self.return_keys_arg

    @property
    def input_keys(self) -> list[str]:
        return self.input_keys_arg

    def plan(self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any) -> Any:
        """Stream (so model tokens reach callbacks) or invoke the runnable; chunks are added."""
        kwargs["intermediate_steps"] = intermediate_steps  # `kwargs` is this call's own dict
        return _planned(self, kwargs, callbacks)

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> Any:
        """Async twin of `plan`."""
        kwargs["intermediate_steps"] = intermediate_steps
        inputs = kwargs
        config: RunnableConfig = {"callbacks": callbacks} if callbacks is not None else {}
        if not self.stream_runnable:
            return await self.runnable.ainvoke(inputs, config)
        final: Any = None
        async for chunk in self.runnable.astream(inputs, config):
            final = chunk if final is None else final + chunk
        return final


def _planned(agent: _RunnableMixin, inputs: dict[str, Any], callbacks: Callbacks) -> Any:
    """`plan`'s call of the agent's runnable on `inputs` (the steps already in)."""
    config: RunnableConfig = {"callbacks": callbacks} if callbacks is not None else {}
    if not agent.stream_runnable:
        return agent.runnable.invoke(inputs, config)
    final: Any = None
    for chunk in agent.runnable.stream(inputs, config):
        final = chunk if final is None else final + chunk
    return final


_PLAN_NAMED = ("self", "intermediate_steps", "callbacks")


RUNNABLE_PLAN = _RunnableMixin.plan
"""A runnable agent's `plan`: an agent whose class keeps it may be planned with `plan_with`."""


def plan_with(agent: Any, steps: Steps, callbacks: Callbacks, inputs: dict[str, Any]) -> Any:
    """`agent.plan(steps, callbacks, **inputs)` for an agent whose `plan` is `RUNNABLE_PLAN` (the
    sync driver's call each step): its inputs are copied item by item instead, as `**` would
    copy the dict's key table with a fresh allocation (see `runnables.unpackable`)."""
    if unpackable(inputs, _PLAN_NAMED):
        own = dict(inputs.items())
        own["intermediate_steps"] = steps
        return _planned(agent, own, callbacks)
    return agent.plan(steps, callbacks, **inputs)


class RunnableAgent(_RunnableMixin, BaseSingleActionAgent):
    """A single-action agent powered by a Runnable (`prompt | model | parser`)."""

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        *,
        input_keys_arg: Sequence[str] | None = None,
        return_keys_arg: Sequence[str] | None = None,
        stream_runnable: bool = True,
    ) -> None:
        self._init(runnable, input_keys_arg, return_keys_arg, stream_runnable)


class RunnableMultiActionAgent(_RunnableMixin, BaseMultiActionAgent):
    """A multi-action agent powered by a Runnable (e.g. a tool-calling agent)."""

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        *,
        input_keys_arg: Sequence[str] | None = None,
        return_keys_arg: Sequence[str] | None = None,
        stream_runnable: bool = True,
    ) -> None:
        self._init(runnable, input_keys_arg, return_keys_arg, stream_runnable)
