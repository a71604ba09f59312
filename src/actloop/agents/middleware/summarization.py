"""`SummarizationMiddleware` (LangChain 1.5's, ported): past a trigger, the older messages are
replaced by one summary message.

Before each model call the messages are counted (LangChain's approximate counter, scaled by the
last reply's reported usage); when a trigger clause is met, the messages before a cutoff that
keeps `keep` (and never splits a tool call from its answers) are summarized by the model (or a
`summarizer`) with LangChain's prompt, and the state's messages become
`[RemoveMessage(REMOVE_ALL_MESSAGES), HumanMessage("Here is a summary ..."), *kept]`. The
decision and the new messages are written once (`_plan`, `_result`); the sync and async hooks
differ only in the summary call.
"""

from __future__ import annotations

import inspect
import itertools
import json
import logging
import random
import time
import uuid
import warnings
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypedDict, cast

from actloop.agents._models import chat_model
from actloop.agents.middleware._retry import default_retry_on
from actloop.agents.middleware._tokens import TokenCounter, count_tokens_approximately
from actloop.agents.middleware.types import AgentMiddleware, Runtime
from actloop.agents.types import REMOVE_ALL_MESSAGES
from actloop.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from actloop.models import is_context_overflow

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "ContextSize",
    "SummarizationMiddleware",
    "TriggerClause",
]

DEFAULT_SUMMARY_PROMPT = """<role>
Context Extraction Assistant
</role>

<primary_objective>
Your sole objective in this task is to extract the highest quality/most relevant context from the conversation history below.
</primary_objective>

<objective_information>
You're nearing the total number of input tokens you can accept, so you must extract the highest quality/most relevant pieces of information from your conversation history.
This context will then overwrite the conversation history presented below. Because of this, ensure the context you extract is only the most important information to continue working toward your overall goal.
</objective_information>

<instructions>
The conversation history below will be replaced with the context you extract in this step.
You want to ensure that you don't repeat any actions you've already completed, so the context you extract from the conversation history should be focused on the most important information to your overall goal.

You should structure your summary using the following sections. Each section acts as a checklist - you must populate it with relevant information or explicitly state "None" if there is nothing to report for that section:

## SESSION INTENT

What is the user's primary goal or request? What overall task are you trying to accomplish? This should be concise but complete enough to understand the purpose of the entire session.

## SUMMARY

Extract and record all of the most important context from the conversation history. Include important choices, conclusions, or strategies determined during this conversation. Include the reasoning behind key decisions. Document any rejected options and why they were not pursued.

## ARTIFACTS

What artifacts, files, or resources were created, modified, or accessed during this conversation? For file modifications, list specific file paths and briefly describe the changes made to each. This section prevents silent loss of artifact information.

## NEXT STEPS

What specific tasks remain to be completed to achieve the session intent? What should you do next?

</instructions>

The user will message you with the full message history from which you'll extract context to create a replacement. Carefully read through it all and think deeply about what information is most important to your overall goal and should be saved:

With all of this in mind, please carefully read over the entire conversation history, and extract the most important and relevant context to replace it so that you can free up space in the conversation history.
Respond ONLY with the extracted context. Do not include any additional information, or text before or after the extracted context.

<messages>
Messages to summarize:
{messages}
</messages>"""  # noqa: E501
"""LangChain's summary prompt (`{messages}` is the history as XML)."""

_DEFAULT_MESSAGES_TO_KEEP = 20
_DEFAULT_TRIM_TOKEN_LIMIT = 4000
_DEFAULT_FALLBACK_MESSAGE_COUNT = 15
logger = logging.getLogger(__name__)
_SUMMARY_ATTEMPTS = 3
_TOOL_CALL_ID_DISPLAY_LIMIT = 64

ContextSize = tuple[Literal["fraction", "tokens", "messages"], float]
"""`("fraction", 0.5)` of the model's max input tokens, `("tokens", 3000)`, `("messages", 50)`."""


class TriggerClause(TypedDict, total=False):
    """Thresholds that must all be met (a list of clauses: any one of them)."""

    tokens: int
    messages: int
    fraction: float


