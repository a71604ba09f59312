"""The CLI's live view of a run: thoughts, tool calls, observations, tokens, a spinner, a summary.

On a terminal it uses rich: a spinner with the elapsed time and the model's streaming text sit at
the bottom while finished lines scroll above. Elsewhere (a pipe, a file) it prints plain lines.
Every text a model or a tool wrote goes through `inert` first, so escape sequences in it show as
text instead of driving the terminal.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.spinner import Spinner
from rich.text import Text

from actloop.callbacks import BaseCallbackHandler
from actloop.cli._text import inert
from actloop.steps import AgentAction, AgentStep

__all__ = ["RunDisplay"]

_TAIL = 240
"""How much of the model's streaming text the live area shows."""


def _tool_input(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class _Status:
    """The live area: a spinner, what is running, its elapsed time, and streaming text."""

    def __init__(self, display: RunDisplay) -> None:
        self.display = display

    def __rich__(self) -> RenderableType:
        d = self.display
        label = inert(f"{d.activity} {time.monotonic() - d.activity_start:.1f}s")
        spinner = Spinner("dots", text=Text(label, style="cyan"))
        if not d.buffer:
            return spinner
        return Group(Text(inert(d.buffer[-_TAIL:]), style="dim"), spinner)


class RunDisplay(BaseCallbackHandler):
    """A callback handler plus chunk printer that shows a run as it happens."""

    def __init__(self, console: Console, *, quiet: bool = False, verbose: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self.verbose = verbose
        self.live_mode = console.is_terminal and not quiet
        self.lock = threading.Lock()
        self.activity = "starting"
        self.activity_start = time.monotonic()
        self.buffer = ""
        self.tool_calls = 0
        self.steps = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.started = time.monotonic()
        self._live: Live | None = None
        self.servers: dict[str, str] = {}
        """The MCP server of each MCP tool, by tool name: shown with its calls."""

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> RunDisplay:
        if self.live_mode:
            self._live = Live(
                _Status(self), console=self.console, refresh_per_second=8, transient=True
            )
            self._live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None

    def _print(self, text: str, style: str | None = None) -> None:
        """Print one line (made inert) in `style`, or plainly off a terminal."""
        if self.quiet:
            return
        if self.live_mode:
            self.console.print(Text(inert(text), style=style or ""), highlight=False)
        else:
            print(inert(text), flush=True)

    def _set_activity(self, what: str) -> None:
        with self.lock:
            self.activity, self.activity_start = what, time.monotonic()

    # -- model callbacks -----------------------------------------------------------------------

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self._set_activity("model is thinking")
        self.buffer = ""

    def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
        with self.lock:
            self.buffer += token

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        for generations in getattr(response, "generations", []):
            for generation in generations:
                usage: Mapping[str, Any] = getattr(generation.message, "usage_metadata", None) or {}
                self.tokens_in += int(usage.get("input_tokens", 0))
                self.tokens_out += int(usage.get("output_tokens", 0))
        text = self.buffer.strip()
        self.buffer = ""
        if text and self.verbose:
            self._print(text, "dim")
        self._set_activity("working")

    # -- chunks of the run ---------------------------------------------------------------------

    def show_chunk(self, chunk: dict[str, Any]) -> None:
        """Print one chunk of `AgentExecutor.stream`: actions, steps, or the final output."""
        for action in chunk.get("actions", []):
            self._show_action(action)
        for step in chunk.get("steps", []):
            self._show_step(step)

    def _show_action(self, action: AgentAction) -> None:
        self.tool_calls += 1
        thought = _thought(action)
        if thought:
            self._print(f"Thought: {thought}", "italic")
        server = self.servers.get(action.tool)
        where = f" @ MCP server {server!r}" if server else ""
        self._print(f"→ {action.tool}({_tool_input(action.tool_input)}){where}", "bold yellow")
        self._set_activity(f"running {action.tool}{where}")

    def show_servers(self) -> None:
        """One line per MCP server: the tools it brings to the run."""
        by_server: dict[str, list[str]] = {}
        for tool, server in self.servers.items():
            by_server.setdefault(server, []).append(tool)
        for server, tools in by_server.items():
            self._print(f"MCP server {server!r}: {', '.join(tools)}", "dim")

    def _show_step(self, step: AgentStep) -> None:
        self.steps += 1
        observation = str(step.observation)
        if step.action.tool == "_Exception":
            self._print(f"! the model's reply could not be used: {observation}", "red")
        else:
            self._print(f"← {observation}", "green")
        self._set_activity("model is thinking")

    def show_answer(self, answer: str, stopped: bool, why: str = "") -> None:
        """Print the final answer, set apart (a stop names its limit: `why`)."""
        title = ("Stopped by " + why if why else "Stopped") if stopped else "Answer"
        answer = inert(answer)
        if self.live_mode:
            style = "yellow" if stopped else "bold green"
            self.console.print(Panel(Text(answer), title=title, border_style=style))
        elif not self.quiet:
            print(f"\n{title}: {answer}", flush=True)
        else:
            print(answer, flush=True)

    def show_summary(self) -> None:
        """Print the one-line summary: steps, tool calls, time, tokens."""
        elapsed = time.monotonic() - self.started
        tokens = f"{self.tokens_in} in / {self.tokens_out} out" if self.tokens_in else "n/a"
        self._print(
            f"steps: {self.steps} · tool calls: {self.tool_calls} · "
            f"time: {elapsed:.1f}s · tokens: {tokens}",
            "dim",
        )

    def show_error(self, message: str) -> None:
        """Print an error line (always, even when quiet)."""
        message = inert(message)
        if self.live_mode:
            self.console.print(Text(f"error: {message}", style="bold red"))
        else:
            import sys

            print(f"error: {message}", file=sys.stderr, flush=True)


def _thought(action: AgentAction) -> str:
    """The model's reasoning before a tool call, if its log has any beyond the call itself."""
    log = action.log.strip()
    if not log or log.startswith("Invoking:") or log.startswith("{"):
        return ""
    return log.split("\nAction:")[0].removeprefix("Thought:").strip()
