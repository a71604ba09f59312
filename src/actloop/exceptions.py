"""actloop's errors; every one derives from `ActloopError`.

    ActloopError
    ├── SerializationError (also ValueError): bad or disallowed serialized data
    ├── OutputParserException (also ValueError): a model reply that cannot be parsed
    ├── ToolException: raised by a tool to report an error the model should see
    ├── ModelError: a model provider failed (see actloop.models)
    ├── CheckpointError: a durable run's journal is unusable or busy (see actloop.checkpoint)
    └── ConfigurationError (also ValueError): a developer mistake found at construction

When an exception escapes an `AgentExecutor` run it keeps its type, and the steps finished so far
are attached to it as `exc.intermediate_steps` (see `attach_steps`), so nothing done is lost.

`ActloopDeprecationWarning` (a DeprecationWarning, not an error) marks LangChain's deprecated
APIs kept for compatibility (`executor.run`, `initialize_agent`, ...).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ActloopDeprecationWarning",
    "ActloopError",
    "CheckpointError",
    "ConfigurationError",
    "ModelError",
    "OutputParserException",
    "SerializationError",
    "ToolException",
    "attach_steps",
]


class ActloopError(Exception):
    """Root of every error actloop raises on purpose."""


class ActloopDeprecationWarning(DeprecationWarning):
    """A deprecated LangChain API, kept so code ported from LangChain runs unchanged."""


class SerializationError(ActloopError, ValueError):
    """Serialized data is malformed, too deep, or names a class that may not be built."""


class OutputParserException(ActloopError, ValueError):
    """A model reply could not be parsed.

    `observation` is what the model is told when `send_to_llm` is True; `llm_output` is the reply.
    """

    def __init__(
        self,
        error: Any,
        observation: str | None = None,
        llm_output: str | None = None,
        send_to_llm: bool = False,
    ) -> None:
        if send_to_llm and (observation is None or llm_output is None):
            raise ValueError(
                "Arguments 'observation' & 'llm_output' are required if 'send_to_llm' is True"
            )
        if isinstance(error, str):
            error = error + _TROUBLESHOOTING  # LangChain adds this; kept so messages match exactly
        super().__init__(error)
        self.observation = observation
        self.llm_output = llm_output
        self.send_to_llm = send_to_llm


_TROUBLESHOOTING = (
    "\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langchain/errors/OUTPUT_PARSING_FAILURE "
)


class ToolException(ActloopError):
    """Raised in a tool to report an error; with `handle_tool_error` it becomes the observation."""


class ModelError(ActloopError):
    """A model provider failed: bad request, server error, cut stream, missing package."""


class CheckpointError(ActloopError):
    """A checkpoint store is corrupt, foreign, busy, or has no such run."""


class ConfigurationError(ActloopError, ValueError):
    """A developer mistake found at construction (unknown tool, bad option, missing extra)."""


def attach_steps(exc: BaseException, steps: list[tuple[Any, Any]]) -> BaseException:
    """Attach the finished `(action, observation)` steps to an escaping exception and return it."""
    try:
        exc.intermediate_steps = list(steps)  # pyright: ignore[reportAttributeAccessIssue]
    except AttributeError:  # exceptions with __slots__; nothing else to do
        pass
    return exc
