"""`RunnableWithMessageHistory`, as langchain-core's: a runnable that gets a session's chat
history with its input and adds the input and output messages to it after each call.

The session comes from `config["configurable"]` (`session_id` unless `history_factory_config`
names other keys); `get_session_history` returns its `BaseChatMessageHistory`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, cast

from actloop.chat_history import BaseChatMessageHistory
from actloop.exceptions import warn_deprecated
from actloop.messages import AIMessage, BaseMessage, HumanMessage
from actloop.runnables._base import Runnable, coerce_to_runnable
from actloop.runnables._config import RunnableConfig

__all__ = ["RunnableWithMessageHistory"]


def _pick(value: dict[str, Any], key: str | None, default: str) -> Any:
    """The messages' entry of a dict: at `key`, else its only entry, else at `default`."""
    chosen = key or (next(iter(value)) if len(value) == 1 else default)
    return value[chosen]


def _input_messages(value: Any, key: str | None) -> list[BaseMessage]:
    if isinstance(value, dict):
        value = _pick(cast("dict[str, Any]", value), key, "input")
    if isinstance(value, str):
        return [HumanMessage(value)]
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, list | tuple):
        items: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        if items and isinstance(items[0], list):
            if len(items) != 1:
                raise ValueError(f"Expected a single list of messages. Got {value}.")
            return cast("list[BaseMessage]", items[0])
        return items
    raise ValueError(
        f"Expected str, BaseMessage, list[BaseMessage], or tuple[BaseMessage]. Got {value}."
    )


def _output_messages(value: Any, key: str | None) -> list[BaseMessage]:
    if isinstance(value, dict):
        value = _pick(cast("dict[str, Any]", value), key, "output")
    if isinstance(value, str):
        return [AIMessage(value)]
    if isinstance(value, BaseMessage):
        return [value]
    if isinstance(value, list | tuple):
        return list(value)  # pyright: ignore[reportUnknownArgumentType]
    raise ValueError(
        f"Expected str, BaseMessage, list[BaseMessage], or tuple[BaseMessage]. Got {value}."
    )


class RunnableWithMessageHistory(Runnable[Any, Any]):
    """`runnable` with a session's message history loaded before each call and extended after.

    Without `history_messages_key` the history and the input messages go in as one list (at
    `input_messages_key` of a dict input, else as the input); with it, the history goes under
    that key and the input is kept. The output's messages (`output_messages_key` of a dict) are
    saved with the input's.
    """

    def __init__(
        self,
        runnable: Any,
        get_session_history: Callable[..., BaseChatMessageHistory],
        *,
        input_messages_key: str | None = None,
        output_messages_key: str | None = None,
        history_messages_key: str | None = None,
        history_factory_config: Sequence[Any] | None = None,
    ) -> None:
        warn_deprecated(
            "RunnableWithMessageHistory",
            "RunnableWithMessageHistory is deprecated. Use LangGraph's built-in persistence "
            "instead.",
        )
        self.runnable: Runnable[Any, Any] = coerce_to_runnable(runnable)
        self.get_session_history = get_session_history
        self.input_messages_key = input_messages_key
        self.output_messages_key = output_messages_key
        self.history_messages_key = history_messages_key
        specs = history_factory_config or ["session_id"]
        self.history_factory_keys = [s if isinstance(s, str) else s.id for s in specs]
        """The configurable keys that name a session (the `id`s of LangChain's field specs)."""
        self.name = "RunnableWithMessageHistory"

    def _history(self, config: RunnableConfig) -> BaseChatMessageHistory:
        keys = self.history_factory_keys
        configurable: dict[str, Any] = dict(config.get("configurable") or {})
        missing = set(keys) - set(configurable)
        names = list(inspect.signature(self.get_session_history).parameters)
        if missing and names:
            example_input = {self.input_messages_key: "foo"}
            example_config = {"configurable": dict.fromkeys(missing, "[your-value-here]")}
            raise ValueError(
                f"Missing keys {sorted(missing)} in config['configurable'] Expected keys are "
                f"{sorted(keys)}.When using via .invoke() or .stream(), pass in a config; e.g., "
                f"chain.invoke({example_input}, {example_config})"
            )
        if len(keys) == 1:
            if names:
                return self.get_session_history(configurable[keys[0]])
            return self.get_session_history()
        if set(keys) != set(names):
            raise ValueError(
                f"Expected keys {sorted(keys)} do not match parameter names {sorted(names)} "
                "of get_session_history."
            )
        return self.get_session_history(**{key: configurable[key] for key in keys})

    def _entered(self, input: Any, history: list[BaseMessage]) -> Any:
        """The runnable's input: the history put in."""
        if self.history_messages_key:
            return {**input, self.history_messages_key: history}
        key = self.input_messages_key
        messages = [*history, *_input_messages(input if not key else input[key], None)]
        return {**input, key: messages} if key else messages

    def _new(self, input: Any, output: Any) -> list[BaseMessage]:
        """The messages a call adds: its input's, then its output's."""
        given = _input_messages(input, self.input_messages_key)
        return [*given, *_output_messages(output, self.output_messages_key)]

    def _invoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        history = self._history(config)
        output = self.runnable.invoke(self._entered(input, list(history.messages)), config)
        history.add_messages(self._new(input, output))
        return output

    async def _ainvoke(self, input: Any, config: RunnableConfig, **kwargs: Any) -> Any:
        history = self._history(config)
        entered = self._entered(input, list(await history.aget_messages()))
        output = await self.runnable.ainvoke(entered, config)
        await history.aadd_messages(self._new(input, output))
        return output


RunnableWithMessageHistory.__module__ = "actloop.runnables"  # loaded lazily: pinned here
