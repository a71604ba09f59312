"""Fakes for tests: chat models that play a model, and agents that play a list of plans.

The chat models (a scripted list of replies, or a function that plays the model) stream like a
real model: the content comes in several chunks (words with their leading spaces, or `chunk_size`
characters), and tool calls, usage and metadata arrive in the last chunk, so the sum of the chunks
equals the reply. Like a real model they honour `stop`: the content is cut before the first stop
sequence it contains. The scripted agents play decisions one level up, without a model or parser.
Every fake records each call in `.calls`.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeAlias, cast

from actloop.callbacks import Callbacks
from actloop.chat_models import BaseChatModel
from actloop.executor import BaseMultiActionAgent, BaseSingleActionAgent
from actloop.llms import LLM
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCallChunk
from actloop.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from actloop.steps import AgentAction, AgentFinish

__all__ = [
    "FakeListLLM",
    "FunctionChatModel",
    "GenericFakeChatModel",
    "ModelCall",
    "PlanCall",
    "ScriptedAgent",
    "ScriptedChatModel",
    "ScriptedMultiActionAgent",
]

Reply: TypeAlias = "AIMessage | str"
"""A scripted reply: an AIMessage, or a str standing for `AIMessage(content=str)`."""

_WORDS = re.compile(r"\s*\S+|\s+")


class ModelCall:
    """What one model call received: the messages, the stop sequences and the other kwargs."""

    __slots__ = ("kwargs", "messages", "stop")

    def __init__(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> None:
        self.messages = messages
        self.stop = stop
        self.kwargs = kwargs
        """Bound or call kwargs such as `tools` and `tool_choice`."""

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tool schemas the call got (from `bind_tools`), if any."""
        return self.kwargs.get("tools")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelCall):
            return NotImplemented
        return (self.messages, self.stop, self.kwargs) == (other.messages, other.stop, other.kwargs)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def __repr__(self) -> str:
        return f"ModelCall(messages={self.messages!r}, stop={self.stop!r}, kwargs={self.kwargs!r})"


def _as_message(reply: Any) -> AIMessage:
    if isinstance(reply, AIMessage):
        return reply
    if isinstance(reply, str):
        return AIMessage(reply)
    raise TypeError(f"A fake model reply must be an AIMessage or a str, got {type(reply).__name__}")


def _cut_at_stop(message: AIMessage, stop: list[str] | None) -> AIMessage:
    """The reply with its text content cut before the first stop sequence, as models do."""
    content = message.content
    if not stop or not isinstance(content, str):
        return message
    cut = min((i for s in stop if s and (i := content.find(s)) != -1), default=-1)
    if cut == -1:
        return message
    return AIMessage(
        content[:cut],
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        name=message.name,
        id=message.id,
        tool_calls=message.tool_calls,
        invalid_tool_calls=message.invalid_tool_calls,
        usage_metadata=message.usage_metadata,
    )


def _pieces(content: Any, chunk_size: int | None) -> list[Any]:
    """The content split for streaming: words with leading spaces, or fixed-size pieces."""
    if not isinstance(content, str) or not content:
        return [content]
    if chunk_size is None:
        return _WORDS.findall(content)
    return [content[i : i + chunk_size] for i in range(0, len(content), chunk_size)]


