"""`response_format` inside a `create_agent` model call, as LangChain 1.x's factory does it.

`StructuredOutput.of(response_format)` is what `create_agent` compiles: the strategy as given (a
bare schema becomes an `AutoStrategy`) and the artificial tools of its tool strategy, made once
so their names hold across calls. Per model call, `bind` picks the effective strategy (an
`AutoStrategy` asks `factory._supports_provider_strategy` about the request's model) and binds
the model with it; `handle` turns the reply into LangGraph's model update: the reply, the
`ToolMessage`s answering structured calls, and the `structured_response`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from actloop.agents.middleware.types import ModelRequest, ModelResponse
from actloop.agents.structured_output import (
    AutoStrategy,
    MultipleStructuredOutputsError,
    OutputToolBinding,
    ProviderStrategy,
    ProviderStrategyBinding,
    StructuredOutputValidationError,
    ToolStrategy,
)
from actloop.messages import AIMessage, ToolMessage

__all__ = ["STRUCTURED_OUTPUT_ERROR_TEMPLATE", "StructuredOutput"]

STRUCTURED_OUTPUT_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."

Strategy = ToolStrategy[Any] | ProviderStrategy[Any] | AutoStrategy[Any]


def _strategy(response_format: Any) -> Strategy | None:
    """The strategy a `response_format` asks for (a bare schema: auto)."""
    if response_format is None or isinstance(
        response_format, (ToolStrategy, ProviderStrategy, AutoStrategy)
    ):
        return response_format  # pyright: ignore[reportUnknownVariableType]
    return AutoStrategy(schema=response_format)


def handle_error(exception: Exception, strategy: Any) -> tuple[bool, str]:
    """Whether `strategy.handle_errors` retries `exception`, and the answer to the call."""
    if not isinstance(strategy, ToolStrategy):
        return False, ""
    handle = strategy.handle_errors
    default = STRUCTURED_OUTPUT_ERROR_TEMPLATE.format(error=str(exception))
    if handle is False:
        return False, ""
    if handle is True:
        return True, default
    if isinstance(handle, str):
        return True, handle
    if isinstance(handle, type):
        return (True, default) if isinstance(exception, handle) else (False, "")
    if isinstance(handle, tuple):
        return (True, default) if isinstance(exception, handle) else (False, "")
    return True, handle(exception)


def _is_openai_compatible(model: Any) -> bool:
    """Whether `model` speaks OpenAI's chat API (tools are then bound `strict`)."""
    import sys

    inner = getattr(model, "langchain_model", None)  # an adopted LangChain model
    if inner is not None:
        lc_openai = sys.modules.get("langchain_openai.chat_models.base")
        return lc_openai is not None and isinstance(inner, lc_openai.BaseChatOpenAI)
    ours = sys.modules.get("actloop.models.openai")
    return ours is not None and isinstance(model, ours.ChatOpenAI)


