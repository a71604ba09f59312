"""The self-ask-with-search agent kind: follow-up questions answered by one tool named
`Intermediate Answer` (LangChain's `create_self_ask_with_search_agent`, `SelfAskOutputParser`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import format_log_to_str
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import BasePromptTemplate
from actloop.prompts._agent_checks import require_variables
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool

__all__ = ["SelfAskOutputParser", "create_self_ask_with_search_agent"]


class SelfAskOutputParser(AgentOutputParser):
    """A last line with `Follow up:` asks the tool; `So the final answer is: x` finishes."""

    followups: Sequence[str] = ("Follow up:", "Followup:")
    finish_string: str = "So the final answer is: "

    def __init__(
        self,
        followups: Sequence[str] = ("Follow up:", "Followup:"),
        finish_string: str = "So the final answer is: ",
    ) -> None:
        self.followups = followups
        self.finish_string = finish_string

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """The follow-up question as an action, the final answer as a finish."""
        last_line = text.rsplit("\n", maxsplit=1)[-1]
        if not any(follow in last_line for follow in self.followups):
            if self.finish_string not in last_line:
                raise OutputParserException(f"Could not parse output: {text}")
            return AgentFinish({"output": last_line[len(self.finish_string) :]}, text)
        after_colon = text.rsplit(":", maxsplit=1)[-1].strip()
        return AgentAction("Intermediate Answer", after_colon, text)

    @property
    def _type(self) -> str:
        return "self_ask"


def _scratchpad(inputs: dict[str, Any]) -> str:
    return format_log_to_str(
        inputs["intermediate_steps"],
        observation_prefix="\nIntermediate answer: ",
        llm_prefix="",
    )


def _chat_history(inputs: dict[str, Any]) -> Any:
    return inputs.get("chat_history", "")


def create_self_ask_with_search_agent(
    llm: Runnable[Any, Any], tools: Sequence[BaseTool], prompt: BasePromptTemplate
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """`scratchpad | prompt | llm (stop at the answer) | SelfAskOutputParser`; one tool only."""
    require_variables(prompt, {"agent_scratchpad"})
    if len(tools) != 1:
        raise ValueError("This agent expects exactly one tool")
    if next(iter(tools)).name != "Intermediate Answer":
        raise ValueError("This agent expects the tool to be named `Intermediate Answer`")
    return (
        RunnablePassthrough.assign(agent_scratchpad=_scratchpad, chat_history=_chat_history)
        | prompt
        | llm.bind(stop=["\nIntermediate answer:"])
        | SelfAskOutputParser()
    )
