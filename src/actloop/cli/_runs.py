"""`actloop runs list|show|resume|unlock` over a checkpoint file, as functions the CLI wires up.

Each returns a `CliResult(code, text)`: print `text`, exit with `code` — 0 done, 1 error (no such
file, foreign or corrupt file, a damaged journal entry (`list` still lists every run), unknown or
finished thread, the run raised, a lease a live process holds), 3 the run is paused waiting for
approval (`text` lists the pending call ids), 130 interrupted (Ctrl-C; the run is saved and
resumes later). `list` and `show` open the file read-only, so they work without write access.
`runs_resume` needs an `executor_factory(checkpointer) -> AgentExecutor` that builds the same
agent and tools the run was started with (the CLI gets it from its own options, e.g.
`--model`/`--tools`, or an import path).
`unlock` frees a lease whose holder died where this host cannot see it (another machine).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from actloop.checkpoint import (
    BaseCheckpointer,
    RunRecord,
    SqliteCheckpointer,
    connect,
    is_postgres_url,
    read_thread,
    thread_history,
)
from actloop.checkpoint._entries import DAMAGE
from actloop.cli._text import inert
from actloop.exceptions import CheckpointError, ConfigurationError
from actloop.executor import PAUSED_KEY

if TYPE_CHECKING:
    from actloop.executor import AgentExecutor

__all__ = ["CliResult", "runs_command", "runs_list", "runs_resume", "runs_show", "runs_unlock"]

_WIDTH = 80


class CliResult(NamedTuple):
    """What a `runs` command prints and its exit code."""

    code: int
    text: str


def _open(path: str | os.PathLike[str], *, read_only: bool = False) -> BaseCheckpointer:
    """The store at `path`: a checkpoint file (read-only when asked), or a `postgresql://` URL."""
    if is_postgres_url(path):
        return connect(path)
    if not Path(path).is_file():
        raise CheckpointError(f"no checkpoint file at {path}")
    return SqliteCheckpointer(path, read_only=read_only)


def _short(value: Any, width: int = _WIDTH) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _status(record: RunRecord) -> str:
    if record.status == "running":
        return f"running ({record.owner})" if record.owner else "interrupted"
    if record.status == "failed" and (record.error or "").startswith("KeyboardInterrupt"):
        return "interrupted"  # Ctrl-C: nothing failed, the run resumes where it stopped
    return record.status


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp))


def runs_list(path: str | os.PathLike[str]) -> CliResult:
    """One line per saved run: thread, status, steps, last update (steps `?`: a damaged journal,
    named after the table; the exit code is then 1, as for `runs show`)."""
    try:
        with contextlib.closing(_open(path, read_only=True)) as store:  # Postgres holds a pool
            rows = [(r, *_count(store, r)) for r in store.list_runs()]
    except CheckpointError as exc:
        return CliResult(1, f"error: {exc}")
    if not rows:
        return CliResult(0, f"no runs in {path}")
    width = max(6, *(len(r.thread_id) for r, _, _ in rows))
    lines = [f"{'THREAD':<{width}}  {'STATUS':<24}  {'STEPS':>5}  UPDATED"]
    for record, steps, _ in rows:
        status = _status(record)
        lines.append(
            f"{record.thread_id:<{width}}  {status:<24}  {steps:>5}  {_when(record.updated)}"
        )
    damaged = [f"error: {problem}" for _, _, problem in rows if problem]
    return CliResult(1 if damaged else 0, "\n".join(lines + damaged))


def _count(store: BaseCheckpointer, record: RunRecord) -> tuple[str, str | None]:
    """How many calls the run's journal holds (`?` and what is wrong: damaged or unreadable)."""
    try:
        return str(len(thread_history(record, store.entries(record.thread_id)).calls)), None
    except CheckpointError as exc:
        return "?", str(exc)


