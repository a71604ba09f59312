"""`ShellSession`: one persistent shell process that runs commands one at a time, each bounded
by its timeout (LangChain 1.5's session, its output format and limits).

A command is written to the shell's stdin followed by `printf '<marker> %s\\n' $?`; its output is
what the shell prints up to the marker line, stderr lines labelled `[stderr] `. Unlike
LangChain's session (two reader threads and a queue) the pipes are non-blocking and read here,
in the caller's thread, with a selector bounded by the command's deadline: writing the command
(a full pipe), reading its output and the shell's exit all end by the deadline, no thread is
left behind, and stopping always reaps the shell, kills its process group (what it started in
the background too) and closes the three pipes. A timed-out command restarts the shell.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import logging
import os
import selectors
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from actloop.agents.middleware._execution import BaseExecutionPolicy

__all__ = ["CommandExecutionResult", "ShellSession"]

LOGGER = logging.getLogger("actloop.agents.middleware.shell_tool")
_DONE_MARKER_PREFIX = "__LC_SHELL_DONE__"
_MAX_LINE = 1 << 20
"""A line longer than this (bytes, no newline yet) is cut into lines: memory stays bounded."""
_DRAIN_LIMIT = 1 << 20
"""At most this many bytes are read when a pipe is emptied without waiting."""


@dataclass(frozen=True)
class CommandExecutionResult:
    """What one command gave: its output, exit code, and whether it timed out or was cut."""

    output: str
    exit_code: int | None
    timed_out: bool
    truncated_by_lines: bool
    truncated_by_bytes: bool
    total_lines: int
    total_bytes: int


class _Lines:
    """A pipe's bytes as text lines (UTF-8, errors replaced, newlines translated as Python's
    text mode does), cut at `_MAX_LINE`."""

    def __init__(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._decoder = io.IncrementalNewlineDecoder(decoder, translate=True)
        self._partial = ""

    def feed(self, data: bytes, *, final: bool = False) -> list[str]:
        """The complete lines (with their newline) `data` finished; on `final` the rest too."""
        text = self._partial + self._decoder.decode(data, final=final)
        *lines, self._partial = text.split("\n")
        out = [line + "\n" for line in lines]
        if self._partial and (final or len(self._partial) > _MAX_LINE):
            out.append(self._partial)
            self._partial = ""
        return out


class _Output:
    """A command's output as it is collected: LangChain's line and byte limits and labels."""

    def __init__(self, policy: BaseExecutionPolicy) -> None:
        self.policy = policy
        self.collected: list[str] = []
        self.total_lines = 0
        self.total_bytes = 0
        self.by_lines = False
        self.by_bytes = False

    def add(self, source: str, line: str) -> None:
        self.total_lines += 1
        self.total_bytes += len(line.encode("utf-8", "replace"))
        if self.total_lines > self.policy.max_output_lines:
            self.by_lines = True
            return
        limit = self.policy.max_output_bytes
        if limit is not None and self.total_bytes > limit:
            self.by_bytes = True
            return
        if source == "stderr":
            self.collected.append(f"[stderr] {line.rstrip(chr(10))}")
            if line.endswith("\n"):
                self.collected.append("\n")
        else:
            self.collected.append(line)

    def result(self, exit_code: int | None, *, timed_out: bool = False) -> CommandExecutionResult:
        return CommandExecutionResult(
            output="" if timed_out else "".join(self.collected),
            exit_code=exit_code,
            timed_out=timed_out,
            truncated_by_lines=self.by_lines,
            truncated_by_bytes=self.by_bytes,
            total_lines=self.total_lines,
            total_bytes=self.total_bytes,
        )


class ShellSession:
    """A persistent shell session that runs commands one after another."""

    def __init__(
        self,
        workspace: Path,
        policy: BaseExecutionPolicy,
        command: tuple[str, ...],
        environment: Mapping[str, str],
    ) -> None:
        self._workspace = workspace
        self._policy = policy
        self._command = command
        self._environment = dict(environment)
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._terminated = False
        self._exit_code: int | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the shell (nothing if it runs); its pipes made non-blocking."""
        if self._process is not None and not self._exited():
            return
        self._process = self._policy.spawn(
            workspace=self._workspace, env=self._environment, command=self._command
        )
        pipes = (self._process.stdin, self._process.stdout, self._process.stderr)
        if any(pipe is None for pipe in pipes):
            self.stop(self._policy.termination_timeout, graceful=False)
            raise RuntimeError("Failed to initialize shell session pipes.")
        for pipe in pipes:
            os.set_blocking(pipe.fileno(), False)  # type: ignore[union-attr]
        self._terminated = False

    def restart(self) -> None:
        """Stop the shell and start a new one."""
        self.stop(self._policy.termination_timeout)
        self.start()

    def stop(self, timeout: float, *, graceful: bool = True) -> None:
        """Ask the shell to exit (unless not `graceful`), wait up to `timeout`, then kill its
        process group (what it left running too), reap it and close its pipes."""
        process = self._process
        if process is None:
            return
        try:
            if graceful and not self._terminated and not self._exited():
                with contextlib.suppress(OSError, ValueError):
                    self._write(b"exit\n", time.monotonic() + min(timeout, 1.0))
                self._wait_exited(time.monotonic() + timeout)
            self._kill_process()
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                process.wait(timeout=max(timeout, 1.0))
        finally:
            self._terminated = True
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError, ValueError):
                        pipe.close()
            self._process = None

    def _exited(self) -> bool:
        """Whether the shell has exited, without reaping it (its process group id then stays
        reserved, so the group can still be killed safely)."""
        process = self._process
        if process is None or process.returncode is not None:
            return True
        waitid = getattr(os, "waitid", None)
        if waitid is None:  # pragma: no cover - no waitid (macOS before Python 3.13)
            return process.poll() is not None
        try:
            found = waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return process.poll() is not None
        return found is not None

    def _wait_exited(self, deadline: float) -> bool:
        """Wait (until `deadline`) for the shell to exit, without reaping it: on its pidfd
        (Linux), else polling."""
        if self._exited():
            return True
        assert self._process is not None
        pidfd_open = getattr(os, "pidfd_open", None)
        try:
            pidfd: int | None = pidfd_open(self._process.pid) if pidfd_open else None
        except OSError:
            pidfd = None
        if pidfd is not None:
            try:
                with selectors.DefaultSelector() as selector:
                    selector.register(pidfd, selectors.EVENT_READ)
                    selector.select(max(deadline - time.monotonic(), 0.0))
            finally:
                os.close(pidfd)
            return self._exited()
        pause = 0.001
        while not self._exited():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            threading.Event().wait(min(pause, remaining))
            pause = min(pause * 2, 0.05)
        return True

    def _kill_process(self) -> None:
        """SIGKILL the shell's process group if it has one of its own, else the shell."""
        if not self._process:
            return
        if hasattr(os, "killpg"):
            try:
                child_pgid = os.getpgid(self._process.pid)
                # never signal our own group (HostExecutionPolicy(create_process_group=False))
                if child_pgid != os.getpgrp():
                    os.killpg(child_pgid, signal.SIGKILL)
                    return
            except ProcessLookupError:
                return
            except OSError:
                LOGGER.warning("Group kill failed; falling back to direct kill.", exc_info=True)
        try:
            self._process.kill()
        except ProcessLookupError:
            pass
        except OSError:
            LOGGER.warning("Direct kill failed.", exc_info=True)

    # -- commands -----------------------------------------------------------------------------

    def execute(self, command: str, *, timeout: float) -> CommandExecutionResult:
        """Run `command`; its output, exit code, or `timed_out` (the shell then restarted)."""
        if self._process is None or self._exited():
            raise RuntimeError("Shell session is not running.")
        marker = f"{_DONE_MARKER_PREFIX}{uuid.uuid4().hex}"
        deadline = time.monotonic() + timeout
        with self._lock:
            self._drain()
            payload = command if command.endswith("\n") else f"{command}\n"
            payload += f"printf '{marker} %s\\n' $?\n"
            output = _Output(self._policy)
            try:
                written = self._write(payload.encode("utf-8"), deadline)
            except (BrokenPipeError, OSError):
                return self._collected(output, None, deadline, after_exit=True)
            if not written:
                return self._timed_out(output, timeout)
            return self._collected(output, marker, deadline, after_exit=False, timeout=timeout)

    def _collected(
        self,
        output: _Output,
        marker: str | None,
        deadline: float,
        *,
        after_exit: bool,
        timeout: float = 0.0,
    ) -> CommandExecutionResult:
        """Read the output up to the marker (its exit code), the shell's exit, or the deadline."""
        status = self._read(output, marker, deadline)
        if status == "marker":
            return output.result(self._exit_code)
        if status == "eof" or after_exit:
            remaining = max(deadline - time.monotonic(), 0.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                assert self._process is not None
                self._process.wait(timeout=min(remaining, self._policy.termination_timeout))
            return output.result(self._process.returncode if self._process else None)
        return self._timed_out(output, timeout)

    def _timed_out(self, output: _Output, timeout: float) -> CommandExecutionResult:
        """A timed-out command's result; the shell killed at once (the command still runs, so
        asking it to exit would wait for the command) and started again."""
        LOGGER.warning("Command timed out after %.2f seconds; restarting shell session.", timeout)
        self.stop(self._policy.termination_timeout, graceful=False)
        self.start()
        return output.result(None, timed_out=True)

    def _write(self, data: bytes, deadline: float) -> bool:
        """Write `data` to the shell's stdin; False if the pipe stayed full until `deadline`."""
        assert self._process is not None and self._process.stdin is not None
        fd = self._process.stdin.fileno()
        view = memoryview(data)
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_WRITE)
            while view:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    return False
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    continue
        return True

    def _read(self, output: _Output, marker: str | None, deadline: float) -> str:
        """Collect lines until the marker line ("marker"), both pipes' end ("eof") or the
        deadline ("timeout"). The marker's exit status goes to `self._exit_code`."""
        assert self._process is not None
        streams = {"stdout": self._process.stdout, "stderr": self._process.stderr}
        lines = {name: _Lines() for name in streams}
        self._exit_code = None
        with selectors.DefaultSelector() as selector:
            for name, stream in streams.items():
                selector.register(stream.fileno(), selectors.EVENT_READ, name)  # type: ignore[union-attr]
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return "timeout"
                for key, _events in selector.select(remaining):
                    name: str = key.data
                    chunk = _read_some(key.fd)
                    if chunk is None:
                        continue
                    if not chunk and name == "stdout":  # the shell is gone
                        self._drain_stderr(output, lines["stderr"])
                        return "eof"
                    if not chunk:
                        selector.unregister(key.fd)
                    for line in lines[name].feed(chunk, final=not chunk):
                        if name == "stdout" and marker is not None and marker in line:
                            before, _, status = line.partition(marker)
                            if before:
                                output.add("stdout", before)
                            self._exit_code = _safe_int(status.strip())
                            self._drain_stderr(output, lines["stderr"])
                            return "marker"
                        output.add(name, line)
        return "eof"

    def _drain_stderr(self, output: _Output, lines: _Lines) -> None:
        """The command's stderr still in the pipe when its marker came (written before it)."""
        assert self._process is not None and self._process.stderr is not None
        for chunk in _pending(self._process.stderr.fileno()):
            for line in lines.feed(chunk):
                output.add("stderr", line)
        for line in lines.feed(b"", final=True):
            output.add("stderr", line)

    def _drain(self) -> None:
        """Drop what an earlier command left in the pipes."""
        assert self._process is not None
        for stream in (self._process.stdout, self._process.stderr):
            for _chunk in _pending(stream.fileno()):  # type: ignore[union-attr]
                pass


def _pending(fd: int) -> Iterator[bytes]:
    """What the pipe holds now, up to `_DRAIN_LIMIT` bytes (a background process writing
    without end cannot keep a drain going)."""
    taken = 0
    while taken < _DRAIN_LIMIT and (chunk := _read_some(fd)):
        taken += len(chunk)
        yield chunk


def _read_some(fd: int) -> bytes | None:
    """What the pipe has now (b"" at its end, None if nothing yet)."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _safe_int(value: str) -> int | None:
    with contextlib.suppress(ValueError):
        return int(value)
    return None
