"""Serving on loopback: a free port, `Serve` (what tests/server's `serve` fixture gives), and
`actloop serve` as a process (`start_serve`, `stop_serve`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx

__all__ = ["Serve", "free_port", "serve_env", "start_serve", "stop_serve"]

TESTS = Path(__file__).resolve().parents[1]

Serve = Callable[..., str]
"""`serve(app)`: start uvicorn for `app` in a thread and return its base URL."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (yet: bind it soon)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server process: tests/ importable (then $PYTHONPATH), no OPENAI_ or
    ACTLOOP_ variables but `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ACTLOOP_"))}
    given = os.environ.get("PYTHONPATH")  # the sources under test, when the caller names them
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *([given] if given else [])])
    return {**env, **(extra or {})}


def start_serve(
    *args: str, env: Mapping[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`actloop serve ARGS` on a free port (tests/ importable, no OPENAI_/ACTLOOP_ variables but
    `env`); returns the process and its base URL once `/health` answers."""
    port = free_port()
    cmd = [sys.executable, "-m", "actloop", "serve", "--port", str(port), *args]
    proc = subprocess.Popen(cmd, env=serve_env(env), stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    stop_serve(proc)
    raise AssertionError("actloop serve did not come up within 60 s")


def stop_serve(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server process and close its pipe."""
    proc.terminate()
    proc.wait(timeout=30)
    if proc.stderr is not None:
        proc.stderr.close()