PROFILE_REQUIRED = (
    "Model profile information is required to use fractional token limits, "
    "and is unavailable for the specified model. Please use absolute token "
    "counts instead, or pass "
    '`\n\nChatModel(..., profile={"max_input_tokens": ...})`.\n\n'
    "with a desired integer value of the model's maximum input tokens."
)


_LS_PROVIDER_ALIASES: dict[str, frozenset[str]] = {
    "amazon_bedrock": frozenset({"bedrock", "bedrock_converse"}),
    "openai-mantle": frozenset({"openai"}),
    "anthropic-mantle": frozenset({"anthropic"}),
}
"""Providers whose messages' `model_provider` differs from their `ls_provider` (LangChain's)."""


def _provider_matches(message_provider: str, model_ls_provider: str | None) -> bool:
    """Whether a message's `model_provider` is the model's provider."""
    if model_ls_provider is None:
        return False
    if message_provider == model_ls_provider:
        return True
    aliases = _LS_PROVIDER_ALIASES.get(model_ls_provider)
    return aliases is not None and message_provider in aliases


def validate_context_size(context: Any, parameter_name: str) -> Any:
    """`context` if it is a valid `ContextSize` for `parameter_name`, else LangChain's error."""
    kind, value = context
    if kind == "fraction":
        if not 0 < value <= 1:
            msg = f"Fractional {parameter_name} values must be between 0 and 1, got {value}."
            raise ValueError(msg)
    elif kind in {"tokens", "messages"}:
        if value <= 0:
            raise ValueError(f"{parameter_name} thresholds must be greater than 0, got {value}.")
    else:
        raise ValueError(f"Unsupported context size type {kind} for {parameter_name}.")
    return context


def _clause_of_mapping(m: Mapping[str, Any]) -> dict[str, Any]:
    """A dict trigger clause checked as LangChain checks it."""
    if not m:
        raise ValueError(
            "trigger clause must specify at least one of 'tokens', 'messages', 'fraction'"
        )
    out: dict[str, Any] = {}
    for k, v in m.items():
        if k not in {"tokens", "messages", "fraction"}:
            raise ValueError(f"Unsupported trigger metric: {k!r}")
        if isinstance(v, bool):
            raise ValueError(f"{k} trigger value must be numeric, got {v!r}")
        if k == "fraction":
            if not isinstance(v, (int, float)):
                raise ValueError(f"Fraction trigger values must be numeric, got {v!r}")
        elif not isinstance(v, int):
            raise ValueError(f"{k} trigger values must be integers, got {v!r}")
        validate_context_size((k, v), "trigger")
        out[k] = v
    return out


def normalize_trigger(trigger: Any) -> list[dict[str, Any]]:
    """The trigger as clauses: AND within a clause, OR across clauses."""
    if trigger is None:
        return []

    def of_tuple(t: Any) -> dict[str, Any]:
        kind, value = validate_context_size(t, "trigger")
        return {kind: value}

    if isinstance(trigger, Mapping):
        return [_clause_of_mapping(cast("Mapping[str, Any]", trigger))]
    if isinstance(trigger, tuple):
        return [of_tuple(trigger)]
    if isinstance(trigger, list):
        clauses: list[dict[str, Any]] = []
        for item in cast("list[Any]", trigger):
            if isinstance(item, Mapping):
                clauses.append(_clause_of_mapping(cast("Mapping[str, Any]", item)))
            elif isinstance(item, tuple):
                clauses.append(of_tuple(item))
            else:
                raise TypeError(f"Unsupported trigger item type: {type(item)}")
        return clauses
    raise TypeError(f"Unsupported trigger type: {type(trigger)}")


def _copy_trigger(trigger: Any) -> Any:
    """A copy of the trigger's mutable containers."""
    if isinstance(trigger, Mapping):
        return dict(cast("Mapping[str, Any]", trigger))
    if isinstance(trigger, list):
        items = cast("list[Any]", trigger)
        return [dict(i) if isinstance(i, Mapping) else i for i in items]  # pyright: ignore[reportUnknownArgumentType]
    return trigger


