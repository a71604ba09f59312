"""`LLMToolEmulator` (LangChain 1.5's, ported): chosen tools are not run; a model writes what
they would have returned, for testing an agent without its real tools.

The emulation prompt and the call's marks (`lc_source="tool_emulation"`, the internal-call
token, the `nostream` tag, so it stays off the `messages` stream) are LangChain's. Without
`model`, LangChain's deprecated default (an Anthropic model) is asked for through
`init_chat_model`.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from actloop.agents._models import chat_model
from actloop.agents.middleware._chat_models import init_chat_model
from actloop.agents.middleware.internal_call_transformer import internal_call_config
from actloop.agents.middleware.types import AgentMiddleware, ToolCallRequest
from actloop.messages import HumanMessage, ToolMessage

__all__ = ["LLMToolEmulator"]

_DEFAULT_EMULATOR_MODEL = "anthropic:claude-sonnet-4-5-20250929"

_NO_ANTHROPIC = (
    "LLMToolEmulator's default model requires `langchain-anthropic` to be installed. Install it "
    "with `pip install langchain-anthropic`, or pass `model=...` explicitly to use a different "
    "provider."
)


def _default_model() -> Any:
    """LangChain's deprecated default emulator model (warned, as LangChain warns)."""
    warnings.warn(
        f"LLMToolEmulator's default model ({_DEFAULT_EMULATOR_MODEL!r}) is deprecated and will be "
        "removed in a future release. Pass `model` explicitly instead.",
        DeprecationWarning,
        stacklevel=3,
    )
    try:
        return init_chat_model(_DEFAULT_EMULATOR_MODEL, temperature=1)
    except ImportError as exc:
        raise ImportError(_NO_ANTHROPIC) from exc


class LLMToolEmulator(AgentMiddleware):
    """Emulates the chosen tools (`tools`: names or tools; None: all, `[]`: none) with a model
    instead of running them."""

    def __init__(self, *, tools: Sequence[Any] | None = None, model: Any = None) -> None:
        """`model` is a chat model (actloop's or LangChain's) or a `"provider:name"` string."""
        self.emulate_all = tools is None
        self.tools_to_emulate: set[str] = {t if isinstance(t, str) else t.name for t in tools or ()}
        if model is None:
            self.model = _default_model()
        elif isinstance(model, str):
            self.model = init_chat_model(model, temperature=1)
        else:
            self.model = chat_model(model)

    def _emulates(self, request: ToolCallRequest) -> bool:
        """Whether this call's tool is emulated."""
        return self.emulate_all or request.tool_call["name"] in self.tools_to_emulate

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        """The emulated answer for an emulated tool; other calls run the tool."""
        if not self._emulates(request):
            return handler(request)
        response = self.model.invoke([HumanMessage(_prompt(request))], _config())
        return _answer(request, response)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        """`wrap_tool_call` on the async path."""
        if not self._emulates(request):
            return await handler(request)
        response = await self.model.ainvoke([HumanMessage(_prompt(request))], _config())
        return _answer(request, response)


def _config() -> dict[str, Any]:
    """The emulation call's config: marked internal (LangChain's), out of the `messages` stream."""
    return internal_call_config("tool_emulation")


def _prompt(request: ToolCallRequest) -> str:
    """LangChain's emulation prompt for one tool call."""
    call = request.tool_call
    description = request.tool.description if request.tool else "No description available"
    return (
        f"You are emulating a tool call for testing purposes.\n\n"
        f"Tool: {call['name']}\n"
        f"Description: {description}\n"
        f"Arguments: {call['args']}\n\n"
        f"Generate a realistic response that this tool would return "
        f"given these arguments.\n"
        f"Return ONLY the tool's output, no explanation or preamble. "
        f"Introduce variation into your responses."
    )


def _answer(request: ToolCallRequest, response: Any) -> ToolMessage:
    """The emulated result: the model's content as the tool's message."""
    name = request.tool_call["name"]
    return ToolMessage(content=response.content, tool_call_id=request.tool_call["id"], name=name)
