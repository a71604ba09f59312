"""Callback handlers: one base class of no-op hooks with langchain-core's signatures.

A handler written for LangChain works unchanged. Override the hooks you need. On the async path the
hooks of an `AsyncCallbackHandler` are awaited; on the sync path they are run to completion.
A handler that raises is logged and skipped (the run goes on) unless its `raise_error` is True.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Mapping
    from uuid import UUID

    from actloop.callbacks._manager import CallbackManager

__all__ = [
    "AsyncCallbackHandler",
    "BaseCallbackHandler",
    "Callbacks",
    "StdOutCallbackHandler",
    "get_color_mapping",
    "get_colored_text",
    "print_text",
]

Callbacks: TypeAlias = "list[BaseCallbackHandler] | CallbackManager | None"
"""What `callbacks=` accepts: a list of handlers, a manager, or None."""


class BaseCallbackHandler:
    """No-op hooks for every event of a run; subclass and override what you need."""

    raise_error: bool = False
    """Re-raise exceptions from this handler instead of logging them."""
    run_inline: bool = False
    """Kept for LangChain compatibility; actloop always runs handlers inline, in order."""

    # Properties, as in langchain-core: a pydantic-model handler may override them with properties
    # of its own (class attributes would become pydantic fields that shadow those properties).
    @property
    def ignore_llm(self) -> bool:
        """Skip the LLM events."""
        return False

    @property
    def ignore_chain(self) -> bool:
        """Skip the chain events."""
        return False

    @property
    def ignore_agent(self) -> bool:
        """Skip the agent and tool events."""
        return False

    @property
    def ignore_chat_model(self) -> bool:
        """Skip `on_chat_model_start`."""
        return False

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A chat model starts; `messages` is a list of message lists."""

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A text model starts (fired for chat models by handlers lacking on_chat_model_start)."""

    def on_llm_new_token(
        self,
        token: str,
        *,
        chunk: Any = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A model streamed a token; `chunk` is a ChatGenerationChunk."""

    def on_llm_end(
        self,
        response: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A model finished; `response` is an LLMResult."""

    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A model raised."""

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A chain (any Runnable, the executor included) starts; `name=` is in kwargs."""

    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A chain finished."""

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A chain raised."""

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A tool starts; its name is `serialized["name"]`."""

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A tool returned `output`."""

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """A tool raised."""

    def on_text(
        self,
        text: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Free text (verbose output)."""

    def on_agent_action(
        self,
        action: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """The agent decided to run a tool; fired just before that tool runs."""

    def on_agent_finish(
        self,
        finish: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """The agent finished."""


class AsyncCallbackHandler(BaseCallbackHandler):
    """A handler whose hooks are coroutines; awaited on the async path."""

    async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_llm_start(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_llm_new_token(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_llm_end(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_llm_error(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_chain_start(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_chain_end(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_chain_error(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_tool_start(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_tool_end(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_tool_error(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_text(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_agent_action(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""

    async def on_agent_finish(self, *args: Any, **kwargs: Any) -> Any:
        """See BaseCallbackHandler."""


_COLORS = {"blue": "36;1", "yellow": "33;1", "pink": "38;5;200", "green": "32;1", "red": "31;1"}


def get_color_mapping(items: list[str], excluded_colors: list[str] | None = None) -> dict[str, str]:
    """Give each item a colour name, cycling through the palette (LangChain's mapping)."""
    colors = [c for c in _COLORS if c not in (excluded_colors or ())]
    if not colors:
        raise ValueError("No colors available after applying exclusions.")
    return {item: colors[i % len(colors)] for i, item in enumerate(items)}


def get_colored_text(text: str, color: str) -> str:
    """`text` in bold italic `color` for a terminal (LangChain's `get_colored_text`)."""
    return f"\u001b[{_COLORS[color]}m\033[1;3m{text}\u001b[0m"


def print_text(text: str, color: str | None = None, end: str = "", file: Any = None) -> None:
    """Print text, coloured like LangChain's `print_text`, with no newline unless `end` says so."""
    shown = get_colored_text(text, color) if color else text
    print(shown, end=end, file=file, flush=file is not None)


class StdOutCallbackHandler(BaseCallbackHandler):
    """Prints a run as LangChain's StdOutCallbackHandler does (the executor's `verbose=True`)."""

    def __init__(self, color: str | None = None) -> None:
        self.color = color

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        # LangChain's rule: a `name` given, even None (what `iter` and `stream` give), is shown
        info: Mapping[str, Any] = serialized or {}
        if "name" in kwargs:
            name = kwargs["name"]
        elif info:
            name = info.get("name", info.get("id", ["<unknown>"])[-1])
        else:
            name = "<unknown>"
        print(f"\n\n\033[1m> Entering new {name} chain...\033[0m")

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        print("\n\033[1m> Finished chain.\033[0m")

    def on_agent_action(self, action: Any, color: str | None = None, **kwargs: Any) -> None:
        print_text(action.log, color=color or self.color)

    def on_tool_end(
        self,
        output: Any,
        color: str | None = None,
        observation_prefix: str | None = None,
        llm_prefix: str | None = None,
        **kwargs: Any,
    ) -> None:
        if observation_prefix is not None:
            print_text(f"\n{observation_prefix}")
        print_text(str(output), color=color or self.color)
        if llm_prefix is not None:
            print_text(f"\n{llm_prefix}")

    def on_text(self, text: str, color: str | None = None, end: str = "", **kwargs: Any) -> None:
        print_text(text, color=color or self.color, end=end)

    def on_agent_finish(self, finish: Any, color: str | None = None, **kwargs: Any) -> None:
        print_text(finish.log, color=color or self.color, end="\n")
