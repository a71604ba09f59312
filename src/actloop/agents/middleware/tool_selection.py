"""`LLMToolSelectorMiddleware` (LangChain 1.5's, ported): before each model call a selection
model picks the tools relevant to the user's last message, and the call gets only those.

The selection is LangChain's structured output by tool calling: the model is bound to one
`ToolSelectionResponse` tool (a list of the tool names, each with its description) with
`tool_choice="any"`, and its first call of that tool gives the selection; a reply without one is
asked again up to `max_retries` times, then `on_parsing_failure` decides. The sync and async
hooks share every step but the model call (`_prepare`, `_narrowed`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from typing_extensions import TypedDict

from actloop.agents._models import chat_model
from actloop.agents.middleware.internal_call_transformer import internal_call_config
from actloop.agents.middleware.types import AgentMiddleware, ModelRequest
from actloop.messages import BaseMessage, HumanMessage

__all__ = ["DEFAULT_SYSTEM_PROMPT", "LLMToolSelectorMiddleware"]

DEFAULT_SYSTEM_PROMPT = (
    "Your goal is to select the most relevant tools for answering the user's query."
)


def _config() -> dict[str, Any]:
    """The selection call's config: marked internal (LangChain's), out of the `messages` stream."""
    return internal_call_config("tool_selection")


OnParsingFailure = Literal["error", "none", "all"] | list[str] | Callable[[Any], list[str]]


@dataclass
class _Selection:
    """One selection call: the tools to choose from, its prompt and model."""

    available_tools: list[Any]
    system_message: str
    last_user_message: BaseMessage
    model: Any
    valid_tool_names: list[str]

    def messages(self) -> list[Any]:
        return [{"role": "system", "content": self.system_message}, self.last_user_message]


def _selection_tool(tools: list[Any]) -> dict[str, Any]:
    """The `ToolSelectionResponse` schema (LangChain's TypeAdapter) as an OpenAI tool."""
    from pydantic import Field, TypeAdapter

    literals = [Annotated[Literal[t.name], Field(description=t.description)] for t in tools]
    selected: Any = Union[tuple(literals)]  # noqa: UP007
    description = "Tools to use. Place the most relevant tools first."

    class ToolSelectionResponse(TypedDict):
        tools: Annotated[list[selected], Field(description=description)]  # pyright: ignore[reportInvalidTypeForm]

    schema = TypeAdapter(ToolSelectionResponse).json_schema()
    parameters = {k: v for k, v in schema.items() if k not in ("title", "description")}
    function = {
        "name": schema["title"],
        "description": schema.get("description", ""),
        "parameters": parameters,
    }
    return {"type": "function", "function": function}


def _selected(reply: Any) -> Any:
    """The args of the reply's first `ToolSelectionResponse` call, or None."""
    calls: list[dict[str, Any]] = getattr(reply, "tool_calls", None) or []
    for call in calls:
        if call["name"] == "ToolSelectionResponse":
            return call["args"]
    return None


def _valid(response: Any) -> bool:
    return isinstance(response, dict) and isinstance(response.get("tools"), list)  # pyright: ignore[reportUnknownMemberType]


class LLMToolSelectorMiddleware(AgentMiddleware):
    """Let `model` (default: the agent's) choose at most `max_tools` tools for each call;
    `always_include` tools are always given."""

    def __init__(
        self,
        *,
        model: Any = None,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        max_tools: int | None = None,
        always_include: list[str] | None = None,
        max_retries: int = 1,
        on_parsing_failure: OnParsingFailure = "error",
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.system_prompt = system_prompt
        self.max_tools = max_tools
        self.always_include = always_include or []
        self.max_retries = max_retries
        self.on_parsing_failure = on_parsing_failure
        self.model: Any = chat_model(model) if isinstance(model, str) else model

    def _prepare(self, request: ModelRequest) -> _Selection | None:
        """The selection to make for `request`, or None when there is nothing to choose."""
        if not request.tools:
            return None
        base = [t for t in request.tools if not isinstance(t, dict)]
        if self.always_include:
            names = {t.name for t in base}
            missing = [n for n in self.always_include if n not in names]
            if missing:
                raise ValueError(
                    f"Tools in always_include not found in request: {missing}. "
                    f"Available tools: {sorted(names)}"
                )
        available = [t for t in base if t.name not in self.always_include]
        if not available:
            return None
        prompt = self.system_prompt
        if self.max_tools is not None:
            prompt += (
                "\nIMPORTANT: List the tool names in order of relevance, with the most relevant "
                "first. If you exceed the maximum number of tools, only the first "
                f"{self.max_tools} will be used."
            )
        last = next((m for m in reversed(request.messages) if isinstance(m, HumanMessage)), None)
        if last is None:
            raise AssertionError("No user message found in request messages")
        model = chat_model(self.model or request.model)
        bound = model.bind_tools([_selection_tool(available)], tool_choice="any")
        return _Selection(available, prompt, last, bound, [t.name for t in available])

    def _narrowed(self, request: ModelRequest, selection: _Selection, response: Any) -> Any:
        """The request with the selected tools (then the always-included, then provider
        tools), from a valid response or `on_parsing_failure`'s fallback."""
        if _valid(response):
            return self._apply(response["tools"], selection, request, apply_max_tools=True)
        fallback = self._on_failure(response, selection.valid_tool_names)
        return self._apply(fallback, selection, request, apply_max_tools=False)

    def _apply(
        self,
        names: list[Any],
        selection: _Selection,
        request: ModelRequest,
        *,
        apply_max_tools: bool,
    ) -> ModelRequest:
        chosen: list[str] = []
        invalid: list[Any] = []
        limit = self.max_tools if apply_max_tools else None
        for name in names:
            if name not in selection.valid_tool_names:
                invalid.append(name)
                continue
            if name not in chosen and (limit is None or len(chosen) < limit):
                chosen.append(name)
        if invalid:
            raise ValueError(f"Model selected invalid tools: {invalid}")
        tools = [t for t in selection.available_tools if t.name in chosen]
        tools += [
            t for t in request.tools if not isinstance(t, dict) and t.name in self.always_include
        ]
        provider: list[Any] = [t for t in request.tools if isinstance(t, dict)]
        return request.override(tools=[*tools, *provider])

    def _on_failure(self, response: Any, valid_tool_names: list[str]) -> list[str]:
        rule = self.on_parsing_failure
        if rule == "error":
            raise ValueError(
                "LLMToolSelectorMiddleware: selection model returned a malformed response after "
                f"{self.max_retries} retries (expected a dict with a 'tools' list): {response!r}"
            )
        if rule == "none":
            return []
        if rule == "all":
            return valid_tool_names
        if callable(rule):
            return rule(response)
        return list(rule)

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[Any], Any]) -> Any:
        """The model call with the selected tools."""
        selection = self._prepare(request)
        if selection is None:
            return handler(request)
        response = _selected(selection.model.invoke(selection.messages(), _config()))
        for _ in range(self.max_retries):
            if _valid(response):
                break
            response = _selected(selection.model.invoke(selection.messages(), _config()))
        return handler(self._narrowed(request, selection, response))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Async `wrap_model_call`."""
        selection = self._prepare(request)
        if selection is None:
            return await handler(request)
        response = _selected(await selection.model.ainvoke(selection.messages(), _config()))
        for _ in range(self.max_retries):
            if _valid(response):
                break
            response = _selected(await selection.model.ainvoke(selection.messages(), _config()))
        return await handler(self._narrowed(request, selection, response))
