"""`ToolErrorMiddleware` (LangChain 1.5's, ported): exceptions a tool raises become error
`ToolMessage`s when `on_error` returns content for them, and propagate otherwise.

Handling is opt-in: `on_error(exc, request)` returns the message's content (a string or a list
of content blocks) or None to let the exception through, so no exception text reaches the model
unless the handler chooses to show it. `aon_error` handles errors on the async path (falling
back to `on_error`); a sync run of an async-only middleware raises. Interrupts always propagate.
LangChain's `trace_policy` (LangSmith payload trimming) is not ported.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from actloop.agents.middleware.types import AgentMiddleware, ToolCallRequest
from actloop.agents.types import GraphInterrupt
from actloop.messages import ToolMessage

__all__ = ["AOnError", "OnError", "ToolErrorMiddleware"]

OnError = Callable[[Exception, ToolCallRequest], "str | list[Any] | None"]
"""Sync handler: content for an error `ToolMessage`, or None to let the exception propagate."""

AOnError = Callable[[Exception, ToolCallRequest], Awaitable["str | list[Any] | None"]]
"""Async handler: content for an error `ToolMessage`, or None to let the exception propagate."""

_NO_SYNC_HANDLER = (
    "ToolErrorMiddleware has no sync `on_error`; run async (ainvoke/astream) or provide `on_error`."
)


class ToolErrorMiddleware(AgentMiddleware):
    """Return selected tool-execution exceptions to the model as error `ToolMessage`s."""

    def __init__(
        self,
        on_error: OnError | None = None,
        *,
        aon_error: AOnError | None = None,
        tools: Sequence[Any] | None = None,
    ) -> None:
        """`tools` (tools or names) limits the handling to those tools; None: every tool.

        Raises:
            ValueError: If neither `on_error` nor `aon_error` is given.
        """
        if on_error is None and aon_error is None:
            raise ValueError("ToolErrorMiddleware requires `on_error` and/or `aon_error`.")
        self.on_error = on_error
        self.aon_error = aon_error
        self._tool_filter: list[str] | None = (
            None if tools is None else [t if isinstance(t, str) else t.name for t in tools]
        )
        self.tools = []

    def _should_handle_tool(self, tool_name: str) -> bool:
        """Whether errors of `tool_name` are handled here."""
        return self._tool_filter is None or tool_name in self._tool_filter

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> Any:
        """Run the tool; a handled exception becomes an error `ToolMessage`."""
        tool_name = _tool_name(request)
        if not self._should_handle_tool(tool_name):
            return handler(request)
        try:
            return handler(request)
        except GraphInterrupt:
            raise
        except Exception as exc:
            if self.on_error is None:
                raise RuntimeError(_NO_SYNC_HANDLER) from exc
            content = self.on_error(exc, request)
            if content is None:
                raise
            return _error_message(content, request, tool_name)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        """`wrap_tool_call` on the async path: `aon_error` if given, else `on_error`."""
        tool_name = _tool_name(request)
        if not self._should_handle_tool(tool_name):
            return await handler(request)
        try:
            return await handler(request)
        except GraphInterrupt:
            raise
        except Exception as exc:
            if self.aon_error is not None:
                content = await self.aon_error(exc, request)
            elif self.on_error is not None:
                content = self.on_error(exc, request)
            else:  # pragma: no cover - __init__ guarantees at least one handler
                raise
            if content is None:
                raise
            return _error_message(content, request, tool_name)


def _tool_name(request: ToolCallRequest) -> str:
    """The called tool's name (the call's when the tool is unknown)."""
    return request.tool.name if request.tool else request.tool_call["name"]


def _error_message(content: Any, request: ToolCallRequest, tool_name: str) -> ToolMessage:
    """The error `ToolMessage` answering `request` with the handler's content."""
    return ToolMessage(
        content=content, tool_call_id=request.tool_call["id"], name=tool_name, status="error"
    )
