"""The `wrap_model_call` chain as LangChain composes it: handlers nested (the first outermost),
each layer's `ExtendedModelResponse` command collected (inner first, then outer), and the
model node's update built from the response plus those commands (LangGraph's one value per
key and step: two commands setting one plain key is `InvalidUpdateError`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from actloop.agents.middleware.types import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelResponse,
    as_response,
    overrides,
)
from actloop.agents.types import Command, InvalidUpdateError, one_value_per_step

__all__ = [
    "ComposedResponse",
    "chain_async_model_call_handlers",
    "chain_model_call_handlers",
    "node_updates",
]

Wrapper = Callable[[Any, Callable[[Any], Any]], Any]
AsyncWrapper = Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]


@dataclass
class ComposedResponse:
    """What the composed chain gives: the model response and every layer's command
    (LangChain's `_ComposedExtendedModelResponse`)."""

    model_response: ModelResponse
    commands: list[Command] = field(default_factory=lambda: [])


def _composed(result: Any, extra: list[Command] | None = None) -> ComposedResponse:
    """Any handler result as a `ComposedResponse` (`extra`: inner layers' commands first)."""
    commands = list(extra or [])
    if isinstance(result, ComposedResponse):
        commands.extend(result.commands)
        return ComposedResponse(result.model_response, commands)
    if isinstance(result, ExtendedModelResponse):
        if result.command is not None:
            commands.append(cast(Command, result.command))
        return ComposedResponse(as_response(result.model_response), commands)
    return ComposedResponse(as_response(result), commands)


def _unwrapped(result: Any, commands: list[Command]) -> ModelResponse:
    """An inner layer's result as the plain `ModelResponse` its outer layer sees; its
    commands kept in `commands`."""
    found = _composed(result)
    commands.extend(found.commands)
    return found.model_response


def chain_model_call_handlers(handlers: Sequence[Wrapper]) -> Wrapper | None:
    """One handler running `handlers` nested, first outermost (LangChain's
    `_chain_model_call_handlers`); None for none."""
    if not handlers:
        return None
    if len(handlers) == 1:
        only = handlers[0]
        return lambda request, handler: _composed(only(request, handler))

    def compose_two(outer: Wrapper, inner: Wrapper) -> Wrapper:
        def composed(request: Any, handler: Callable[[Any], Any]) -> ComposedResponse:
            commands: list[Command] = []

            def inner_handler(req: Any) -> ModelResponse:
                commands.clear()  # a retried inner call keeps only its last commands
                return _unwrapped(inner(req, handler), commands)

            return _composed(outer(request, inner_handler), commands or None)

        return composed

    chained = compose_two(handlers[-2], handlers[-1])
    for h in reversed(handlers[:-2]):
        chained = compose_two(h, chained)
    return chained


def chain_async_model_call_handlers(handlers: Sequence[AsyncWrapper]) -> AsyncWrapper | None:
    """The async `chain_model_call_handlers`."""
    if not handlers:
        return None
    if len(handlers) == 1:
        only = handlers[0]

        async def single(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
            return _composed(await only(request, handler))

        return single

    def compose_two(outer: AsyncWrapper, inner: AsyncWrapper) -> AsyncWrapper:
        async def composed(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
            commands: list[Command] = []

            async def inner_handler(req: Any) -> ModelResponse:
                commands.clear()
                return _unwrapped(await inner(req, handler), commands)

            return _composed(await outer(request, inner_handler), commands or None)

        return composed

    chained = compose_two(handlers[-2], handlers[-1])
    for h in reversed(handlers[:-2]):
        chained = compose_two(h, chained)
    return chained


def node_updates(update: dict[str, Any], commands: list[Command]) -> list[dict[str, Any]]:
    """The model node's updates: its own, then each command's (LangChain's `_build_commands`).
    Raises LangChain's errors for a command with `goto`, `resume` or `graph`, and LangGraph's
    `InvalidUpdateError` when two of them set one key other than `messages`."""
    for command in commands:
        if command.goto:
            raise NotImplementedError(
                "Command goto is not yet supported in wrap_model_call middleware. "
                "Use the jump_to state field with before_model/after_model hooks instead."
            )
        if command.resume:
            raise NotImplementedError(
                "Command resume is not yet supported in wrap_model_call middleware."
            )
        if command.graph:
            raise NotImplementedError(
                "Command graph is not yet supported in wrap_model_call middleware."
            )
    updates = [update, *(cast(dict[str, Any], c.update or {}) for c in commands)]
    seen: set[str] = set()
    for one in updates:
        for key in one:
            if key in seen and key != "messages":
                raise InvalidUpdateError(one_value_per_step(key))
            seen.add(key)
    return updates


def sync_hook(m: AgentMiddleware, hook: str) -> Callable[[Any, Any], Any]:
    """`m`'s sync wrapping `hook` (`wrap_model_call`, `wrap_tool_call`), called with the request
    and its handler; an async-only one cannot run on the sync path."""
    if not overrides(m, hook)[0]:
        raise NotImplementedError(
            f"{m.name} only has an async {hook} (a{hook}); run the agent with ainvoke/astream"
        )
    return getattr(m, hook)


def async_hook(m: AgentMiddleware, hook: str) -> Callable[[Any, Any], Awaitable[Any]]:
    """`m`'s async wrapping `hook`; a sync-only one would have to block on its async handler."""
    sync, is_async = overrides(m, hook)
    if is_async or not sync:
        return getattr(m, "a" + hook)

    async def run_sync(request: Any, handler: Any) -> Any:
        raise NotImplementedError(
            f"{m.name} only has a sync {hook}; define a{hook} to run it with ainvoke/astream"
        )

    return run_sync
