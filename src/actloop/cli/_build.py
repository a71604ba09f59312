"""Builds the CLI's model, agent and executor from its options; mistakes are ConfigurationErrors."""

from __future__ import annotations

import argparse
import os
from typing import Any

from actloop.exceptions import ConfigurationError

__all__ = ["DEFAULT_SYSTEM", "build_agent", "build_executor", "build_model"]

DEFAULT_SYSTEM = (
    "You are a helpful assistant. Use the tools when they help; for arithmetic always use the "
    "calculator. When you know the answer, reply with it directly."
)


def build_model(spec: str, *, base_url: str | None, api_key: str | None, seed: int | None) -> Any:
    """A chat model from `local` or `openai:MODEL` (with an optional OpenAI-compatible base URL)."""
    if spec == "local":
        if base_url:
            raise ConfigurationError(
                "--base-url needs --model openai:MODEL (the local model is in-process)"
            )
        from actloop.models.local import LocalChatModel

        return LocalChatModel(seed=seed)
    provider, _, name = spec.partition(":")
    if provider != "openai" or not name:
        raise ConfigurationError(f"unknown model {spec!r}; use 'local' or 'openai:MODEL'")
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key and not base_url and not os.environ.get("OPENAI_BASE_URL"):
        raise ConfigurationError(
            "missing API key: set OPENAI_API_KEY or pass --api-key"
            " (or --base-url for a local server)"
        )
    from actloop.models import ChatOpenAI

    return ChatOpenAI(model=name, base_url=base_url, api_key=key or "not-needed", temperature=0)


def default_agent(spec: str) -> str:
    """The agent kind that suits a model: JSON for the small local model, tool calling otherwise."""
    return "json" if spec == "local" else "tool-calling"


def build_agent(kind: str, llm: Any, tools: list[Any]) -> Any:
    """A Runnable agent of this kind over `llm` and `tools`."""
    if kind == "json":
        from actloop.models.local import LocalChatModel, local_json_agent

        if isinstance(llm, LocalChatModel):
            return local_json_agent(llm, tools)  # few-shot prompt tuned for the tiny model
        from actloop.json_agent import create_structured_json_agent

        return create_structured_json_agent(llm, tools)
    if kind == "react":
        from actloop.react import REACT_PROMPT, create_react_agent

        return create_react_agent(llm, tools, REACT_PROMPT)
    from actloop.prompts import ChatPromptTemplate
    from actloop.tool_calling import create_tool_calling_agent

    prompt = ChatPromptTemplate.from_messages(
        [("system", DEFAULT_SYSTEM), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    return create_tool_calling_agent(llm, tools, prompt)


def build_executor(args: argparse.Namespace, checkpointer: Any = None) -> Any:
    """The AgentExecutor the CLI runs (journaled in `args.db` for `run --db FILE`)."""
    from actloop.executor import AgentExecutor
    from actloop.tools.builtin import get_builtin_tools

    names = [n.strip() for n in args.tools.split(",") if n.strip()]
    if not names:
        raise ConfigurationError("--tools needs at least one tool")
    tools = get_builtin_tools(names, root=args.root)
    llm = build_model(args.model, base_url=args.base_url, api_key=args.api_key, seed=args.seed)
    agent = build_agent(args.agent or default_agent(args.model), llm, tools)
    return AgentExecutor(
        agent=agent,
        tools=tools,
        max_iterations=args.max_iterations,
        max_execution_time=args.timeout,
        early_stopping_method=args.early_stopping,
        handle_parsing_errors=True,
        checkpointer=checkpointer or _checkpointer(args),
    )


def _checkpointer(args: argparse.Namespace) -> Any:
    if getattr(args, "command", "run") != "run" or not getattr(args, "db", None):
        return None
    from actloop.checkpoint import connect

    return connect(args.db)  # a file, or a postgresql:// URL
