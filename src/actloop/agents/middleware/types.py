"""Middleware for `create_agent` agents, as `langchain.agents.middleware.types` has it.

`AgentMiddleware` subclasses override any of the hooks: `before_agent`, `before_model`,
`after_model`, `after_agent` (state in, a state update or None out), `wrap_model_call` and
`wrap_tool_call` (a request and the next handler in, a response out), each with an async twin
(`abefore_model`, `awrap_model_call`, ...). The decorators (`@before_model`, `@wrap_tool_call`,
`@dynamic_prompt`, ...) make a middleware from one function. The hooks run inside the loop's own
effects: node hooks and `wrap_model_call` in the agent's plan, `wrap_tool_call` in the tool call
the driver runs (`actloop.agents._graph`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Literal

from typing_extensions import TypedDict, TypeVar

from actloop.messages import AIMessage, BaseMessage, SystemMessage
from actloop.tools import ToolRuntime

__all__ = [
    "AgentMiddleware",
    "AgentState",
    "ContextT",
    "ExtendedModelResponse",
    "InputAgentState",
    "ModelCallResult",
    "ModelRequest",
    "ModelResponse",
    "OmitFromInput",
    "OmitFromOutput",
    "OutputAgentState",
    "PrivateStateAttr",
    "ResponseT",
    "Runtime",
    "StateT",
    "ToolCallRequest",
    "ToolRuntime",
    "after_agent",
    "after_model",
    "before_agent",
    "before_model",
    "dynamic_prompt",
    "hook_config",
    "wrap_model_call",
    "wrap_tool_call",
]

JumpTo = Literal["tools", "model", "end"]
HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
ResponseT = TypeVar("ResponseT", default=Any)
"""The structured response's type (LangChain's type parameter)."""
ContextT = TypeVar("ContextT", default=None)
"""The run context's type (LangGraph's type parameter: `AgentMiddleware[State, ContextT]`,
`ModelRequest[ContextT]`, `Runtime[ContextT]` are accepted; actloop does not check them)."""
StateT = TypeVar("StateT", default=Any)
"""The state's type (LangChain's first type parameter of `AgentMiddleware`)."""


@dataclass(frozen=True)
class OmitFromSchema:
    """A state annotation (`Annotated[int, PrivateStateAttr]`): the key is left out of the
    input and/or the output."""

    input: bool = True
    output: bool = True


OmitFromInput = OmitFromSchema(input=True, output=False)
OmitFromOutput = OmitFromSchema(input=False, output=True)
PrivateStateAttr = OmitFromSchema(input=True, output=True)


class AgentState(TypedDict, Generic[ResponseT], total=False):
    """The agent's state: its messages (plus what a `state_schema` or middleware adds)."""

    messages: list[BaseMessage]
    jump_to: JumpTo | None
    structured_response: Any


def omitted_keys(schema: Any) -> tuple[set[str], set[str]]:
    """The keys of a state schema annotated `OmitFromInput` / `OmitFromOutput` /
    `PrivateStateAttr`: (left out of the input, left out of the output)."""
    import typing

    no_input: set[str] = set()
    no_output: set[str] = set()
    if schema is None:
        return no_input, no_output
    try:  # string annotations (`from __future__ import annotations`) resolved
        hints: dict[str, Any] = typing.get_type_hints(schema, include_extras=True)
    except (NameError, TypeError):
        hints = dict(getattr(schema, "__annotations__", {}))
    for key, hint in hints.items():
        for mark in getattr(hint, "__metadata__", ()):
            if isinstance(mark, OmitFromSchema):
                if mark.input:
                    no_input.add(key)
                if mark.output:
                    no_output.add(key)
    return no_input, no_output


class InputAgentState(TypedDict):
    """What a run takes: its messages."""

    messages: list[Any]


class OutputAgentState(TypedDict, Generic[ResponseT], total=False):
    """What a run gives: its messages and structured response."""

    messages: list[BaseMessage]
    structured_response: Any


