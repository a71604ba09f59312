"""OpenTelemetry tracing: GenAI spans for every agent run, model call and tool call.

    from actloop.tracing import instrument
    instrument()                      # or instrument(tracer_provider=provider)

Each executor run is an `invoke_agent {name}` span; under it, a `chat {model}` span per model call
(model, token usage, finish reasons) and an `execute_tool {name}` span per tool call (name, call
id). Errors set the span status and record an exception event; parse-error steps and unknown tools
show as error spans. Prompts, replies and tool arguments are recorded only with content capture on
(`capture_content=True` or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). A durable
run carries `gen_ai.conversation.id` (its thread id), and a resumed run links to the run it
continues. `inject_context` / `continue_trace` carry a trace across processes (a runner's workers,
a server's requests). Needs the `otel` extra (`opentelemetry-api`); the SDK and an exporter are
the application's choice (see the README).
"""

from actloop.tracing._instrument import CAPTURE_ENV, instrument, is_instrumented, uninstrument
from actloop.tracing._propagation import continue_trace, extract_context, inject_context

__all__ = [
    "CAPTURE_ENV",
    "continue_trace",
    "extract_context",
    "inject_context",
    "instrument",
    "is_instrumented",
    "uninstrument",
]

for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith(f"{__name__}._"):
        _obj.__module__ = __name__  # users import these from actloop.tracing
