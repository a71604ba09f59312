"""One scripted `create_agent` scenario built in LangChain 1.x and in actloop, compared by fields.

The model's replies are written once as data (`reply(...)`); each side gets its own scripted model
(LangChain's `GenericFakeChatModel`, actloop's `ScriptedChatModel`) playing them in order, and
tools are written once as plain functions made a tool on each side. `fields(messages)` turns
either library's messages into plain dicts; ids both libraries draw at random (uuid4, given to
messages without one by LangGraph's reducer) become `"<uuid>"`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import langchain_core.messages as lc_messages
import langchain_core.tools as lc_tools
from langchain.agents import create_agent as lc_create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

import actloop.messages as al_messages
from actloop.agents import create_agent as al_create_agent
from actloop.testing import ScriptedChatModel
from actloop.tools import tool as al_tool

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def reply(content: str = "", *calls: tuple[str, dict[str, Any], str], id: str) -> dict[str, Any]:
    """A model reply: text and tool calls `(name, args, call_id)`."""
    tool_calls = [{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in calls]
    return {"content": content, "tool_calls": tool_calls, "id": id}


class LcScripted(GenericFakeChatModel):
    """LangChain's fake chat model, bindable to tools (the binding is ignored, as actloop's is
    recorded but not acted on)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def lc_model(replies: Sequence[dict[str, Any]]) -> Any:
    return LcScripted(messages=iter([lc_messages.AIMessage(**r) for r in replies]))


def al_model(replies: Sequence[dict[str, Any]]) -> Any:
    return ScriptedChatModel([al_messages.AIMessage(**r) for r in replies])


def lc_tools_of(fns: Sequence[Callable[..., Any]]) -> list[Any]:
    return [lc_tools.tool(f) for f in fns]


def al_tools_of(fns: Sequence[Callable[..., Any]]) -> list[Any]:
    return [al_tool(f) for f in fns]


def agents(
    replies: Sequence[dict[str, Any]],
    tools: Sequence[Callable[..., Any]] = (),
    *,
    lc_middleware: Sequence[Any] = (),
    al_middleware: Sequence[Any] = (),
    **kwargs: Any,
) -> tuple[Any, Any]:
    """The scenario's agent in LangChain and in actloop."""
    lc = lc_create_agent(
        lc_model(replies), lc_tools_of(tools), middleware=list(lc_middleware), **kwargs
    )
    al = al_create_agent(
        al_model(replies), al_tools_of(tools), middleware=list(al_middleware), **kwargs
    )
    return lc, al


def human(text: str, id: str = "h1") -> tuple[Any, Any]:
    return lc_messages.HumanMessage(text, id=id), al_messages.HumanMessage(text, id=id)


def _id(value: Any) -> Any:
    return "<uuid>" if isinstance(value, str) and UUID.match(value) else value


def fields(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Each message's fields as plain data (either library)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        row: dict[str, Any] = {
            "type": m.type,
            "content": m.content,
            "name": m.name,
            "id": _id(m.id),
            "additional_kwargs": dict(m.additional_kwargs),
        }
        if m.type == "ai":
            row["tool_calls"] = [dict(c) for c in m.tool_calls]
            row["invalid_tool_calls"] = [dict(c) for c in m.invalid_tool_calls]
        if m.type == "tool":
            row["tool_call_id"] = m.tool_call_id
            row["status"] = m.status
            row["artifact"] = m.artifact
        out.append(row)
    return out


def state_fields(state: dict[str, Any]) -> dict[str, Any]:
    """A final state with its messages as fields."""
    return {k: fields(v) if k == "messages" else v for k, v in state.items()}
