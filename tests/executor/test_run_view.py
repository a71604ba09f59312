"""`RunView`: what a callback handler learns of an executor run (its name, thread, resume, and the
stop reason the loop core decided), handed over with the `_on_agent_run` event."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

from actloop import AgentAction, AgentExecutor, BaseCallbackHandler
from actloop.checkpoint import SqliteCheckpointer
from actloop.executor import RunView
from actloop.testing import ScriptedAgent
from support.executor import finish, make_tool


class Views(BaseCallbackHandler):
    """Keeps each run's view, and what it said when its run ended."""

    def __init__(self) -> None:
        self.views: list[RunView] = []
        self.ended: list[tuple[str | None, int]] = []

    def _on_agent_run(self, run: RunView, **kwargs: Any) -> None:
        self.views.append(run)

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        if self.views and kwargs.get("parent_run_id") is None:
            view = self.views[-1]
            self.ended.append((view.stop_reason, view.iterations))


def echo() -> Any:
    return make_tool("echo", lambda text: f"echo {text}")


def test_a_finished_run_and_a_stopped_one() -> None:
    views = Views()
    done = AgentExecutor(
        agent=ScriptedAgent([AgentAction("echo", "a", ""), finish("ok")]), tools=[echo()]
    )
    done.invoke({"input": "q"}, {"callbacks": [views], "run_name": "mine"})
    stopped = AgentExecutor(
        agent=ScriptedAgent([AgentAction("echo", str(i), "") for i in range(5)]),
        tools=[echo()],
        max_iterations=2,
    )
    stopped.invoke({"input": "q"}, {"callbacks": [views]})
    first, second = views.views
    assert (first.name, first.thread_id, first.resumed, first.trace_context) == (
        "mine",
        None,
        False,
        None,
    )
    assert second.name == "AgentExecutor"
    assert views.ended == [("finished", 1), ("max_iterations", 2)]


def test_a_durable_run_and_its_resume(tmp_path: Path) -> None:
    views = Views()
    store = SqliteCheckpointer(tmp_path / "runs.db")
    flaky = iter([RuntimeError("down"), None])

    def work(text: str) -> str:
        error = next(flaky)
        if error is not None:
            raise error
        return f"did {text}"

    agent = ScriptedAgent([AgentAction("work", "x", ""), finish("done")])
    executor = AgentExecutor(
        agent=agent, tools=[make_tool("work", work)], checkpointer=store, callbacks=[views]
    )
    config: Any = {"configurable": {"thread_id": "T"}}
    try:
        executor.invoke({"input": "q"}, config)
    except RuntimeError:
        pass
    assert executor.resume("T")["output"] == "done"
    first, second = views.views
    assert (first.thread_id, first.resumed, second.thread_id, second.resumed) == (
        "T",
        False,
        "T",
        True,
    )
    assert first.stop_reason is None  # it failed: it never ended on its own
    assert (second.stop_reason, second.iterations) == ("finished", 1)


def test_a_view_lives_as_long_as_its_run() -> None:
    views = Views()
    executor = AgentExecutor(agent=ScriptedAgent([finish("ok")]), tools=[echo()])
    executor.invoke({"input": "q"}, {"callbacks": [views]})
    view = weakref.ref(views.views.pop())
    gc.collect()
    assert view() is None
