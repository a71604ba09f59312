"""A `create_agent` agent's graph state: LangGraph's messages reducer, node updates merged into
the state, a `Command` kept as journal data, and LangChain's answers to invalid tool calls."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, cast

from actloop.agents.types import REMOVE_ALL_MESSAGES, Command
from actloop.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage


class MessageIndex:
    """A run's state messages with their ids' positions, kept between updates: merging a node's
    messages then costs those messages, not the history (a 1,000-step run merges twice a step,
    and rebuilding the index was most of its step). It answers only for the list it was made
    for, unchanged since (the same object, length and last message); any other list is indexed
    afresh. `clean`: no AI message in it has invalid tool calls (None: not known)."""

    __slots__ = ("_last", "_messages", "_size", "clean", "where")

    def __init__(self) -> None:
        self._messages: list[BaseMessage] | None = None
        self._size = 0
        self._last: BaseMessage | None = None
        self.where: dict[str | None, int] = {}
        self.clean: bool | None = None

    def fits(self, messages: list[BaseMessage]) -> bool:
        """Whether this indexes `messages` as they are."""
        return (
            messages is self._messages
            and len(messages) == self._size
            and (not messages or messages[-1] is self._last)
        )

    def keep(self, messages: list[BaseMessage], where: dict[str | None, int]) -> None:
        """Index `messages` (whose positions `where` holds) from now on."""
        self._messages, self._size = messages, len(messages)
        self._last = messages[-1] if messages else None
        self.where = where

    def forget(self) -> None:
        """Index nothing (until `keep`)."""
        self._messages, self.clean = None, None


def _fitting(index: MessageIndex | None, messages: list[BaseMessage]) -> MessageIndex | None:
    """`index` when it indexes `messages` as they are, else None."""
    return index if index is not None and index.fits(messages) else None


def add_messages(
    left: list[BaseMessage], right: Sequence[Any], index: MessageIndex | None = None
) -> list[BaseMessage]:
    """LangGraph's messages reducer: new ids for messages without one; a message with a known
    id replaces that message, others are appended; a `RemoveMessage` removes its id (or, with
    `REMOVE_ALL_MESSAGES`, everything before it). `index` (a run's) spares re-indexing `left`
    and is kept for the result."""
    from actloop.chat_models import convert_to_messages

    incoming = convert_to_messages(list(right))
    for message in incoming:
        if message.id is None:
            message.id = str(uuid.uuid4())
    fitted = _fitting(index, left)
    clean = fitted.clean if fitted is not None else None
    if index is not None:
        index.forget()  # until the merge is done: an error must not leave it half-updated
    cleared = [i for i, m in enumerate(incoming) if _removes_all(m)]
    if cleared:
        return incoming[cleared[-1] + 1 :]
    merged = list(left)
    where = fitted.where if fitted is not None else {m.id: i for i, m in enumerate(merged)}
    removed: set[str | None] = set()
    for message in incoming:
        if clean and isinstance(message, AIMessage) and message.invalid_tool_calls:
            clean = False
        position = where.get(message.id)
        if position is None:
            if isinstance(message, RemoveMessage):
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{message.id}')"
                )
            where[message.id] = len(merged)
            merged.append(message)
        elif isinstance(message, RemoveMessage):
            removed.add(message.id)
        else:
            removed.discard(message.id)
            merged[position] = message
    if removed:
        return [m for m in merged if m.id not in removed]
    if index is not None:
        index.keep(merged, where)
        index.clean = clean
    return merged


def _removes_all(message: BaseMessage) -> bool:
    return isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES


def apply_update(state: dict[str, Any], update: Any, index: MessageIndex | None = None) -> None:
    """Merge a node's update (a dict or a `Command`'s update) into `state` (`index`: the run's,
    see `add_messages`)."""
    if isinstance(update, Command):
        update = update.update
    if not update:
        return
    for key, value in cast("dict[str, Any]", update).items():
        if key == "messages":
            state["messages"] = add_messages(state.get("messages", []), listed(value), index)
        else:
            state[key] = value


COMMAND_KEY = "__actloop_command__"


def journaled(result: Any) -> Any:
    """A tool call's result as the loop keeps it: a `Command` (a tool's or a middleware's)
    becomes plain data a durable run's journal can save; `command_of` turns it back."""
    if not isinstance(result, Command):
        return result
    goto = result.goto if isinstance(result.goto, str) else list(result.goto)
    return {COMMAND_KEY: {"update": result.update, "goto": goto, "graph": result.graph}}


