"""`AgentType` and `initialize_agent`: one call that builds a legacy agent's executor."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from actloop.callbacks import Callbacks
from actloop.classic._agent import AGENT_DEPRECATION_WARNING
from actloop.classic.legacy_kinds import (
    ChatAgent,
    ConversationalAgent,
    ConversationalChatAgent,
    ReActDocstoreAgent,
    SelfAskWithSearchAgent,
)
from actloop.classic.mrkl import ZeroShotAgent
from actloop.classic.openai_functions_agent import OpenAIFunctionsAgent, OpenAIMultiFunctionsAgent
from actloop.classic.structured_chat_agent import StructuredChatAgent
from actloop.exceptions import warn_deprecated
from actloop.executor import AgentExecutor
from actloop.runnables._base import Runnable
from actloop.tools import BaseTool

__all__ = ["AGENT_TO_CLASS", "AgentType", "initialize_agent"]


class AgentType(str, Enum):
    """The legacy agent kinds `initialize_agent` builds."""

    ZERO_SHOT_REACT_DESCRIPTION = "zero-shot-react-description"
    REACT_DOCSTORE = "react-docstore"
    SELF_ASK_WITH_SEARCH = "self-ask-with-search"
    CONVERSATIONAL_REACT_DESCRIPTION = "conversational-react-description"
    CHAT_ZERO_SHOT_REACT_DESCRIPTION = "chat-zero-shot-react-description"
    CHAT_CONVERSATIONAL_REACT_DESCRIPTION = "chat-conversational-react-description"
    STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION = "structured-chat-zero-shot-react-description"
    OPENAI_FUNCTIONS = "openai-functions"
    OPENAI_MULTI_FUNCTIONS = "openai-multi-functions"


AGENT_TO_CLASS: dict[AgentType, Any] = {
    AgentType.ZERO_SHOT_REACT_DESCRIPTION: ZeroShotAgent,
    AgentType.REACT_DOCSTORE: ReActDocstoreAgent,
    AgentType.SELF_ASK_WITH_SEARCH: SelfAskWithSearchAgent,
    AgentType.CONVERSATIONAL_REACT_DESCRIPTION: ConversationalAgent,
    AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION: ChatAgent,
    AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION: ConversationalChatAgent,
    AgentType.STRUCTURED_CHAT_ZERO_SHOT_REACT_DESCRIPTION: StructuredChatAgent,
    AgentType.OPENAI_FUNCTIONS: OpenAIFunctionsAgent,
    AgentType.OPENAI_MULTI_FUNCTIONS: OpenAIMultiFunctionsAgent,
}
"""The class behind each agent type."""


def initialize_agent(
    tools: Sequence[BaseTool],
    llm: Runnable[Any, Any],
    agent: AgentType | str | None = None,
    callback_manager: Callbacks = None,
    agent_path: str | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    *,
    tags: Sequence[str] | None = None,
    **kwargs: Any,
) -> AgentExecutor:
    """An executor running the legacy agent `agent` (default: zero-shot ReAct) with `tools`."""
    warn_deprecated("initialize_agent", AGENT_DEPRECATION_WARNING)
    tags_ = list(tags) if tags else []
    if agent is not None and agent_path is not None:
        raise ValueError(
            "Both `agent` and `agent_path` are specified, but at most only one should be."
        )
    if agent_path is not None:
        raise ValueError("actloop does not load agents from files (agent_path); pass `agent`")
    agent = AgentType.ZERO_SHOT_REACT_DESCRIPTION if agent is None else agent
    if agent not in AGENT_TO_CLASS:
        raise ValueError(
            f"Got unknown agent type: {agent}. Valid types are: {AGENT_TO_CLASS.keys()}."
        )
    agent_type = AgentType(agent)
    tags_.append(agent_type.value)
    agent_obj = AGENT_TO_CLASS[agent_type].from_llm_and_tools(
        llm, tools, callback_manager=callback_manager, **(agent_kwargs or {})
    )
    return AgentExecutor.from_agent_and_tools(
        agent=agent_obj, tools=tools, callbacks=callback_manager, tags=tags_, **kwargs
    )