def runs_show(path: str | os.PathLike[str], thread_id: str) -> CliResult:
    """A run's header, every step (tool, input, observation), pending calls and outcome."""
    try:
        with contextlib.closing(_open(path, read_only=True)) as store:
            found = read_thread(store, thread_id)
            if found is None:
                raise CheckpointError(f"no run is saved under thread {thread_id!r} in {path}")
            pending_lines = _pending_lines(found.pending) if found.record.pending else []
    except CheckpointError as exc:
        return CliResult(1, f"error: {exc}")
    record = found.record
    lines = [
        f"thread:  {record.thread_id}",
        f"status:  {_status(record)}",
        f"created: {_when(record.created)}   updated: {_when(record.updated)}",
        f"inputs:  {_short(found.inputs)}",
        f"steps:   {len(found.calls)}",
    ]
    for call in found.calls:
        shown = _short(call.observation) if call.finished else "(not finished)"
        lines.append(f"  [{call.id}] {call.tool}({_short(call.tool_input, 40)}) -> {shown}")
    lines.extend(pending_lines)
    if record.output:
        lines.append(f"output:  {_short(found.output, 200)}")
    if record.error:
        lines.append(f"error:   {record.error}")
    return CliResult(0, "\n".join(lines))


def _pending_lines(pending: list[dict[str, Any]]) -> list[str]:
    """The calls waiting for approval, then those waiting for a person's answers (each
    question's message and the schema of its answer)."""
    try:
        lines: list[str] = []
        approvals = [p for p in pending if "questions" not in p]
        asking = [p for p in pending if "questions" in p]
        if approvals:
            lines.append("waiting for approval:")
            lines += [
                f"  [{p['id']}] {p['tool']}({_short(p['tool_input'], 60)})" for p in approvals
            ]
        if asking:
            lines.append("waiting for an answer:")
        for p in asking:
            lines.append(f"  [{p['id']}] {p['tool']}({_short(p['tool_input'], 60)}) asks:")
            lines += [_question_line(q) for q in p["questions"]]
        return lines
    except DAMAGE as exc:
        raise CheckpointError(f"the list of pending calls is damaged ({exc!r})") from None


def _question_line(question: dict[str, Any]) -> str:
    schema = question.get("schema")
    form = f" answer: {_short(schema, 300)}" if schema else ""
    return f"    {question['key']}: {question['message']}{form}"


def _resume_hint(command: str, pending: list[dict[str, Any]]) -> str:
    """How to go on with a paused run: approve its calls, or answer their questions."""
    if any("questions" in p for p in pending):
        return f"resume it with: {command} --answer ID='{{...}}' (or ID=decline, ID=cancel)"
    return f"resume it with: {command} --approve ID ..."


def runs_resume(
    path: str | os.PathLike[str],
    thread_id: str,
    executor_factory: Callable[[BaseCheckpointer], AgentExecutor],
    *,
    approve: bool | Iterable[str] | None = None,
    reject: Mapping[str, str | None] | Iterable[str] | None = None,
    edit: Mapping[str, Any] | None = None,
    answer: Mapping[str, Any] | None = None,
) -> CliResult:
    """Resume a run to its end (or its next pause) and print its outcome."""
    try:
        with contextlib.closing(_open(path)) as store:
            executor = executor_factory(store)
            result = executor.resume(
                thread_id, approve=approve, reject=reject, edit=edit, answer=answer
            )
    except CheckpointError as exc:
        return CliResult(1, f"error: {exc}")
    except KeyboardInterrupt:
        return CliResult(
            130,
            f"interrupted: thread {thread_id} keeps its finished steps; "
            f"resume it with: actloop runs resume {thread_id}",
        )
    except ConfigurationError:
        raise
    except Exception as exc:
        return CliResult(1, f"the run failed: {type(exc).__name__}: {exc}")
    if result.get("status") == "paused" and PAUSED_KEY in result:
        return CliResult(3, paused_text(thread_id, result[PAUSED_KEY]))
    keys = executor.agent.return_values or ["output"]  # a Runnable agent names none
    values = {k: result[k] for k in keys if k in result}
    text = str(values[keys[0]]) if len(values) == 1 else json.dumps(values, default=str)
    return CliResult(0, text)