@dataclass
class StructuredOutput:
    """A compiled `response_format`: the initial strategy and the tool strategy's tools."""

    initial: Strategy | None = None
    setup: ToolStrategy[Any] | None = None
    """The tool strategy set up at creation (an auto strategy's fallback)."""
    tools: dict[str, OutputToolBinding[Any]] = field(default_factory=lambda: {})
    """The artificial tools by name."""
    supports_provider: Callable[[Any, list[Any]], bool] = lambda _model, _tools: False
    """Whether a model (with these tools) has native structured output (`create_agent` gives
    a check that calls `factory._supports_provider_strategy` at call time, as LangChain's)."""

    @classmethod
    def of(
        cls, response_format: Any, supports_provider: Callable[[Any, list[Any]], bool]
    ) -> StructuredOutput:
        initial = _strategy(response_format)
        setup: ToolStrategy[Any] | None = None
        if isinstance(initial, AutoStrategy):
            setup = ToolStrategy(schema=initial.schema)
        elif isinstance(initial, ToolStrategy):
            setup = initial
        tools: dict[str, OutputToolBinding[Any]] = {}
        for spec in setup.schema_specs if setup is not None else []:
            binding = OutputToolBinding.from_schema_spec(spec)
            tools[binding.tool.name] = binding
        return cls(initial, setup, tools, supports_provider)

    @property
    def active(self) -> bool:
        """Whether the agent has a `response_format` (its model calls then set or clear
        `structured_response`)."""
        return self.initial is not None

    def effective(self, request: ModelRequest) -> Strategy | None:
        """The strategy of this call: an auto strategy becomes provider or tool."""
        strategy = _strategy(request.response_format)
        if not isinstance(strategy, AutoStrategy):
            return strategy
        if self.supports_provider(request.model, request.tools):
            return ProviderStrategy(schema=strategy.schema)
        if strategy is self.initial and self.setup is not None:
            return self.setup  # the same tools (a schema without a title has a random name)
        return ToolStrategy(schema=strategy.schema)

    def bind(self, request: ModelRequest, model: Any) -> tuple[Any, Strategy | None]:
        """`model` (the request's, as actloop's) bound for this call, and the call's strategy."""
        strategy = self.effective(request)
        tools = list(request.tools)
        settings = request.model_settings
        if isinstance(strategy, ProviderStrategy):
            kwargs: dict[str, Any] = {**strategy.to_model_kwargs(), **settings}
            if _is_openai_compatible(model) and not getattr(model, "use_responses_api", False):
                kwargs["strict"] = True
            return model.bind_tools(tools, **kwargs), strategy
        if isinstance(strategy, ToolStrategy):
            names = {spec.name for spec in strategy.schema_specs}
            tools.extend(b.tool for name, b in self.tools.items() if name in names)
            for spec in strategy.schema_specs:
                if spec.name not in self.tools:
                    raise ValueError(
                        f"ToolStrategy specifies tool '{spec.name}' which wasn't declared in the "
                        "original response format when creating the agent."
                    )
            choice = "any" if self.tools else request.tool_choice
            return model.bind_tools(tools, tool_choice=choice, **settings), strategy
        if tools:
            return model.bind_tools(tools, tool_choice=request.tool_choice, **settings), None
        return (model.bind(**settings) if settings else model), None

    def revived(self, value: Any) -> Any:
        """A `saved` value as its type again; only the agent's own schemas are built (a class
        it does not know gives the data)."""
        if not isinstance(value, dict) or SAVED_KEY not in value:
            return cast(Any, value)
        data = cast("dict[str, Any]", value)
        known = {_class_path(c): c for c in self._classes()}
        cls = known.get(data[SAVED_KEY])
        if cls is None:
            return data["data"]
        from pydantic import TypeAdapter

        return TypeAdapter(cls).validate_python(data["data"])

    def _classes(self) -> list[type]:
        """The schema classes of the response format (each variant of a union)."""
        specs = list(self.setup.schema_specs) if self.setup is not None else []
        if isinstance(self.initial, ProviderStrategy):
            specs.append(self.initial.schema_spec)
        return [s.schema for s in specs if isinstance(s.schema, type)]

    def handle(self, output: AIMessage, strategy: Strategy | None) -> ModelResponse:
        """The model call's response: the reply, answers to structured calls, the result."""
        if isinstance(strategy, ProviderStrategy):
            return _provider_response(output, strategy)
        if not isinstance(strategy, ToolStrategy) or not output.tool_calls:
            return ModelResponse([output])
        calls = [c for c in output.tool_calls if c["name"] in self.tools]
        if not calls:
            return ModelResponse([output])
        if len(calls) > 1:
            error = MultipleStructuredOutputsError([c["name"] for c in calls], output)
            retry, text = handle_error(error, strategy)
            if not retry:
                raise error
            answers = [ToolMessage(text, tool_call_id=c["id"], name=c["name"]) for c in calls]
            return ModelResponse([output, *answers])
        call = calls[0]
        try:
            parsed = self.tools[call["name"]].parse(call["args"])
        except Exception as exc:
            error = StructuredOutputValidationError(call["name"], exc, output)
            retry, text = handle_error(error, strategy)
            if not retry:
                raise error from exc
            return ModelResponse(
                [output, ToolMessage(text, tool_call_id=call["id"], name=call["name"])]
            )
        text = strategy.tool_message_content or f"Returning structured response: {parsed}"
        answer = ToolMessage(text, tool_call_id=call["id"], name=call["name"])
        return ModelResponse([output, answer], parsed)


SAVED_KEY = "__structured_response__"
"""Marks a typed structured response saved as JSON data: `{SAVED_KEY: class path, "data": ...}`."""


def _class_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def saved(value: Any) -> Any:
    """`value` as a durable journal can save it: a pydantic model or dataclass as its JSON data
    and class path (plain data as it is)."""
    if value is None or isinstance(value, (dict, list, str, int, float, bool)):
        return cast(Any, value)
    from pydantic import TypeAdapter

    kind: type[Any] = value.__class__
    data = TypeAdapter[Any](kind).dump_python(value, mode="json")
    return {SAVED_KEY: _class_path(kind), "data": data}


def _provider_response(output: AIMessage, strategy: ProviderStrategy[Any]) -> ModelResponse:
    """A provider strategy's response: the reply's JSON text parsed (unless it calls tools)."""
    if output.tool_calls:
        return ModelResponse([output])
    spec = strategy.schema_spec
    try:
        parsed = ProviderStrategyBinding.from_schema_spec(spec).parse(output)
    except Exception as exc:
        name = getattr(spec.schema, "__name__", "response_format")
        raise StructuredOutputValidationError(name, exc, output) from exc
    return ModelResponse([output], parsed)
