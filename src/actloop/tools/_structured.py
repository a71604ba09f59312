"""Tools made from functions: `Tool` (one string input), `StructuredTool`, the `@tool` decorator."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Literal, overload

from actloop.tools import _schema
from actloop.tools._base import ArgsSchema, BaseTool, cached
from actloop.tools._validate import invalid

__all__ = ["StructuredTool", "Tool", "tool"]

_SIMPLE_SCHEMA: dict[str, Any] = {
    "properties": {"__arg1": {"title": "__arg1", "type": "string"}},
    "required": ["__arg1"],
    "type": "object",
}


class _FunctionTool(BaseTool):
    """A tool that calls `func` (sync) or `coroutine` (async)."""

    func: Callable[..., Any] | None = None
    """The function the tool runs."""
    coroutine: Callable[..., Awaitable[Any]] | None = None
    """The async function the tool runs; without it `arun` runs `func` in a worker thread."""

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        if self.func is None:
            raise NotImplementedError(f"{type(self).__name__} does not support sync invocation.")
        return self.func(*args, **kwargs)

    async def _arun(self, *args: Any, **kwargs: Any) -> Any:
        if self.coroutine is not None:
            return await self.coroutine(*args, **kwargs)
        return await super()._arun(*args, **kwargs)

    def _sync_target(self) -> Callable[..., Any] | None:
        return self.func

    @cached
    def _sync_call(self) -> Callable[..., Any]:
        """The function itself, when `_run` is this class's (it only calls the function)."""
        func = self.func
        return func if func is not None and type(self)._run is _FunctionTool._run else self._run

    @cached
    def _async_call(self) -> Callable[..., Any]:
        """The coroutine function itself, when `_arun` is this class's (it only awaits it)."""
        coroutine = self.coroutine
        if coroutine is not None and type(self)._arun is _FunctionTool._arun:
            return coroutine
        return self._arun

    def _async_target(self) -> Callable[..., Any] | None:
        return self.coroutine or self.func


class Tool(_FunctionTool):
    """A tool whose function takes one string (`{"__arg1": "x"}` and one-key dicts are unpacked)."""

    def __init__(
        self, name: str, func: Callable[..., Any] | None, description: str, **kwargs: Any
    ) -> None:
        super().__init__(name=name, func=func, description=description, **kwargs)

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any] | None,
        name: str,
        description: str,
        return_direct: bool = False,
        args_schema: ArgsSchema | None = None,
        coroutine: Callable[..., Awaitable[Any]] | None = None,
        **kwargs: Any,
    ) -> Tool:
        """A Tool from a function and/or a coroutine function."""
        if func is None and coroutine is None:
            raise ValueError("Function and/or coroutine must be provided")
        return cls(
            name=name,
            func=func,
            coroutine=coroutine,
            description=description,
            return_direct=return_direct,
            args_schema=args_schema,
            **kwargs,
        )

    @property
    def args(self) -> dict[str, Any]:
        """`{"tool_input": {"type": "string"}}` unless an `args_schema` says otherwise."""
        if self.args_schema is not None:
            return super().args
        return {"tool_input": {"type": "string"}}

    def get_input_schema(self, config: Any = None) -> ArgsSchema:
        """`args_schema`, or a JSON schema of the one string argument `__arg1`."""
        return self.args_schema if self.args_schema is not None else _SIMPLE_SCHEMA

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.args_schema is None and isinstance(tool_input, str):
            return (tool_input,), {}
        args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
        values = [*args, *kwargs.values()]
        if len(values) != 1:
            reason = f"a single-input tool takes one argument, got {len(values)}: {values!r}"
            raise invalid(self.name, [((), reason)])
        return (values[0],), {}


class StructuredTool(_FunctionTool):
    """A tool whose function takes any number of arguments, checked against `args_schema`."""

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any] | None = None,
        coroutine: Callable[..., Awaitable[Any]] | None = None,
        name: str | None = None,
        description: str | None = None,
        return_direct: bool = False,
        args_schema: ArgsSchema | None = None,
        infer_schema: bool = True,
        *,
        response_format: Literal["content", "content_and_artifact"] = "content",
        parse_docstring: bool = False,
        error_on_invalid_docstring: bool = False,
        **kwargs: Any,
    ) -> StructuredTool:
        """A StructuredTool from a function; name, description and schema inferred as LangChain."""
        source = func if func is not None else coroutine
        if source is None:
            raise ValueError("Function and/or coroutine must be provided")
        name = name or source.__name__
        if args_schema is None and infer_schema:
            args_schema = _schema.function_schema(
                name,
                source,
                parse_docstring=parse_docstring,
                error_on_invalid_docstring=error_on_invalid_docstring,
                filter_args=_schema.FILTERED_ARGS,
            )
        return cls(
            name=name,
            func=func,
            coroutine=coroutine,
            args_schema=args_schema,
            description=_description(description, source, args_schema, parse_docstring),
            return_direct=return_direct,
            response_format=response_format,
            **kwargs,
        )