@dataclass
class Runtime:
    """What a hook may use besides the state: the run's `context`, `store`, `stream_writer`."""

    context: Any = None
    store: Any = None
    stream_writer: Callable[[Any], None] = lambda _chunk: None
    config: dict[str, Any] = field(default_factory=lambda: {})

    def __class_getitem__(cls, item: Any) -> type[Runtime]:
        """`Runtime[Context]` in annotations, as LangGraph's generic `Runtime` allows."""
        return cls


@dataclass(init=False)
class ModelRequest:
    """One model call as middleware sees it; `override(...)` gives a changed copy."""

    model: Any
    messages: list[BaseMessage]
    system_message: SystemMessage | None
    tool_choice: Any
    tools: list[Any]
    response_format: Any
    state: dict[str, Any]
    runtime: Runtime | None
    model_settings: dict[str, Any]

    def __init__(
        self,
        model: Any,
        messages: list[BaseMessage],
        system_message: SystemMessage | None = None,
        tool_choice: Any = None,
        tools: list[Any] | None = None,
        response_format: Any = None,
        state: dict[str, Any] | None = None,
        runtime: Runtime | None = None,
        model_settings: dict[str, Any] | None = None,
        *,
        system_prompt: str | None = None,
    ) -> None:
        """LangChain's constructor: `system_prompt=` (a string) is the system message's text."""
        if system_prompt is not None:
            if system_message is not None:
                raise ValueError("Cannot specify both system_prompt and system_message")
            system_message = SystemMessage(system_prompt)
        put = object.__setattr__
        put(self, "model", model)
        put(self, "messages", messages)
        put(self, "system_message", system_message)
        put(self, "tool_choice", tool_choice)
        put(self, "tools", [] if tools is None else tools)
        put(self, "response_format", response_format)
        put(self, "runtime", runtime)
        put(self, "state", {"messages": []} if state is None else state)
        put(self, "model_settings", {} if model_settings is None else model_settings)

    def __class_getitem__(cls, item: Any) -> type[ModelRequest]:
        """`ModelRequest[Context]` in annotations, as LangChain's generic class allows."""
        return cls

    @property
    def system_prompt(self) -> str | None:
        """The system message's text, or None."""
        return None if self.system_message is None else self.system_message.text

    @system_prompt.setter
    def system_prompt(self, value: str | None) -> None:
        """Deprecated in LangChain (use `override(system_message=...)`); sets the system
        message, with LangChain's `DeprecationWarning`."""
        import warnings

        warnings.warn(
            "Direct attribute assignment to ModelRequest.system_prompt is deprecated. "
            "Use request.override(system_message=SystemMessage(...)) instead to create "
            "a new request with the modified system message.",
            DeprecationWarning,
            stacklevel=2,
        )
        object.__setattr__(self, "system_message", None if value is None else SystemMessage(value))

    def __setattr__(self, name: str, value: Any) -> None:
        """Deprecated in LangChain (use `override(...)`): sets the attribute, with LangChain's
        `DeprecationWarning`."""
        if name == "system_prompt":
            object.__setattr__(self, name, value)  # the property's setter warns
            return
        import warnings

        warnings.warn(
            f"Direct attribute assignment to ModelRequest.{name} is deprecated. "
            f"Use request.override({name}=...) instead to create a new request "
            f"with the modified attribute.",
            DeprecationWarning,
            stacklevel=2,
        )
        object.__setattr__(self, name, value)

    def override(self, **overrides: Any) -> ModelRequest:
        """A copy with `overrides` (`system_prompt=` is turned into a `system_message`)."""
        if "system_prompt" in overrides:
            if "system_message" in overrides:
                raise ValueError("Cannot specify both system_prompt and system_message")
            prompt = overrides.pop("system_prompt")
            overrides["system_message"] = None if prompt is None else SystemMessage(prompt)
        return replace(self, **overrides)