def _legacy_conditions(trigger: Any) -> list[Any]:
    """The trigger as LangChain's legacy tuple view (`_trigger_conditions`)."""
    if trigger is None:
        return []
    if isinstance(trigger, tuple):
        return [validate_context_size(trigger, "trigger")]
    items: list[Any] = [trigger] if isinstance(trigger, Mapping) else cast("list[Any]", trigger)
    conditions: list[Any] = []
    for item in items:
        if isinstance(item, tuple):
            conditions.append(validate_context_size(item, "trigger"))
        elif isinstance(item, Mapping) and len(cast("Mapping[str, Any]", item)) == 1:
            pair = next(iter(cast("Mapping[str, Any]", item).items()))
            conditions.append(validate_context_size(pair, "trigger"))
    return conditions if not isinstance(trigger, Mapping) or len(conditions) == 1 else []


def find_safe_cutoff_point(messages: Sequence[BaseMessage], cutoff_index: int) -> int:
    """`cutoff_index` moved back to the AI message whose calls the tool messages there answer
    (or, if none, past those tool messages): a call and its answers stay together."""
    if cutoff_index >= len(messages) or not isinstance(messages[cutoff_index], ToolMessage):
        return cutoff_index
    ids: set[str] = set()
    idx = cutoff_index
    while idx < len(messages) and isinstance(messages[idx], ToolMessage):
        tool_call_id = cast("ToolMessage", messages[idx]).tool_call_id
        if tool_call_id:
            ids.add(tool_call_id)
        idx += 1
    for i in range(cutoff_index - 1, -1, -1):
        message = messages[i]
        if isinstance(message, AIMessage) and message.tool_calls:
            if ids & {c.get("id") for c in message.tool_calls if c.get("id")}:
                return i
    return idx


# -- the summary prompt's messages as XML (LangChain's `get_buffer_string(format="xml")`) -----


def escape(text: str) -> str:
    """`xml.sax.saxutils.escape` (imported on use: it loads `urllib.request`)."""
    from xml.sax.saxutils import escape as sax_escape

    return sax_escape(text)


def quoteattr(text: str) -> str:
    """`xml.sax.saxutils.quoteattr`, imported on use."""
    from xml.sax.saxutils import quoteattr as sax_quoteattr

    return sax_quoteattr(text)


def _xml_type(m: BaseMessage) -> str:
    kinds = {"human": "human", "ai": "ai", "system": "system", "function": "function"}
    if m.type == "tool":
        return "tool"
    if m.type == "chat":
        return str(getattr(m, "role", "chat"))
    if m.type in kinds:
        return kinds[m.type]
    raise ValueError(f"Got unsupported message type: {m}")


def _xml_block(block: dict[str, Any]) -> str | None:
    """A content block as XML: text and reasoning, URL images; others are skipped."""
    kind = block.get("type", "")
    if kind == "text":
        text = block.get("text", "")
        return escape(text) if text else None
    if kind == "reasoning":
        reasoning = block.get("reasoning", "")
        return f"<reasoning>{escape(reasoning)}</reasoning>" if reasoning else None
    if kind == "image" and block.get("url") and not str(block["url"]).startswith("data:"):
        return f"<image url={quoteattr(block['url'])} />"
    if kind == "image_url":
        image_url: Any = block.get("image_url", {})
        url = (
            str(cast("dict[str, Any]", image_url).get("url", ""))
            if isinstance(image_url, dict)
            else ""
        )
        if url and not url.startswith("data:"):
            return f"<image url={quoteattr(url)} />"
    return None


def _xml_parts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [escape(content)] if content else []
    parts: list[str] = []
    for block in cast("list[Any]", content):
        if isinstance(block, str):
            if block:
                parts.append(escape(block))
        else:
            formatted = _xml_block(cast("dict[str, Any]", block))
            if formatted:
                parts.append(formatted)
    return parts


