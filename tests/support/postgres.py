"""A throw-away PostgreSQL server for tests and benchmarks, started from the Debian package.

`PostgresServer.start()` finds the server binaries (installing the `postgresql` apt package when
none is found and we are root), runs `initdb` in a temp dir, and starts `postgres` on a free
loopback port and a unix socket in that dir, as a non-root user (`postgres` refuses root: the
`postgres` system user when it exists, else one created for it). `stop()` shuts it down and
removes the dir. `python tests/support/postgres.py ensure` only makes sure the binaries exist.
The tests' session-wide server is the `postgres_server` fixture of `tests/conftest.py`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

__all__ = ["PostgresServer", "ensure_binaries"]

_USER = "actloop-pg"


def _find_bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _version_key(path: str) -> int:
    part = path.split("/")[4]
    return int(part) if part.isdigit() else 0


def ensure_binaries() -> Path:
    """The directory of `initdb` and `postgres`; apt-get installs them when they are missing."""
    bindir = _find_bindir()
    if bindir is not None:
        return bindir
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise RuntimeError(
            "no PostgreSQL server found (initdb); install the 'postgresql' package "
            "(apt-get install -y postgresql) and run again"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql"],
        check=True,
        env=env,
    )
    bindir = _find_bindir()
    if bindir is None:
        raise RuntimeError("apt-get installed postgresql but no initdb was found")
    return bindir


def _server_user() -> str | None:
    """The user to run the server as when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", _USER):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _USER],
        check=True,
    )
    return _USER


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PostgresServer:
    """One running server: `url(db)` for a database on it, `create_database()` for a fresh one."""

    def __init__(self, *, fsync: bool = False) -> None:
        self.fsync = fsync
        self.bindir = ensure_binaries()
        self.user = _server_user()
        self.dir = Path(tempfile.mkdtemp(prefix="actloop-pg-"))
        self.data = self.dir / "data"
        self.port = 0
        self.superuser = "actloop"

    def _as_server_user(self, *cmd: str) -> list[str]:
        return ["runuser", "-u", self.user, "--", *cmd] if self.user else list(cmd)

    def start(self) -> PostgresServer:
        """initdb and start; returns self once it accepts connections."""
        if self.user:
            shutil.chown(self.dir, self.user)
        self.dir.chmod(0o755)
        subprocess.run(
            self._as_server_user(
                str(self.bindir / "initdb"), "-D", str(self.data), "-U", self.superuser,
                "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync",
            ),
            check=True, capture_output=True,
        )  # fmt: skip
        for _ in range(5):  # a free port can be taken between picking and binding it
            self.port = _free_port()
            if self._pg_ctl_start():
                return self
        raise RuntimeError(f"postgres did not start: {(self.dir / 'log').read_text()[-2000:]}")

    def _pg_ctl_start(self) -> bool:
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
            f"-c fsync={'on' if self.fsync else 'off'} -c max_connections=300 "
            "-c shared_buffers=64MB"
        )
        done = subprocess.run(
            self._as_server_user(
                str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "log"),
                "-o", options, "-w", "-t", "60", "start",
            ),
            capture_output=True,
        )  # fmt: skip
        return done.returncode == 0

    def url(self, database: str = "postgres") -> str:
        """A libpq URI of `database` on this server (TCP on loopback, no password)."""
        return f"postgresql://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}".encode())
        return self.url(name)

    def processes(self) -> list[int]:
        """The server's processes: the postmaster (first line of `postmaster.pid`) and its
        children, the backends and background workers."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children: list[int] = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue  # the process ended meanwhile
            if int(fields[1]) == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    def freeze(self) -> None:
        """Stop every server process (SIGSTOP): connections stay open, nothing answers."""
        self._frozen = self.processes()
        for pid in self._frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        """Let the frozen processes go on (SIGCONT)."""
        for pid in getattr(self, "_frozen", []):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self._frozen = []

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its directory."""
        self.thaw()
        subprocess.run(
            self._as_server_user(
                str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"
            ),
            capture_output=True,
        )
        shutil.rmtree(self.dir, ignore_errors=True)


def main() -> None:
    if sys.argv[1:] == ["ensure"]:
        print(f"PostgreSQL server binaries: {ensure_binaries()}")
        return
    server = PostgresServer().start()
    print(server.url(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