def command_of(observation: Any) -> Any:
    """Inverse of `journaled`."""
    found: Any = observation
    if isinstance(found, dict) and COMMAND_KEY in found:
        saved = cast("dict[str, Any]", found)[COMMAND_KEY]
        goto = saved["goto"] if isinstance(saved["goto"], str) else tuple(saved["goto"])
        return Command(graph=saved["graph"], update=saved["update"], goto=goto)
    return observation


def rejection_reason(observation: Any) -> str | None:
    """The reviewer's message a rejection carries (see `decisions_to_resume`)."""
    import json

    _, found, reason = str(observation).partition(" Reason: ")
    return json.loads(reason).get("message") if found else None


def listed(value: Any) -> list[Any]:
    return cast("list[Any]", value) if isinstance(value, list) else [value]


def jump_of(result: Any) -> str | None:
    """Where a hook's result asks to go (`{"jump_to": ...}` or a Command's `goto`)."""
    if isinstance(result, Command):
        goto = result.goto
        return goto if isinstance(goto, str) else None
    if isinstance(result, dict):
        return cast("dict[str, Any]", result).get("jump_to")
    return None


def _invalid_call_message(call: Any) -> ToolMessage | None:
    """LangChain's answer to an invalid (unparsable) tool call with an id."""
    call_id = call.get("id")
    if call_id is None:
        return None
    name = call.get("name") or "unknown"
    return ToolMessage(
        f"Tool call {name} with id {call_id} could not be executed - arguments were malformed "
        "or truncated.",
        name=name,
        tool_call_id=call_id,
        status="error",
    )


def patch_invalid_tool_calls(
    messages: list[BaseMessage], index: MessageIndex | None = None
) -> list[BaseMessage]:
    """`messages` with an error answer after each AI message's invalid tool calls that no
    tool message answers (LangChain's `_patch_invalid_tool_calls`); always a new list. `index`
    (the run's) knows, for the state's messages, whether any has invalid calls."""
    fitted = _fitting(index, messages)
    clean = fitted.clean if fitted is not None else None
    if clean is None:
        clean = not any(isinstance(m, AIMessage) and m.invalid_tool_calls for m in messages)
        if fitted is not None:
            fitted.clean = clean
    if clean:
        return list(messages)  # the usual history: nothing to answer
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    patched: list[BaseMessage] = []
    for message in messages:
        patched.append(message)
        if not isinstance(message, AIMessage):
            continue
        for call in message.invalid_tool_calls:
            if call.get("id") in answered:
                continue
            answer = _invalid_call_message(call)
            if answer is not None:
                patched.append(answer)
                answered.add(answer.tool_call_id)
    return patched


def turns(steps: list[tuple[Any, Any]]) -> list[list[tuple[Any, Any]]]:
    """Consecutive steps of one model turn (the same message log) grouped."""
    groups: list[list[tuple[Any, Any]]] = []
    for step in steps:
        if groups and groups[-1][0][0].message_log == step[0].message_log:
            groups[-1].append(step)
        else:
            groups.append([step])
    return groups


def ran_tools(steps: list[tuple[Any, Any]], ids: set[Any]) -> dict[Any, Any]:
    """The tool the latest call of `steps` with each of `ids` ran, by call id: read from the
    end, stopping once every id is found (the last step's calls, usually), so a long run does
    not pay for its whole history on every step."""
    ran: dict[Any, Any] = {}
    for action, _ in reversed(steps):
        tool_input: Any = action.tool_input
        if isinstance(tool_input, dict):
            call = cast("dict[str, Any]", tool_input)
            key = call.get("id")
            if key in ids and key not in ran:
                ran[key] = call.get("name")
                if len(ran) == len(ids):
                    break
    return ran
