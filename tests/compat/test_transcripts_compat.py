"""Verbose transcripts and deprecation warnings against langchain-classic 1.0.8: every legacy
agent kind prints the same stdout through `invoke`, `iter`, `stream` and `run`; the deprecated
constructors and calls warn with the same texts, at the same lines, once a process (each side
runs in a fresh interpreter, so "once" is tested honestly)."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import textwrap
import warnings
from typing import Any

import pytest
from langchain_classic import agents as lc_agents
from test_classic_compat import (
    LEGACY_CASES,
    LcRecordingChat,
    LcRecordingLLM,
    OurRecordingLLM,
    _legacy_tools,
    _reply,
)

from actloop.classic import AgentType, initialize_agent
from actloop.testing import ScriptedChatModel

CASES = [
    (
        "zero-shot-react-description",
        False,
        ("echo",),
        ["Action: echo\nAction Input: hi", "Final Answer: done"],
        {},
    ),
    *LEGACY_CASES,
]


def _transcript(lib: str, case: Any, how: str) -> str:
    kind, chat, names, replies, extra = case
    if chat:
        model: Any = (
            ScriptedChatModel(replies)
            if lib == "ours"
            else LcRecordingChat(responses=[_reply("ref", r) for r in replies], calls=[])
        )
    else:
        cls: Any = OurRecordingLLM if lib == "ours" else LcRecordingLLM
        model = cls(responses=replies, calls=[])
    create = initialize_agent if lib == "ours" else lc_agents.initialize_agent
    agent_kind = AgentType(kind) if lib == "ours" else lc_agents.AgentType(kind)
    inputs = {"input": "q?", **extra}
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter("ignore", DeprecationWarning)
        executor = create(_legacy_tools(lib, names), model, agent=agent_kind, verbose=True)
        if how == "invoke":
            executor.invoke(inputs)
        elif how == "iter":
            list(executor.iter(inputs))
        elif how == "stream":
            list(executor.stream(inputs))
        else:
            executor.run(**inputs)
    return out.getvalue()


@pytest.mark.parametrize("how", ["invoke", "iter", "stream", "run"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_verbose_transcripts_match_langchain(case: Any, how: str) -> None:
    ours, ref = _transcript("ours", case, how), _transcript("ref", case, how)
    assert ours == ref
    header = "None" if how in ("iter", "stream") else "AgentExecutor"
    assert f"> Entering new {header} chain..." in ours


WARNINGS_SCRIPT = """
import warnings
import langchain_core  # loaded: actloop's warnings are LangChain's category too
{imports}
llm = FakeListLLM(responses=["Final Answer: hi"] * 8)
tools = [Tool(name="echo", func=lambda x: x, description="Echo the input.")]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a = initialize_agent(tools, llm, agent=AgentType.ZERO_SHOT_REACT_DESCRIPTION)
    b = initialize_agent(tools, llm, agent=AgentType.ZERO_SHOT_REACT_DESCRIPTION)
    a.run("x"); a.run("y"); b.run("z")
    a("x"); a("y")
    prompt = PromptTemplate.from_template("{{input}}")
    chain = LLMChain(llm=llm, prompt=prompt); LLMChain(llm=llm, prompt=prompt)
    chain.run(input="x"); chain.predict(input="y")
    parser = MRKLOutputParser()
    LLMSingleActionAgent(llm_chain=chain, output_parser=parser, stop=["x"])
    LLMSingleActionAgent(llm_chain=chain, output_parser=parser, stop=["x"])
from langchain_core._api.deprecation import LangChainDeprecationWarning
for w in caught:
    print(issubclass(w.category, LangChainDeprecationWarning), w.lineno, w.message)
"""
OURS = """
from actloop import AgentType, PromptTemplate, Tool, initialize_agent
from actloop.classic import LLMChain, LLMSingleActionAgent, MRKLOutputParser
from actloop.testing import FakeListLLM
"""
REF = """
from langchain_classic.agents import AgentType, LLMSingleActionAgent, initialize_agent
from langchain_classic.agents.mrkl.output_parser import MRKLOutputParser
from langchain_classic.chains import LLMChain
from langchain_core.language_models import FakeListLLM
from langchain_core.prompts import PromptTemplate
from langchain_core.tools import Tool
"""


def _warned(imports: str) -> list[str]:
    script = WARNINGS_SCRIPT.format(imports=textwrap.dedent(imports).strip().replace("\n", "; "))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.splitlines()


def test_deprecation_warnings_match_langchain() -> None:
    ours, ref = _warned(OURS), _warned(REF)
    assert ours == ref
    assert len(ours) == 5
    assert all(line.startswith("True ") for line in ours)


def _prompts(lib: str) -> list[Any]:
    import langchain_core.prompts as lc_prompts

    import actloop.prompts as our_prompts

    mod: Any = our_prompts if lib == "ours" else lc_prompts
    return [
        mod.PromptTemplate.from_template("Hi {name}"),
        mod.HumanMessagePromptTemplate.from_template("{input}"),
        mod.SystemMessagePromptTemplate.from_template("Be {x}"),
        mod.AIMessagePromptTemplate.from_template("ok"),
        mod.MessagesPlaceholder(variable_name="chat_history"),
        mod.MessagesPlaceholder(variable_name="h", optional=True),
        mod.ChatPromptTemplate.from_messages([("system", "Be brief."), ("human", "{input}")]),
        mod.ChatPromptTemplate.from_template("Tell {x}"),
    ]


def test_str_and_repr_of_prompts_match_langchain() -> None:
    """A chat prompt with a placeholder differs only in `input_types`, where langchain-core shows
    pydantic's annotated message union (with a function's address); actloop keeps no types."""
    ours = [(str(p), repr(p)) for p in _prompts("ours")]
    ref = [(str(p), repr(p)) for p in _prompts("ref")]
    assert ours == ref
    assert ours[1][0] == (
        "prompt=PromptTemplate(input_variables=['input'], input_types={}, partial_variables={}, "
        "template='{input}') additional_kwargs={}"
    )


def test_str_of_messages_and_agent_actions_match_langchain() -> None:
    from langchain_core.agents import AgentAction as LcAgentAction

    from actloop import AgentAction

    assert str(AgentAction("t", "i", "l")) == str(LcAgentAction(tool="t", tool_input="i", log="l"))
    assert str(_reply("ours", "x")) == str(_reply("ref", "x"))
