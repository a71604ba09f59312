"""Dispatch of callback events to handlers, with run ids and parent run ids.

`configure()` returns None when no handler is attached, so callers skip all callback work on the
hot path with one `is None` test. Events are fired with `RunManager.fire(name, ...)`; on the
async path `afire` awaits coroutine hooks. Both share one dispatcher, `_dispatch`. Hooks a handler
leaves as the base classes' no-ops are skipped, so an idle async hook never starts an event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uuid

from actloop.callbacks import (
    AsyncCallbackHandler,
    BaseCallbackHandler,
    Callbacks,
    StdOutCallbackHandler,
)
from actloop.callbacks._context import context_handlers
from actloop.messages import get_buffer_string

__all__ = [
    "CallbackManager",
    "RunManager",
    "add_global_handler",
    "configure",
    "new_run_id",
    "remove_global_handler",
]

_IGNORE_FLAG = {
    "on_chain_start": "ignore_chain",
    "on_chain_end": "ignore_chain",
    "on_chain_error": "ignore_chain",
    "on_agent_action": "ignore_agent",
    "on_agent_finish": "ignore_agent",
    "on_llm_start": "ignore_llm",
    "on_llm_new_token": "ignore_llm",
    "on_llm_end": "ignore_llm",
    "on_llm_error": "ignore_llm",
    "on_chat_model_start": "ignore_chat_model",
    "on_tool_start": "ignore_agent",
    "on_tool_end": "ignore_agent",
    "on_tool_error": "ignore_agent",
}


_NOOP_HOOKS = frozenset(
    hook
    for base in (BaseCallbackHandler, AsyncCallbackHandler)
    for name, hook in vars(base).items()
    if name.startswith("on_") and callable(hook)
)
"""The no-op hook functions of the base handlers: a handler that did not override one skips it."""


_global_handlers: tuple[BaseCallbackHandler, ...] = ()
"""Handlers every run in the process gets, inherited by its children (`add_global_handler`)."""


def add_global_handler(handler: BaseCallbackHandler) -> None:
    """Give every run from now on `handler` (as langchain-core's `register_configure_hook`
    does); `actloop.tracing.instrument()` attaches its span handler this way."""
    global _global_handlers
    if handler not in _global_handlers:
        _global_handlers = (*_global_handlers, handler)


def remove_global_handler(handler: BaseCallbackHandler) -> None:
    """Stop giving new runs `handler`; runs already open keep it until they end."""
    global _global_handlers
    _global_handlers = tuple(h for h in _global_handlers if h is not handler)


def new_run_id() -> uuid.UUID:
    """A fresh run id (uuid is imported on first use: it costs ~10 ms at start-up)."""
    from uuid import uuid4

    return uuid4()


def _dispatch(
    handlers: Iterable[BaseCallbackHandler],
    event: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> list[Awaitable[Any]]:
    """Call `event` on every handler in order; return the coroutines of async hooks, not awaited."""
    pending: list[Awaitable[Any]] = []
    flag = _IGNORE_FLAG.get(event)
    for handler in handlers:
        if flag is not None and getattr(handler, flag, False):
            continue
        method = getattr(handler, event, None)
        if method is None or getattr(method, "__func__", None) in _NOOP_HOOKS:
            if event == "on_chat_model_start":  # langchain-core's fallback, with text prompts
                _dispatch_llm_start(handler, args, kwargs, pending)
            continue  # not overridden, or a private event (e.g. "_on_stream") it does not define
        try:
            result = method(*args, **kwargs)
        except NotImplementedError as exc:
            if event == "on_chat_model_start":  # a LangChain handler's base hook raises this
                _dispatch_llm_start(handler, args, kwargs, pending)
            else:
                _handler_failed(handler, event, exc)
            continue
        except Exception as exc:
            _handler_failed(handler, event, exc)
            continue
        if result is not None and hasattr(result, "__await__"):
            pending.append(_guarded(handler, event, result))
    return pending


def _dispatch_llm_start(
    handler: BaseCallbackHandler,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    pending: list[Awaitable[Any]],
) -> None:
    """`on_llm_start` with each message list as one buffer string, for a handler that does not
    define `on_chat_model_start` (as langchain-core falls back)."""
    if getattr(handler, "ignore_llm", False):
        return
    serialized, message_lists = args[0], args[1]
    prompts = [get_buffer_string(messages) for messages in message_lists]
    pending.extend(_dispatch([handler], "on_llm_start", (serialized, prompts), kwargs))


async def _guarded(handler: BaseCallbackHandler, event: str, awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except Exception as exc:
        _handler_failed(handler, event, exc)


def _handler_failed(handler: BaseCallbackHandler, event: str, exc: Exception) -> None:
    if getattr(handler, "raise_error", False):
        raise exc
    import logging

    logging.getLogger("actloop.callbacks").warning(
        "Error in %s.%s callback: %r", type(handler).__name__, event, exc
    )


def _run_sync(pending: list[Awaitable[Any]]) -> None:
    """Run async hooks to completion from sync code (in a helper thread if a loop runs here)."""
    import asyncio
    import threading

    async def _all() -> None:
        for awaitable in pending:
            await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_all())
        return
    worker = threading.Thread(target=lambda: asyncio.run(_all()), daemon=True)
    worker.start()
    worker.join()


class CallbackManager:
    """The handlers, tags and metadata a run starts with; `on_*_start` opens a child run."""

    __slots__ = (
        "handlers",
        "inheritable_handlers",
        "local_tags",
        "metadata",
        "parent_run_id",
        "tags",
    )

    def __init__(
        self,
        handlers: list[BaseCallbackHandler],
        inheritable_handlers: list[BaseCallbackHandler] | None = None,
        parent_run_id: uuid.UUID | None = None,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        local_tags: list[str] | None = None,
    ) -> None:
        self.handlers = handlers
        self.inheritable_handlers = (
            handlers if inheritable_handlers is None else inheritable_handlers
        )
        self.parent_run_id = parent_run_id
        self.tags = tags or []
        """Tags inherited by every run below."""
        self.local_tags = local_tags or []
        """Tags of the next run only (e.g. `seq:step:1`)."""
        self.metadata = metadata or {}

    def merged_with(self, other: Any) -> CallbackManager:
        """A manager with `other`'s handlers (a list or a manager) added."""
        extra = list(other.handlers if isinstance(other, CallbackManager) else other)
        return CallbackManager(
            [*self.handlers, *extra],
            [*self.inheritable_handlers, *extra],
            self.parent_run_id,
            tags=self.tags,
            metadata=self.metadata,
            local_tags=self.local_tags,
        )

    def tagged(self, tag: str) -> CallbackManager:
        """This manager with `tag` on the next run only."""
        return CallbackManager(
            self.handlers,
            self.inheritable_handlers,
            self.parent_run_id,
            tags=self.tags,
            metadata=self.metadata,
            local_tags=[tag],
        )

    def start(
        self,
        event: str,
        serialized: Any,
        payload: Any,
        *,
        run_id: uuid.UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        own_tags: list[str] | None = None,
        **kwargs: Any,
    ) -> RunManager:
        """Open a run: fire `event` (e.g. "on_chain_start") and return its RunManager. `tags` are
        inherited by the runs below it, `own_tags` are this run's only (a chain's own `tags`, as
        LangChain passes them)."""
        run = self._open(run_id, tags, metadata)
        if own_tags:
            run.tags = list(dict.fromkeys([*run.tags, *own_tags]))
        run.pending = _dispatch(
            self.handlers, event, (serialized, payload), run.start_kwargs(kwargs)
        )
        return run

    def _open(
        self, run_id: uuid.UUID | None, tags: list[str] | None, metadata: dict[str, Any] | None
    ) -> RunManager:
        inheritable = list(dict.fromkeys([*self.tags, *tags])) if tags else self.tags
        shown = (
            list(dict.fromkeys([*self.local_tags, *inheritable]))
            if self.local_tags
            else inheritable
        )
        all_meta = {**self.metadata, **metadata} if metadata else self.metadata
        return RunManager(
            run_id or new_run_id(),
            self.parent_run_id,
            self.handlers,
            self.inheritable_handlers,
            shown,
            all_meta,
            inheritable,
        )


