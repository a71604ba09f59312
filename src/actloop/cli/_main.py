"""`actloop run "QUESTION"`: an agent answering a question with tools, shown live in the terminal.

Exit codes: 0 a final answer; 2 a configuration or usage error (no question or an empty one, an
unknown model or tool, a missing key, a bad --db file or --timeout, a finished --thread, a question
that is not UTF-8 text);
3 the run was stopped by a limit (--max-iterations, --timeout), or a durable run paused (an MCP
tool asked a person for input: what it asks and how to answer are printed); 4 the model or its
server failed;
130 interrupted (Ctrl-C; a durable run is kept and says how to resume it). `actloop runs
list|show|resume|unlock` inspect durable runs. A run writes nothing to disk unless given
`--db FILE`; a durable run prints its thread id on stderr before it starts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from actloop.cli._build import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from actloop.runnables._config import RunnableConfig

__all__ = ["EXIT_CONFIG", "EXIT_INTERRUPTED", "EXIT_MODEL", "EXIT_OK", "EXIT_STOPPED", "main"]

EXIT_OK = 0
EXIT_CONFIG = 2
EXIT_STOPPED = 3
EXIT_MODEL = 4
EXIT_INTERRUPTED = 130

DEMO_QUESTION = "What is 12 * 7 + 5?"
"""The question of `make demo` and of the usage examples (`run` needs a question of its own)."""
TOOLS_HELP = """built-in tools (--tools NAME,NAME):
  calculator   arithmetic on an expression (+ - * / // % **, sqrt, round, ...)
  clock        the current date and time in an IANA time zone (UTC by default)
  read_file    a text file under --root
  list_dir     the entries of a folder under --root
and the tools of MCP servers (--mcp "COMMAND ARGS", --mcp-url URL)."""
"""What `--help` says of the tools (written out: importing the tools would slow every start)."""
RUNS_DB = "actloop-runs.sqlite"
"""The file `actloop runs` reads when `--db` is absent (`run` never writes it unasked)."""


def _agent_options(timeout_help: str) -> argparse.ArgumentParser:
    """Options that build the agent: shared by `run` and `runs resume` (which must rebuild it)."""
    run = argparse.ArgumentParser(add_help=False)
    run.add_argument("--model", default="local", help="local (default), or openai:MODEL")
    run.add_argument(
        "--base-url", help="an OpenAI-compatible server, e.g. http://localhost:11434/v1"
    )
    run.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    run.add_argument("--agent", choices=["tool-calling", "react", "json"], help="agent kind")
    run.add_argument(
        "--tools",
        default="calculator,clock",
        help="comma list of built-in tools (default calculator,clock; listed below)",
    )
    run.add_argument("--root", default=".", help="folder read_file/list_dir may access")
    run.add_argument("--max-iterations", type=int, default=6)
    run.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"hard limit in seconds for the whole run ({timeout_help})",
    )
    run.add_argument("--early-stopping", choices=["force", "generate"], default="force")
    run.add_argument("--seed", type=int, default=None, help="sampling seed (local model)")
    run.add_argument("--verbose", action="store_true", help="show model text and tracebacks")
    return run


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="actloop", description="A fast, reliable agent runtime.")
    sub = parser.add_subparsers(dest="command", required=True)
    # Each subcommand gets its own copy of the options: parents share their action objects, so a
    # default set on one subcommand would leak into the other.
    run = sub.add_parser(
        "run",
        parents=[_agent_options(f"default {DEFAULT_TIMEOUT:g}")],
        help="answer a question with an agent and tools",
        epilog=f'{TOOLS_HELP}\n\nexample: actloop run "{DEMO_QUESTION}"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.set_defaults(timeout=DEFAULT_TIMEOUT)
    run.add_argument("question", nargs="?", help="what to ask, in quotes")
    run.add_argument(
        "--db", help="journal the run in this checkpoint file or postgresql:// URL (a durable run)"
    )
    run.add_argument("--thread", help="thread id of the durable run (with --db)")
    run.add_argument("--json", action="store_true", help="print the trajectory as JSON")
    run.add_argument("--quiet", action="store_true", help="print only the answer")
    from actloop.cli._mcp import add_mcp_options

    add_mcp_options(run)
    run.set_defaults(usage=run.format_usage())
    runs = sub.add_parser(
        "runs",
        parents=[_agent_options("default: the limit the run was started with")],
        help="durable runs in a checkpoint file",
    )
    runs.add_argument("action", choices=["list", "show", "resume", "unlock"])
    runs.add_argument("thread", nargs="?")
    runs.add_argument(
        "--db",
        default=RUNS_DB,
        help=f"checkpoint file or postgresql:// URL (default {RUNS_DB})",
    )
    from actloop.cli._runs import add_resume_options

    add_resume_options(runs)
    from actloop.cli._serve import add_serve_parser

    serve = add_serve_parser(sub, _agent_options(f"default {DEFAULT_TIMEOUT:g}, per run"))
    serve.set_defaults(timeout=DEFAULT_TIMEOUT)
    fake = sub.add_parser(
        "fake-openai",
        help="a loopback OpenAI-compatible stand-in that answers by a fixed rule (no key)",
    )
    fake.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 terminal gets escapes, not a crash
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    args = _parser().parse_args(argv)
    if args.command == "run" and not (args.question or "").strip():
        return _no_question(args)
    try:
        if args.command == "runs":
            from actloop.cli._runs import runs_command

            return runs_command(args)
        if args.command == "fake-openai":
            from actloop.cli._fake_openai import fake_openai_command

            return fake_openai_command(args.port)
        if args.command == "serve":
            from actloop.cli._serve import serve_command

            return serve_command(args)
        return _run(args)
    except KeyboardInterrupt:  # before the run started (loading the model, say): nothing to keep
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _no_question(args: argparse.Namespace) -> int:
    """No question, or an empty one: a usage error (the demo question is `make demo`'s)."""
    what = "an empty question" if args.question is not None else "no question"
    print(args.usage, end="", file=sys.stderr)
    print(
        f'actloop run: error: {what}; ask one in quotes, e.g. actloop run "{DEMO_QUESTION}"',
        file=sys.stderr,
    )
    return EXIT_CONFIG


def _run(args: argparse.Namespace) -> int:
    from actloop.cli._build import build_executor
    from actloop.exceptions import ConfigurationError

    if args.thread and not args.db:
        return _fail(args, EXIT_CONFIG, "--thread needs --db FILE (the checkpoint file)")
    if not _is_text(args.question):
        return _fail(args, EXIT_CONFIG, "the question is not UTF-8 text (it holds stray bytes)")
    with contextlib.ExitStack() as resources:  # ends the MCP servers, also after Ctrl-C
        try:
            executor = build_executor(args, resources=resources)
        except ConfigurationError as exc:
            return _fail(args, EXIT_CONFIG, str(exc))
        return _execute(args, executor)


def _is_text(value: str) -> bool:
    """False for a string holding lone surrogates (undecodable argv bytes land there)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fail(args: argparse.Namespace, code: int, message: str) -> int:
    from actloop.cli._text import inert

    if getattr(args, "verbose", False):
        import traceback

        traceback.print_exc()
    print(f"actloop: error: {inert(message)}", file=sys.stderr)
    return code


def _execute(args: argparse.Namespace, executor: Any) -> int:
    from rich.console import Console

    from actloop.cli._display import RunDisplay
    from actloop.exceptions import CheckpointError, ModelError
    from actloop.executor import AgentExecutorIterator

    quiet = args.quiet or args.json
    display = RunDisplay(Console(stderr=args.json), quiet=quiet, verbose=args.verbose)
    display.servers = {t.name: t.metadata["mcp_server"] for t in executor.tools if _mcp(t)}
    display.show_servers()
    config: RunnableConfig = {"callbacks": [display]}
    if args.db:
        config["configurable"] = {"thread_id": args.thread}
        print(f"actloop: durable run, thread {args.thread} in {args.db}", file=sys.stderr)
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
        if args.db:
            print(
                f"thread {args.thread} keeps its finished steps; resume it with:\n"
                f"  {resume_command(args)}",
                file=sys.stderr,
            )
        return EXIT_INTERRUPTED
    except ModelError as exc:
        return _fail(args, EXIT_MODEL, f"the model failed: {exc}")
    except CheckpointError as exc:
        return _fail(args, EXIT_CONFIG, f"the checkpoint file failed: {exc}")
    except UnicodeEncodeError:  # the SDK encodes requests as strict UTF-8
        message = "the next model request holds a lone surrogate (invalid text the model wrote)"
        return _fail(args, EXIT_MODEL, f"the model failed: {message}")
    except (ConnectionError, TimeoutError, OSError) as exc:
        return _fail(args, EXIT_MODEL, f"the model server failed: {exc}")
    return _ended(args, display, iterator, final)


def _ended(args: argparse.Namespace, display: Any, iterator: Any, final: dict[str, Any]) -> int:
    """Show the run's end: its answer (and the limit that stopped it), or what a paused run
    waits for; its exit code."""
    from actloop.executor import PAUSED_KEY

    if PAUSED_KEY in final:  # an MCP tool asked a person for input: 3, as `runs resume`
        from actloop.cli._runs import paused_text
        from actloop.cli._text import inert

        print(inert(paused_text(args.thread, final[PAUSED_KEY], resume_command(args))))
        return EXIT_STOPPED
    answer = str(final.get("output", ""))
    stopped = iterator.stopped
    limit = _limit(args, iterator) if stopped else None
    if args.json:
        _print_json(args, answer, iterator, limit)
    else:
        if limit and answer in _FIXED_STOPS:  # its text names no limit, or the wrong one
            answer = "no answer before the limit."
        display.show_answer(answer, stopped, why=_LIMITS[limit](args) if limit else "")
        display.show_summary()
    return EXIT_STOPPED if stopped else EXIT_OK


_FIXED_STOPS = (
    "Agent stopped due to iteration limit or time limit.",
    "Agent stopped due to max iterations.",
)
"""The answers of a stop without `--early-stopping generate` (LangChain's texts)."""
_LIMITS: dict[str, Callable[[argparse.Namespace], str]] = {
    "max_iterations": lambda a: f"the iteration limit (--max-iterations {a.max_iterations})",
    "max_execution_time": lambda a: f"the time limit (--timeout {a.timeout:g} s)",
}
"""How a stop names the limit that made it (what the run's `stop_reason` calls it)."""


def _limit(args: argparse.Namespace, iterator: Any) -> str:
    """Which limit stopped the run: the iterations when they all ran, else the time."""
    done = args.max_iterations is not None and iterator.iterations >= args.max_iterations
    return "max_iterations" if done else "max_execution_time"


def resume_command(args: argparse.Namespace) -> str:
    """The `actloop runs resume` line that rebuilds this run's agent (the options that differ
    from the defaults; the limits come from the run's saved settings)."""
    import shlex

    words = ["actloop", "runs", "resume", args.thread, "--db", args.db]
    for option, default in (("model", "local"), ("base_url", None), ("agent", None)):
        value = getattr(args, option)
        if value != default:
            words += [f"--{option.replace('_', '-')}", value]
    if args.root != ".":
        words += ["--root", args.root]
    servers: list[str] = args.mcp or []
    urls: list[str] = args.mcp_url or []
    words += [w for c in servers for w in ("--mcp", c)]
    words += [w for u in urls for w in ("--mcp-url", u)]
    return shlex.join(words)


def _mcp(tool: Any) -> bool:
    """True for a tool served by an MCP server (its metadata names the server)."""
    return "mcp_server" in (getattr(tool, "metadata", None) or {})


def _print_steps_done(steps: list[Any]) -> None:
    from actloop.cli._text import inert

    print(f"\ninterrupted after {len(steps)} step(s):", file=sys.stderr)
    for action, observation in steps:
        print(inert(f"  {action.tool}({action.tool_input!r}) -> {observation!r}"), file=sys.stderr)


def _print_json(args: argparse.Namespace, answer: str, iterator: Any, limit: str | None) -> None:
    from actloop.serialization import dumps

    record = {
        "input": args.question,
        "output": answer,
        "stopped": limit is not None,
        "stop_reason": limit or "finished",
        "iterations": iterator.iterations,
        "intermediate_steps": iterator.intermediate_steps,
    }
    if args.db:
        record["thread_id"] = args.thread
    print(dumps(record))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