def _display_id(tool_call_id: str) -> str:
    if len(tool_call_id) > _TOOL_CALL_ID_DISPLAY_LIMIT:
        return f"{tool_call_id[:_TOOL_CALL_ID_DISPLAY_LIMIT]}..."
    return tool_call_id


def _xml_message(m: BaseMessage) -> str:
    kind = quoteattr(_xml_type(m))
    parts = _xml_parts(m.content)
    if isinstance(m, AIMessage) and m.tool_calls:
        lines = [f"<message type={kind}>"]
        if parts:
            lines.append(f"  <content>{' '.join(parts)}</content>")
        for call in m.tool_calls:
            call_id = quoteattr(_display_id(call.get("id") or ""))
            name = quoteattr(str(call.get("name") or ""))
            args = escape(json.dumps(call.get("args", {}), ensure_ascii=False))
            lines.append(f"  <tool_call id={call_id} name={name}>{args}</tool_call>")
        lines.append("</message>")
        return "\n".join(lines)
    if isinstance(m, AIMessage) and "function_call" in m.additional_kwargs:
        call = m.additional_kwargs["function_call"]
        name = quoteattr(str(call.get("name") or ""))
        args = escape(str(call.get("arguments") or "{}"))
        lines = [f"<message type={kind}>"]
        if parts:
            lines.append(f"  <content>{' '.join(parts)}</content>")
        lines += [f"  <function_call name={name}>{args}</function_call>", "</message>"]
        return "\n".join(lines)
    return f"<message type={kind}>{' '.join(parts)}</message>"


def xml_history(messages: Sequence[BaseMessage]) -> str:
    """The messages as LangChain's `get_buffer_string(messages, format="xml")` writes them."""
    return "\n".join(_xml_message(m) for m in messages)


# -- trimming the messages to summarize (LangChain's `trim_messages`, strategy "last") ---------


def _split_text(text: str) -> list[str]:
    splits = text.split("\n")
    return [s + "\n" for s in splits[:-1]] + splits[-1:]


def _first_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    for block in cast("list[Any]", content or []):
        if isinstance(block, str):
            return block
        if isinstance(block, dict) and cast("dict[str, Any]", block).get("type") == "text":
            return cast("dict[str, Any]", block).get("text")
    return None


def _partial(
    messages: list[BaseMessage], idx: int, max_tokens: int, count: TokenCounter
) -> list[BaseMessage] | None:
    """The first `idx` messages and as much of message `idx`'s end as fits, or None."""
    import copy

    excluded = copy.deepcopy(messages[idx])
    if isinstance(excluded.content, list):
        blocks = list(reversed(cast("list[Any]", excluded.content)))
        for _ in range(1, len(blocks)):
            blocks = blocks[:-1]
            excluded.content = blocks
            if count([*messages[:idx], excluded]) <= max_tokens:
                excluded.content = list(reversed(blocks))
                return [*messages[:idx], excluded]
    text = _first_text(excluded.content)
    if not text:
        return None
    splits = list(reversed(_split_text(text)))
    base = count(messages[:idx])
    left, right = 0, len(splits)
    for _ in range(len(splits).bit_length()):
        if left >= right:
            break
        mid = (left + right + 1) // 2
        excluded.content = "".join(splits[:mid])
        if base + count([excluded]) <= max_tokens:
            left = mid
        else:
            right = mid - 1
    if left <= 0:
        return None
    excluded.content = "".join(reversed(splits[:left]))
    return [*messages[:idx], excluded]


def _first_max_tokens(
    messages: list[BaseMessage], max_tokens: int, count: TokenCounter
) -> list[BaseMessage]:
    """The longest start of `messages` within `max_tokens` (a partial last message allowed),
    ending on a human message (the reversed list: the trim starts on one)."""
    if not messages:
        return messages
    if count(messages) <= max_tokens:
        while messages and not isinstance(messages[-1], HumanMessage):
            messages = messages[:-1]
        return messages
    left, right = 0, len(messages)
    for _ in range(len(messages).bit_length()):
        if left >= right:
            break
        mid = (left + right + 1) // 2
        if count(messages[:mid]) <= max_tokens:
            left = mid
        else:
            right = mid - 1
    idx = left
    if idx < len(messages):
        extended = _partial(messages, idx, max_tokens, count)
        if extended is not None:
            messages, idx = extended, idx + 1
    while idx > 0 and not isinstance(messages[idx - 1], HumanMessage):
        idx -= 1
    return messages[:idx]


