"""How `ShellToolMiddleware` launches its shell: LangChain 1.5's execution policies (host, Codex
sandbox, Docker) with their options, checks and error texts.

Every policy but `HostExecutionPolicy(create_process_group=False)` starts the shell in a session
(process group) of its own, so a timeout or the session's end kills the shell and everything it
started. The timeouts and output limits live on the policy (`BaseExecutionPolicy`).
"""

from __future__ import annotations

import abc
import json
import os
import shutil
import subprocess
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "SHELL_TEMP_PREFIX",
    "BaseExecutionPolicy",
    "CodexSandboxExecutionPolicy",
    "DockerExecutionPolicy",
    "HostExecutionPolicy",
]


def _resource_module() -> typing.Any:
    """The `resource` module (POSIX), or None."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    return resource


resource: typing.Any = _resource_module()
_HAS_RESOURCE = resource is not None

SHELL_TEMP_PREFIX = "actloop-shell-"
"""The prefix of a session's temporary workspace (Docker does not mount such a workspace)."""


def _launch_subprocess(
    command: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    preexec_fn: Callable[[], None] | None,
    start_new_session: bool,
) -> subprocess.Popen[str]:
    """The shell process, its three standard streams piped (UTF-8 text, errors replaced)."""
    return subprocess.Popen(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        text=True,
        encoding="utf-8",
        errors="replace",
        bufsize=1,
        env=env,
        preexec_fn=preexec_fn,
        start_new_session=start_new_session,
    )


@dataclass
class BaseExecutionPolicy(abc.ABC):
    """How a persistent shell is launched and bounded: the timeouts (seconds) of a command, of
    the startup commands and of the shell's termination, and the output kept of a command."""

    command_timeout: float = 30.0
    startup_timeout: float = 30.0
    termination_timeout: float = 10.0
    max_output_lines: int = 100
    max_output_bytes: int | None = None

    def __post_init__(self) -> None:
        if self.max_output_lines <= 0:
            raise ValueError("max_output_lines must be positive.")

    @abc.abstractmethod
    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[str]:
        """Launch the persistent shell process."""


