"""The legacy agent classes: `Agent` (an `LLMChain` writing a text scratchpad) and
`LLMSingleActionAgent`; both are single-action agents the one loop runs like any other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from actloop.callbacks import Callbacks
from actloop.classic._chain import LLMChain
from actloop.exceptions import called_by_user, warn_deprecated
from actloop.executor import BaseSingleActionAgent
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import BasePromptTemplate, PromptTemplate
from actloop.runnables._base import Runnable
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool

__all__ = [
    "AGENT_DEPRECATION_WARNING",
    "Agent",
    "LLMSingleActionAgent",
    "validate_tools_single_input",
]

Steps = list[tuple[AgentAction, Any]]
STOPPED = "Agent stopped due to iteration limit or time limit."
GENERATE_SUFFIX = "\n\nI now need to return a final answer based on the previous steps:"

AGENT_DEPRECATION_WARNING = (
    "Use `langchain.agents.create_agent` for new applications. It provides a more flexible "
    "agent factory with middleware support, structured output, and integration with LangGraph "
    "for persistence, streaming, and human-in-the-loop workflows. Migration guide: "
    "https://docs.langchain.com/oss/python/migrate/langchain-v1"
)
"""LangChain's text (its `AGENT_DEPRECATION_WARNING`) for `initialize_agent` and the legacy
agent classes."""


def validate_tools_single_input(class_name: str, tools: Sequence[BaseTool]) -> None:
    """Raise when a tool takes several arguments: text agents send one string."""
    for tool in tools:
        if not tool.is_single_input:
            raise ValueError(f"{class_name} does not support multi-input tool {tool.name}.")


class Agent(BaseSingleActionAgent):
    """An agent driven by an `LLMChain` whose prompt has an `agent_scratchpad` variable.

    Subclasses give `observation_prefix`, `llm_prefix`, `create_prompt` and the default parser.
    """

    llm_chain: LLMChain
    output_parser: AgentOutputParser
    allowed_tools: list[str] | None = None
    _agent_type: ClassVar[str] = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if "output_parser" not in kwargs:
            self.output_parser = self._get_default_output_parser()
        self._check_prompt()

    def _check_prompt(self) -> None:
        """Add `agent_scratchpad` at the end of a prompt that lacks it (as LangChain does)."""
        prompt: Any = self.llm_chain.prompt
        if "agent_scratchpad" in prompt.input_variables:
            return
        if not isinstance(prompt, PromptTemplate):
            raise ValueError(f"Got unexpected prompt type {type(prompt)}")
        prompt.input_variables.append("agent_scratchpad")
        prompt.template += "\n{agent_scratchpad}"

    # -- what subclasses give ------------------------------------------------------------------

    @property
    def observation_prefix(self) -> str:
        """Written before each observation in the scratchpad."""
        raise NotImplementedError

    @property
    def llm_prefix(self) -> str:
        """Written after each observation: where the model goes on."""
        raise NotImplementedError

    @classmethod
    def create_prompt(cls, tools: Sequence[BaseTool]) -> BasePromptTemplate:
        """The agent's prompt for `tools`."""
        raise NotImplementedError

    @classmethod
    def _get_default_output_parser(cls, **kwargs: Any) -> AgentOutputParser:
        raise NotImplementedError(f"{cls.__name__} needs an output_parser")

    @classmethod
    def _validate_tools(cls, tools: Sequence[BaseTool]) -> None:
        """Raise for tools this agent cannot use (none by default)."""

    @classmethod
    def from_llm_and_tools(
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        output_parser: AgentOutputParser | None = None,
        **kwargs: Any,
    ) -> Agent:
        """The agent with its default prompt for `tools` and `llm`."""
        cls._validate_tools(tools)
        prompt = cls.create_prompt(tools)
        return cls._from_prompt(llm, tools, prompt, callback_manager, output_parser, kwargs)

    @classmethod
    def _from_prompt(
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        prompt: BasePromptTemplate,
        callback_manager: Callbacks,
        output_parser: AgentOutputParser | None,
        kwargs: dict[str, Any],
    ) -> Agent:
        """The agent on an LLMChain of `llm` and `prompt`, allowed `tools` (what every
        `from_llm_and_tools` ends with); no parser given: the class's default."""
        chain = LLMChain(llm=llm, prompt=prompt, callbacks=callback_manager)
        parser = output_parser or cls._get_default_output_parser()
        return cls(
            llm_chain=chain,
            allowed_tools=[t.name for t in tools],
            output_parser=parser,
            **kwargs,
        )

    # -- planning ------------------------------------------------------------------------------

    def get_allowed_tools(self) -> list[str] | None:
        return self.allowed_tools

    @property
    def return_values(self) -> list[str]:
        return ["output"]

    @property
    def input_keys(self) -> list[str]:
        return list(set(self.llm_chain.input_keys) - {"agent_scratchpad"})

    @property
    def _stop(self) -> list[str]:
        prefix = self.observation_prefix.rstrip()
        return [f"\n{prefix}", f"\n\t{prefix}"]

    def _construct_scratchpad(self, intermediate_steps: Steps) -> Any:
        """The steps as text: each action's log, its observation, then the model's prefix."""
        thoughts = ""
        for action, observation in intermediate_steps:
            thoughts += action.log
            thoughts += f"\n{self.observation_prefix}{observation}\n{self.llm_prefix}"
        return thoughts

    def get_full_inputs(self, intermediate_steps: Steps, **kwargs: Any) -> dict[str, Any]:
        """The chain's inputs: the user's, the scratchpad and the stop words."""
        thoughts = self._construct_scratchpad(intermediate_steps)
        return {**kwargs, "agent_scratchpad": thoughts, "stop": self._stop}

    def plan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """One model call; its reply parsed."""
        full_inputs = self.get_full_inputs(intermediate_steps, **kwargs)
        return self.output_parser.parse(self.llm_chain.predict(callbacks, **full_inputs))

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """Async `plan`."""
        full_inputs = self.get_full_inputs(intermediate_steps, **kwargs)
        output = await self.llm_chain.apredict(callbacks, **full_inputs)
        return await self.output_parser.aparse(output)

    def _generate_inputs(self, intermediate_steps: Steps, kwargs: dict[str, Any]) -> dict[str, Any]:
        thoughts = ""
        for action, observation in intermediate_steps:
            thoughts += action.log
            thoughts += f"\n{self.observation_prefix}{observation}\n{self.llm_prefix}"
        return {**kwargs, "agent_scratchpad": thoughts + GENERATE_SUFFIX, "stop": self._stop}

    def _stopped(self, output: str) -> AgentFinish:
        parsed = self.output_parser.parse(output)
        return (
            parsed if isinstance(parsed, AgentFinish) else AgentFinish({"output": output}, output)
        )

    def return_stopped_response(
        self,
        early_stopping_method: str,
        intermediate_steps: Steps,
        callbacks: Callbacks = None,
        **kwargs: Any,
    ) -> AgentFinish:
        """`force`: a fixed text; `generate`: one more model call asked for the final answer."""
        if early_stopping_method == "force":
            return AgentFinish({"output": STOPPED}, "")
        if early_stopping_method == "generate":
            inputs = self._generate_inputs(intermediate_steps, kwargs)
            return self._stopped(self.llm_chain.predict(callbacks, **inputs))
        raise ValueError(
            "early_stopping_method should be one of `force` or `generate`, "
            f"got {early_stopping_method}"
        )

    async def areturn_stopped_response(
        self,
        early_stopping_method: str,
        intermediate_steps: Steps,
        callbacks: Callbacks = None,
        **kwargs: Any,
    ) -> AgentFinish:
        """Async `return_stopped_response`."""
        if early_stopping_method != "generate":
            return self.return_stopped_response(early_stopping_method, intermediate_steps)
        inputs = self._generate_inputs(intermediate_steps, kwargs)
        return self._stopped(await self.llm_chain.apredict(callbacks, **inputs))

    def tool_run_logging_kwargs(self) -> dict[str, Any]:
        return {"llm_prefix": self.llm_prefix, "observation_prefix": self.observation_prefix}


