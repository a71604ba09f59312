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
APIs kept for compatibility (`executor.run`, `initialize_agent`, ...), with LangChain's texts and
once a process for each API (`warn_deprecated`). When langchain-core is already loaded the
category given is a subclass of both ActloopDeprecationWarning and LangChain's
`LangChainDeprecationWarning`, so warning filters written for either keep working.
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
    "called_by_user",
    "warn_deprecated",
]


class ActloopError(Exception):
    """Root of every error actloop raises on purpose."""


class ActloopDeprecationWarning(DeprecationWarning):
    """A deprecated LangChain API, kept so code ported from LangChain runs unchanged."""


_WARNED: set[str] = set()
_CATEGORIES: dict[type, type[DeprecationWarning]] = {}


def _category() -> type[DeprecationWarning]:
    """`ActloopDeprecationWarning`; once langchain-core is loaded (its users' filters name its
    `LangChainDeprecationWarning`), a subclass of both, so filters on either category apply.
    Nothing of LangChain is imported for it: only a module the process already loaded is used."""
    import sys

    module = sys.modules.get("langchain_core._api.deprecation")
    lc = getattr(module, "LangChainDeprecationWarning", None)
    if not isinstance(lc, type) or not issubclass(lc, DeprecationWarning):
        return ActloopDeprecationWarning
    if lc not in _CATEGORIES:
        both = type("ActloopDeprecationWarning", (ActloopDeprecationWarning, lc), {})
        both.__module__ = __name__
        both.__doc__ = ActloopDeprecationWarning.__doc__
        _CATEGORIES[lc] = both
    return _CATEGORIES[lc]


def called_by_user(depth: int = 2) -> bool:
    """Whether the caller `depth` frames up is outside actloop: LangChain warns of a deprecated
    class only when the user's code builds it, not when its own code does."""
    import inspect

    frame = inspect.currentframe()
    for _ in range(depth):
        frame = frame.f_back if frame is not None else None
    name = str(frame.f_globals.get("__name__", "")) if frame is not None else ""
    return not (name == "actloop" or name.startswith("actloop."))


def warn_deprecated(key: str, message: str, stacklevel: int = 3, *, once: bool = True) -> None:
    """LangChain's deprecation warning `message`, once a process for each `key` (as LangChain
    warns once for each deprecated class, function or method); every call with `once=False`
    (as LangChain's own `warn_deprecated` calls, e.g. `astream_events(version="v1")`)."""
    if once and key in _WARNED:
        return
    _WARNED.add(key)
    import warnings

    warnings.warn(message, _category(), stacklevel=stacklevel)


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
