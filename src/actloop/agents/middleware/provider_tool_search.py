"""`ProviderToolSearchMiddleware` (LangChain 1.5's): selected tools are sent marked deferred
(`extras["defer_loading"] = True`) together with the provider's server-side tool search tool,
so the provider loads a deferred tool's schema only when the model looks for it.

The provider is found as LangChain finds it: a configurable model's `model_provider` / `model`
(runtime `configurable` over the defaults), the model's `ls_provider`, then its class name
(`ChatAnthropic`, `ChatOpenAI`); a bare model name is mapped by LangChain's prefixes
(`_attempt_infer_model_provider`). The request changes take effect with a chat model that
passes a tool's `defer_loading` to a provider with tool search (Anthropic; OpenAI's Responses
API); actloop's own `ChatOpenAI` speaks chat completions, which has none.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias, cast

from typing_extensions import NotRequired, TypedDict

from actloop.agents.middleware.types import AgentMiddleware, ModelRequest
from actloop.tools import BaseTool

__all__ = ["ProviderToolSearchMiddleware", "ToolIdentifier"]

ToolIdentifier: TypeAlias = "str | BaseTool"
"""A tool's name or the tool: what `searchable_tools` lists."""


class _ServerToolSearchSpec(TypedDict):
    """A provider's tool search tool, sent to the model as a tool."""

    type: str
    name: NotRequired[str]


# LangChain 1.5's descriptors (version-stamped by the providers), by normalized provider name
_SERVER_TOOL_SEARCH_TOOLS: dict[str, _ServerToolSearchSpec] = {
    "anthropic": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "openai": {"type": "tool_search"},
}

_PREFIXES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gpt-", "o1", "o3", "chatgpt", "text-davinci"), "openai"),
    (("claude",), "anthropic"),
    (("command",), "cohere"),
    (("accounts/fireworks",), "fireworks"),
    (("gemini",), "google_vertexai"),
    (("amazon.", "anthropic.", "meta."), "bedrock"),
    (("mistral", "mixtral"), "mistralai"),
    (("deepseek",), "deepseek"),
    (("grok",), "xai"),
    (("sonar",), "perplexity"),
    (("solar",), "upstage"),
)


def _attempt_infer_model_provider(model_name: str) -> str | None:
    """The provider of a bare model name by LangChain's prefixes (`init_chat_model`'s), or
    None. Unlike `init_chat_model` it warns of nothing."""
    lower = model_name.lower()
    for prefixes, provider in _PREFIXES:
        if lower.startswith(prefixes):
            return provider
    return None