class RunManager:
    """One open run: fires its events with its run id and gives children their manager."""

    __slots__ = (
        "handlers",
        "inheritable_handlers",
        "inheritable_tags",
        "metadata",
        "parent_run_id",
        "pending",
        "run_id",
        "tags",
    )

    def __init__(
        self,
        run_id: uuid.UUID,
        parent_run_id: uuid.UUID | None,
        handlers: list[BaseCallbackHandler],
        inheritable_handlers: list[BaseCallbackHandler],
        tags: list[str],
        metadata: dict[str, Any],
        inheritable_tags: list[str] | None = None,
    ) -> None:
        self.run_id = run_id
        self.parent_run_id = parent_run_id
        self.handlers = handlers
        self.inheritable_handlers = inheritable_handlers
        self.tags = tags
        self.inheritable_tags = tags if inheritable_tags is None else inheritable_tags
        self.metadata = metadata
        self.pending: list[Awaitable[Any]] = []

    def start_kwargs(self, extra: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments of a start event."""
        return {
            "run_id": self.run_id,
            "parent_run_id": self.parent_run_id,
            "tags": self.tags,
            "metadata": self.metadata,
            **extra,
        }

    def fire(self, event: str, *args: Any, **kwargs: Any) -> None:
        """Fire `event` on the sync path; coroutine hooks are run to completion."""
        pending = self.take_pending()
        pending += _dispatch(self.handlers, event, args, self._kwargs(kwargs))
        if pending:
            _run_sync(pending)

    async def afire(self, event: str, *args: Any, **kwargs: Any) -> None:
        """Fire `event` on the async path; coroutine hooks are awaited in order."""
        pending = self.take_pending()
        pending += _dispatch(self.handlers, event, args, self._kwargs(kwargs))
        for awaitable in pending:
            await awaitable

    def notify(self, event: str, *args: Any) -> None:
        """Tell the handlers a private fact about this run (e.g. `_on_agent_run`); only handlers
        that define the hook get it, and a coroutine hook waits with the start event's hooks."""
        self.pending += _dispatch(self.handlers, event, args, self._kwargs({}))

    def flush(self) -> None:
        """Run the start event's coroutine hooks (sync path)."""
        pending = self.take_pending()
        if pending:
            _run_sync(pending)

    async def aflush(self) -> None:
        """Await the start event's coroutine hooks (async path)."""
        for awaitable in self.take_pending():
            await awaitable

    def take_pending(self) -> list[Awaitable[Any]]:
        """Hand over the hooks not yet run."""
        pending, self.pending = self.pending, []
        return pending

    def _kwargs(self, extra: dict[str, Any]) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "parent_run_id": self.parent_run_id,
            "tags": self.tags,
            **extra,
        }

    def get_child(self, tag: str | None = None) -> CallbackManager:
        """The manager for runs started inside this one."""
        return CallbackManager(
            self.inheritable_handlers,
            self.inheritable_handlers,
            self.run_id,
            tags=self.inheritable_tags,
            metadata=self.metadata,
            local_tags=[tag] if tag else None,
        )


