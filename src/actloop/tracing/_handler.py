"""The span handler: callback events turned into OpenTelemetry spans in the GenAI conventions.

One `invoke_agent {name}` span per executor run (INTERNAL), a `chat {model}` span per model call
(CLIENT) and an `execute_tool {name}` span per tool call (INTERNAL). Chains in between (prompts,
parsers, sequences) get no span: their children hang on the nearest span above. A run with no
known parent starts under the caller's current OpenTelemetry context, and a tool span is made
current while the tool runs, so spans started inside a tool (a nested agent, an HTTP client)
stay in the trace, on worker threads and in tasks too (both copy the caller's context).
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from actloop.callbacks import BaseCallbackHandler
from actloop.exceptions import OutputParserException
from actloop.tracing._content import input_messages, output_messages, response_attributes
from actloop.tracing._propagation import extract_context

if TYPE_CHECKING:
    from contextvars import Token
    from uuid import UUID

    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from actloop.executor import RunView

__all__ = ["SpanHandler"]

_ACTION: contextvars.ContextVar[tuple[Any, Any] | None] = contextvars.ContextVar(
    "actloop_tracing_action", default=None
)
"""(executor run id, action) of `on_agent_action`, read by the tool start that follows it in the
same context: the action carries the model's tool call id."""

_REQUEST_PARAMS = {
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "top_p": "gen_ai.request.top_p",
    "seed": "gen_ai.request.seed",
}


class _Agent:
    """An open agent run: the run (weakly: a stream closed early drops it, which ends the span),
    its models' token totals and providers."""

    __slots__ = ("closer", "lock", "providers", "ref", "tokens_in", "tokens_out", "usage")

    def __init__(self, run: RunView, closer: weakref.finalize[Any, Any]) -> None:
        self.ref = weakref.ref(run)
        self.closer = closer
        self.lock = threading.Lock()
        self.providers: set[str] = set()
        self.tokens_in = self.tokens_out = 0
        self.usage = False

    def add(self, attributes: Mapping[str, Any]) -> None:
        """Count a finished model call's usage."""
        tokens_in = attributes.get("gen_ai.usage.input_tokens")
        tokens_out = attributes.get("gen_ai.usage.output_tokens")
        if tokens_in is None and tokens_out is None:
            return
        with self.lock:
            self.usage = True
            self.tokens_in += tokens_in or 0
            self.tokens_out += tokens_out or 0

    def attributes(self) -> dict[str, Any]:
        """What the run's model calls add up to: token totals, and the provider if only one."""
        out: dict[str, Any] = {}
        if len(self.providers) == 1:
            out["gen_ai.provider.name"] = next(iter(self.providers))
        if self.usage:
            out["gen_ai.usage.input_tokens"] = self.tokens_in
            out["gen_ai.usage.output_tokens"] = self.tokens_out
        return out


class _Run:
    """An open callback run: the context its children start in, and its span if it has one."""

    __slots__ = ("agent", "context", "span", "start", "token")

    def __init__(
        self,
        context: Context,
        span: Span | None = None,
        agent: _Agent | None = None,
        start: int | None = None,
        token: Token[Context] | None = None,
    ) -> None:
        self.context = context
        self.span = span
        self.agent = agent
        self.start = start
        self.token = token


_UNPARSED = "the agent's output could not be parsed (its text is kept out without content capture)"
"""What a span says of a parse error that ended the run, in place of its message (which quotes the
model's reply) when content is not captured."""


def _quotes_the_reply(error: BaseException) -> bool:
    """A parse error, or the executor's error for one: its message holds the model's reply."""
    return isinstance(error, OutputParserException) or isinstance(
        error.__cause__, OutputParserException
    )


def _fail(span: Span, error: BaseException, capture_content: bool) -> None:
    """Record `error` on `span`: error.type, an exception event and an ERROR status. Without
    content capture a parse error's message (the model's reply) is left out of all three."""
    span.set_attribute("error.type", type(error).__qualname__)
    if capture_content or not _quotes_the_reply(error):
        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        return
    import traceback

    stack = "".join(traceback.format_tb(error.__traceback__)) + type(error).__qualname__
    span.record_exception(
        error, attributes={"exception.message": _UNPARSED, "exception.stacktrace": stack}
    )
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {_UNPARSED}"))


