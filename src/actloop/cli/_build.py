"""Builds the CLI's model, agent and executor from its options; mistakes are ConfigurationErrors."""

from __future__ import annotations

import argparse
import os
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from actloop.exceptions import ConfigurationError

__all__ = [
    "DEFAULT_SYSTEM",
    "DEFAULT_TIMEOUT",
    "MAX_TIMEOUT",
    "build_agent",
    "build_executor",
    "build_model",
]

DEFAULT_SYSTEM = (
    "You are a helpful assistant. Use the tools when they help; for arithmetic always use the "
    "calculator. When you know the answer, reply with it directly."
)
DEFAULT_TIMEOUT = 300.0
"""The deadline of `actloop run` when `--timeout` is absent: a stalled server costs 5 minutes, not
the SDK's 600 s x 3 attempts (`runs resume` keeps the limit the run was started with)."""
MAX_TIMEOUT = 1_000_000.0
"""The largest `--timeout` (about 11.5 days): larger values overflow platform timers."""


def build_model(
    spec: str,
    *,
    base_url: str | None,
    api_key: str | None,
    seed: int | None,
    timeout: float | None = None,
) -> Any:
    """A chat model from `local` or `openai:MODEL` (with an optional OpenAI-compatible base URL);
    `timeout` bounds each HTTP attempt, so a call the run abandoned at its deadline ends too."""
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

    return ChatOpenAI(
        model=name,
        base_url=base_url,
        api_key=key or "not-needed",
        temperature=0,
        timeout=timeout or None,
        stream_usage=True,  # the live display shows tokens (off by default with a base URL)
    )


def default_agent(spec: str) -> str:
    """The agent kind that suits a model: JSON for the small local model, tool calling otherwise."""
    return "json" if spec == "local" else "tool-calling"


def build_agent(kind: str, llm: Any, tools: list[Any], root: str | None = None) -> Any:
    """A Runnable agent of this kind over `llm` and `tools` (`root`: the file tools' folder)."""
    if kind == "json":
        from actloop.models.local import LocalChatModel, local_json_agent

        if isinstance(llm, LocalChatModel):
            return local_json_agent(llm, tools, root)  # few-shot prompt tuned for the tiny model
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


def build_executor(
    args: argparse.Namespace, checkpointer: Any = None, resources: ExitStack | None = None
) -> Any:
    """The AgentExecutor the CLI runs (journaled in `args.db` for `run --db FILE`); MCP servers
    (`--mcp`, `--mcp-url`) are opened in `resources`, which ends them."""
    from actloop.executor import AgentExecutor
    from actloop.tools.builtin import get_builtin_tools

    names = [n.strip() for n in args.tools.split(",") if n.strip()]
    if not names:
        raise ConfigurationError("--tools needs at least one tool")
    timeout = _deadline(args.timeout)
    tools = get_builtin_tools(names, root=args.root)
    if resources is not None:
        from actloop.cli._mcp import mcp_tools

        tools += mcp_tools(args, resources, {t.name for t in tools})
    llm = build_model(
        args.model, base_url=args.base_url, api_key=args.api_key, seed=args.seed, timeout=timeout
    )
    agent = build_agent(args.agent or default_agent(args.model), llm, tools, args.root)
    return AgentExecutor(
        agent=agent,
        tools=tools,
        max_iterations=args.max_iterations,
        max_execution_time=timeout,
        early_stopping_method=args.early_stopping,
        handle_parsing_errors=True,
        checkpointer=checkpointer or _checkpointer(args, timeout),
    )


def _deadline(value: float | None) -> float | None:
    """`--timeout` checked: a number of seconds from 0 to MAX_TIMEOUT (inf and NaN refused)."""
    if value is None:
        return None
    if not 0 <= value <= MAX_TIMEOUT:  # NaN fails every comparison
        raise ConfigurationError(
            f"--timeout {value:g}: give a number of seconds from 0 to {MAX_TIMEOUT:.0f}"
        )
    return value


def _checkpointer(args: argparse.Namespace, timeout: float | None) -> Any:
    """The store of `run --db FILE`, checked before the model runs (within the run's `timeout`):
    a usable checkpoint file and a thread that has no run yet (a new thread id is picked when
    `--thread` is absent)."""
    if getattr(args, "command", "run") != "run" or not getattr(args, "db", None):
        return None
    from actloop.checkpoint import connect, is_postgres_url
    from actloop.exceptions import CheckpointError

    if not is_postgres_url(args.db):
        path = Path(args.db)
        if path.is_dir():
            raise ConfigurationError(f"--db {args.db}: is a directory; name a checkpoint file")
        if not path.parent.is_dir():
            raise ConfigurationError(f"--db {args.db}: the folder {path.parent} does not exist")
    args.thread = args.thread or uuid.uuid4().hex[:12]
    try:
        store = connect(args.db)  # a file, or a postgresql:// URL
        record = store.get(args.thread, timeout=timeout)
    except CheckpointError as exc:
        raise ConfigurationError(f"--db {args.db}: {exc}") from None
    if record is not None and record.status == "finished":
        raise ConfigurationError(
            f"thread {args.thread!r} already finished in {args.db}; "
            "pick a new --thread (or leave it out for a fresh one)"
        )
    if record is not None:
        raise ConfigurationError(
            f"thread {args.thread!r} has an unfinished run ({record.status}) in {args.db}; "
            f"resume it with: actloop runs resume {args.thread} --db {args.db}"
        )
    return store
