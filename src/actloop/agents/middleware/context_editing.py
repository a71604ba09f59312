"""`ContextEditingMiddleware` and `ClearToolUsesEdit` (LangChain 1.5's, ported).

Before each model call, when the messages pass a token count (LangChain's approximate counter
by default), older tool results are replaced by a placeholder (`[cleared]`) in what the model
is sent; the state keeps them. Each edit changes a copy of the request's messages in place.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from actloop.agents.middleware._tokens import TokenCounter, count_tokens_approximately
from actloop.agents.middleware.types import AgentMiddleware, ModelRequest
from actloop.messages import AIMessage, BaseMessage, ToolMessage

__all__ = [
    "DEFAULT_TOOL_PLACEHOLDER",
    "ClearToolUsesEdit",
    "ContextEdit",
    "ContextEditingMiddleware",
]

DEFAULT_TOOL_PLACEHOLDER = "[cleared]"


class ContextEdit(Protocol):
    """An edit strategy: change `messages` in place."""

    def apply(self, messages: list[Any], *, count_tokens: TokenCounter) -> None:
        """Apply the edit to the message list in place."""
        ...


@dataclass(slots=True)
class ClearToolUsesEdit:
    """Past `trigger` tokens, replace all but the last `keep` tool results with `placeholder`
    (and, with `clear_tool_inputs`, their calls' arguments), stopping once `clear_at_least`
    tokens are reclaimed; tools in `exclude_tools` are left alone."""

    trigger: int = 100_000
    clear_at_least: int = 0
    keep: int = 3
    clear_tool_inputs: bool = False
    exclude_tools: Sequence[str] = ()
    placeholder: str = DEFAULT_TOOL_PLACEHOLDER

    def apply(self, messages: list[Any], *, count_tokens: TokenCounter) -> None:
        """Clear the older tool results of `messages` in place."""
        tokens = count_tokens(messages)
        if tokens <= self.trigger:
            return
        for idx, tool_message in self._candidates(messages):
            if not self._clear(messages, idx, tool_message):
                continue
            if self.clear_at_least > 0:
                if max(0, tokens - count_tokens(messages)) >= self.clear_at_least:
                    break

    def _candidates(self, messages: list[Any]) -> list[tuple[int, ToolMessage]]:
        """The tool results that may be cleared: all but the last `keep`."""
        found = [(i, m) for i, m in enumerate(messages) if isinstance(m, ToolMessage)]
        if self.keep >= len(found):
            return []
        return found[: -self.keep] if self.keep else found

    def _clear(self, messages: list[Any], idx: int, tool_message: ToolMessage) -> bool:
        """Clear one tool result (and its call's arguments); False if it is left as is."""
        if tool_message.response_metadata.get("context_editing", {}).get("cleared"):
            return False
        ai = next((m for m in reversed(messages[:idx]) if isinstance(m, AIMessage)), None)
        if ai is None:
            return False
        call = next((c for c in ai.tool_calls if c.get("id") == tool_message.tool_call_id), None)
        if call is None or (tool_message.name or call["name"]) in set(self.exclude_tools):
            return False
        cleared = copy.copy(tool_message)
        cleared.artifact = None
        cleared.content = self.placeholder
        marker = {"cleared": True, "strategy": "clear_tool_uses"}
        cleared.response_metadata = {**tool_message.response_metadata, "context_editing": marker}
        messages[idx] = cleared
        if self.clear_tool_inputs:
            messages[messages.index(ai)] = _without_input(ai, tool_message.tool_call_id)
        return True


def _without_input(message: AIMessage, tool_call_id: str) -> AIMessage:
    """`message` with the arguments of call `tool_call_id` emptied, noted in its metadata."""
    calls: list[Any] = []
    cleared_any = False
    for call in message.tool_calls:
        updated = dict(call)
        if updated.get("id") == tool_call_id:
            updated["args"] = {}
            cleared_any = True
        calls.append(updated)
    metadata = dict(message.response_metadata)
    entry = dict(metadata.get("context_editing", {}))
    if cleared_any:
        entry["cleared_tool_inputs"] = sorted({*entry.get("cleared_tool_inputs", []), tool_call_id})
        metadata["context_editing"] = entry
    edited = copy.copy(message)
    edited.tool_calls = calls
    edited.response_metadata = metadata
    return edited


class ContextEditingMiddleware(AgentMiddleware):
    """Apply `edits` (default: one `ClearToolUsesEdit()`) to what each model call is sent."""

    def __init__(
        self,
        *,
        edits: Iterable[ContextEdit] | None = None,
        token_count_method: Literal["approximate", "model"] = "approximate",
        token_counter: TokenCounter | None = None,
    ) -> None:
        self.edits: list[ContextEdit] = list(edits or (ClearToolUsesEdit(),))
        self.token_count_method = token_count_method
        self.token_counter = token_counter

    def _counter(self, request: ModelRequest) -> TokenCounter:
        """The token counter the edits' triggers use."""
        if self.token_counter is not None:
            return self.token_counter
        if self.token_count_method == "approximate":
            return count_tokens_approximately
        system = [request.system_message] if request.system_message else []

        def count(messages: Sequence[BaseMessage]) -> int:
            return request.model.get_num_tokens_from_messages([*system, *messages], request.tools)

        return count

    def edited(self, request: ModelRequest) -> ModelRequest:
        """The request with its messages edited (a deep copy: the state is left as it was)."""
        if not request.messages:
            return request
        count = self._counter(request)
        messages = copy.deepcopy(list(request.messages))
        for edit in self.edits:
            edit.apply(messages, count_tokens=count)
        return request.override(messages=messages)

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[Any], Any]) -> Any:
        """The model call with the edited messages."""
        return handler(self.edited(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Async `wrap_model_call`."""
        return await handler(self.edited(request))
