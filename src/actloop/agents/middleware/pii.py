"""`PIIMiddleware` (LangChain 1.5's, ported): detect one kind of personal data and block,
redact, mask or hash it in the user's last message, the model's reply and/or tool results.

The detectors and strategies are `_redaction`'s (LangChain's texts, linear-time detectors).
The sync and async hooks are one decision each (`_input_update`, `_output_update`). LangChain's
stream transformer (redacting LangGraph v2 stream events as they go) has no counterpart: on
actloop the redaction applies to the state, as LangChain's hooks do.
"""

from __future__ import annotations

import copy
from typing import Any, Literal, cast

from actloop.agents.middleware._redaction import (
    Detector,
    PIIDetectionError,
    PIIMatch,
    RedactionRule,
    RedactionStrategy,
    apply_strategy,
    detect_credit_card,
    detect_email,
    detect_ip,
    detect_mac_address,
    detect_url,
)
from actloop.agents.middleware.types import AgentMiddleware, Runtime, hook_config
from actloop.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

__all__ = [
    "PIIDetectionError",
    "PIIMatch",
    "PIIMiddleware",
    "detect_credit_card",
    "detect_email",
    "detect_ip",
    "detect_mac_address",
    "detect_url",
]


def _with_content(message: BaseMessage, content: Any) -> BaseMessage:
    changed = copy.copy(message)
    changed.content = content
    return changed


def _last_index(messages: list[BaseMessage], kind: type[BaseMessage]) -> int | None:
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], kind):
            return i
    return None


class PIIMiddleware(AgentMiddleware):
    """Handle `pii_type` values with `strategy` in the input (the last human message), the
    output (the last AI message) and/or the tool results after the last AI message."""

    def __init__(
        self,
        pii_type: Literal["email", "credit_card", "ip", "mac_address", "url"] | str,
        *,
        strategy: RedactionStrategy = "redact",
        detector: Detector | str | None = None,
        apply_to_input: bool = True,
        apply_to_output: bool = False,
        apply_to_tool_results: bool = False,
    ) -> None:
        self.apply_to_input = apply_to_input
        self.apply_to_output = apply_to_output
        self.apply_to_tool_results = apply_to_tool_results
        rule = RedactionRule(pii_type=pii_type, strategy=strategy, detector=detector).resolve()
        self._resolved_rule = rule
        self.pii_type = rule.pii_type
        self.strategy: RedactionStrategy = rule.strategy
        self.detector = rule.detector

    @property
    def name(self) -> str:
        """`PIIMiddleware[<type>]` (several instances, one per type, may run together)."""
        return f"{type(self).__name__}[{self.pii_type}]"

    def _process_content(self, content: Any) -> tuple[Any, bool]:
        """The content with its text (a string, or text blocks' `text`) handled; whether it
        changed."""
        if isinstance(content, str):
            matches = self.detector(content)
            if not matches:
                return content, False
            return apply_strategy(content, matches, self.strategy), True
        blocks: list[Any] = []
        changed = False
        for block in cast("list[Any]", content):
            new = block
            text = block if isinstance(block, str) else cast("dict[str, Any]", block).get("text")
            if isinstance(text, str) and (matches := self.detector(text)):
                redacted = apply_strategy(text, matches, self.strategy)
                new = redacted if isinstance(block, str) else {**block, "text": redacted}
                changed = True
            blocks.append(new)
        return (blocks, True) if changed else (content, False)

    def _input_update(self, state: Any) -> dict[str, Any] | None:
        """The last human message and the latest tool results handled (as configured)."""
        if not self.apply_to_input and not self.apply_to_tool_results:
            return None
        messages: list[BaseMessage] = state["messages"]
        if not messages:
            return None
        updated = list(messages)
        modified = False
        if self.apply_to_input:
            i = _last_index(messages, HumanMessage)
            if i is not None and messages[i].content:
                content, changed = self._process_content(messages[i].content)
                if changed:
                    updated[i] = _with_content(messages[i], content)
                    modified = True
        if self.apply_to_tool_results:
            last_ai = _last_index(messages, AIMessage)
            for i in range(len(messages)) if last_ai is not None else ():
                if i <= cast("int", last_ai) or not isinstance(messages[i], ToolMessage):
                    continue
                if not messages[i].content:
                    continue
                content, changed = self._process_content(messages[i].content)
                if changed:
                    updated[i] = _with_content(messages[i], content)
                    modified = True
        return {"messages": updated} if modified else None

    def _output_update(self, state: Any) -> dict[str, Any] | None:
        """The last AI message handled (when `apply_to_output`)."""
        if not self.apply_to_output:
            return None
        messages: list[BaseMessage] = state["messages"]
        i = _last_index(messages, AIMessage) if messages else None
        if i is None or not messages[i].content:
            return None
        content, changed = self._process_content(messages[i].content)
        if not changed:
            return None
        updated = list(messages)
        updated[i] = _with_content(messages[i], content)
        return {"messages": updated}

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Handle the input and tool results before the model sees them."""
        return self._input_update(state)

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `before_model`."""
        return self._input_update(state)

    def after_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Handle the model's reply."""
        return self._output_update(state)

    async def aafter_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `after_model`."""
        return self._output_update(state)
