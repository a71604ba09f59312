"""The data of journal entries, written and read: `dumps` with a clear error for what it cannot
save, one copy of a step's shared message log, a refusal for tool arguments nested too deeply to
save (the live run and a replay then see the same step), call ids and decisions.

The answers a person gives a call that asked for input are checked and normalized here too
(`normalized_answers`), so the server can refuse a bad one before a run starts. The entry kinds
are listed in `_base`. The durable run (`actloop.executor`) writes entries with
these functions; the read side (`_history`) and replay read them back.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Mapping
from json.encoder import encode_basestring_ascii as json_string  # a str as `dumps` writes it
from typing import Any, NamedTuple, cast

from actloop.exceptions import CheckpointError, OutputParserException, SerializationError
from actloop.serialization import dumps, loads
from actloop.steps import AgentAction
from actloop.tools._input import ACTIONS

log = logging.getLogger("actloop.checkpoint")

__all__ = [
    "DAMAGE",
    "TOO_DEEP",
    "Decision",
    "call_id",
    "decode_decision",
    "decode_plan",
    "encode",
    "encode_decision",
    "encode_plan",
    "inexact",
    "json_string",
    "normalized_answers",
    "savable_plan",
    "too_deep",
]


class Decision(NamedTuple):
    """A person's decision on one call: approve, reject (with a reason) or edit (new input)."""

    kind: str
    """`"approve"`, `"reject"` or `"edit"`."""
    reason: str | None = None
    """Why a call was rejected (None: no reason given)."""
    tool_input: Any = None
    """The new input of an edited call."""
    seq: int = -1
    """The journal entry that recorded it."""


def call_id(act: int, index: int) -> str:
    """The id of call `index` of step `act`, as shown in `pending_approvals`."""
    return f"{act}-{index}"


def encode_decision(decision: Decision) -> str:
    """A decision as the data of its "decision" entry."""
    value = {
        "decision": decision.kind,
        "reason": decision.reason,
        "tool_input": decision.tool_input,
    }
    return encode(value, "the decision")


def decode_decision(data: str | None, seq: int) -> Decision:
    """Inverse of `encode_decision` (KeyError, TypeError or SerializationError when damaged)."""
    value = loads(data or "null")
    kind = value["decision"]
    if kind not in ("approve", "reject", "edit"):
        raise ValueError(f"unknown decision {kind!r}")
    return Decision(kind, value.get("reason"), value.get("tool_input"), seq)


DAMAGE = (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError)
"""What decoding a hand-edited or damaged saved value can raise (SerializationError included):
every reader of saved values turns these into a CheckpointError naming what is damaged."""

_UNSAVABLE = '"type": "not_implemented"'


def encode(value: Any, what: str) -> str:
    """`dumps(value)`, or CheckpointError if part of it could not be read back; a value JSON
    saves changed (a tuple, a key that is not a string) is logged once per process. A string
    (the usual observation) is written as `dumps` writes it, without its walk."""
    if type(value) is str:
        return json_string(value)
    text = dumps(value)
    if _UNSAVABLE in text:
        raise CheckpointError(
            f"{what} cannot be saved: it holds an object `dumps` cannot write "
            "(use str, numbers, lists, dicts, messages or agent actions)"
        )
    if type(value) is not str and not _warned and (change := inexact(value)):
        _warn_inexact(what, change)
    return text


_warned = False


def _warn_inexact(what: str, change: str) -> None:
    global _warned
    _warned = True
    log.warning(
        "%s holds %s: JSON saves it changed, so a resumed run sees it changed; return lists "
        "and dicts with string keys (logged once)",
        what,
        change,
    )


def inexact(value: Any) -> str | None:
    """What in `value` JSON saves changed (a tuple, a dict key that is not a string), or None.

    A `(action, observation)` step is exact: `loads` makes a two-item list led by an agent
    action a tuple again. Messages and agent actions are saved exactly and not looked into."""
    todo: list[Any] = [value]
    while todo:
        item: Any = todo.pop()
        if isinstance(item, tuple):
            pair = cast("tuple[Any, ...]", item)
            if not (len(pair) == 2 and isinstance(pair[0], AgentAction)):
                return "a tuple (it comes back as a list)"
            todo.extend(pair)
        elif isinstance(item, list):
            todo.extend(cast("list[Any]", item))
        elif isinstance(item, dict):
            mapping = cast("dict[Any, Any]", item)
            if any(type(k) is not str for k in mapping):
                return "a dict key that is not a string (it comes back as a string)"
            todo.extend(mapping.values())
    return None


