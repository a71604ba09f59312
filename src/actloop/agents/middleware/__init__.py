"""Middleware for `create_agent` agents (`langchain.agents.middleware` under the same names)."""

from __future__ import annotations

from actloop.agents.middleware.auto_mode import AutoModeMiddleware
from actloop.agents.middleware.context_editing import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
)
from actloop.agents.middleware.file_search import FilesystemFileSearchMiddleware
from actloop.agents.middleware.human_in_the_loop import (
    HumanInTheLoopMiddleware,
    InterruptOnConfig,
)
from actloop.agents.middleware.model_call_limit import (
    ModelCallLimitExceededError,
    ModelCallLimitMiddleware,
)
from actloop.agents.middleware.model_fallback import ModelFallbackMiddleware
from actloop.agents.middleware.model_refusal import ModelRefusalMiddleware
from actloop.agents.middleware.model_retry import ModelRetryMiddleware
from actloop.agents.middleware.model_router import ModelChoice, ModelRouterMiddleware
from actloop.agents.middleware.pii import PIIDetectionError, PIIMatch, PIIMiddleware
from actloop.agents.middleware.provider_tool_search import ProviderToolSearchMiddleware
from actloop.agents.middleware.shell_tool import (
    CodexSandboxExecutionPolicy,
    DockerExecutionPolicy,
    HostExecutionPolicy,
    RedactionRule,
    ShellToolMiddleware,
)
from actloop.agents.middleware.summarization import SummarizationMiddleware
from actloop.agents.middleware.todo import TodoListMiddleware
from actloop.agents.middleware.tool_call_limit import (
    ToolCallLimitExceededError,
    ToolCallLimitMiddleware,
)
from actloop.agents.middleware.tool_emulator import LLMToolEmulator
from actloop.agents.middleware.tool_error import ToolErrorMiddleware
from actloop.agents.middleware.tool_retry import ToolRetryMiddleware
from actloop.agents.middleware.tool_selection import LLMToolSelectorMiddleware
from actloop.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    InputAgentState,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    Runtime,
    ToolCallRequest,
    ToolRuntime,
    after_agent,
    after_model,
    before_agent,
    before_model,
    dynamic_prompt,
    hook_config,
    wrap_model_call,
    wrap_tool_call,
)

__all__ = [
    "AgentMiddleware",
    "AgentState",
    "AutoModeMiddleware",
    "ClearToolUsesEdit",
    "CodexSandboxExecutionPolicy",
    "ContextEditingMiddleware",
    "DockerExecutionPolicy",
    "ExtendedModelResponse",
    "FilesystemFileSearchMiddleware",
    "HostExecutionPolicy",
    "HumanInTheLoopMiddleware",
    "InputAgentState",
    "InterruptOnConfig",
    "LLMToolEmulator",
    "LLMToolSelectorMiddleware",
    "ModelCallLimitExceededError",
    "ModelCallLimitMiddleware",
    "ModelCallResult",
    "ModelChoice",
    "ModelFallbackMiddleware",
    "ModelRefusalMiddleware",
    "ModelRequest",
    "ModelResponse",
    "ModelRetryMiddleware",
    "ModelRouterMiddleware",
    "PIIDetectionError",
    "PIIMatch",
    "PIIMiddleware",
    "ProviderToolSearchMiddleware",
    "RedactionRule",
    "Runtime",
    "ShellToolMiddleware",
    "SummarizationMiddleware",
    "TodoListMiddleware",
    "ToolCallLimitExceededError",
    "ToolCallLimitMiddleware",
    "ToolCallRequest",
    "ToolErrorMiddleware",
    "ToolRetryMiddleware",
    "ToolRuntime",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "dynamic_prompt",
    "hook_config",
    "wrap_model_call",
    "wrap_tool_call",
]