def trim_last(
    messages: Sequence[BaseMessage], max_tokens: int, count: TokenCounter
) -> list[BaseMessage]:
    """LangChain's `trim_messages(strategy="last", allow_partial=True, start_on="human",
    include_system=True)`: the latest messages within `max_tokens`, a leading system message
    kept."""
    rest = list(messages)
    if not rest:
        return []
    system = rest[0] if isinstance(rest[0], SystemMessage) else None
    if system is not None:
        rest = rest[1:]
    budget = max_tokens if system is None else max(0, max_tokens - count([system]))
    result = _first_max_tokens(rest[::-1], budget, count)[::-1]
    return [system, *result] if system is not None else result


# -- the middleware ---------------------------------------------------------------------------


def _retry_delay(exc: Exception, attempt: int) -> float:
    """The wait before the summary call is tried again after `exc` (LangChain's `with_retry`:
    3 attempts, retryable errors only, exponential with jitter); raises `exc` when it is not
    tried again. The sync and async summary calls both ask this."""
    if attempt + 1 >= _SUMMARY_ATTEMPTS or not default_retry_on(exc):
        raise exc
    return min(60.0, 2.0**attempt) + random.uniform(0, 1)


def _approximate_counter(model: Any) -> TokenCounter:
    """The approximate token counter for `model` (LangChain's: 3.3 characters per token for
    Anthropic's models, else 4), scaled by the reported usage."""
    counter: Any = partial(count_tokens_approximately, use_usage_metadata_scaling=True)
    if str(getattr(model, "_llm_type", "")).startswith("anthropic-chat"):
        counter = partial(counter, chars_per_token=3.3)
    return counter


def _check_summary(summary: object) -> str:
    if not isinstance(summary, str):
        raise TypeError(f"`summarizer` must return a str, got {type(summary).__name__}.")
    return summary.strip()