def encode_plan(output: Any) -> str:
    """A plan output (or the parse error the agent raised) as journal data.

    The actions of one step usually share one message log (the model's reply with all N tool
    calls): it is written once, not once per action, so a step of N calls costs O(N), not O(N^2).
    """
    if isinstance(output, OutputParserException):
        error = {
            "error": str(output),
            "observation": output.observation,
            "llm_output": output.llm_output,
            "send_to_llm": output.send_to_llm,
        }
        return json.dumps({"parse_error": error})
    if isinstance(output, list) and len(output) > 1:  # pyright: ignore[reportUnknownArgumentType]
        return _encode_shared_logs(cast("list[Any]", output))
    plain = _plain_action(output) if isinstance(output, AgentAction) else None
    if plain is not None:
        return plain
    return encode({"output": output}, "the agent's plan")


_PLAIN_ACTION = (
    '{"output": {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "agent", '
    '"AgentAction"], "kwargs": {"tool": %s, "tool_input": %s, "log": %s, "type": "AgentAction"}}}'
)
"""What `dumps` writes for `{"output": AgentAction(tool, text, log)}` (a ReAct agent's plan),
filled in without its walk: the plan of most steps of a classic agent."""


def _plain_action(action: AgentAction) -> str | None:
    """`_PLAIN_ACTION` for an `AgentAction` (not a subclass, which has its own id) whose tool,
    input and log are all `str`, else None."""
    tool, text, log = action.tool, action.tool_input, action.log
    if type(action) is AgentAction and type(tool) is str and type(text) is str and type(log) is str:
        return _PLAIN_ACTION % (json_string(tool), json_string(text), json_string(log))
    return None


def _encode_shared_logs(actions: list[Any]) -> str:
    """`{"output": actions without message logs, "message_logs": each log once, "log_refs":
    which log each action had (-1: none)}`."""
    logs: list[list[Any]] = []
    index: dict[tuple[int, ...], int] = {}
    refs: list[int] = []
    stripped: list[Any] = []
    for action in actions:
        log = getattr(action, "message_log", None)
        if not log:
            refs.append(-1)
            stripped.append(action)
            continue
        key = tuple(map(id, log))
        if key not in index:
            index[key] = len(logs)
            logs.append(list(log))
        refs.append(index[key])
        bare = copy.copy(action)
        bare.message_log = []
        stripped.append(bare)
    value = {"output": stripped, "message_logs": logs, "log_refs": refs}
    return encode(value, "the agent's plan")


def decode_plan(data: str) -> Any:
    """Inverse of `encode_plan`; a parse error comes back with the same message and fields."""
    value = loads(data)
    if "parse_error" not in value:
        output: Any = value["output"]
        if isinstance(output, tuple):  # `loads` reads [action, action] as a step tuple
            output = list(cast("tuple[Any, ...]", output))
        if "log_refs" in value:
            logs = [list(log) for log in value["message_logs"]]
            for action, ref in zip(output, value["log_refs"], strict=True):
                if ref >= 0:
                    action.message_log = logs[ref]
        return output
    fields = value["parse_error"]
    exc = OutputParserException(
        "", fields["observation"], fields["llm_output"], fields["send_to_llm"]
    )
    exc.args = (fields["error"],)
    return exc


TOO_DEEP = "<arguments nested too deeply to save>"
"""The tool input journaled (and run) in place of arguments `dumps` cannot save (more than 200
levels deep); the call is answered by `too_deep(tool)` and never reaches the tool."""


def too_deep(tool: str) -> str:
    """The observation of a call whose arguments were too deeply nested to journal."""
    return (
        f"Error: the arguments of tool {tool!r} are nested more than 200 levels deep, too deep "
        "for a durable run to save; the tool did not run. Send flatter arguments."
    )