class LLMSingleActionAgent(BaseSingleActionAgent):
    """An `LLMChain` and a parser: the chain gets `intermediate_steps` and stops at `stop`."""

    llm_chain: LLMChain
    output_parser: AgentOutputParser
    stop: list[str]

    def __init__(
        self,
        *,
        llm_chain: LLMChain,
        output_parser: AgentOutputParser,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if called_by_user():
            warn_deprecated("LLMSingleActionAgent", AGENT_DEPRECATION_WARNING)
        super().__init__(llm_chain=llm_chain, output_parser=output_parser, **kwargs)
        self.stop = list(stop or [])

    @property
    def input_keys(self) -> list[str]:
        return list(set(self.llm_chain.input_keys) - {"intermediate_steps"})

    def plan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """One chain call with the steps; its reply parsed."""
        output = self.llm_chain.run(
            callbacks, intermediate_steps=intermediate_steps, stop=self.stop, **kwargs
        )
        return self.output_parser.parse(output)

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """Async `plan`."""
        output = await self.llm_chain.arun(
            callbacks, intermediate_steps=intermediate_steps, stop=self.stop, **kwargs
        )
        return self.output_parser.parse(output)

    def tool_run_logging_kwargs(self) -> dict[str, Any]:
        return {"llm_prefix": "", "observation_prefix": self.stop[0] if self.stop else ""}
