"""LangChain objects used as they are, with no `from_langchain` call: a langchain-core chat model
in an agent constructor and a pipeline, a langchain-core tool in the executor, a langchain-core
callback handler in `callbacks=`, and LangChain's `collect_runs()` tracer around an actloop run."""

from __future__ import annotations

from typing import Any

import langchain_core.tools as lc_tools
from langchain_classic import agents as lc_agents
from langchain_core.callbacks import BaseCallbackHandler as LcHandler
from langchain_core.language_models import FakeListChatModel
from langchain_core.prompts import PromptTemplate as LcPromptTemplate
from langchain_core.tracers.context import collect_runs as lc_collect_runs

import actloop
from actloop import AgentExecutor, ChatPromptTemplate, Tool, create_react_agent
from actloop.react import REACT_PROMPT
from actloop.testing import ScriptedChatModel

REPLIES = ["Thought: echo it\nAction: echo\nAction Input: hi", "Final Answer: it said hi"]


def _echo(text: str) -> str:
    return f"echo: {text}"


def test_a_langchain_chat_model_runs_an_actloop_agent() -> None:
    agent = create_react_agent(
        FakeListChatModel(responses=REPLIES), [Tool("echo", _echo, "Echo.")], REACT_PROMPT
    )
    executor = AgentExecutor(agent=agent, tools=[Tool("echo", _echo, "Echo.")])
    result = executor.invoke({"input": "say hi"})
    assert result == {"input": "say hi", "output": "it said hi"}


def test_a_langchain_chat_model_in_a_pipeline() -> None:
    chain = ChatPromptTemplate.from_template("Say {word}") | FakeListChatModel(responses=["ok"])
    reply = chain.invoke({"word": "x"})
    assert (type(reply).__module__, reply.content) == ("actloop.messages", "ok")


def test_a_langchain_tool_runs_in_the_executor() -> None:
    @lc_tools.tool
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    calls = [{"name": "shout", "args": {"text": "hi"}, "id": "c1", "type": "tool_call"}]
    model = ScriptedChatModel([actloop.AIMessage("", tool_calls=calls), "HI it is."])
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = actloop.create_tool_calling_agent(model, [shout], prompt)
    executor = AgentExecutor(agent=agent, tools=[shout], return_intermediate_steps=True)
    result = executor.invoke({"input": "shout hi"})
    assert result["output"] == "HI it is."
    assert [(a.tool, o) for a, o in result["intermediate_steps"]] == [("shout", "HI")]


class LcRecorder(LcHandler):
    """A LangChain handler without on_chat_model_start: it gets on_llm_start with text prompts."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.events.append(("chain_start", kwargs.get("name")))

    def on_llm_start(self, serialized: Any, prompts: list[str], **kwargs: Any) -> None:
        self.events.append(("llm_start", prompts))

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.events.append(("tool_end", output))

    def on_agent_finish(self, finish: Any, **kwargs: Any) -> None:
        self.events.append(("agent_finish", finish.return_values))


def test_a_langchain_handler_gets_the_events_langchain_sends() -> None:
    agent = create_react_agent(
        ScriptedChatModel(REPLIES), [Tool("echo", _echo, "E.")], REACT_PROMPT
    )
    ours = LcRecorder()
    AgentExecutor(agent=agent, tools=[Tool("echo", _echo, "E.")]).invoke(
        {"input": "q"}, {"callbacks": [ours]}
    )
    ref_agent = lc_agents.create_react_agent(
        FakeListChatModel(responses=REPLIES),
        [lc_tools.Tool(name="echo", func=_echo, description="E.")],
        LcPromptTemplate.from_template(REACT_PROMPT.template),
    )
    ref = LcRecorder()
    lc_agents.AgentExecutor(
        agent=ref_agent, tools=[lc_tools.Tool(name="echo", func=_echo, description="E.")]
    ).invoke({"input": "q"}, {"callbacks": [ref]})
    assert [e for e in ours.events if e[0] != "chain_start"] == [
        e for e in ref.events if e[0] != "chain_start"
    ]
    assert ours.events[0] == ref.events[0] == ("chain_start", "AgentExecutor")
    assert next(e[1] for e in ours.events if e[0] == "llm_start")[0].startswith(
        "Human: Answer the following questions"
    )


def _tree(run: Any) -> tuple[Any, ...]:
    return (run.name, run.run_type, tuple(_tree(c) for c in run.child_runs))


def test_langchain_collect_runs_sees_the_run_tree_langchain_makes() -> None:
    agent = create_react_agent(
        ScriptedChatModel(REPLIES), [Tool("echo", _echo, "E.")], REACT_PROMPT
    )
    with lc_collect_runs() as ours:
        AgentExecutor(agent=agent, tools=[Tool("echo", _echo, "E.")]).invoke({"input": "q"})
    ref_agent = lc_agents.create_react_agent(
        FakeListChatModel(responses=REPLIES),
        [lc_tools.Tool(name="echo", func=_echo, description="E.")],
        LcPromptTemplate.from_template(REACT_PROMPT.template),
    )
    with lc_collect_runs() as ref:
        lc_agents.AgentExecutor(
            agent=ref_agent, tools=[lc_tools.Tool(name="echo", func=_echo, description="E.")]
        ).invoke({"input": "q"})
    assert len(ours.traced_runs) == len(ref.traced_runs) == 1
    ours_tree, ref_tree = _tree(ours.traced_runs[0]), _tree(ref.traced_runs[0])
    model_names = {"ScriptedChatModel": "FakeListChatModel"}
    assert _renamed(ours_tree, model_names) == ref_tree


def _renamed(tree: tuple[Any, ...], names: dict[str, str]) -> tuple[Any, ...]:
    name, kind, children = tree
    return (names.get(name, name), kind, tuple(_renamed(c, names) for c in children))


def test_actloop_collect_runs_records_the_run_id_given() -> None:
    from uuid import UUID

    run_id = UUID("f47ac10b-58cc-4372-a567-0e02b2c3d479")
    agent = create_react_agent(
        ScriptedChatModel(REPLIES), [Tool("echo", _echo, "E.")], REACT_PROMPT
    )
    with actloop.collect_runs() as collector:
        AgentExecutor(agent=agent, tools=[Tool("echo", _echo, "E.")]).invoke(
            {"input": "q"}, {"run_id": run_id}
        )
    root = collector.traced_runs[0]
    assert (root.id, root.name, root.outputs) == (
        run_id,
        "AgentExecutor",
        {"output": "it said hi"},
    )
    assert [c.name for c in root.child_runs] == ["RunnableSequence", "echo", "RunnableSequence"]