def paused_text(thread_id: str, pending: list[dict[str, Any]], command: str = "") -> str:
    """What a paused run waits for, and how to resume it (`command`: the `runs resume` line
    that rebuilds its agent)."""
    lines = _pending_lines(pending)
    lines[0] = f"thread {thread_id} is {lines[0]}" if lines else f"thread {thread_id} is paused"
    hint = _resume_hint(command or f"actloop runs resume {thread_id}", pending)
    return "\n".join([*lines, hint])


def runs_unlock(path: str | os.PathLike[str], thread_id: str) -> CliResult:
    """Break the thread's lease (its holder died where this host cannot tell, e.g. another
    machine); refused while a live process on this host holds it."""
    try:
        holder = _open(path).break_lease(thread_id)
    except CheckpointError as exc:
        return CliResult(1, f"error: {exc}")
    if holder is None:
        return CliResult(0, f"thread {thread_id} holds no lease; nothing to unlock")
    return CliResult(
        0,
        f"broke the lease of process {holder} on thread {thread_id}; "
        f"resume it with: actloop runs resume {thread_id}",
    )


def add_resume_options(runs: argparse.ArgumentParser) -> None:
    """The options of `runs resume`: the decisions on a paused run's calls, and how to rebuild
    its executor (`--executor`, or the agent options plus `--mcp`/`--mcp-url`)."""
    from actloop.cli._mcp import add_mcp_options

    runs.add_argument(
        "--approve", nargs="*", default=None, metavar="ID", help="call ids to run (none: all)"
    )
    runs.add_argument("--reject", nargs="*", default=None, metavar="ID", help="call ids to reject")
    runs.add_argument(
        "--edit",
        action="append",
        default=None,
        metavar="ID=JSON",
        help="run this call with a new input (JSON, or plain text; repeatable)",
    )
    runs.add_argument(
        "--answer",
        action="append",
        default=None,
        metavar="ID=JSON",
        help="answer the questions of a call that asked for input: the form's content (JSON), "
        "decline or cancel (repeatable)",
    )
    runs.add_argument(
        "--executor", help="MODULE:ATTR of the AgentExecutor (or its factory) that ran the run"
    )
    add_mcp_options(runs)
    # absent: taken from the run's saved settings (the tools and limits it was started with)
    runs.set_defaults(tools=None, max_iterations=None, early_stopping=None)


def _edits(values: list[str] | None, option: str = "--edit") -> dict[str, Any] | None:
    """`--edit ID=JSON` (or `--answer`) values as {id: value} (text that is not JSON stays
    text)."""
    if not values:
        return None
    edits: dict[str, Any] = {}
    for value in values:
        call, sep, given = value.partition("=")
        if not sep or not call:
            raise ConfigurationError(f"{option} {value!r}: write ID=JSON, e.g. 0-0='{{...}}'")
        try:
            edits[call] = json.loads(given)
        except ValueError:
            edits[call] = given
    return edits