class SummarizationMiddleware(AgentMiddleware):
    """Summarize the older messages once `trigger` is met, keeping `keep` (LangChain 1.5's)."""

    def __init__(
        self,
        model: Any,
        *,
        trigger: Any = None,
        keep: Any = ("messages", _DEFAULT_MESSAGES_TO_KEEP),
        token_counter: TokenCounter = count_tokens_approximately,
        summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
        trim_tokens_to_summarize: int | None = _DEFAULT_TRIM_TOKEN_LIMIT,
        summarizer: Any = None,
        **deprecated_kwargs: Any,
    ) -> None:
        trigger, keep = self._deprecated(trigger, keep, deprecated_kwargs)
        self.model = chat_model(model) if isinstance(model, str) else model
        self.trigger = _copy_trigger(trigger)
        self._trigger_clauses = normalize_trigger(self.trigger)
        self._trigger_conditions = _legacy_conditions(self.trigger)
        self.keep = validate_context_size(keep, "keep")
        if token_counter is count_tokens_approximately:
            self.token_counter: TokenCounter = _approximate_counter(self.model)
            counter: Any = self.token_counter
            unscaled: Any = partial(counter, use_usage_metadata_scaling=False)
            self._partial_token_counter: TokenCounter = unscaled
        else:
            self.token_counter = self._partial_token_counter = token_counter
        self.summary_prompt = summary_prompt
        self.trim_tokens_to_summarize = trim_tokens_to_summarize
        self._summary_chat_model: Any = self.model
        self.summarizer: Any = None
        if isinstance(summarizer, str) or _is_chat_model(summarizer):
            self._summary_chat_model = (
                chat_model(summarizer) if isinstance(summarizer, str) else summarizer
            )
        elif summarizer is not None:
            self.summarizer = summarizer
        self._summary_model: Any = chat_model(self._summary_chat_model)
        """The model the summary calls go to (adopted when LangChain's)."""
        needs_profile = any("fraction" in c for c in self._trigger_clauses)
        if (needs_profile or self.keep[0] == "fraction") and self._max_input_tokens() is None:
            raise ValueError(PROFILE_REQUIRED)

    @staticmethod
    def _deprecated(trigger: Any, keep: Any, kwargs: dict[str, Any]) -> tuple[Any, Any]:
        """`max_tokens_before_summary` and `messages_to_keep` as LangChain 1.5 takes them."""
        if "max_tokens_before_summary" in kwargs:
            value = kwargs["max_tokens_before_summary"]
            warnings.warn(
                "max_tokens_before_summary is deprecated. Use trigger=('tokens', value) instead.",
                DeprecationWarning,
                stacklevel=3,
            )
            if trigger is None and value is not None:
                trigger = ("tokens", value)
        if "messages_to_keep" in kwargs:
            value = kwargs["messages_to_keep"]
            warnings.warn(
                "messages_to_keep is deprecated. Use keep=('messages', value) instead.",
                DeprecationWarning,
                stacklevel=3,
            )
            if keep == ("messages", _DEFAULT_MESSAGES_TO_KEEP):
                keep = ("messages", value)
        return trigger, keep

    # -- the decision (written once) -----------------------------------------------------------

    _find_safe_cutoff_point = staticmethod(find_safe_cutoff_point)

    @staticmethod
    def _ensure_message_ids(messages: list[BaseMessage]) -> None:
        """Give every message an id (the reducer removes and re-adds them by id)."""
        for message in messages:
            if message.id is None:
                message.id = str(uuid.uuid4())

    def _get_profile_limits(self, model: Any = None) -> int | None:
        """LangChain's name of `_max_input_tokens`."""
        return self._max_input_tokens(model)

    def _max_input_tokens(self, model: Any = None) -> int | None:
        profile = getattr(model or self.model, "profile", None)
        if not isinstance(profile, Mapping):
            return None
        found = cast("Mapping[str, Any]", profile).get("max_input_tokens")
        return found if isinstance(found, int) else None

    def _reported_over(self, messages: list[BaseMessage], threshold: float) -> bool:
        """Whether the last reply's reported usage (from this model's provider) passed it."""
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None or last.usage_metadata is None:
            return False
        reported = last.usage_metadata.get("total_tokens", -1)
        provider = last.response_metadata.get("model_provider")
        if not reported or reported < threshold or not provider:
            return False
        params: Any = getattr(self.model, "_get_ls_params", None)
        found: dict[str, Any] = cast("dict[str, Any]", params()) if callable(params) else {}
        return _provider_matches(provider, found.get("ls_provider"))

    def _should_summarize(self, messages: list[BaseMessage], total: int) -> bool:
        """Whether any trigger clause has all its thresholds met."""
        for clause in self._trigger_clauses:
            if all(self._met(kind, value, messages, total) for kind, value in clause.items()):
                return True
        return False

    def _met(self, kind: str, value: Any, messages: list[BaseMessage], total: int) -> bool:
        if kind == "messages":
            return len(messages) >= value
        if kind == "tokens":
            return total >= value or self._reported_over(messages, float(value))
        limit = self._max_input_tokens()
        if limit is None:
            return False
        threshold = max(1, int(limit * value))
        return total >= threshold or self._reported_over(messages, float(threshold))

    def _determine_cutoff_index(self, messages: list[BaseMessage]) -> int:
        kind, value = self.keep
        if kind in {"tokens", "fraction"}:
            found = self._find_token_based_cutoff(messages)
            if found is not None:
                return found
            return self._find_safe_cutoff(messages, _DEFAULT_MESSAGES_TO_KEEP)
        return self._find_safe_cutoff(messages, int(value))

    def _find_safe_cutoff(self, messages: list[BaseMessage], messages_to_keep: int) -> int:
        if len(messages) <= messages_to_keep:
            return 0
        return find_safe_cutoff_point(messages, len(messages) - messages_to_keep)

    def _find_token_based_cutoff(self, messages: list[BaseMessage]) -> int | None:
        """The earliest index whose suffix fits the `keep` token budget (a safe cutoff)."""
        if not messages:
            return 0
        kind, value = self.keep
        if kind == "fraction":
            limit = self._max_input_tokens()
            if limit is None:
                return None
            target = int(limit * value)
        else:
            target = int(value)
        target = max(target, 1)
        if self.token_counter(messages) <= target:
            return 0
        left, right, candidate = 0, len(messages), len(messages)
        for _ in range(len(messages).bit_length() + 1):
            if left >= right:
                break
            mid = (left + right) // 2
            if self._partial_token_counter(messages[mid:]) <= target:
                candidate, right = mid, mid
            else:
                left = mid + 1
        if candidate == len(messages):
            candidate = left
        if candidate >= len(messages):
            if len(messages) == 1:
                return 0
            candidate = len(messages) - 1
        return find_safe_cutoff_point(messages, candidate)

    def _plan(self, state: Any) -> tuple[list[BaseMessage], list[BaseMessage]] | None:
        """(messages to summarize, messages kept) when summarization runs now, else None."""
        messages: list[BaseMessage] = state["messages"]
        self._ensure_message_ids(messages)
        if not self._should_summarize(messages, self.token_counter(messages)):
            return None
        cutoff = self._determine_cutoff_index(messages)
        if cutoff <= 0:
            return None
        return self._partition_messages(messages, cutoff)

    @staticmethod
    def _result(summary: str, kept: list[BaseMessage]) -> dict[str, Any]:
        """The state update: every message removed, the summary, the kept messages."""
        summary_messages = SummarizationMiddleware._build_new_messages(summary)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *summary_messages, *kept]}

    @staticmethod
    def _build_new_messages(summary: str) -> list[HumanMessage]:
        """The message that stands for the summarized history."""
        text = f"Here is a summary of the conversation to date:\n\n{summary}"
        return [HumanMessage(text, additional_kwargs={"lc_source": "summarization"})]

    @staticmethod
    def _partition_messages(
        conversation_messages: list[BaseMessage], cutoff_index: int
    ) -> tuple[list[BaseMessage], list[BaseMessage]]:
        """The messages to summarize and the messages to keep."""
        return conversation_messages[:cutoff_index], conversation_messages[cutoff_index:]

    def _format_summary_prompt(self, messages: list[BaseMessage]) -> str:
        """The summary prompt with `messages` as XML."""
        return self.summary_prompt.format(messages=xml_history(messages)).rstrip()

    def _overflow_retry_prompt(self, messages: list[BaseMessage]) -> str | None:
        """A smaller summary prompt after the summary call overflowed the model's context: the
        middle of the XML history cut out, its start (where the objective usually is) and its
        recent end kept, within half its tokens and 40% of the summary model's
        `max_input_tokens` when known (LangChain's). None when nothing fits."""
        formatted = xml_history(messages)
        tokens = int(self._partial_token_counter([HumanMessage(content=formatted)]))
        budget = tokens // 2
        max_input_tokens = self._get_profile_limits(self._summary_chat_model)
        if max_input_tokens is not None:
            budget = min(budget, max_input_tokens * 2 // 5)
        keep_chars = len(formatted) * budget // max(tokens, 1)
        if keep_chars <= 0:
            return None
        head_chars = keep_chars // 4
        tail_chars = keep_chars - head_chars
        logger.debug(
            "Summary prompt exceeded the model's context window; retrying with "
            "~%d of ~%d history tokens.",
            budget,
            tokens,
        )
        truncated = (
            f"{formatted[:head_chars]}\n\n[... middle of conversation omitted ...]\n\n"
            f"{formatted[-tail_chars:]}"
        )
        return self.summary_prompt.format(messages=truncated).rstrip()

    def _trim_messages_for_summary(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        try:
            if self.trim_tokens_to_summarize is None:
                return messages
            return trim_last(messages, self.trim_tokens_to_summarize, self.token_counter)
        except Exception:
            return messages[-_DEFAULT_FALLBACK_MESSAGE_COUNT:]

    # -- the hooks -----------------------------------------------------------------------------

    def before_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Summarize the older messages when a trigger is met."""
        plan = self._plan(state)
        if plan is None:
            return None
        return self._result(self._create_summary(plan[0]), plan[1])

    async def abefore_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `before_model`."""
        plan = self._plan(state)
        if plan is None:
            return None
        return self._result(await self._acreate_summary(plan[0]), plan[1])

    def _create_summary(self, messages: list[BaseMessage]) -> str:
        """The summary of `messages` (LangChain's texts when there is nothing to summarize); a
        summary call that overflows the model's context is made once more with the middle of
        the history cut out."""
        if not messages:
            return "No previous conversation history."
        trimmed = self._trim_messages_for_summary(messages)
        if not trimmed:
            return "Previous conversation was too long to summarize."
        if self.summarizer is not None:
            if inspect.iscoroutinefunction(self.summarizer):  # as a RunnableLambda refuses it
                raise TypeError(
                    "Cannot invoke a coroutine function synchronously.Use `ainvoke` instead."
                )
            if hasattr(self.summarizer, "invoke"):  # a runnable: the summary call's config
                return _check_summary(self.summarizer.invoke(trimmed, config=_summary_config()))
            return _check_summary(self.summarizer(trimmed))
        try:
            return self._summarize(self._format_summary_prompt(trimmed))
        except Exception as exc:
            retry = self._overflow_retry_prompt(trimmed) if is_context_overflow(exc) else None
            if retry is None:
                raise
        return self._summarize(retry)

    def _summarize(self, prompt: str) -> str:
        """One summary call with LangChain's retries (`with_retry`)."""
        for attempt in itertools.count():
            try:
                return self._summary_model.invoke(prompt, config=_summary_config()).text.strip()
            except Exception as exc:
                time.sleep(_retry_delay(exc, attempt))
        raise AssertionError("unreachable")

    async def _acreate_summary(self, messages: list[BaseMessage]) -> str:
        """Async `_create_summary`."""
        if not messages:
            return "No previous conversation history."
        trimmed = self._trim_messages_for_summary(messages)
        if not trimmed:
            return "Previous conversation was too long to summarize."
        if self.summarizer is not None:
            return _check_summary(await _acall(self.summarizer, trimmed))
        try:
            return await self._asummarize(self._format_summary_prompt(trimmed))
        except Exception as exc:
            retry = self._overflow_retry_prompt(trimmed) if is_context_overflow(exc) else None
            if retry is None:
                raise
        return await self._asummarize(retry)

    async def _asummarize(self, prompt: str) -> str:
        """Async `_summarize`."""
        import asyncio

        for attempt in itertools.count():
            try:
                config = _summary_config()
                return (await self._summary_model.ainvoke(prompt, config=config)).text.strip()
            except Exception as exc:
                await asyncio.sleep(_retry_delay(exc, attempt))
        raise AssertionError("unreachable")


def _summary_config() -> dict[str, Any]:
    """The config of a summary call: marked internal (LangChain's), out of the `messages`
    stream."""
    from actloop.agents.middleware.internal_call_transformer import internal_call_config

    return internal_call_config("summarization")


def _is_chat_model(value: Any) -> bool:
    """Whether `value` is a chat model, actloop's or LangChain's (it writes summaries from the
    prompt; anything else is a `summarizer` function or runnable)."""
    return any(c.__name__ == "BaseChatModel" for c in type(value).__mro__)


async def _acall(summarizer: Any, messages: Any) -> Any:
    """A `summarizer`'s result on the async path (a sync function runs in a worker thread)."""
    import asyncio

    if hasattr(summarizer, "ainvoke"):
        return await summarizer.ainvoke(messages, config=_summary_config())
    if inspect.iscoroutinefunction(summarizer):
        return await summarizer(messages)
    return await asyncio.to_thread(summarizer, messages)