def _split(message: AIMessage, chunk_size: int | None = None) -> list[AIMessageChunk]:
    """The chunks a fake model streams for `message`; their sum equals it."""
    pieces = _pieces(message.content, chunk_size)
    chunks = [AIMessageChunk(p, id=message.id) for p in pieces[:-1]]
    tool_chunks: list[ToolCallChunk] = [
        {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
        for i, c in enumerate(message.tool_calls)
    ]
    start = len(tool_chunks)
    for i, bad in enumerate(message.invalid_tool_calls, start):
        tool_chunks.append({"name": bad["name"], "args": bad["args"], "id": bad["id"], "index": i})
    last = AIMessageChunk(
        pieces[-1],
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        id=message.id,
        usage_metadata=message.usage_metadata,
        tool_call_chunks=tool_chunks,
        chunk_position="last",
    )
    return [*chunks, last]


class _FakeChatModel(BaseChatModel):
    """Shared streaming and call recording of the fake models."""

    _llm_type = "fake-chat-model"

    def __init__(self, *, chunk_size: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive int or None, got {chunk_size!r}")
        self.chunk_size = chunk_size
        self.calls: list[ModelCall] = []
        """One record per call, in call order."""

    def _record(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> None:
        self.calls.append(ModelCall(list(messages), stop, dict(kwargs)))

    def _reply(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> AIMessage:
        raise NotImplementedError

    async def _areply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any
    ) -> AIMessage:
        return self._reply(messages, stop, kwargs)

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        return _cut_at_stop(self._reply(messages, stop, kwargs), stop)

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        reply = self._generate_message(messages, stop, **kwargs)
        yield from _split(reply, self.chunk_size)

    async def _agenerate_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AIMessage:
        return _cut_at_stop(await self._areply(messages, stop, kwargs), stop)

    async def _astream_message(
        self, messages: list[BaseMessage], stop: list[str] | None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        reply = await self._agenerate_message(messages, stop, **kwargs)
        for chunk in _split(reply, self.chunk_size):
            yield chunk


class GenericFakeChatModel(BaseChatModel):
    """langchain-core's `GenericFakeChatModel`: each call replies with the next item of
    `messages` (an iterator of AIMessages or strings); a stream splits the content at whitespace
    (the whitespace kept as tokens). Written with langchain-core's hooks (`_generate`,
    `_stream`), as LangChain's tests subclass it. Kept for ported LangChain tests."""

    messages: Iterator[AIMessage | str]
    _llm_type = "generic-fake-chat-model"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The next scripted reply."""
        reply = next(self.messages)
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        """`_generate`, as langchain-core's default `_agenerate` runs it."""
        return self._generate(messages, stop, None, **kwargs)

    def _stream(  # pyright: ignore[reportIncompatibleMethodOverride]  # langchain-core's hook
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The next scripted reply's content token by token, then its additional kwargs."""
        message = cast(
            AIMessage, self._generate(messages, stop, run_manager, **kwargs).generations[0].message
        )
        if message.content:
            if not isinstance(message.content, str):
                raise ValueError("Expected content to be a string.")
            tokens = re.split(r"(\s)", message.content)
            for index, token in enumerate(tokens):
                last = index == len(tokens) - 1 and not message.additional_kwargs
                chunk = AIMessageChunk(
                    content=token, id=message.id, chunk_position="last" if last else None
                )
                yield ChatGenerationChunk(message=chunk)
        for key, value in message.additional_kwargs.items():
            chunk = AIMessageChunk(content="", id=message.id, additional_kwargs={key: value})
            yield ChatGenerationChunk(message=chunk)


class ScriptedChatModel(_FakeChatModel):
    """Answers each call with the next scripted reply; `assert_complete()` checks all were used."""

    _llm_type = "scripted-chat-model"

    def __init__(
        self, responses: Sequence[Reply], *, chunk_size: int | None = None, **options: Any
    ) -> None:
        super().__init__(chunk_size=chunk_size, **options)
        self.responses: list[AIMessage] = [_as_message(r) for r in responses]
        self._next = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """How many scripted responses are still unused."""
        return len(self.responses) - self._next

    def _reply(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> AIMessage:
        with self._lock:
            self._record(messages, stop, kwargs)
            if self._next >= len(self.responses):
                raise AssertionError(
                    f"ScriptedChatModel got call {len(self.calls)} but was scripted with "
                    f"{len(self.responses)} response(s); add more responses to the script"
                )
            self._next += 1
            return self.responses[self._next - 1]

    def assert_complete(self) -> None:
        """Raise AssertionError unless every scripted response was used."""
        if self.remaining:
            raise AssertionError(
                f"ScriptedChatModel has {self.remaining} unused response(s) of "
                f"{len(self.responses)}; it was called {len(self.calls)} time(s)"
            )

    def __repr__(self) -> str:
        return f"ScriptedChatModel(responses={self.responses!r})"


def _keywords(fn: Callable[..., Any]) -> set[str] | None:
    """Keyword names `fn` takes after its first parameter; None when it takes `**kwargs`."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL}


def _call_with(fn: Callable[..., Any], first: Any, kwargs: dict[str, Any], keywords: Any) -> Any:
    """`fn(first, **kwargs)`, passing only the `keywords` it takes (all when None)."""
    if keywords is not None:
        kwargs = {k: v for k, v in kwargs.items() if k in keywords}
    return fn(first, **kwargs)


def _not_awaitable(result: Any, fn: Any) -> Any:
    """`result`, unless a sync call got an awaitable from an async `fn` (closed, then TypeError)."""
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        raise TypeError(f"{fn!r} is async; call ainvoke or astream instead")
    return result


def _is_async(fn: Callable[..., Any]) -> bool:
    """Whether `fn` (a function, a partial of one, or an object's `__call__`) is a coroutine
    function; a sync `fn` that returns an awaitable is played as sync, then awaited."""
    while isinstance(fn, functools.partial):
        fn = cast("functools.partial[Any]", fn).func
    call = fn if inspect.isroutine(fn) else getattr(fn, "__call__", fn)  # noqa: B004
    return inspect.iscoroutinefunction(call)


ReplyFunction: TypeAlias = "Callable[..., Reply | Awaitable[Reply]]"
"""`fn(messages, **kwargs)` or `fn(messages)`, sync or async, returning an AIMessage or a str."""


class FunctionChatModel(_FakeChatModel):
    """A model played by `fn(messages, **kwargs)` (or `fn(messages)`), sync or async."""

    _llm_type = "function-chat-model"

    def __init__(self, fn: ReplyFunction, *, chunk_size: int | None = None, **options: Any) -> None:
        super().__init__(chunk_size=chunk_size, **options)
        self.fn = fn
        self._accepts = _keywords(fn)
        """Keyword names `fn` takes; None when it takes `**kwargs`."""

    def _call(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> Any:
        self._record(messages, stop, kwargs)
        given = kwargs if stop is None else {"stop": stop, **kwargs}
        return _call_with(self.fn, messages, given, self._accepts)

    def _reply(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any) -> AIMessage:
        return _as_message(_not_awaitable(self._call(messages, stop, kwargs), self.fn))

    async def _areply(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: Any
    ) -> AIMessage:
        if _is_async(self.fn):
            result = self._call(messages, stop, kwargs)
        else:  # a sync `fn` may block: on a worker, so a deadline or a cancel can give up on it
            from actloop.runnables._workers import run_in_worker

            result = await run_in_worker(self._call, messages, stop, kwargs)
        if inspect.isawaitable(result):
            result = await result
        return _as_message(result)

    def __repr__(self) -> str:
        return f"FunctionChatModel(fn={self.fn!r})"


# -- agents ------------------------------------------------------------------------------------

Steps: TypeAlias = "list[tuple[AgentAction, Any]]"

PlanFunction: TypeAlias = "Callable[..., Any]"
"""`fn(intermediate_steps, **inputs)`, sync or async, taking any subset of the inputs as keywords;
it returns a plan that is not a function (an exception it returns is raised)."""

Plan: TypeAlias = "AgentAction | list[AgentAction] | AgentFinish | BaseException | PlanFunction"
"""A scripted plan: a decision, an exception to raise, or a function that returns one."""


class PlanCall:
    """What one plan call received: a copy of the intermediate steps, and the inputs."""

    __slots__ = ("inputs", "intermediate_steps")

    def __init__(self, intermediate_steps: Steps, inputs: dict[str, Any]) -> None:
        self.intermediate_steps = intermediate_steps
        self.inputs = inputs

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PlanCall):
            return NotImplemented
        return (self.intermediate_steps, self.inputs) == (other.intermediate_steps, other.inputs)

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def __repr__(self) -> str:
        return f"PlanCall(intermediate_steps={self.intermediate_steps!r}, inputs={self.inputs!r})"


def _is_function(plan: object) -> bool:
    return callable(plan) and not isinstance(plan, type)


def _check_plan(plan: object, index: int) -> None:
    """Raise TypeError, naming the plan, unless it is one a scripted agent can play."""
    if isinstance(plan, AgentAction | AgentFinish | BaseException) or _is_function(plan):
        return
    if isinstance(plan, list) and all(isinstance(a, AgentAction) for a in cast("list[Any]", plan)):
        return
    raise TypeError(
        f"plan {index} is {plan!r}; a scripted agent plays AgentAction, a list of AgentAction, "
        "AgentFinish, an exception instance, or a function (intermediate_steps, **inputs) -> plan"
    )


def _played(plan: Any) -> Any:
    """The decision to return, raising the plan if it is an exception."""
    if isinstance(plan, BaseException):
        raise plan
    return plan


class _ScriptedPlans:
    """Plays the plans in order and records every call; shared by the two scripted agents."""

    def __init__(
        self,
        plans: Sequence[Plan],
        *,
        input_keys: Sequence[str] = (),
        return_values: Sequence[str] = ("output",),
        allowed_tools: Sequence[str] | None = None,
    ) -> None:
        for index, plan in enumerate(plans):
            _check_plan(plan, index)
        self.plans: list[Plan] = list(plans)
        """The script; append to it to extend a run."""
        self.calls: list[PlanCall] = []
        """One record per plan call, in call order."""
        self._input_keys = list(input_keys)
        self._return_values = list(return_values)
        self._allowed_tools = None if allowed_tools is None else list(allowed_tools)
        self._next = 0
        self._lock = threading.Lock()

    @property
    def input_keys(self) -> list[str]:
        """Keys the agent expects in its inputs (default none, like the base agents)."""
        return list(self._input_keys)

    @property
    def return_values(self) -> list[str]:
        """Keys of the agent's final output (default `["output"]`)."""
        return list(self._return_values)

    def get_allowed_tools(self) -> list[str] | None:
        """Tool names the agent may call, or None for any (the default)."""
        return None if self._allowed_tools is None else list(self._allowed_tools)

    @property
    def remaining(self) -> int:
        """How many scripted plans are still unused."""
        return len(self.plans) - self._next

    def _take(self, intermediate_steps: Steps, inputs: dict[str, Any]) -> tuple[Any, Any]:
        """Record the call; return (the plan function or None, what it returned or the plan)."""
        with self._lock:
            self.calls.append(PlanCall(list(intermediate_steps), dict(inputs)))
            if self._next >= len(self.plans):
                raise AssertionError(
                    f"{type(self).__name__} got plan call {len(self.calls)} but was scripted "
                    f"with {len(self.plans)} plan(s); add more plans to the script"
                )
            plan = self.plans[self._next]
            self._next += 1
        if _is_function(plan):
            fn = cast("Callable[..., Any]", plan)
            return fn, _call_with(fn, intermediate_steps, inputs, _keywords(fn))
        return None, plan

    def plan(self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any) -> Any:
        """The next scripted decision (an exception in the script is raised)."""
        fn, plan = self._take(intermediate_steps, kwargs)
        return _played(_not_awaitable(plan, fn) if fn is not None else plan)

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> Any:
        """Async twin of `plan`; an async plan function is awaited."""
        _, plan = self._take(intermediate_steps, kwargs)
        return _played(await plan if inspect.isawaitable(plan) else plan)

    def assert_complete(self) -> None:
        """Raise AssertionError unless every scripted plan was used."""
        if self.remaining:
            raise AssertionError(
                f"{type(self).__name__} has {self.remaining} unused plan(s) of "
                f"{len(self.plans)}; it was called {len(self.calls)} time(s)"
            )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(plans={self.plans!r})"


class ScriptedAgent(_ScriptedPlans, BaseSingleActionAgent):
    """A single-action agent playing `plans` in order; `assert_complete()` checks all were used."""


class ScriptedMultiActionAgent(_ScriptedPlans, BaseMultiActionAgent):
    """Multi-action twin of `ScriptedAgent` (stops with the multi-action agents' text)."""


class FakeListLLM(LLM):
    """A text model that returns `responses` in turn, starting over after the last one
    (langchain-core's `FakeListLLM`)."""

    responses: list[str]
    sleep: float | None = None
    i: int = 0

    @property
    def _llm_type(self) -> str:
        return "fake-list"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"responses": self.responses}

    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> str:
        response = self.responses[self.i]
        self.i = self.i + 1 if self.i < len(self.responses) - 1 else 0
        return response