class ProviderToolSearchMiddleware(AgentMiddleware):
    """Defers the tools named in `searchable_tools` (and those already marked
    `extras["defer_loading"] is True`) behind the provider's server-side tool search.

    A model call with a deferred tool raises `ValueError` if its provider cannot be told or
    has no tool search (Anthropic and OpenAI have); a call without one passes unchanged.
    """

    def __init__(self, *, searchable_tools: list[ToolIdentifier] | None = None) -> None:
        super().__init__()
        self.searchable_tool_names = _to_tool_names(searchable_tools)

    def _prepare_request(self, request: ModelRequest) -> ModelRequest:
        """The request with the deferred tools marked and the search tool added; the same
        request when no tool is deferred. `ValueError` for a `searchable_tools` name not
        bound to the model, and for a provider unknown or without tool search."""
        tools = list(request.tools)
        if self.searchable_tool_names:
            available = {tool.name for tool in tools if isinstance(tool, BaseTool)}
            unknown = sorted(self.searchable_tool_names - available)
            if unknown:
                raise ValueError(
                    "ProviderToolSearchMiddleware: searchable_tools references "
                    f"tool(s) not bound to the model: {', '.join(unknown)}"
                )
        if not any(_is_deferred_tool(tool, self.searchable_tool_names) for tool in tools):
            return request
        supported = ", ".join(sorted(_SERVER_TOOL_SEARCH_TOOLS))
        provider = _get_model_provider(request.model, request.runtime)
        if provider is None:
            raise ValueError(
                "ProviderToolSearchMiddleware could not determine the provider for "
                f"model {request.model.__class__.__name__!r}; server-side tool search "
                f"supports: {supported}"
            )
        if provider not in _SERVER_TOOL_SEARCH_TOOLS:
            raise ValueError(
                "ProviderToolSearchMiddleware requires a provider with server-side "
                f"tool search, but got {provider!r}; supported providers: {supported}"
            )
        bound = [_defer_tool_if_needed(tool, self.searchable_tool_names) for tool in tools]
        return request.override(tools=[*bound, dict(_SERVER_TOOL_SEARCH_TOOLS[provider])])

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Call the model with the tools deferred."""
        return handler(self._prepare_request(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        """Async `wrap_model_call`."""
        return await handler(self._prepare_request(request))


def _to_tool_names(tools: list[ToolIdentifier] | None) -> set[str]:
    """The names of `searchable_tools`."""
    return {tool if isinstance(tool, str) else tool.name for tool in tools or ()}


def _is_deferred_tool(tool: Any, tool_names: set[str]) -> bool:
    """Whether a tool is deferred: a `BaseTool` named in `tool_names` or marked
    `defer_loading`; a dict (a provider's own tool) never is."""
    if not isinstance(tool, BaseTool):
        return False
    extras = tool.extras if isinstance(tool.extras, dict) else {}  # pyright: ignore[reportUnnecessaryIsInstance]
    return extras.get("defer_loading") is True or tool.name in tool_names


def _defer_tool_if_needed(tool: Any, tool_names: set[str]) -> Any:
    """A copy of a deferred tool with `extras["defer_loading"] = True` (its other extras
    kept); any other tool as it is."""
    if not _is_deferred_tool(tool, tool_names):
        return tool
    extras: dict[str, Any] = {**(tool.extras or {}), "defer_loading": True}
    model_copy = getattr(tool, "model_copy", None)
    if callable(model_copy):  # a pydantic tool (LangChain's)
        return model_copy(update={"extras": extras})
    deferred = copy.copy(tool)
    deferred.extras = extras
    return deferred


def _get_model_provider(model: Any, runtime: Any) -> str | None:
    """The normalized provider of `model` for tool search, or None if it cannot be told."""
    default_config = _as_dict(getattr(model, "_default_config", None))
    model_params_fn = getattr(model, "_model_params", None)
    if callable(model_params_fn):
        config = getattr(runtime, "config", None)
        if config is not None and not isinstance(config, Mapping):
            config = None  # a malformed config counts as none
        model_params = _as_dict(model_params_fn(config))
        if model_params is not None:
            params = {**default_config, **model_params} if default_config else model_params
            if provider := _provider_from_params(params):
                return provider
    if default_config is not None and (provider := _provider_from_params(default_config)):
        return provider
    if (provider := _provider_from_ls_params(model)) is not None:
        return provider
    return _provider_from_class_name(model.__class__.__name__)


def _as_dict(value: Any) -> dict[str, Any] | None:
    """`value` if it is a dict, else None."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _provider_from_ls_params(model: Any) -> str | None:
    """The model's `ls_provider` (LangChain's `_get_ls_params`, actloop's `_ls_params`)."""
    get_ls_params = getattr(model, "_get_ls_params", None)
    if callable(get_ls_params):
        ls_params = _as_dict(get_ls_params())
    else:
        own = getattr(model, "_ls_params", None)
        ls_params = _as_dict(own(None, {})) if callable(own) else None
    provider = ls_params.get("ls_provider") if ls_params is not None else None
    return _normalize_provider(provider) if isinstance(provider, str) else None


def _provider_from_params(params: dict[str, Any]) -> str | None:
    """The provider of configurable-model params: `model_provider`, else from `model`."""
    provider = params.get("model_provider")
    if isinstance(provider, str):
        return _normalize_provider(provider)
    model_name = params.get("model")
    if isinstance(model_name, str):
        return _provider_from_model_name(model_name)
    return None


def _provider_from_model_name(model_name: str) -> str | None:
    """The provider of `provider:model` or of a bare model name, or None."""
    provider, _, rest = model_name.partition(":")
    if rest:
        return _normalize_provider(provider)
    inferred = _attempt_infer_model_provider(model_name)
    return _normalize_provider(inferred) if inferred else None


def _provider_from_class_name(class_name: str) -> str | None:
    """The provider a bare model class name tells, or None."""
    if class_name in {"ChatAnthropic", "AnthropicChat"}:
        return "anthropic"
    if class_name in {"ChatOpenAI", "OpenAIChat"}:
        return "openai"
    return None


def _normalize_provider(provider: str) -> str:
    """Lowercase, `-` as `_`."""
    return provider.replace("-", "_").lower()