def unheard(callbacks: Callbacks, local_callbacks: Callbacks, verbose: bool) -> bool:
    """True when `configure` would return None at once (no handler given, none around): a
    caller can skip building the tags and metadata it would pass (an executor's run set-up)."""
    return callbacks is None and not (
        local_callbacks or verbose or _global_handlers or context_handlers()
    )


def configure(
    callbacks: Callbacks,
    local_callbacks: Callbacks = None,
    *,
    verbose: bool = False,
    tags: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> CallbackManager | None:
    """The manager for a run from config callbacks (inherited) and constructor callbacks (local).

    Returns None when no handler is attached: callers then skip all callback work. Global
    handlers (`add_global_handler`) join the inherited ones.
    """
    if unheard(callbacks, local_callbacks, verbose):
        return None
    extra = context_handlers()
    local_tags: list[str] | None = None
    inherited: list[BaseCallbackHandler]
    if isinstance(callbacks, CallbackManager):
        inherited = callbacks.inheritable_handlers
        parent, base_tags, base_meta = callbacks.parent_run_id, callbacks.tags, callbacks.metadata
        local_tags = callbacks.local_tags
    else:
        inherited = list(callbacks or ())
        parent, base_tags, base_meta = None, [], {}
    if isinstance(local_callbacks, CallbackManager):
        local = list(local_callbacks.handlers)
    else:
        local = list(local_callbacks or ())
    joined = (*_global_handlers, *extra)  # process-wide (tracing), this context's (collect_runs)
    if joined:
        inherited = [*inherited, *(h for h in joined if h not in inherited)]
    if verbose and not any(isinstance(h, StdOutCallbackHandler) for h in [*inherited, *local]):
        local.append(StdOutCallbackHandler())
    if not inherited and not local:
        return None
    return CallbackManager(
        [*inherited, *local],
        inherited,
        parent,
        tags=list(dict.fromkeys([*base_tags, *(tags or ())])),
        metadata={**base_meta, **(metadata or {})},
        local_tags=local_tags,
    )
