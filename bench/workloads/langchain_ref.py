"""LangChain classic side (langchain-classic 1.0.8 + langchain-core) of the LangChain workloads."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from langchain_classic.agents import (
    AgentExecutor,
    BaseSingleActionAgent,
    create_tool_calling_agent,
)
from langchain_core.agents import AgentAction, AgentFinish
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.tools import StructuredTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from workloads import _lc_style as lc

UNSUPPORTED: dict[str, str] = {}
NOTES = {
    "hung_sync": "max_execution_time is only checked between iterations",
    "stream": "AgentExecutor.stream(): first chunk (the first `actions` chunk)",
}


class ScriptedChatModel(BaseChatModel):
    """Replays ``responses`` in order (cycling); the langchain-core twin of actloop.testing's."""

    responses: list[BaseMessage]
    i: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _next(self) -> ChatResult:
        msg = self.responses[self.i % len(self.responses)]
        self.i += 1
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        return self._next()

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> Any:
        return self._next()

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


API = SimpleNamespace(
    AgentExecutor=AgentExecutor,
    BaseSingleActionAgent=BaseSingleActionAgent,
    AgentAction=AgentAction,
    AgentFinish=AgentFinish,
    StructuredTool=StructuredTool,
    tool=tool,
    ChatPromptTemplate=ChatPromptTemplate,
    MessagesPlaceholder=MessagesPlaceholder,
    create_tool_calling_agent=create_tool_calling_agent,
    AIMessage=AIMessage,
    HumanMessage=HumanMessage,
    make_chat_model=lambda responses: ScriptedChatModel(responses=responses),
)


# The workloads themselves live once in _lc_style; this library only supplies its API.
globals().update(lc.bind_workloads(API))
