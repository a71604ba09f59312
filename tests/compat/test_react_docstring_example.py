"""The example in `create_react_agent`'s docstring is LangChain's own example with only the imports
(and the hub prompt) changed, and it runs as written: `OpenAI()` (the completions model, found
through OPENAI_BASE_URL) against a loopback server, with `tools = ...` filled in. The prompts it
sends equal those langchain-classic's `create_react_agent` sends for the same replies."""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Iterator
from typing import Any

import langchain_core.tools as lc_tools
import pytest
from langchain_classic import agents as lc_agents
from langchain_core.language_models.llms import LLM as LcLLM
from langchain_core.prompts import PromptTemplate as LcPromptTemplate

from actloop.react import REACT_PROMPT, create_react_agent
from support.openai_server import LoopbackServer, Reply, running

REPLIES = [
    "I should greet back.\nAction: echo\nAction Input: hi",
    " I now know the final answer\nFinal Answer: Hello!",
    " I do not know it.\nFinal Answer: Bob",
]


def _example(function: Any) -> str:
    """The ```python block of a docstring, dedented."""
    doc = inspect.getdoc(function) or ""
    start = doc.index("```python\n") + len("```python\n")
    return textwrap.dedent(doc[start : doc.index("```", start)])


def _without_imports(code: str) -> list[str]:
    return [line for line in code.splitlines() if not line.startswith(("from ", "prompt = "))]


def test_our_example_is_langchains_with_other_imports() -> None:
    ours = _example(create_react_agent)
    ref = _example(lc_agents.create_react_agent)
    assert _without_imports(ours) == _without_imports(ref)
    assert 'prompt = hub.pull("hwchase17/react")' in ref.splitlines()
    assert "prompt = REACT_PROMPT" in ours.splitlines()
    assert "model = OpenAI()" in ours.splitlines() and "model = OpenAI()" in ref.splitlines()


def _streamed(text: str) -> Reply:
    """A streamed completion in two pieces (the executor streams the agent's model)."""

    def event(piece: str, finish: str | None) -> str:
        choice = {"text": piece, "index": 0, "finish_reason": finish, "logprobs": None}
        return json.dumps(
            {"id": "c", "object": "text_completion", "model": "m", "choices": [choice]}
        )

    half = len(text) // 2
    return Reply("stream", events=[event(text[:half], None), event(text[half:], "stop")])


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    for srv in running():
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        yield srv


def _echo(text: str) -> str:
    return f"echo: {text}"


class LcRecordingLLM(LcLLM):
    """A LangChain text model replying from a list and recording each prompt and stop."""

    calls: list[Any]

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _call(self, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any) -> str:
        self.calls.append((prompt, stop))
        return REPLIES[len(self.calls) - 1]


def _langchain_prompts() -> list[Any]:
    """What langchain-classic's create_react_agent sends for the same questions and replies."""
    llm = LcRecordingLLM(calls=[])
    tools = [lc_tools.Tool(name="echo", func=_echo, description="Echo the text.")]
    prompt = LcPromptTemplate.from_template(REACT_PROMPT.template)
    executor = lc_agents.AgentExecutor(
        agent=lc_agents.create_react_agent(llm, tools, prompt), tools=tools
    )
    executor.invoke({"input": "hi"})
    executor.invoke(
        {"input": "what's my name?", "chat_history": "Human: My name is Bob\nAI: Hello Bob!"}
    )
    return llm.calls


def test_the_docstring_example_runs_as_written(server: LoopbackServer) -> None:
    code = _example(create_react_agent)
    tools_line = "tools = ..."
    assert tools_line in code.splitlines()
    code = code.replace(
        tools_line, 'from actloop import Tool\ntools = [Tool("echo", _echo, "Echo the text.")]'
    )
    server.script(*(_streamed(r) for r in REPLIES))
    exec(compile(code, "create_react_agent docstring", "exec"), {"_echo": _echo})
    assert server.replies == []
    sent = [(b["prompt"], b["stop"]) for b in server.bodies]
    assert sent == _langchain_prompts()
    assert [(b["model"], b["stream"]) for b in server.bodies] == [
        ("gpt-3.5-turbo-instruct", True)
    ] * 3
    assert sent[0][1] == ["\nObservation"]
    assert sent[1][0].endswith(
        "Question: hi\nThought:I should greet back.\nAction: echo\nAction Input: hi"
        "\nObservation: echo: hi\nThought: "
    )
    assert sent[2][0].endswith("Question: what's my name?\nThought:")
