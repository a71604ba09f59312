"""`actloop run "QUESTION"`: an agent answering a question with tools, shown live in the terminal.

Exit codes: 0 a final answer; 2 a configuration error (unknown model or tool, missing key);
3 the run was stopped by a limit (--max-iterations, --timeout); 4 the model or its server failed;
130 interrupted (Ctrl-C). `actloop runs list|show|resume` inspect durable runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actloop.runnables._config import RunnableConfig

__all__ = ["EXIT_CONFIG", "EXIT_INTERRUPTED", "EXIT_MODEL", "EXIT_OK", "EXIT_STOPPED", "main"]

EXIT_OK = 0
EXIT_CONFIG = 2
EXIT_STOPPED = 3
EXIT_MODEL = 4
EXIT_INTERRUPTED = 130

DEMO_QUESTION = "What is 12 * 7 + 5?"


def _agent_options() -> argparse.ArgumentParser:
    """Options that build the agent: shared by `run` and `runs resume` (which must rebuild it)."""
    run = argparse.ArgumentParser(add_help=False)
    run.add_argument("--model", default="local", help="local (default), or openai:MODEL")
    run.add_argument(
        "--base-url", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1"
    )
    run.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    run.add_argument("--agent", choices=["tool-calling", "react", "json"], help="agent kind")
    run.add_argument("--tools", default="calculator,clock", help="comma list of built-in tools")
    run.add_argument("--root", default=".", help="folder read_file/list_dir may access")
    run.add_argument("--max-iterations", type=int, default=6)
    run.add_argument("--timeout", type=float, default=None, help="hard limit in seconds")
    run.add_argument("--early-stopping", choices=["force", "generate"], default="force")
    run.add_argument("--seed", type=int, default=None, help="sampling seed (local model)")
    run.add_argument(
        "--db", help="journal the run in this checkpoint file or postgresql:// URL (a durable run)"
    )
    run.add_argument("--verbose", action="store_true", help="show model text and tracebacks")
    return run


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="actloop", description="A fast, reliable agent runtime.")
    sub = parser.add_subparsers(dest="command", required=True)
    shared = _agent_options()
    run = sub.add_parser("run", parents=[shared], help="answer a question with an agent and tools")
    run.add_argument("question", nargs="?", default=DEMO_QUESTION)
    run.add_argument("--thread", help="thread id of the durable run (with --db)")
    run.add_argument("--json", action="store_true", help="print the trajectory as JSON")
    run.add_argument("--quiet", action="store_true", help="print only the answer")
    runs = sub.add_parser("runs", parents=[shared], help="durable runs in a checkpoint file")
    runs.add_argument("action", choices=["list", "show", "resume"])
    runs.add_argument("thread", nargs="?")
    runs.add_argument("--approve", nargs="*", default=None, help="call ids to run (resume)")
    runs.add_argument("--reject", nargs="*", default=None, help="call ids to reject (resume)")
    runs.set_defaults(db="actloop-runs.sqlite")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.command == "runs":
        from actloop.cli._runs import runs_command

        return runs_command(args)
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    from actloop.cli._build import build_executor
    from actloop.exceptions import ConfigurationError

    if args.thread and not args.db:
        return _fail(args, EXIT_CONFIG, "--thread needs --db FILE (the checkpoint file)")
    try:
        executor = build_executor(args)
    except ConfigurationError as exc:
        return _fail(args, EXIT_CONFIG, str(exc))
    return _execute(args, executor)


def _fail(args: argparse.Namespace, code: int, message: str) -> int:
    if getattr(args, "verbose", False):
        import traceback

        traceback.print_exc()
    print(f"actloop: error: {message}", file=sys.stderr)
    return code


def _execute(args: argparse.Namespace, executor: Any) -> int:
    from rich.console import Console

    from actloop.cli._display import RunDisplay
    from actloop.exceptions import ModelError
    from actloop.executor._iterator import AgentExecutorIterator

    quiet = args.quiet or args.json
    display = RunDisplay(Console(stderr=args.json), quiet=quiet, verbose=args.verbose)
    config: RunnableConfig = {"callbacks": [display]}
    if args.db:
        config["configurable"] = {"thread_id": args.thread or _new_thread_id()}
    iterator = AgentExecutorIterator(
        executor, {"input": args.question}, config=config, yield_actions=True
    )
    final: dict[str, Any] = {}
    try:
        with display:
            for chunk in iterator:
                display.show_chunk(chunk)
                if "messages" in chunk and "actions" not in chunk and "steps" not in chunk:
                    final = dict(chunk)
    except KeyboardInterrupt:
        _print_steps_done(iterator.intermediate_steps)
        return EXIT_INTERRUPTED
    except ModelError as exc:
        return _fail(args, EXIT_MODEL, f"the model failed: {exc}")
    except (ConnectionError, TimeoutError, OSError) as exc:
        return _fail(args, EXIT_MODEL, f"the model server failed: {exc}")
    answer = str(final.get("output", ""))
    stopped = iterator.stopped
    if args.json:
        _print_json(args.question, answer, iterator, stopped)
    else:
        display.show_answer(answer, stopped)
        display.show_summary()
    return EXIT_STOPPED if stopped else EXIT_OK


def _new_thread_id() -> str:
    import uuid

    return uuid.uuid4().hex[:12]


def _print_steps_done(steps: list[Any]) -> None:
    print(f"\ninterrupted after {len(steps)} step(s):", file=sys.stderr)
    for action, observation in steps:
        print(f"  {action.tool}({action.tool_input!r}) -> {observation!r}", file=sys.stderr)


def _print_json(question: str, answer: str, iterator: Any, stopped: bool) -> None:
    from actloop.serialization import dumps

    record = {
        "input": question,
        "output": answer,
        "stopped": stopped,
        "iterations": iterator.iterations,
        "intermediate_steps": iterator.intermediate_steps,
    }
    print(dumps(record))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