def _saved(store: BaseCheckpointer, thread_id: str) -> dict[str, Any]:
    """The settings the run was started with (its tools and limits), {} when there is no such
    run or its record is damaged (the resume itself then says so)."""
    record = store.get(thread_id)
    try:
        saved: Any = json.loads(record.fingerprint) if record else {}
    except DAMAGE:
        return {}
    return saved if isinstance(saved, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _saved_tools(saved: dict[str, Any]) -> list[str]:
    """The tool names of the saved settings."""
    tools: Any = saved.get("tools")
    return [str(t) for t in cast("list[Any]", tools)] if isinstance(tools, list) else []


def _fill_from_saved(args: argparse.Namespace, saved: dict[str, Any]) -> None:
    """Options left out of `runs resume` take the run's saved values: the built-in tools, the
    limits, the early stopping; the run's other tools must come from `--mcp`/`--mcp-url`."""
    from actloop.cli._build import DEFAULT_TIMEOUT
    from actloop.tools.builtin import BUILTIN_TOOL_NAMES

    tools = _saved_tools(saved)
    if args.tools is None:
        args.tools = ",".join(t for t in tools if t in BUILTIN_TOOL_NAMES) or "calculator,clock"
    others = [t for t in tools if t not in BUILTIN_TOOL_NAMES]
    if others and not (args.mcp or args.mcp_url):
        raise ConfigurationError(
            f"thread {args.thread!r} used tools no built-in provides ({', '.join(others)}): "
            "pass the MCP servers it was started with (--mcp, --mcp-url), or --executor"
        )
    if args.max_iterations is None:
        limit = saved.get("max_iterations", 6)
        args.max_iterations = limit if isinstance(limit, int) else None
    if args.early_stopping is None:
        args.early_stopping = saved.get("early_stopping_method") or "force"
    if args.timeout is None:
        limit = saved.get("max_execution_time", DEFAULT_TIMEOUT)
        args.timeout = float(limit) if isinstance(limit, (int, float)) else None


def _check_tools(executor: Any, saved: dict[str, Any], thread_id: str) -> None:
    """Refuse, naming them, when the run's tools are not all there (an MCP server that is gone
    or serves other tools now)."""
    have = {t.name for t in executor.tools}
    missing = [t for t in _saved_tools(saved) if t not in have]
    if missing:
        raise ConfigurationError(
            f"thread {thread_id!r} used tools that are not here now ({', '.join(missing)}): "
            "give the MCP servers (--mcp, --mcp-url) or --executor that serve them"
        )


def runs_command(args: argparse.Namespace) -> int:
    """Run one `runs` action and print its text; returns its exit code."""
    if args.action != "list" and not args.thread:
        print(f"actloop: error: runs {args.action} needs a THREAD id")
        return 2
    try:
        result = _dispatch(args)
    except ConfigurationError as exc:
        print(inert(f"actloop: error: {exc}"))
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    print(inert(result.text))
    return result.code


def _dispatch(args: argparse.Namespace) -> CliResult:
    if args.action == "list":
        return runs_list(args.db)
    if args.action == "show":
        return runs_show(args.db, args.thread)
    if args.action == "unlock":
        return runs_unlock(args.db, args.thread)

    approve: bool | list[str] | None = args.approve
    if approve == []:  # a bare --approve: every call the run waits for
        approve = True
    edit = _edits(args.edit)
    answer = _edits(args.answer, "--answer")
    with contextlib.ExitStack() as resources:  # ends the MCP servers

        def factory(checkpointer: BaseCheckpointer) -> Any:
            if args.executor:
                return _load(args.executor, checkpointer)
            from actloop.cli._build import build_executor

            saved = _saved(checkpointer, args.thread)
            _fill_from_saved(args, saved)
            executor = build_executor(args, checkpointer, resources)
            _check_tools(executor, saved, args.thread)
            return executor

        return runs_resume(
            args.db,
            args.thread,
            factory,
            approve=approve,
            reject=args.reject,
            edit=edit,
            answer=answer,
        )


def _load(spec: str, checkpointer: BaseCheckpointer) -> Any:
    """The executor `--executor MODULE:ATTR` names (as `serve` loads it), on the store `--db`
    opened (its own checkpointer, if any, is not used: the run is the one in `--db`)."""
    if sys.path[0] != "":
        sys.path.insert(0, "")  # modules in the current folder, as `python -m` finds them
    try:
        from actloop.server import load_executor  # the loader `serve --executor` uses
    except ImportError:
        raise ConfigurationError(
            "--executor needs the extra: pip install 'actloop[server]'"
        ) from None
    executor = load_executor(spec)
    executor.checkpointer = checkpointer
    return executor
