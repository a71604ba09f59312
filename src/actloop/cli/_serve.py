"""`actloop serve`: the agent `actloop run`'s options build, or a `module:attr` executor, over HTTP.

Safe by default: binds 127.0.0.1; any other host needs `--token` (then every route but
`/health` asks for `Authorization: Bearer TOKEN`); no CORS unless `--cors-origin` is given;
requests naming another `Host` than loopback names, the bound one or an `--allowed-host` are
refused (DNS rebinding), as are other origins' requests (see `actloop.server._guard`).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import Any

from actloop.exceptions import ConfigurationError

__all__ = ["add_serve_parser", "serve_command"]


def add_serve_parser(sub: Any, shared: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register `serve` with `run`'s agent options (its own copy: see `_parser`)."""
    serve = sub.add_parser("serve", parents=[shared], help="serve the agent over HTTP")
    serve.add_argument("--db", help="checkpoint file or postgresql:// URL for durable threads")
    serve.set_defaults(thread=None)
    serve.add_argument("--executor", help="MODULE:ATTR of an AgentExecutor or its factory")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--token", help="bearer token (default: $ACTLOOP_TOKEN)")
    serve.add_argument("--cors-origin", action="append", default=[], help="allowed origin")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients reach the server by, besides loopback names and --host "
        "(repeatable; for a reverse proxy; '*' allows any)",
    )
    serve.add_argument("--max-body", type=int, default=1 << 20, help="request size limit")
    serve.add_argument(
        "--max-threads",
        type=_positive_int,
        default=200,
        help="threads with a run going on at once (one more gets 503; default 200)",
    )
    serve.add_argument(
        "--lease-ttl",
        type=_seconds,
        metavar="SECONDS",
        help="how long a run's lease lasts unless renewed: after that, another server process "
        "may take the run over (default: the store's, 30 s for PostgreSQL)",
    )
    serve.add_argument(
        "--takeover-every",
        type=_seconds,
        metavar="SECONDS",
        help="how often to look for runs of dead server processes and go on with them "
        f"(default {TAKEOVER_EVERY:g} with a postgresql:// --db, else never; 0: never)",
    )
    return serve


TAKEOVER_EVERY = 5.0
"""Seconds between take-over sweeps of a server on a PostgreSQL store, unless told."""


def _seconds(text: str) -> float:
    """A command-line number of seconds: finite, zero or more."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds")
    return value


def _positive_int(text: str) -> int:
    """A command-line whole number of at least 1 (ASCII digits only)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 9 and int(text) >= 1):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _executor(args: argparse.Namespace) -> Any:
    from actloop.cli._build import build_executor

    checkpointer = None
    if args.db:
        from actloop.checkpoint import connect

        checkpointer = connect(args.db)  # a file, or a postgresql:// URL
    if not args.executor:
        executor = build_executor(args, checkpointer)
    else:
        from actloop.server import load_executor

        executor = load_executor(args.executor)
        if checkpointer is not None and executor.checkpointer is None:
            executor.checkpointer = checkpointer
    if args.lease_ttl is not None and executor.checkpointer is not None:
        executor.checkpointer.lease_ttl = args.lease_ttl
    return executor


def _takeover_every(args: argparse.Namespace) -> float | None:
    """`--takeover-every`, else its default: sweeps on a PostgreSQL store only."""
    if args.takeover_every is not None:
        return args.takeover_every or None
    from actloop.checkpoint import is_postgres_url

    return TAKEOVER_EVERY if args.db and is_postgres_url(args.db) else None


def serve_command(args: argparse.Namespace) -> int:
    """Build the app and run uvicorn until interrupted; 2 for a configuration error."""
    token = args.token or os.environ.get("ACTLOOP_TOKEN")
    if not _is_loopback(args.host) and not token:
        print(f"actloop: error: binding {args.host} needs --token", file=sys.stderr)
        return 2
    if sys.path[0] != "":
        sys.path.insert(0, "")  # `--executor app:make` finds modules in the current folder
    try:
        import uvicorn

        from actloop.server import create_app
    except ImportError:
        print("actloop: error: serving needs the extra: pip install 'actloop[server]'")
        return 2
    try:
        executor = _executor(args)
    except ConfigurationError as exc:
        print(f"actloop: error: {exc}", file=sys.stderr)
        return 2
    app = create_app(
        executor,
        token=token,
        cors_origins=args.cors_origin,
        allowed_hosts=[args.host, *args.allowed_host],
        max_body=args.max_body,
        takeover_every=_takeover_every(args),
        max_threads=args.max_threads,
    )
    print(f"actloop: serving on http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    from actloop.server._process import pace_collector

    pace_collector()  # this process only serves
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", server_header=False)
    return 0