@dataclass
class ModelResponse:
    """What a model call gave: its messages (usually one AIMessage) and structured output."""

    result: list[BaseMessage]
    structured_response: Any = None

    def __class_getitem__(cls, item: Any) -> type[ModelResponse]:
        """`ModelResponse[T]` in annotations, as LangChain's generic class allows."""
        return cls


@dataclass
class ExtendedModelResponse(Generic[ResponseT]):
    """A model response with a `Command` whose update is applied after the model node (its
    messages added beside the response's; for other keys the outermost middleware wins)."""

    model_response: ModelResponse
    command: Any = None


ModelCallResult = ModelResponse | AIMessage | ExtendedModelResponse[Any]
"""What a `wrap_model_call` hook may return (LangChain's alias)."""


@dataclass
class ToolCallRequest:
    """One tool call as middleware sees it: the call, its tool (None: unknown), state, runtime."""

    tool_call: dict[str, Any]
    tool: Any
    state: Any
    runtime: Any

    def override(self, **overrides: Any) -> ToolCallRequest:
        """A copy with `overrides`."""
        return replace(self, **overrides)


Handler = Callable[[Any], Any]


class AgentMiddleware:
    """Base of middleware: override the hooks you need (see the module docstring)."""

    state_schema: ClassVar[type[Any]] = AgentState
    tools: Sequence[Any] = ()
    private_state: ClassVar[tuple[str, ...]] = ()
    """State keys kept with the thread but left out of `invoke`'s output (LangChain's
    `PrivateStateAttr`)."""
    run_state: ClassVar[tuple[str, ...]] = ()
    """State keys every run starts without (LangGraph's `UntrackedValue`)."""

    def __class_getitem__(cls, item: Any) -> type[AgentMiddleware]:
        """`AgentMiddleware[State, Context]` as a base, as LangChain's generic class allows."""
        return cls

    @property
    def name(self) -> str:
        """The middleware's name (its class name unless overridden)."""
        return type(self).__name__

    def before_agent(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Once, before the first model call."""
        return None

    async def abefore_agent(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `before_agent`."""
        return None

    def before_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Before each model call."""
        return None

    async def abefore_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `before_model`."""
        return None

    def after_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """After each model call (in reverse middleware order)."""
        return None

    async def aafter_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `after_model`."""
        return None

    def after_agent(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Once, when the agent ends (in reverse middleware order)."""
        return None

    async def aafter_agent(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:
        """Async `after_agent`."""
        return None

    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> Any:
        """Around each model call: call `handler(request)` (any number of times) or not."""
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Async `wrap_model_call`."""
        return await handler(request)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        """Around each tool call: call `handler(request)` or return a ToolMessage / Command."""
        return handler(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[Any], Awaitable[Any]]
    ) -> Any:
        """Async `wrap_tool_call`."""
        return await handler(request)


def overrides(middleware: AgentMiddleware, hook: str) -> tuple[bool, bool]:
    """Whether `middleware` overrides the sync and the async form of `hook`."""
    cls = type(middleware)
    asyncname = "a" + hook
    return (
        getattr(cls, hook) is not getattr(AgentMiddleware, hook),
        getattr(cls, asyncname) is not getattr(AgentMiddleware, asyncname),
    )


def can_jump_to(middleware: AgentMiddleware, hook: str) -> list[str]:
    """The destinations `hook` of `middleware` declared with `hook_config(can_jump_to=...)`."""
    for name in (hook, "a" + hook):
        found = getattr(getattr(type(middleware), name, None), "__can_jump_to__", None)
        if found:
            return list(found)
    return []


def hook_config(*, can_jump_to: list[JumpTo] | None = None) -> Callable[[Any], Any]:
    """Mark a hook method with the destinations its `{"jump_to": ...}` may name."""

    def decorator(func: Any) -> Any:
        if can_jump_to is not None:
            func.__can_jump_to__ = can_jump_to
        return func

    return decorator


def _node_decorator(hook: str) -> Callable[..., Any]:
    """`@before_model` and its siblings: a middleware class whose `hook` is the function."""

    def decorate(
        func: Callable[..., Any] | None = None,
        *,
        state_schema: type[Any] | None = None,
        tools: list[Any] | None = None,
        can_jump_to: list[JumpTo] | None = None,
        name: str | None = None,
    ) -> Any:
        def build(fn: Callable[..., Any]) -> AgentMiddleware:
            is_async = inspect.iscoroutinefunction(fn)

            def sync_hook(_self: Any, state: Any, runtime: Runtime) -> Any:
                return fn(state, runtime)

            async def async_hook(_self: Any, state: Any, runtime: Runtime) -> Any:
                return await fn(state, runtime)

            method: Any = async_hook if is_async else sync_hook
            if can_jump_to is not None:
                method.__can_jump_to__ = can_jump_to
            attrs: dict[str, Any] = {
                ("a" + hook) if is_async else hook: method,
                "state_schema": state_schema or AgentState,
                "tools": tools or [],
            }
            cls = type(name or getattr(fn, "__name__", hook), (AgentMiddleware,), attrs)
            return cls()

        return build(func) if func is not None else build

    return decorate


before_agent = _node_decorator("before_agent")
before_model = _node_decorator("before_model")
after_model = _node_decorator("after_model")
after_agent = _node_decorator("after_agent")


def _wrap_decorator(hook: str, default_name: str) -> Callable[..., Any]:
    """`@wrap_model_call` / `@wrap_tool_call`: a middleware whose `hook` is the function."""

    def decorate(
        func: Callable[..., Any] | None = None,
        *,
        state_schema: type[Any] | None = None,
        tools: list[Any] | None = None,
        name: str | None = None,
    ) -> Any:
        def build(fn: Callable[..., Any]) -> AgentMiddleware:
            is_async = inspect.iscoroutinefunction(fn)

            def sync_wrap(_self: Any, request: Any, handler: Handler) -> Any:
                return fn(request, handler)

            async def async_wrap(_self: Any, request: Any, handler: Handler) -> Any:
                return await fn(request, handler)

            attrs: dict[str, Any] = {
                ("a" + hook) if is_async else hook: async_wrap if is_async else sync_wrap,
                "state_schema": state_schema or AgentState,
                "tools": tools or [],
            }
            cls = type(name or getattr(fn, "__name__", default_name), (AgentMiddleware,), attrs)
            return cls()

        return build(func) if func is not None else build

    return decorate


wrap_model_call = _wrap_decorator("wrap_model_call", "WrapModelCallMiddleware")
wrap_tool_call = _wrap_decorator("wrap_tool_call", "WrapToolCallMiddleware")


def dynamic_prompt(func: Callable[..., Any]) -> AgentMiddleware:
    """A middleware setting each model call's system message to what `func(request)` returns
    (a string or a SystemMessage)."""
    is_async = inspect.iscoroutinefunction(func)

    def prompted(request: ModelRequest, prompt: Any) -> ModelRequest:
        message = prompt if isinstance(prompt, SystemMessage) else SystemMessage(prompt)
        return request.override(system_message=message)

    def sync_wrap(_self: Any, request: ModelRequest, handler: Handler) -> Any:
        return handler(prompted(request, func(request)))

    async def async_wrap(_self: Any, request: ModelRequest, handler: Handler) -> Any:
        if is_async:
            return await handler(prompted(request, await func(request)))
        return await handler(prompted(request, func(request)))

    attrs: dict[str, Any] = {"awrap_model_call": async_wrap, "tools": []}
    if not is_async:
        attrs["wrap_model_call"] = sync_wrap
    cls = type(getattr(func, "__name__", "DynamicPromptMiddleware"), (AgentMiddleware,), attrs)
    return cls()


def as_response(result: Any) -> ModelResponse:
    """A handler's result as a ModelResponse (an AIMessage is one message)."""
    if isinstance(result, ModelResponse):
        return result
    if isinstance(result, AIMessage):
        return ModelResponse([result])
    raise TypeError(f"wrap_model_call returned {type(result).__name__}, not a ModelResponse")
