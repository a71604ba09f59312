"""A loopback TCP proxy, in its own process, that delays every reply by a fixed time.

    proxy = DelayProxy("127.0.0.1", 5432, delay_ms=10).start()
    ... connect to 127.0.0.1:proxy.port instead of 5432 ...
    proxy.stats()   # {"connections": ..., "replies": ..., "reply_bytes": ..., ...}
    proxy.stop()

What it delays, exactly: every chunk of bytes the upstream server sends back (one `recv` on the
upstream socket) is forwarded to the client `delay_ms` after it arrived at the proxy, no sooner.
Bytes from the client to the server are forwarded at once. Each connection is delayed on its own:
its replies keep their order, several chunks queued on one connection each wait only until their
own arrival + delay (they are not serialized behind each other's waits), and one connection's
waits never hold up another's. So a request/reply round trip costs one extra `delay_ms`, like a
server one `delay_ms` further away (on the way back).

The proxy runs in a separate process (its own event loop), so a client whose event loop stalls
cannot stall the proxy too; it exits when `stop()` is called or when the process that started it
goes away (its stdin closes). Standard library only. `python bench/delay_proxy.py UPSTREAM_HOST
UPSTREAM_PORT DELAY_MS` runs it by hand (it prints its port, then serves until stdin closes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["DelayProxy"]


class DelayProxy:
    """Starts the proxy in a subprocess; `port` is where clients connect (on `listen_host`)."""

    def __init__(
        self,
        upstream_host: str,
        upstream_port: int,
        delay_ms: float,
        *,
        listen_host: str = "127.0.0.1",
        start_timeout: float = 10.0,
    ) -> None:
        self.upstream_host, self.upstream_port = upstream_host, upstream_port
        self.delay_ms, self.listen_host = delay_ms, listen_host
        self.start_timeout = start_timeout
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None

    def start(self) -> DelayProxy:
        """Start the subprocess and wait until it listens; returns self (`port` is set)."""
        cmd = [
            sys.executable, str(Path(__file__).resolve()), self.upstream_host,
            str(self.upstream_port), str(self.delay_ms), "--listen", self.listen_host,
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        line = self._reply(self.start_timeout)
        if not line.strip().isdigit():
            self.stop()
            raise RuntimeError(f"delay proxy did not start (it said {line!r})")
        self.port = int(line)
        return self

    def _reply(self, timeout: float) -> str:
        """One line from the subprocess; '' if it says nothing within `timeout` seconds."""
        assert self._proc is not None and self._proc.stdout is not None
        import selectors

        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                return ""
        return self._proc.stdout.readline()

    def stats(self, timeout: float = 5.0) -> dict[str, int]:
        """Counters since start: `connections`, `requests`/`request_bytes` (client -> server
        chunks), `replies`/`reply_bytes` (server -> client chunks, each delayed)."""
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write("stats\n")
        self._proc.stdin.flush()
        line = self._reply(timeout)
        if not line:
            raise RuntimeError("delay proxy did not answer")
        return json.loads(line)

    def stop(self) -> None:
        """Stop the subprocess (close its stdin; terminate it if it does not exit in 5 s)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> DelayProxy:
        return self.start() if self._proc is None else self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


# -- the subprocess ------------------------------------------------------------------------------


class _Counters:
    def __init__(self) -> None:
        self.values = dict.fromkeys(
            ("connections", "requests", "request_bytes", "replies", "reply_bytes"), 0
        )

    def add(self, key: str, n: int = 1) -> None:
        self.values[key] += n


async def _pump(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, count: Callable[[int], None]
) -> None:
    """Client -> server, undelayed; closes the server side's write half at EOF."""
    while chunk := await reader.read(65536):
        count(len(chunk))
        writer.write(chunk)
        await writer.drain()
    with contextlib.suppress(OSError):
        writer.write_eof()


async def _delayed_pump(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    delay: float,
    count: Callable[[int], None],
) -> None:
    """Server -> client: each chunk is written at its arrival time + `delay`, in order."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def receive() -> None:
        while chunk := await reader.read(65536):
            queue.put_nowait((loop.time() + delay, chunk))
        queue.put_nowait((loop.time() + delay, b""))

    receiver = asyncio.create_task(receive())
    try:
        while True:
            due, chunk = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not chunk:
                break
            count(len(chunk))
            writer.write(chunk)
            await writer.drain()
    finally:
        receiver.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await receiver
    with contextlib.suppress(OSError):
        writer.write_eof()


async def _connection(
    client_r: asyncio.StreamReader,
    client_w: asyncio.StreamWriter,
    upstream: tuple[str, int],
    delay: float,
    counters: _Counters,
) -> None:
    counters.add("connections")
    try:
        server_r, server_w = await asyncio.open_connection(*upstream)
    except OSError:
        client_w.close()
        return

    def up(n: int) -> None:
        counters.add("requests")
        counters.add("request_bytes", n)

    def down(n: int) -> None:
        counters.add("replies")
        counters.add("reply_bytes", n)

    tasks = [
        asyncio.create_task(_pump(client_r, server_w, up)),
        asyncio.create_task(_delayed_pump(server_r, client_w, delay, down)),
    ]
    try:
        # Done when the server's side is finished (or either side fails).
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for w in (client_w, server_w):
            w.close()


async def _control(counters: _Counters) -> None:
    """Answers `stats` lines on stdin; returns at EOF (the parent is gone or called stop)."""
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        if line.strip() == "stats":
            print(json.dumps(counters.values), flush=True)


async def _serve(upstream: tuple[str, int], delay: float, listen: str) -> None:
    counters = _Counters()
    open_connections: set[asyncio.Task[Any]] = set()

    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        open_connections.add(task)
        try:
            await _connection(r, w, upstream, delay, counters)
        except asyncio.CancelledError:
            pass  # stopping: asyncio's server callback would log a cancelled handler's error
        finally:
            open_connections.discard(task)

    server = await asyncio.start_server(handle, listen, 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await _control(counters)
    left = list(open_connections)
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)


def main(argv: list[str]) -> None:
    if len(argv) < 3:
        sys.exit("usage: delay_proxy.py UPSTREAM_HOST UPSTREAM_PORT DELAY_MS [--listen HOST]")
    listen = argv[argv.index("--listen") + 1] if "--listen" in argv else "127.0.0.1"
    asyncio.run(_serve((argv[0], int(argv[1])), float(argv[2]) / 1000, listen))


if __name__ == "__main__":
    main(sys.argv[1:])