def _description(
    given: str | None, source: Callable[..., Any], schema: ArgsSchema | None, parse_docstring: bool
) -> str:
    """The tool description: given, else the docstring, else the schema's (LangChain's order)."""
    found = given
    if given is None and not parse_docstring:
        found = source.__doc__ or None
    if found is None and schema:
        if isinstance(schema, dict):
            found = schema.get("description")
        else:
            found = schema.__doc__
            if found and "A base class for creating Pydantic models" in found:
                found = ""
            elif not found:
                found = None
    if found is None:
        raise ValueError("Function must have a docstring if description not provided.")
    if given is None:
        import textwrap

        found = textwrap.dedent(found).strip()
    return found.strip()


@overload
def tool(
    name_or_callable: Callable[..., Any],
    *,
    description: str | None = None,
    return_direct: bool = False,
    args_schema: ArgsSchema | None = None,
    infer_schema: bool = True,
    response_format: Literal["content", "content_and_artifact"] = "content",
    parse_docstring: bool = False,
    error_on_invalid_docstring: bool = True,
    extras: dict[str, Any] | None = None,
    idempotent: bool = True,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> BaseTool: ...


@overload
def tool(
    name_or_callable: str | None = None,
    *,
    description: str | None = None,
    return_direct: bool = False,
    args_schema: ArgsSchema | None = None,
    infer_schema: bool = True,
    response_format: Literal["content", "content_and_artifact"] = "content",
    parse_docstring: bool = False,
    error_on_invalid_docstring: bool = True,
    extras: dict[str, Any] | None = None,
    idempotent: bool = True,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> Callable[[Callable[..., Any]], BaseTool]: ...


def tool(
    name_or_callable: str | Callable[..., Any] | None = None,
    *,
    description: str | None = None,
    return_direct: bool = False,
    args_schema: ArgsSchema | None = None,
    infer_schema: bool = True,
    response_format: Literal["content", "content_and_artifact"] = "content",
    parse_docstring: bool = False,
    error_on_invalid_docstring: bool = True,
    extras: dict[str, Any] | None = None,
    idempotent: bool = True,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> BaseTool | Callable[[Callable[..., Any]], BaseTool]:
    """Make a tool from a function: `@tool`, `@tool("name")`, `@tool(return_direct=True)`, ...

    `timeout` (seconds) bounds each call: see `BaseTool.timeout`."""
    options: dict[str, Any] = {
        "description": description,
        "return_direct": return_direct,
        "args_schema": args_schema,
        "infer_schema": infer_schema,
        "response_format": response_format,
        "parse_docstring": parse_docstring,
        "error_on_invalid_docstring": error_on_invalid_docstring,
        "extras": extras,
        "idempotent": idempotent,
        "requires_approval": requires_approval,
        "timeout": timeout,
    }

    def factory(tool_name: str) -> Callable[[Callable[..., Any]], BaseTool]:
        return lambda fn: _make_tool(fn, tool_name, options)

    if name_or_callable is None:
        return lambda fn: factory(fn.__name__)(fn)
    if isinstance(name_or_callable, str):
        return factory(name_or_callable)
    if callable(name_or_callable) and hasattr(name_or_callable, "__name__"):
        return factory(name_or_callable.__name__)(name_or_callable)
    raise ValueError(
        "The first argument must be a string or a callable with a __name__ for tool decorator. "
        f"Got {type(name_or_callable)}"
    )


def _make_tool(fn: Callable[..., Any], name: str, options: dict[str, Any]) -> BaseTool:
    """The decorator's tool: a StructuredTool, or a one-string Tool when no schema is wanted."""
    func, coroutine = (None, fn) if inspect.iscoroutinefunction(fn) else (fn, None)
    if options["infer_schema"] or options["args_schema"] is not None:
        return StructuredTool.from_function(func, coroutine, name=name, **options)
    text = options["description"] or fn.__doc__
    if text is None:
        raise ValueError(
            "Function must have either a docstring or description when infer_schema is False."
        )
    return Tool(
        name=name,
        func=func,
        description=text,
        return_direct=options["return_direct"],
        coroutine=coroutine,
        response_format=options["response_format"],
        extras=options["extras"],
        idempotent=options["idempotent"],
        requires_approval=options["requires_approval"],
        timeout=options["timeout"],
    )
