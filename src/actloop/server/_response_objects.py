"""The objects of OpenAI's Responses API that the `openai` SDK reads, built from a durable turn:
the response and its output items (`_response_stream` sends them as stream events).

A response is one turn of a thread (`resp_{turn}_{thread}`). Its output: each step's tool calls as
`function_call` items, then their results as `function_call_output` items (the agent ran them),
the calls waiting for approval as `mcp_approval_request` items, then the answer as a `message`.
Item ids derive from the response's and the calls' ids, so the stream and `GET` name the same
items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from actloop.server._service import error_type
from actloop.server._wire import as_text, encode, json_text

if TYPE_CHECKING:
    from actloop.checkpoint import ThreadHistory
    from actloop.executor import AgentExecutor

__all__ = [
    "TERMINAL",
    "Meta",
    "answer_text",
    "approval_item",
    "call_item",
    "failure",
    "json_arguments",
    "message_id",
    "message_item",
    "meta_of",
    "response_id",
    "response_object",
    "result_item",
    "served_name",
    "skeleton",
    "text_part",
]

_STATUS = {
    "finished": "completed",
    "paused": "incomplete",
    "failed": "failed",
    "running": "in_progress",
}
TERMINAL = {
    "completed": "response.completed",
    "incomplete": "response.incomplete",
    "failed": "response.failed",
    "cancelled": "response.failed",
}


def response_id(thread_id: str, turn: int) -> str:
    """The id of the response that is turn `turn` of `thread_id`."""
    return f"resp_{turn}_{thread_id}"


def served_name(executor: AgentExecutor) -> str:
    """The model name the agent is served under: its `name`, else `"agent"`."""
    return executor.name or "agent"


# the response object


@dataclass(frozen=True)
class Meta:
    """What every response object of one turn shares."""

    model: str
    thread_id: str
    turn: int
    tools: list[dict[str, Any]]

    @property
    def id(self) -> str:
        """The response's id."""
        return response_id(self.thread_id, self.turn)

    @property
    def core(self) -> str:
        """The part of each item id naming this response."""
        return f"{self.turn}_{self.thread_id}"


def meta_of(executor: AgentExecutor, thread_id: str, turn: int) -> Meta:
    """The shared parts of turn `turn` of `thread_id`; the agent's tools as function tools."""
    return Meta(served_name(executor), thread_id, turn, [_tool(t) for t in executor.tools])


def _tool(tool: Any) -> dict[str, Any]:
    """A tool of the agent as a Responses function tool (its name alone when it has no schema)."""
    from actloop.tools import convert_to_openai_function

    try:
        spec = convert_to_openai_function(tool)
    except Exception:  # a tool without a usable schema is still named
        spec = {"name": str(getattr(tool, "name", tool)), "parameters": None}
    return {"type": "function", **spec, "strict": False}


def skeleton(meta: Meta, status: str, created: float, output: list[Any]) -> dict[str, Any]:
    """A response object with everything but its error and end."""
    previous = response_id(meta.thread_id, meta.turn - 1) if meta.turn > 1 else None
    return {
        "id": meta.id,
        "object": "response",
        "created_at": int(created),
        "status": status,
        "background": None,
        "completed_at": None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "metadata": {},
        "model": meta.model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": previous,
        "temperature": None,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": meta.tools,
        "top_p": None,
        "truncation": "disabled",
        "usage": None,
        "user": None,
    }


def response_object(
    meta: Meta, found: ThreadHistory, answer_id: str | None = None
) -> dict[str, Any]:
    """The response object of a saved turn (what `GET` answers and a stream ends with)."""
    record = found.record
    status = _STATUS.get(record.status, "in_progress")
    body = skeleton(meta, status, record.created, _items(meta, found, answer_id))
    if status == "completed":
        body["completed_at"] = int(record.updated)
    if status == "failed":
        body["error"] = failure(error_type(record.error) or "Error")
    return body


def failure(kind: str) -> dict[str, str]:
    """What a failed response says: the exception type, never its message."""
    return {"code": "server_error", "message": f"the run failed ({kind})"}


def _items(meta: Meta, found: ThreadHistory, answer_id: str | None) -> list[dict[str, Any]]:
    """Each step's calls, then their results; waiting calls; the answer."""
    acts: dict[str, list[Any]] = {}
    for call in found.calls:
        acts.setdefault(call.id.partition("-")[0], []).append(call)
    items: list[dict[str, Any]] = []
    for calls in acts.values():
        items.extend(call_item(meta, c.id, c.tool, encode(c.tool_input)) for c in calls)
        done = [c for c in calls if c.finished]
        items.extend(result_item(meta, c.id, encode(c.observation)) for c in done)
    items.extend(approval_item(meta, p) for p in found.pending)
    if found.output is not None:
        text = answer_text(encode(found.output))
        ident = answer_id or message_id(meta, len(acts))
        items.append(message_item(ident, text, "completed", "final_answer"))
    return items


def json_arguments(value: Any) -> str:
    """A tool input as the JSON text of `arguments`."""
    return json_text(value)


def answer_text(outputs: Any) -> str:
    """The answer text of the run's (encoded) outputs: `output`, or all of them as JSON."""
    if isinstance(outputs, dict) and "output" in outputs:
        return as_text(cast("dict[str, Any]", outputs)["output"])
    return as_text(outputs)


def call_item(meta: Meta, call_id: str, name: str, args: Any, done: bool = True) -> dict[str, Any]:
    """A tool call the agent made (`done=False`: its arguments still to stream)."""
    return {
        "type": "function_call",
        "id": f"fc_{meta.core}_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json_arguments(args) if done else "",
        "status": "completed" if done else "in_progress",
    }


def result_item(meta: Meta, call_id: str, observation: Any) -> dict[str, Any]:
    """A call's result: what the tool returned to the agent."""
    return {
        "type": "function_call_output",
        "id": f"fco_{meta.core}_{call_id}",
        "call_id": call_id,
        "output": as_text(observation),
        "status": "completed",
    }


def approval_item(meta: Meta, pending: dict[str, Any]) -> dict[str, Any]:
    """A call waiting for a person: its `id` is the call id decisions name."""
    return {
        "type": "mcp_approval_request",
        "id": str(pending.get("id")),
        "name": str(pending.get("tool")),
        "arguments": json_arguments(encode(pending.get("tool_input"))),
        "server_label": meta.model,
    }


def message_id(meta: Meta, turn: int) -> str:
    """The id of the message of the model's `turn`-th reply (0-based) in this response."""
    return f"msg_{meta.core}_{turn}"


def text_part(text: str) -> dict[str, Any]:
    """The one text part of a message."""
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def message_item(ident: str, text: str | None, status: str, phase: str | None) -> dict[str, Any]:
    """An assistant message (`text` None: opened, its part still to come)."""
    return {
        "type": "message",
        "id": ident,
        "role": "assistant",
        "status": status,
        "content": [] if text is None else [text_part(text)],
        "phase": phase,
    }
