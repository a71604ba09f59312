"""`astream_log`: a run as JSON-patch operations on a run state (langchain-core's `RunLogPatch`),
built from the run's `astream_events`.

The state is `{"id", "name", "type", "streamed_output", "final_output", "logs"}`; every run below
the root gets `logs[name]` (`name:2`, ... when the name repeats) with its own `streamed_output`,
`final_output`, `start_time` and `end_time`. `RunLogPatch + RunLogPatch` applies the operations
and gives a `RunLog` with the `state`.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

from actloop.runnables._config import RunnableConfig

if TYPE_CHECKING:
    from actloop.runnables._base import Runnable

__all__ = ["RunLog", "RunLogPatch", "astream_log"]

Op = dict[str, Any]


def _keys(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _apply(state: Any, op: Op) -> Any:
    """`state` with one `add`/`replace` operation applied (the two kinds the log uses)."""
    if op["op"] not in ("add", "replace"):
        raise ValueError(f"unsupported JSON patch operation {op['op']!r}")
    keys = _keys(op["path"])
    if not keys:
        return op["value"]
    target: Any = state
    for key in keys[:-1]:
        target = target[int(key)] if isinstance(target, list) else target[key]  # pyright: ignore[reportUnknownVariableType]
    last = keys[-1]
    if isinstance(target, list):
        items = cast("list[Any]", target)
        if last == "-":
            items.append(op["value"])
        elif op["op"] == "add":
            items.insert(int(last), op["value"])
        else:
            items[int(last)] = op["value"]
    else:
        cast("dict[str, Any]", target)[last] = op["value"]
    return state


class RunLogPatch:
    """Operations on the run state; `patch + patch` gives a `RunLog` with the state applied."""

    def __init__(self, *ops: Op) -> None:
        self.ops = list(ops)

    def __add__(self, other: RunLogPatch) -> RunLog:
        if not isinstance(other, RunLogPatch):  # pyright: ignore[reportUnnecessaryIsInstance]
            return NotImplemented
        ops = [*self.ops, *other.ops]
        state: Any = None
        for op in copy.deepcopy(ops):
            state = _apply(state, op)
        return RunLog(*ops, state=state)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunLogPatch) and self.ops == other.ops

    __hash__ = None  # pyright: ignore[reportAssignmentType]

    def __repr__(self) -> str:
        return f"RunLogPatch({self.ops!r})"


class RunLog(RunLogPatch):
    """Operations so far and the state they build."""

    def __init__(self, *ops: Op, state: Any) -> None:
        super().__init__(*ops)
        self.state = state

    def __add__(self, other: RunLogPatch) -> RunLog:
        if not isinstance(other, RunLogPatch):  # pyright: ignore[reportUnnecessaryIsInstance]
            return NotImplemented
        state = copy.deepcopy(self.state)
        for op in copy.deepcopy(other.ops):
            state = _apply(state, op)
        return RunLog(*self.ops, *other.ops, state=state)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunLog) and self.ops == other.ops and self.state == other.state

    __hash__ = None  # pyright: ignore[reportAssignmentType]

    def __repr__(self) -> str:
        return f"RunLog({self.state!r})"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class _Keys:
    """Run id -> its key under `logs` (the name, then `name:2`, `name:3`, ...)."""

    def __init__(self) -> None:
        self.by_run: dict[str, str] = {}
        self.seen: dict[str, int] = {}

    def open(self, run_id: str, name: str) -> str:
        count = self.seen[name] = self.seen.get(name, 0) + 1
        key = name if count == 1 else f"{name}:{count}"
        self.by_run[run_id] = key
        return key


def _llm_output(message: Any) -> dict[str, Any]:
    """A model run's final output as langchain-core logs it: the dumped `LLMResult`."""
    text = getattr(message, "text", message)
    generation = {
        "text": text if isinstance(text, str) else str(text),
        "generation_info": None,
        "type": "ChatGenerationChunk",
        "message": message,
    }
    return {"generations": [[generation]], "llm_output": None, "run": None, "type": "LLMResult"}


def _ops(event: dict[str, Any], root: str, keys: _Keys) -> list[Op]:
    """The operations one event of `astream_events` makes."""
    kind, phase = event["event"][3:].rsplit("_", 1)
    data: dict[str, Any] = event["data"]
    if event["run_id"] == root:
        if phase == "start":
            value: dict[str, Any] = {
                "id": root,
                "streamed_output": [],
                "final_output": None,
                "logs": {},
            }
            return [
                {
                    "op": "replace",
                    "path": "",
                    "value": {**value, "name": event["name"], "type": kind},
                }
            ]
        if phase == "stream":
            return [{"op": "add", "path": "/streamed_output/-", "value": data["chunk"]}]
        return [{"op": "replace", "path": "/final_output", "value": data.get("output")}]
    if phase == "start":
        key = keys.open(event["run_id"], event["name"])
        entry: dict[str, Any] = {
            "id": event["run_id"],
            "name": event["name"],
            "type": kind,
            "tags": event["tags"],
            "metadata": event["metadata"],
            "start_time": _now(),
            "streamed_output": [],
            "streamed_output_str": [],
            "final_output": None,
            "end_time": None,
        }
        return [{"op": "add", "path": f"/logs/{key}", "value": entry}]
    key = keys.by_run.get(event["run_id"])
    if key is None:
        return []
    if phase == "stream":
        chunk = data["chunk"]
        ops: list[Op] = [{"op": "add", "path": f"/logs/{key}/streamed_output/-", "value": chunk}]
        text = getattr(chunk, "content", None)
        if isinstance(text, str):
            ops.append({"op": "add", "path": f"/logs/{key}/streamed_output_str/-", "value": text})
        return ops
    output = data.get("output")
    if kind in ("chat_model", "llm"):
        output = _llm_output(output)
    return [
        {"op": "add", "path": f"/logs/{key}/final_output", "value": output},
        {"op": "add", "path": f"/logs/{key}/end_time", "value": _now()},
    ]


async def astream_log(
    runnable: Runnable[Any, Any], input: Any, config: RunnableConfig | None = None, **kwargs: Any
) -> AsyncIterator[RunLogPatch]:
    """Yield the run's state changes as `RunLogPatch`es (sum them for the `RunLog`)."""
    from actloop.runnables._events import astream_events

    root: str | None = None
    keys = _Keys()
    async for event in astream_events(runnable, input, config, **kwargs):
        if root is None:
            root = str(event["run_id"])
        ops = _ops(event, root, keys)
        if ops:
            yield RunLogPatch(*ops)
