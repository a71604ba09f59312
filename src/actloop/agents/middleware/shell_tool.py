"""`ShellToolMiddleware` (LangChain 1.5's): a `shell` tool running commands in one persistent
shell session per agent run, with LangChain's options, tool texts, output format, redaction and
execution policies (`HostExecutionPolicy`, `CodexSandboxExecutionPolicy`, `DockerExecutionPolicy`).

The session starts in `before_agent` (startup commands run there) and ends in `after_agent`
(shutdown commands, then the shell stopped and a temporary workspace removed); a run that ends
otherwise (an error, a pause) leaves it to a finalizer that does the same when the run's state is
dropped. The session lives in the state key `shell_session_resources`, private (never in a
run's output) and per run (never saved with a thread), as LangGraph's `UntrackedValue`. Every
command is bounded by the policy's `command_timeout` (see `_shell_session`).

Security: with `HostExecutionPolicy` commands run as this process's user with its reach (no
sandbox); redaction applies to the output after the command ran and prevents no exfiltration.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from actloop.agents.middleware._execution import (
    SHELL_TEMP_PREFIX,
    BaseExecutionPolicy,
    CodexSandboxExecutionPolicy,
    DockerExecutionPolicy,
    HostExecutionPolicy,
)
from actloop.agents.middleware._redaction import (
    PIIDetectionError,
    PIIMatch,
    RedactionRule,
    ResolvedRedactionRule,
)
from actloop.agents.middleware._shell_session import (
    LOGGER,
    CommandExecutionResult,
    ShellSession,
)
from actloop.agents.middleware.types import AgentMiddleware, AgentState, Runtime
from actloop.exceptions import ToolException
from actloop.messages import ToolMessage
from actloop.tools import BaseTool, ToolRuntime, tool

__all__ = [
    "CodexSandboxExecutionPolicy",
    "CommandExecutionResult",
    "DockerExecutionPolicy",
    "HostExecutionPolicy",
    "RedactionRule",
    "ShellSession",
    "ShellToolMiddleware",
    "ShellToolState",
]

DEFAULT_TOOL_DESCRIPTION = (
    "Execute a shell command inside a persistent session. Before running a command, "
    "confirm the working directory is correct (e.g., inspect with `ls` or `pwd`) and ensure "
    "any parent directories exist. Prefer absolute paths and quote paths containing spaces, "
    'such as `cd "/path/with spaces"`. Chain multiple commands with `&&` or `;` instead of '
    "embedding newlines. Avoid unnecessary `cd` usage unless explicitly required so the "
    "session remains stable. Outputs may be truncated when they become very large, and long "
    "running commands will be terminated once their configured timeout elapses."
)
SHELL_TOOL_NAME = "shell"
_KEY = "shell_session_resources"


def _cleanup_resources(
    session: ShellSession, tempdir: tempfile.TemporaryDirectory[str] | None, timeout: float
) -> None:
    """Stop the shell and remove the temporary workspace (the resources' finalizer)."""
    with contextlib.suppress(Exception):
        session.stop(timeout)
    if tempdir is not None:
        with contextlib.suppress(Exception):
            tempdir.cleanup()


@dataclass
class _SessionResources:
    """One run's shell: the session, its temporary workspace (if any) and policy; finalized
    (shell stopped, workspace removed) when `finalizer()` is called or it is collected."""

    session: ShellSession
    tempdir: tempfile.TemporaryDirectory[str] | None
    policy: BaseExecutionPolicy
    finalizer: weakref.finalize[Any, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.finalizer = weakref.finalize(
            self, _cleanup_resources, self.session, self.tempdir, self.policy.termination_timeout
        )


class ShellToolState(AgentState, total=False):
    """The agent's state with the run's shell session (private, per run)."""

    shell_session_resources: _SessionResources | None


@functools.cache
def _shell_tool_input() -> type[Any]:
    """`_ShellToolInput`, the tool's arguments (a pydantic model built on first use)."""
    from typing import Annotated

    from pydantic import BaseModel, model_validator
    from pydantic.json_schema import SkipJsonSchema

    class _ShellToolInput(BaseModel):
        """Input schema for the persistent shell tool."""

        command: str | None = None
        """The shell command to execute."""

        restart: bool | None = None
        """Whether to restart the shell session."""

        runtime: Annotated[Any, SkipJsonSchema()] = None  # pyright: ignore[reportCallIssue]
        """The tool call's runtime (injected, never sent to the model)."""

        @model_validator(mode="after")
        def validate_payload(self) -> _ShellToolInput:
            if self.command is None and not self.restart:
                raise ValueError("Shell tool requires either 'command' or 'restart'.")
            if self.command is not None and self.restart:
                raise ValueError("Specify only one of 'command' or 'restart'.")
            return self

    _ShellToolInput.__module__ = __name__
    return _ShellToolInput


def __getattr__(name: str) -> Any:
    """`_ShellToolInput`, built on first use (importing actloop does not load pydantic)."""
    if name == "_ShellToolInput":
        return _shell_tool_input()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ShellToolMiddleware(AgentMiddleware):
    """Registers a persistent `shell` tool. The execution policy sets the isolation (host,
    Codex sandbox, Docker container), the timeouts and the output limits; the default is
    `HostExecutionPolicy()`: full host access, for trusted or already isolated environments."""

    state_schema = ShellToolState
    private_state = (_KEY,)
    run_state = (_KEY,)

    def __init__(
        self,
        workspace_root: str | Path | None = None,
        *,
        startup_commands: tuple[str, ...] | list[str] | str | None = None,
        shutdown_commands: tuple[str, ...] | list[str] | str | None = None,
        execution_policy: BaseExecutionPolicy | None = None,
        redaction_rules: tuple[RedactionRule, ...] | list[RedactionRule] | None = None,
        tool_description: str | None = None,
        tool_name: str = SHELL_TOOL_NAME,
        shell_command: Sequence[str] | str | None = None,
        env: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._workspace_root = Path(workspace_root) if workspace_root else None
        self._tool_name = tool_name
        self._shell_command = self._normalize_shell_command(shell_command)
        self._environment = self._normalize_env(env)
        self._execution_policy = execution_policy or HostExecutionPolicy()
        self._redaction_rules: tuple[ResolvedRedactionRule, ...] = tuple(
            rule.resolve() for rule in redaction_rules or ()
        )
        self._startup_commands = self._normalize_commands(startup_commands)
        self._shutdown_commands = self._normalize_commands(shutdown_commands)
        self._shell_tool = self._make_tool(tool_description or DEFAULT_TOOL_DESCRIPTION)
        self.tools = [self._shell_tool]

    def _make_tool(self, description: str) -> BaseTool:
        """The `shell` tool: a command or a restart, in the run's session."""

        @tool(self._tool_name, args_schema=_shell_tool_input(), description=description)
        def shell_tool(
            *,
            runtime: ToolRuntime,
            command: str | None = None,
            restart: bool = False,
        ) -> ToolMessage | str:
            resources = self._get_or_create_resources(runtime.state)
            return self._run_shell_tool(
                resources,
                {"command": command, "restart": restart},
                tool_call_id=runtime.tool_call_id,
            )

        return shell_tool

    @staticmethod
    def _normalize_commands(commands: tuple[str, ...] | list[str] | str | None) -> tuple[str, ...]:
        if commands is None:
            return ()
        if isinstance(commands, str):
            return (commands,)
        return tuple(commands)

    @staticmethod
    def _normalize_shell_command(shell_command: Sequence[str] | str | None) -> tuple[str, ...]:
        if shell_command is None:
            return ("/bin/bash",)
        normalized = (shell_command,) if isinstance(shell_command, str) else tuple(shell_command)
        if not normalized:
            raise ValueError("Shell command must contain at least one argument.")
        return normalized

    @staticmethod
    def _normalize_env(env: Mapping[str, Any] | None) -> dict[str, str] | None:
        if env is None:
            return None
        normalized: dict[str, str] = {}
        for key, value in env.items():
            if not isinstance(key, str):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise TypeError("Environment variable names must be strings.")
            normalized[key] = str(value)
        return normalized

    # -- hooks --------------------------------------------------------------------------------

    def before_agent(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Start the run's shell session and run the startup commands."""
        return {_KEY: self._get_or_create_resources(state)}

    async def abefore_agent(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """`before_agent` on a worker thread (starting a shell blocks)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.before_agent, state, runtime)

    def after_agent(self, state: Any, runtime: Runtime) -> None:
        """Run the shutdown commands, stop the shell and remove a temporary workspace."""
        resources = state.get(_KEY)
        if not isinstance(resources, _SessionResources):
            return None
        try:
            self._run_shutdown_commands(resources.session)
        finally:
            resources.finalizer()
        return None

    async def aafter_agent(self, state: Any, runtime: Runtime) -> None:
        """`after_agent` on a worker thread."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.after_agent, state, runtime)

    # -- session ------------------------------------------------------------------------------

    def _get_or_create_resources(self, state: Any) -> _SessionResources:
        """The state's session, or a new one kept in the state (a resumed run keeps its own)."""
        resources = state.get(_KEY)
        if isinstance(resources, _SessionResources):
            return resources
        created = self._create_resources()
        cast("dict[str, Any]", state)[_KEY] = created
        return created

    def _create_resources(self) -> _SessionResources:
        """Start a shell in the workspace (a temporary one without `workspace_root`) and run
        the startup commands; on failure everything started is stopped again."""
        tempdir: tempfile.TemporaryDirectory[str] | None = None
        if self._workspace_root is None:
            tempdir = tempfile.TemporaryDirectory(prefix=SHELL_TEMP_PREFIX)
            workspace = Path(tempdir.name)
        else:
            workspace = self._workspace_root
            workspace.mkdir(parents=True, exist_ok=True)
        session = ShellSession(
            workspace, self._execution_policy, self._shell_command, self._environment or {}
        )
        try:
            session.start()
            LOGGER.info("Started shell session in %s", workspace)
            self._run_startup_commands(session)
        except BaseException:
            LOGGER.exception("Starting shell session failed; cleaning up resources.")
            session.stop(self._execution_policy.termination_timeout)
            if tempdir is not None:
                tempdir.cleanup()
            raise
        return _SessionResources(session=session, tempdir=tempdir, policy=self._execution_policy)

    def _run_startup_commands(self, session: ShellSession) -> None:
        for command in self._startup_commands:
            result = session.execute(command, timeout=self._execution_policy.startup_timeout)
            if result.timed_out or result.exit_code not in {0, None}:
                raise RuntimeError(
                    f"Startup command '{command}' failed with exit code {result.exit_code}"
                )

    def _run_shutdown_commands(self, session: ShellSession) -> None:
        for command in self._shutdown_commands:
            try:
                result = session.execute(command, timeout=self._execution_policy.command_timeout)
                if result.timed_out:
                    LOGGER.warning("Shutdown command '%s' timed out.", command)
                elif result.exit_code not in {0, None}:
                    LOGGER.warning(
                        "Shutdown command '%s' exited with %s.", command, result.exit_code
                    )
            except (RuntimeError, ToolException, OSError) as exc:
                LOGGER.warning("Failed to run shutdown command '%s': %s", command, exc)

    # -- the tool's answer --------------------------------------------------------------------

    def _apply_redactions(self, content: str) -> tuple[str, dict[str, list[PIIMatch]]]:
        """The output with each redaction rule applied, and the matches by PII type."""
        matches_by_type: dict[str, list[PIIMatch]] = {}
        for rule in self._redaction_rules:
            content, matches = rule.apply(content)
            if matches:
                matches_by_type.setdefault(rule.pii_type, []).extend(matches)
        return content, matches_by_type

    def _run_shell_tool(
        self, resources: _SessionResources, payload: dict[str, Any], *, tool_call_id: str | None
    ) -> Any:
        """Restart the session or run a command: a `ToolMessage` (just its text without a
        `tool_call_id`), LangChain's texts and artifact."""
        session = resources.session
        if payload.get("restart"):
            LOGGER.info("Restarting shell session on request.")
            try:
                session.restart()
                self._run_startup_commands(session)
            except BaseException as err:
                LOGGER.exception("Restarting shell session failed; session remains unavailable.")
                raise ToolException("Failed to restart shell session.") from err
            return self._format_tool_message("Shell session restarted.", tool_call_id, "success")
        command = payload.get("command")
        if not command or not isinstance(command, str):
            raise ToolException(
                "Shell tool expects a 'command' string when restart is not requested."
            )
        LOGGER.info("Executing shell command: %s", command)
        result = session.execute(command, timeout=self._execution_policy.command_timeout)
        if result.timed_out:
            message = (
                f"Error: Command timed out after {self._execution_policy.command_timeout:.1f} "
                "seconds."
            )
            artifact = {"timed_out": True, "exit_code": None}
            return self._format_tool_message(message, tool_call_id, "error", artifact)
        try:
            output, matches = self._apply_redactions(result.output)
        except PIIDetectionError as error:
            LOGGER.warning("Blocking command output due to detected %s.", error.pii_type)
            artifact = {
                "timed_out": False,
                "exit_code": result.exit_code,
                "matches": {error.pii_type: error.matches},
            }
            message = f"Output blocked: detected {error.pii_type}."
            return self._format_tool_message(message, tool_call_id, "error", artifact)
        return self._answer(result, output, matches, tool_call_id)

    def _answer(
        self,
        result: CommandExecutionResult,
        output: str,
        matches: dict[str, list[PIIMatch]],
        tool_call_id: str | None,
    ) -> Any:
        """A finished command's answer: its output with the truncation notes and exit code."""
        policy = self._execution_policy
        output = output or "<no output>"
        if result.truncated_by_lines:
            output = (
                f"{output.rstrip()}\n\n... Output truncated at {policy.max_output_lines} lines "
                f"(observed {result.total_lines})."
            )
        if result.truncated_by_bytes and policy.max_output_bytes is not None:
            output = (
                f"{output.rstrip()}\n\n... Output truncated at {policy.max_output_bytes} bytes "
                f"(observed {result.total_bytes})."
            )
        status: Literal["success", "error"] = "success"
        if result.exit_code not in {0, None}:
            output = f"{output.rstrip()}\n\nExit code: {result.exit_code}"
            status = "error"
        artifact = {
            "timed_out": False,
            "exit_code": result.exit_code,
            "truncated_by_lines": result.truncated_by_lines,
            "truncated_by_bytes": result.truncated_by_bytes,
            "total_lines": result.total_lines,
            "total_bytes": result.total_bytes,
            "redaction_matches": matches,
        }
        return self._format_tool_message(output, tool_call_id, status, artifact)

    def _format_tool_message(
        self,
        content: str,
        tool_call_id: str | None,
        status: Literal["success", "error"],
        artifact: dict[str, Any] | None = None,
    ) -> ToolMessage | str:
        """A `ToolMessage` answering `tool_call_id`, or just `content` without one."""
        if tool_call_id is None:
            return content
        return ToolMessage(
            content=content,
            tool_call_id=tool_call_id,
            name=self._tool_name,
            status=status,
            artifact=artifact or {},
        )
