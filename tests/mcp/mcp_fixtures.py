"""Helpers for the MCP tests: where the servers are, the HTTP server process, the orphan check.

(`tests/mcp` has no `__init__.py`: as a package named `mcp` it would hide the SDK.)
"""

from __future__ import annotations

import fcntl
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

SERVERS = Path(__file__).parent / "servers"
DEMO = str(SERVERS / "demo.py")
CHATTY = str(SERVERS / "chatty.py")
HOSTILE = str(SERVERS / "hostile.py")


def server_processes() -> list[psutil.Process]:
    """Live (not zombie) stdio servers of `tests/mcp/servers` below this process (the HTTP
    servers the fixtures start themselves are not counted)."""
    found: list[psutil.Process] = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            cmdline = proc.cmdline()
            if "--http" not in cmdline and any(str(SERVERS) in part for part in cmdline):
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """`SCRIPT --http PORT` (the demo server unless told) as a child process; `restart` brings
    it back on the same port."""

    def __init__(self, script: str = DEMO, python: str = sys.executable) -> None:
        self.script = script
        self.python = python
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = tempfile.TemporaryFile()
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        command = [self.python, self.script, "--http", str(self.port)]
        process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return process
            except OSError as exc:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    self.log.seek(0)
                    log = self.log.read()[-2000:]
                    raise RuntimeError(f"{self.script} did not start: {log!r}") from exc
                time.sleep(0.1)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()

    def restart(self) -> None:
        self.kill()
        self.process = self._start()

    def close(self) -> None:
        self.kill()
        self.log.close()


ERA2025 = str(SERVERS / "era2025.py")
_MCP1 = Path(sys.prefix) / "mcp1-server"
"""A venv beside the dev venv's packages with the last 1.x SDK, for the 2025-era server only."""


def mcp1_python() -> str:
    """The Python of a venv with `mcp` 1.x (made on first use, as `postgres.py` installs its
    binaries): the 2025-era server runs on the SDK generation that built most servers in use."""
    python = _MCP1 / "bin" / "python"
    with open(str(_MCP1) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = _MCP1 / ".installed"
        if not done.exists():
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(_MCP1)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", "mcp>=1.30,<2"], check=True)
            done.touch()
    return str(python)