@dataclass
class HostExecutionPolicy(BaseExecutionPolicy):
    """The shell runs on the host, with optional CPU-time and memory limits (`prlimit` on
    Linux, `setrlimit` before `exec` elsewhere). No filesystem or network sandbox: commands
    reach whatever the process's user can. For trusted, already isolated environments."""

    cpu_time_seconds: int | None = None
    memory_bytes: int | None = None
    create_process_group: bool = True

    _limits_requested: bool = field(init=False, repr=False, default=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.cpu_time_seconds is not None and self.cpu_time_seconds <= 0:
            raise ValueError("cpu_time_seconds must be positive if provided.")
        if self.memory_bytes is not None and self.memory_bytes <= 0:
            raise ValueError("memory_bytes must be positive if provided.")
        self._limits_requested = self.cpu_time_seconds is not None or self.memory_bytes is not None
        if self._limits_requested and not _HAS_RESOURCE:
            raise RuntimeError(
                "HostExecutionPolicy cpu/memory limits require the Python 'resource' module. "
                "Either remove the limits or run on a POSIX platform."
            )

    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[str]:
        """Launch the shell on the host, then apply the limits (Linux)."""
        process = _launch_subprocess(
            list(command),
            env=env,
            cwd=workspace,
            preexec_fn=self._create_preexec_fn(),
            start_new_session=self.create_process_group,
        )
        self._apply_post_spawn_limits(process)
        return process

    def _limits(self) -> list[tuple[int, tuple[int, int]]]:
        """The (resource, (soft, hard)) limits asked for; memory as `RLIMIT_AS` if the platform
        has it, else `RLIMIT_DATA`."""
        limits: list[tuple[int, tuple[int, int]]] = []
        res = resource
        if self.cpu_time_seconds is not None:
            limits.append((res.RLIMIT_CPU, (self.cpu_time_seconds, self.cpu_time_seconds)))
        if self.memory_bytes is not None:
            kind = res.RLIMIT_AS if hasattr(res, "RLIMIT_AS") else res.RLIMIT_DATA
            limits.append((kind, (self.memory_bytes, self.memory_bytes)))
        return limits

    def _create_preexec_fn(self) -> Callable[[], None] | None:
        """`setrlimit` in the child before `exec`, where `prlimit` is not available."""
        if not self._limits_requested or self._can_use_prlimit():
            return None
        limits = self._limits()

        def configure() -> None:
            for kind, limit in limits:
                resource.setrlimit(kind, limit)

        return configure

    def _apply_post_spawn_limits(self, process: subprocess.Popen[str]) -> None:
        """`prlimit` on the started shell (Linux)."""
        if not self._limits_requested or not self._can_use_prlimit():
            return
        prlimit = resource.prlimit
        try:
            for kind, limit in self._limits():
                prlimit(process.pid, kind, limit)
        except OSError as exc:  # pragma: no cover - platform support
            raise RuntimeError("Failed to apply resource limits via prlimit.") from exc

    @staticmethod
    def _can_use_prlimit() -> bool:
        return _HAS_RESOURCE and hasattr(resource, "prlimit") and sys.platform.startswith("linux")


@dataclass
class CodexSandboxExecutionPolicy(BaseExecutionPolicy):
    """The shell runs inside the Codex CLI's sandbox (`codex sandbox linux|macos -- shell`),
    with `config_overrides` passed as `-c key=value` (sorted, values as JSON)."""

    binary: str = "codex"
    platform: typing.Literal["auto", "macos", "linux"] = "auto"
    config_overrides: Mapping[str, typing.Any] = field(default_factory=lambda: {})

    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[str]:
        """Launch the shell through `codex sandbox`."""
        return _launch_subprocess(
            self._build_command(command),
            env=env,
            cwd=workspace,
            preexec_fn=None,
            start_new_session=True,
        )

    def _build_command(self, command: Sequence[str]) -> list[str]:
        full = [self._resolve_binary(), "sandbox", self._determine_platform()]
        for key, value in sorted(dict(self.config_overrides).items()):
            full.extend(["-c", f"{key}={self._format_override(value)}"])
        return [*full, "--", *command]

    def _resolve_binary(self) -> str:
        path = shutil.which(self.binary)
        if path is None:
            raise RuntimeError(
                f"Codex sandbox policy requires the '{self.binary}' CLI to be installed and "
                "available on PATH."
            )
        return path

    def _determine_platform(self) -> str:
        if self.platform != "auto":
            return self.platform
        if sys.platform.startswith("linux"):
            return "linux"
        if sys.platform == "darwin":
            return "macos"
        raise RuntimeError(
            "Codex sandbox policy could not determine a supported platform; "
            "set 'platform' explicitly."
        )

    @staticmethod
    def _format_override(value: typing.Any) -> str:
        try:
            return json.dumps(value)
        except TypeError:
            return str(value)


@dataclass
class DockerExecutionPolicy(BaseExecutionPolicy):
    """The shell runs in a Docker container of its own (`docker run -i`): no network unless
    `network_enabled`, the workspace mounted only when it is not a temporary one, optional
    memory and CPU limits, read-only root filesystem and user."""

    binary: str = "docker"
    image: str = "python:3.12-alpine3.19"
    remove_container_on_exit: bool = True
    network_enabled: bool = False
    extra_run_args: Sequence[str] | None = None
    memory_bytes: int | None = None
    cpu_time_seconds: typing.Any | None = None
    cpus: str | None = None
    read_only_rootfs: bool = False
    user: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.memory_bytes is not None and self.memory_bytes <= 0:
            raise ValueError("memory_bytes must be positive if provided.")
        if self.cpu_time_seconds is not None:
            raise RuntimeError(
                "DockerExecutionPolicy does not support cpu_time_seconds; configure CPU limits "
                "using Docker run options such as '--cpus'."
            )
        if self.cpus is not None and not self.cpus.strip():
            raise ValueError("cpus must be a non-empty string when provided.")
        if self.user is not None and not self.user.strip():
            raise ValueError("user must be a non-empty string when provided.")
        self.extra_run_args = tuple(self.extra_run_args or ())

    def spawn(
        self, *, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> subprocess.Popen[str]:
        """Launch `docker run` (the session's variables go in with `-e`; docker itself gets
        the host's environment)."""
        return _launch_subprocess(
            self._build_command(workspace, env, command),
            env=os.environ.copy(),
            cwd=workspace,
            preexec_fn=None,
            start_new_session=True,
        )

    def _build_command(
        self, workspace: Path, env: Mapping[str, str], command: Sequence[str]
    ) -> list[str]:
        full = [self._resolve_binary(), "run", "-i"]
        if self.remove_container_on_exit:
            full.append("--rm")
        if not self.network_enabled:
            full.extend(["--network", "none"])
        if self.memory_bytes is not None:
            full.extend(["--memory", str(self.memory_bytes)])
        if self._should_mount_workspace(workspace):
            full.extend(["-v", f"{workspace}:{workspace}", "-w", str(workspace)])
        else:
            full.extend(["-w", "/"])
        if self.read_only_rootfs:
            full.append("--read-only")
        for key, value in env.items():
            full.extend(["-e", f"{key}={value}"])
        if self.cpus is not None:
            full.extend(["--cpus", self.cpus])
        if self.user is not None:
            full.extend(["--user", self.user])
        full.extend(self.extra_run_args or ())
        return [*full, self.image, *command]

    @staticmethod
    def _should_mount_workspace(workspace: Path) -> bool:
        return not workspace.name.startswith(SHELL_TEMP_PREFIX)

    def _resolve_binary(self) -> str:
        path = shutil.which(self.binary)
        if path is None:
            raise RuntimeError(
                f"Docker execution policy requires the '{self.binary}' CLI to be installed"
                " and available on PATH."
            )
        return path