def _detach(token: Token[Context] | None) -> None:
    """Undo a tool span's attach; a token from another context (a moved generator) is ignored."""
    if token is None:
        return
    try:
        token.var.reset(token)
    except (ValueError, RuntimeError):
        pass


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


class SpanHandler(BaseCallbackHandler):
    """Callback handler that opens and closes the spans; installed by `instrument()`."""

    def __init__(self, tracer: Tracer, capture_content: bool) -> None:
        self.tracer = tracer
        self.capture_content = capture_content
        self._runs: dict[UUID, _Run] = {}

    def _parent(self, parent_run_id: UUID | None) -> _Run:
        if parent_run_id is not None:
            found = self._runs.get(parent_run_id)
            if found is not None:
                return found
        return _Run(otel_context.get_current())

    # -- agent runs ------------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        parent = self._parent(parent_run_id)
        self._runs[run_id] = _Run(parent.context, None, parent.agent, time.time_ns())

    def _on_agent_run(self, run: RunView, *, run_id: UUID, **kwargs: Any) -> None:
        """The chain run `run_id` is an executor run: open its invoke_agent span."""
        record = self._runs.get(run_id)
        if record is None:
            return
        name = run.name
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
        }
        if run.thread_id is not None:
            attributes["gen_ai.conversation.id"] = run.thread_id
            attributes["actloop.resumed"] = run.resumed
        span = self.tracer.start_span(
            f"invoke_agent {name}",
            context=record.context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=record.start,
        )
        closer = weakref.finalize(run, self._closed, run_id)
        record.span, record.agent = span, _Agent(run, closer)
        record.context = trace.set_span_in_context(span, record.context)
        if run.trace_context is not None:
            propagate.inject(run.trace_context, context=record.context)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        record = self._runs.pop(run_id, None)
        if record is not None and record.span is not None and record.agent is not None:
            self._end_agent(record.span, record.agent, None)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        record = self._runs.pop(run_id, None)
        if record is not None and record.span is not None and record.agent is not None:
            self._end_agent(record.span, record.agent, error)

    def _closed(self, run_id: UUID) -> None:
        """An agent run was dropped unfinished (a stream closed early): end its span."""
        record = self._runs.pop(run_id, None)
        if record is not None and record.span is not None:
            record.span.set_attribute("actloop.stop_reason", "closed")
            record.span.end()

    def _end_agent(self, span: Span, agent: _Agent, error: BaseException | None) -> None:
        agent.closer.detach()
        run = agent.ref()
        if run is None:
            return
        reason = "error" if error else (run.stop_reason or "unfinished")
        span.set_attribute("actloop.stop_reason", reason)
        span.set_attribute("actloop.iterations", run.iterations)
        span.set_attributes(agent.attributes())
        if run.previous_trace_context:
            previous = trace.get_current_span(extract_context(run.previous_trace_context))
            if previous.get_span_context().is_valid:
                span.add_link(previous.get_span_context(), {"actloop.link": "resumes"})
        if error is not None:
            _fail(span, error, self.capture_content)
        span.end()

    def on_agent_action(self, action: Any, *, run_id: UUID, **kwargs: Any) -> None:
        _ACTION.set((run_id, action))

    # -- model calls -----------------------------------------------------------------------------

    def on_chat_model_start(
        self,
        serialized: Any,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        content = input_messages(messages[0] if messages else []) if self.capture_content else None
        self._start_model(run_id, parent_run_id, metadata, invocation_params, content)

    def _start_model(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: dict[str, Any] | None,
        params: dict[str, Any] | None,
        content: str | None,
    ) -> None:
        parent = self._parent(parent_run_id)
        metadata, params = metadata or {}, params or {}
        model = params.get("model") or params.get("model_name") or metadata.get("ls_model_name")
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": str(metadata.get("ls_provider") or "_OTHER"),
        }
        if model:
            attributes["gen_ai.request.model"] = str(model)
        for key, name in _REQUEST_PARAMS.items():
            if isinstance(params.get(key), int | float):
                attributes[name] = params[key]
        if params.get("stop"):
            attributes["gen_ai.request.stop_sequences"] = [str(s) for s in params["stop"]]
        if content is not None:
            attributes["gen_ai.input.messages"] = content
        if parent.agent is not None:
            parent.agent.providers.add(attributes["gen_ai.provider.name"])
        span = self.tracer.start_span(
            f"chat {model}" if model else "chat",
            context=parent.context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        self._runs[run_id] = _Run(
            trace.set_span_in_context(span, parent.context), span, parent.agent
        )

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        record = self._runs.pop(run_id, None)
        if record is None or record.span is None:
            return
        attributes, reasons = response_attributes(response)
        record.span.set_attributes(attributes)
        if self.capture_content:
            record.span.set_attribute("gen_ai.output.messages", output_messages(response, reasons))
        if record.agent is not None:
            record.agent.add(attributes)
        record.span.end()

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        record = self._runs.pop(run_id, None)
        if record is not None and record.span is not None:
            _fail(record.span, error, self.capture_content)
            record.span.end()

    # -- tool calls ------------------------------------------------------------------------------

    def on_tool_start(
        self,
        serialized: Any,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        inputs: dict[str, Any] | None = None,
        tool_call_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        parent = self._parent(parent_run_id)
        action = _taken_action(parent_run_id)
        info: Mapping[str, Any] = serialized or {}
        name = str(info.get("name") or kwargs.get("name") or "tool")
        call_id = tool_call_id or getattr(action, "tool_call_id", None)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
        }
        if info.get("description"):
            attributes["gen_ai.tool.description"] = str(info["description"])
        if call_id:
            attributes["gen_ai.tool.call.id"] = str(call_id)
        name, problem = _model_mistake(name, inputs, attributes)
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = _json(inputs if inputs else input_str)
        span = self.tracer.start_span(
            f"execute_tool {name}",
            context=parent.context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        if problem is not None:
            span.set_status(Status(StatusCode.ERROR, problem))
        current = trace.set_span_in_context(span, parent.context)
        token = otel_context.attach(current)
        self._runs[run_id] = _Run(current, span, parent.agent, token=token)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        record = self._runs.pop(run_id, None)
        if record is None or record.span is None:
            return
        if self.capture_content:
            result = getattr(output, "content", output)
            record.span.set_attribute("gen_ai.tool.call.result", _json(result))
        record.span.end()
        _detach(record.token)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        record = self._runs.pop(run_id, None)
        if record is None or record.span is None:
            return
        _fail(record.span, error, self.capture_content)
        record.span.end()
        _detach(record.token)


def _taken_action(parent_run_id: UUID | None) -> Any:
    """The action `on_agent_action` announced for this tool call (same executor run), if any."""
    pending = _ACTION.get()
    if pending is None or pending[0] != parent_run_id:
        return None
    _ACTION.set(None)
    return pending[1]


def _model_mistake(
    name: str, inputs: dict[str, Any] | None, attributes: dict[str, Any]
) -> tuple[str, str | None]:
    """For the loop's stand-in tools (an unknown tool, a parse error): the name the span shows,
    the error type on `attributes`, and the status message; else (name, None)."""
    if name == "invalid_tool" and inputs and "requested_tool_name" in inputs:
        requested = str(inputs["requested_tool_name"])
        attributes["gen_ai.tool.name"] = requested
        attributes.pop("gen_ai.tool.description", None)  # the stand-in's, not the asked tool's
        attributes["error.type"] = "invalid_tool"
        return requested, f"the agent asked for an unknown tool {requested!r}"
    if name == "_Exception":
        attributes["error.type"] = "OutputParserException"
        return name, "the agent's output could not be parsed"
    return name, None
