"""Serving on loopback: a free port, and `Serve`, what tests/server's `serve` fixture gives."""

from __future__ import annotations

import socket
from collections.abc import Callable

__all__ = ["Serve", "free_port"]

Serve = Callable[..., str]
"""`serve(app)`: start uvicorn for `app` in a thread and return its base URL."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (yet: bind it soon)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
