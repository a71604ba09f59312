"""`actloop runs list|show|resume`: the CLI side of durable runs (see `actloop._runs_cli`)."""

from __future__ import annotations

import argparse
from typing import Any

from actloop.exceptions import ConfigurationError

__all__ = ["runs_command"]


def runs_command(args: argparse.Namespace) -> int:
    """Run one `runs` action and print its text; returns its exit code."""
    from actloop._runs_cli import runs_list, runs_resume, runs_show

    if args.action != "list" and not args.thread:
        print(f"actloop: error: runs {args.action} needs a THREAD id")
        return 2
    if args.action == "list":
        result = runs_list(args.db)
    elif args.action == "show":
        result = runs_show(args.db, args.thread)
    else:

        def factory(checkpointer: Any) -> Any:
            from actloop._cli_build import build_executor

            return build_executor(args, checkpointer)

        try:
            result = runs_resume(
                args.db, args.thread, factory, approve=args.approve, reject=args.reject
            )
        except ConfigurationError as exc:
            print(f"actloop: error: {exc}")
            return 2
    print(result.text)
    return result.code