def savable_plan(output: Any) -> tuple[Any, str]:
    """The plan as the run goes on with it, and its journal data. An action whose arguments
    cannot be saved (nested too deeply) is kept with `TOO_DEEP` as its input (and its message
    log's calls emptied), so the live run and a replay see the same step and the call is refused
    with a clear observation instead of the run dying at the journal write."""
    plain = _plain_action(output) if type(output) is AgentAction else None
    if plain is not None:  # the usual plan: one action of plain text, savable as it is
        return output, plain
    try:
        return output, encode_plan(output)
    except SerializationError:
        if not isinstance(output, (list, AgentAction)):
            raise
    actions: list[Any] = output if isinstance(output, list) else [output]  # pyright: ignore[reportUnknownVariableType]
    fixed = [_savable_action(a) for a in actions]
    output = fixed if isinstance(output, list) else fixed[0]
    return output, encode_plan(output)


def _savable_action(action: Any) -> Any:
    try:
        encode(action, "the agent's plan")
        return action
    except SerializationError:
        pass
    bare = copy.copy(action)
    bare.tool_input = TOO_DEEP
    log = getattr(action, "message_log", None)
    if log:
        bare.message_log = [_without_call_args(m) for m in log]
        try:
            encode(bare, "the agent's plan")
        except SerializationError:
            return AgentAction(action.tool, TOO_DEEP, action.log)
    return bare


def _without_call_args(message: Any) -> Any:
    """`message` with the arguments of its parsed tool calls emptied (the raw text stays)."""
    calls = getattr(message, "tool_calls", None)
    if not calls:
        return message
    bare = copy.copy(message)
    bare.tool_calls = [{**call, "args": {}} for call in calls]
    return bare


def normalized_answers(
    ident: str, questions: list[dict[str, Any]], given: Any
) -> dict[str, dict[str, Any]]:
    """The answers to a call's questions, `{key: {"action", "content"}}`, from what a person gave:
    for one question its answer, for several `{key: answer}`; an answer is the form's content
    (an object), `"decline"`, `"cancel"`, or `{"action": ..., "content": ...}`. CheckpointError
    for anything else."""
    keys = [str(q["key"]) for q in questions]
    schemas = {str(q["key"]): q.get("schema") for q in questions}
    if len(keys) == 1:
        return {keys[0]: _whole(_one(ident, given), schemas[keys[0]])}
    if not isinstance(given, Mapping) or set(cast("Mapping[str, Any]", given)) != set(keys):
        raise CheckpointError(
            f"call {ident} asked {len(keys)} questions: answer with an object keyed by "
            f"{', '.join(keys)}"
        )
    given = cast("Mapping[str, Any]", given)
    return {key: _whole(_one(f"{ident} ({key})", given[key]), schemas[key]) for key in keys}


def _whole(answer: dict[str, Any], schema: Any) -> dict[str, Any]:
    """`answer` with a whole number sent as a float (`6.0`: A2A's data parts and other
    protobuf-based clients have only doubles) made an int where the schema asks an integer."""
    content = answer.get("content")
    found = (
        cast("Mapping[str, Any]", schema).get("properties") if isinstance(schema, Mapping) else None
    )
    if not isinstance(content, Mapping) or not isinstance(found, Mapping):
        return answer
    properties = cast("Mapping[str, Any]", found)
    fixed = dict(cast("Mapping[str, Any]", content))
    for name, value in fixed.items():
        spec = properties.get(name)
        wants = cast("Mapping[str, Any]", spec).get("type") if isinstance(spec, Mapping) else None
        if wants == "integer" and isinstance(value, float) and value.is_integer():
            fixed[name] = int(value)
    return {**answer, "content": fixed}


def _one(ident: str, given: Any) -> dict[str, Any]:
    if isinstance(given, str) and given in ACTIONS:
        return {"action": given, "content": None}
    if isinstance(given, Mapping):
        value = cast("Mapping[str, Any]", given)
        if value.get("action") in ACTIONS and set(value) <= {"action", "content"}:
            content = value.get("content")
            if content is None or isinstance(content, Mapping):
                return {"action": value["action"], "content": content}
        else:
            return {"action": "accept", "content": dict(value)}
    raise CheckpointError(
        f"the answer to call {ident} must be an object (the form's content), 'decline', "
        "'cancel' or {'action': ..., 'content': {...}}"
    )
