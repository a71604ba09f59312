"""The rest of `langchain_classic.agents` against langchain-classic: each `create_*` agent and each
legacy agent (through `initialize_agent`) runs a scripted conversation on both sides; the messages
or prompts sent to the model, the stop words and bound kwargs, the steps and the output are the
same. The parsers of the legacy kinds give the same results and errors on a shared corpus."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import langchain_core.messages as lc_messages
import langchain_core.prompts as lc_prompts
import langchain_core.tools as lc_tools
import pytest
from langchain_classic import agents as lc_agents
from langchain_classic.agents.chat.output_parser import ChatOutputParser as LcChatParser
from langchain_classic.agents.conversational.output_parser import ConvoOutputParser as LcConvo
from langchain_classic.agents.format_scratchpad import (
    format_to_openai_function_messages as lc_to_function_messages,
)
from langchain_classic.agents.mrkl.output_parser import MRKLOutputParser as LcMRKLParser
from langchain_classic.agents.output_parsers import ReActJsonSingleInputOutputParser as LcReJson
from langchain_classic.agents.output_parsers import SelfAskOutputParser as LcSelfAskParser
from langchain_classic.agents.output_parsers import XMLAgentOutputParser as LcXMLParser
from langchain_classic.agents.structured_chat.output_parser import (
    StructuredChatOutputParser as LcStructuredParser,
)
from langchain_core.agents import AgentAction as LcAgentAction
from langchain_core.callbacks import CallbackManagerForLLMRun as LcRunManager
from langchain_core.language_models import BaseChatModel as LcBaseChatModel
from langchain_core.language_models.llms import LLM as LcLLM
from langchain_core.load import dumpd as lc_dumpd
from langchain_core.outputs import ChatGeneration as LcChatGeneration
from langchain_core.outputs import ChatResult as LcChatResult

import actloop
from actloop import messages, prompts, tools
from actloop.classic import (
    AgentType,
    ChatOutputParser,
    ConvoOutputParser,
    MRKLOutputParser,
    ReActJsonSingleInputOutputParser,
    SelfAskOutputParser,
    StructuredChatOutputParser,
    XMLAgentOutputParser,
    initialize_agent,
)
from actloop.llms import LLM
from actloop.serialization import dumpd
from actloop.testing import ScriptedChatModel

# -- the two sides --------------------------------------------------------------------------------


def _dump(message: Any, dump: Callable[[Any], Any]) -> Any:
    """A message's serialized form without its id (langchain-core gives replies run ids)."""
    data = dump(message)
    data["kwargs"].pop("id", None)
    return data


class LcRecordingChat(LcBaseChatModel):
    """A langchain-core chat model that replies from a list and records each call."""

    responses: list[Any]
    calls: list[Any]

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        self.calls.append(([_dump(m, lc_dumpd) for m in messages], stop, kw))
        reply = self.responses[len(self.calls) - 1]
        return LcChatResult(generations=[LcChatGeneration(message=reply)])


def _our_calls(model: ScriptedChatModel) -> list[Any]:
    return [([_dump(m, dumpd) for m in c.messages], c.stop, c.kwargs) for c in model.calls]


class OurRecordingLLM(LLM):
    """An actloop text model that replies from a list and records each prompt and stop."""

    responses: list[str]
    calls: list[Any]

    def _call(self, prompt: str, stop: Any = None, run_manager: Any = None, **kw: Any) -> str:
        self.calls.append((prompt, stop))
        return self.responses[len(self.calls) - 1]


class LcRecordingLLM(LcLLM):
    """The langchain-core twin of `OurRecordingLLM`."""

    responses: list[str]
    calls: list[Any]

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _call(
        self, prompt: str, stop: Any = None, run_manager: LcRunManager | None = None, **kw: Any
    ) -> str:
        self.calls.append((prompt, stop))
        return self.responses[len(self.calls) - 1]


def _echo(text: str) -> str:
    return f"echo: {text}"


def _multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _tools(lib: str, names: tuple[str, ...] = ("echo", "times")) -> list[Any]:
    mod: Any = tools if lib == "ours" else lc_tools
    made = {
        "echo": mod.Tool(name="echo", func=_echo, description="Echo the text."),
        "times": mod.StructuredTool.from_function(_multiply, name="times"),
        "Intermediate Answer": mod.Tool(
            name="Intermediate Answer", func=_echo, description="Answers questions."
        ),
    }
    return [made[n] for n in names]


def _plain_steps(steps: list[Any]) -> list[Any]:
    return [(type(a).__name__, a.tool, a.tool_input, a.log, str(o)) for a, o in steps]


def _reply(lib: str, content: str = "", **kwargs: Any) -> Any:
    mod: Any = messages if lib == "ours" else lc_messages
    return mod.AIMessage(content=content, **kwargs)


def _run_both(
    build: Callable[[str, Any], Any], replies: Callable[[str], list[Any]], inputs: dict[str, Any]
) -> None:
    """Run the agent `build(lib, model)` makes on both sides; compare calls, steps, output.
    The model is invoked, not streamed: the fakes stream in different chunks."""
    ours_model = ScriptedChatModel(replies("ours"))
    ref_model = LcRecordingChat(responses=replies("ref"), calls=[])
    ours = actloop.AgentExecutor(
        agent=build("ours", ours_model),
        tools=_tools("ours"),
        return_intermediate_steps=True,
        stream_runnable=False,
    )
    ref = lc_agents.AgentExecutor(
        agent=build("ref", ref_model),
        tools=_tools("ref"),
        return_intermediate_steps=True,
        stream_runnable=False,
    )
    ours_out, ref_out = ours.invoke(inputs), ref.invoke(inputs)
    assert _our_calls(ours_model) == ref_model.calls
    assert ours_out["output"] == ref_out["output"]
    assert _plain_steps(ours_out["intermediate_steps"]) == _plain_steps(
        ref_out["intermediate_steps"]
    )


def _prompt_mod(lib: str) -> Any:
    return prompts if lib == "ours" else lc_prompts


def _create(lib: str, name: str) -> Any:
    return getattr(actloop if lib == "ours" else lc_agents, name)


# -- the create_* agents --------------------------------------------------------------------------

JSON_ACTION = 'Action:\n```\n{"action": "times", "action_input": {"a": 2, "b": 3}}\n```'
JSON_FINISH = '```\n{"action": "Final Answer", "action_input": "six"}\n```'
CHAT_SHAPE = [
    ("system", "Tools:\n{tools}\nNames: {tool_names}"),
    ("human", "{input}"),
    ("placeholder", "{agent_scratchpad}"),
]


def test_xml_agent_matches_langchain() -> None:
    from actloop.classic.xml import XML_AGENT_INSTRUCTIONS

    template = XML_AGENT_INSTRUCTIONS + "\n{agent_scratchpad}"

    def build(lib: str, model: Any) -> Any:
        prompt = _prompt_mod(lib).ChatPromptTemplate.from_template(template)
        return _create(lib, "create_xml_agent")(model, _tools(lib), prompt)

    def replies(lib: str) -> list[Any]:
        return [
            _reply(lib, "<tool>echo</tool><tool_input>a <tool> tag"),
            _reply(lib, "<final_answer>it said so</final_answer>"),
        ]

    _run_both(build, replies, {"question": "what does echo say?"})


def test_self_ask_agent_matches_langchain() -> None:
    template = "Question: {input}\nAre follow up questions needed here:{agent_scratchpad}"

    def build(lib: str, model: Any) -> Any:
        prompt = _prompt_mod(lib).PromptTemplate.from_template(template)
        create = _create(lib, "create_self_ask_with_search_agent")
        return create(model, _tools(lib, ("Intermediate Answer",)), prompt)

    def replies(lib: str) -> list[Any]:
        return [
            _reply(lib, "Yes.\nFollow up: Who wrote it?"),
            _reply(lib, "So the final answer is: Ann"),
        ]

    ours_model = ScriptedChatModel(replies("ours"))
    ref_model = LcRecordingChat(responses=replies("ref"), calls=[])
    ours = actloop.AgentExecutor(
        agent=build("ours", ours_model), tools=_tools("ours", ("Intermediate Answer",))
    )
    ref = lc_agents.AgentExecutor(
        agent=build("ref", ref_model), tools=_tools("ref", ("Intermediate Answer",))
    )
    assert ours.invoke({"input": "q?"}) == ref.invoke({"input": "q?"})
    assert _our_calls(ours_model) == ref_model.calls


def test_structured_chat_agent_matches_langchain() -> None:
    shape = [
        ("system", "Tools:\n{tools}\nNames: {tool_names}"),
        ("human", "{input}\n\n{agent_scratchpad}"),
    ]

    def build(lib: str, model: Any) -> Any:
        prompt = _prompt_mod(lib).ChatPromptTemplate.from_messages(shape)
        return _create(lib, "create_structured_chat_agent")(model, _tools(lib), prompt)

    def replies(lib: str) -> list[Any]:
        return [_reply(lib, JSON_ACTION), _reply(lib, JSON_FINISH)]

    _run_both(build, replies, {"input": "2 times 3?"})


def test_json_chat_agent_matches_langchain() -> None:
    def build(lib: str, model: Any) -> Any:
        prompt = _prompt_mod(lib).ChatPromptTemplate.from_messages(CHAT_SHAPE)
        return _create(lib, "create_json_chat_agent")(model, _tools(lib), prompt)

    def replies(lib: str) -> list[Any]:
        return [_reply(lib, JSON_ACTION), _reply(lib, JSON_FINISH)]

    _run_both(build, replies, {"input": "2 times 3?"})


def test_openai_functions_agent_matches_langchain() -> None:
    shape = [("system", "Be brief."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    call = {"function_call": {"name": "times", "arguments": '{"a": 2, "b": 3}'}}

    def build(lib: str, model: Any) -> Any:
        prompt = _prompt_mod(lib).ChatPromptTemplate.from_messages(shape)
        return _create(lib, "create_openai_functions_agent")(model, _tools(lib), prompt)

    def replies(lib: str) -> list[Any]:
        return [_reply(lib, "", additional_kwargs=call), _reply(lib, "It is 6.")]

    _run_both(build, replies, {"input": "2 times 3?"})


def test_openai_tools_agent_matches_langchain() -> None:
    shape = [("system", "Be brief."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    calls = [
        {"name": "times", "args": {"a": 2, "b": 3}, "id": "c1", "type": "tool_call"},
        {"name": "echo", "args": {"text": "hi"}, "id": "c2", "type": "tool_call"},
    ]

    def build(lib: str, model: Any) -> Any:
        prompt = _prompt_mod(lib).ChatPromptTemplate.from_messages(shape)
        return _create(lib, "create_openai_tools_agent")(model, _tools(lib), prompt)

    def replies(lib: str) -> list[Any]:
        return [_reply(lib, "", tool_calls=calls), _reply(lib, "6, and hi.")]

    _run_both(build, replies, {"input": "2 times 3, and echo hi"})


# -- the legacy agents through initialize_agent ---------------------------------------------------


def _initialize(lib: str, tool_list: list[Any], model: Any, agent_type: str) -> Any:
    create = initialize_agent if lib == "ours" else lc_agents.initialize_agent
    kind = AgentType(agent_type) if lib == "ours" else lc_agents.AgentType(agent_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create(tool_list, model, agent=kind, return_intermediate_steps=True)


def test_zero_shot_agent_matches_langchain() -> None:
    replies = [
        "I should echo.\nAction: echo\nAction Input: hello",
        "Thought: done.\nFinal Answer: it said hello",
    ]
    ours_llm = OurRecordingLLM(responses=replies, calls=[])
    ref_llm = LcRecordingLLM(responses=replies, calls=[])
    kind = "zero-shot-react-description"
    ours = _initialize("ours", _tools("ours", ("echo",)), ours_llm, kind)
    ref = _initialize("ref", _tools("ref", ("echo",)), ref_llm, kind)
    ours_out, ref_out = ours.invoke({"input": "say hello"}), ref.invoke({"input": "say hello"})
    assert ours_llm.calls == ref_llm.calls
    assert ours_out["output"] == ref_out["output"] == "it said hello"
    assert _plain_steps(ours_out["intermediate_steps"]) == _plain_steps(
        ref_out["intermediate_steps"]
    )
    assert ours.tags == ref.tags == [kind]


@pytest.mark.parametrize("early_stopping_method", ["force", "generate"])
def test_zero_shot_stopped_response_matches_langchain(early_stopping_method: str) -> None:
    replies = ["Action: echo\nAction Input: a", "Final Answer: from generate"]
    ours_llm = OurRecordingLLM(responses=replies, calls=[])
    ref_llm = LcRecordingLLM(responses=replies, calls=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ours = initialize_agent(
            _tools("ours", ("echo",)),
            ours_llm,
            max_iterations=1,
            early_stopping_method=early_stopping_method,
        )
        ref = lc_agents.initialize_agent(
            _tools("ref", ("echo",)),
            ref_llm,
            max_iterations=1,
            early_stopping_method=early_stopping_method,
        )
    assert ours.invoke({"input": "x"}) == ref.invoke({"input": "x"})
    assert ours_llm.calls == ref_llm.calls


def test_structured_chat_legacy_agent_matches_langchain() -> None:
    kind = "structured-chat-zero-shot-react-description"
    ours_model = ScriptedChatModel([JSON_ACTION, JSON_FINISH])
    ref_model = LcRecordingChat(
        responses=[_reply("ref", JSON_ACTION), _reply("ref", JSON_FINISH)], calls=[]
    )
    ours = _initialize("ours", _tools("ours"), ours_model, kind)
    ref = _initialize("ref", _tools("ref"), ref_model, kind)
    ours_out, ref_out = ours.invoke({"input": "2 times 3?"}), ref.invoke({"input": "2 times 3?"})
    assert _our_calls(ours_model) == ref_model.calls
    assert ours_out["output"] == ref_out["output"] == "six"
    assert _plain_steps(ours_out["intermediate_steps"]) == _plain_steps(
        ref_out["intermediate_steps"]
    )


def test_openai_functions_legacy_agent_matches_langchain() -> None:
    """langchain-classic 1.0.8's `OpenAIFunctionsAgent.plan` passes `callbacks` twice to a chat
    model (a TypeError), so the agent is compared by what it would send: messages and functions."""
    ours_model, ref_model = ScriptedChatModel([]), LcRecordingChat(responses=[], calls=[])
    ours = _initialize("ours", _tools("ours"), ours_model, "openai-functions").agent
    ref = _initialize("ref", _tools("ref"), ref_model, "openai-functions").agent
    assert ours.functions == ref.functions
    assert ours.input_keys == ref.input_keys == ["input"]
    ours_steps = [(actloop.AgentAction("times", {"a": 2, "b": 3}, "log"), "6")]
    ref_steps = [(LcAgentAction(tool="times", tool_input={"a": 2, "b": 3}, log="log"), "6")]
    ours_messages = ours._messages(ours_steps, {"input": "q"})
    ref_prompt = ref.prompt.format_prompt(
        input="q", agent_scratchpad=lc_to_function_messages(ref_steps)
    )
    assert [_dump(m, dumpd) for m in ours_messages] == [
        _dump(m, lc_dumpd) for m in ref_prompt.to_messages()
    ]
    assert len(ours_messages) == 3


CHAT_ACTION = 'Thought: echo\nAction:\n```\n{"action": "echo", "action_input": "hi"}\n```'
CONVO_JSON = '```json\n{"action": "echo", "action_input": "hi"}\n```'
CONVO_FINISH = '```json\n{"action": "Final Answer", "action_input": "done"}\n```'
LEGACY_CASES: list[tuple[str, bool, tuple[str, ...], list[str], dict[str, Any]]] = [
    # agent type, on a chat model?, tools, replies, inputs
    ("chat-zero-shot-react-description", True, ("echo",), [CHAT_ACTION, "Final Answer: done"], {}),
    (
        "conversational-react-description",
        False,
        ("echo",),
        [
            "Thought: Do I need to use a tool? Yes\nAction: echo\nAction Input: hi",
            "Thought: Do I need to use a tool? No\nAI: done",
        ],
        {"chat_history": "Human: hello\nAI: hi"},
    ),
    (
        "chat-conversational-react-description",
        True,
        ("echo",),
        [CONVO_JSON, CONVO_FINISH],
        {"chat_history": []},
    ),
    (
        "react-docstore",
        False,
        ("Search", "Lookup"),
        ["Thought: look\nAction: Search[Ann]", "Thought: ok\nAction: Finish[done]"],
        {},
    ),
    (
        "self-ask-with-search",
        False,
        ("Intermediate Answer",),
        ["Yes.\nFollow up: who?", "So the final answer is: done"],
        {},
    ),
]


def _legacy_tools(lib: str, names: tuple[str, ...]) -> list[Any]:
    mod: Any = tools if lib == "ours" else lc_tools
    return [mod.Tool(name=n, func=_echo, description=f"The {n} tool.") for n in names]


@pytest.mark.parametrize(
    ("kind", "chat", "names", "replies", "extra"), LEGACY_CASES, ids=[c[0] for c in LEGACY_CASES]
)
def test_legacy_agent_types_match_langchain(
    kind: str, chat: bool, names: tuple[str, ...], replies: list[str], extra: dict[str, Any]
) -> None:
    if chat:
        ours_model: Any = ScriptedChatModel(replies)
        ref_model: Any = LcRecordingChat(responses=[_reply("ref", r) for r in replies], calls=[])
    else:
        ours_model = OurRecordingLLM(responses=replies, calls=[])
        ref_model = LcRecordingLLM(responses=replies, calls=[])
    ours = _initialize("ours", _legacy_tools("ours", names), ours_model, kind)
    ref = _initialize("ref", _legacy_tools("ref", names), ref_model, kind)
    inputs = {"input": "q?", **extra}
    ours_out, ref_out = ours.invoke(inputs), ref.invoke(inputs)
    ours_calls = _our_calls(ours_model) if chat else ours_model.calls
    assert ours_calls == ref_model.calls
    assert ours_out["output"] == ref_out["output"] == "done"
    assert _plain_steps(ours_out["intermediate_steps"]) == _plain_steps(
        ref_out["intermediate_steps"]
    )


def test_openai_multi_functions_agent_matches_langchain() -> None:
    """Compared by what it sends (langchain-classic 1.0.8's `plan` raises, as for the
    single-function agent); its reply parser is tested by LangChain's own test file."""
    kind = "openai-multi-functions"
    ours = _initialize("ours", _tools("ours"), ScriptedChatModel([]), kind).agent
    ref = _initialize("ref", _tools("ref"), LcRecordingChat(responses=[], calls=[]), kind).agent
    assert ours.functions == ref.functions
    assert [_dump(m, dumpd) for m in ours._messages([], {"input": "q"})] == [
        _dump(m, lc_dumpd)
        for m in ref.prompt.format_prompt(input="q", agent_scratchpad=[]).to_messages()
    ]


# -- the parsers ----------------------------------------------------------------------------------

CORPUS = [
    "",
    "Thought: go\nAction: echo\nAction Input: hi",
    'Action: echo\nAction Input: "quoted"',
    'Action: sql\nAction Input: SELECT "a" FROM t"',
    "Final Answer: 42",
    "Final Answer: early\n\nAction: echo\nAction Input: late",
    "Action: echo\nAction Input: x\nFinal Answer: late",
    "Action: echo",
    "Just text.",
    "AI: a reply",
    "Action: search\nAction Input: q\nAI: both",
    '```json\n{"action": "echo", "action_input": "hi"}\n```',
    '```\n{"action": "echo", "action_input": {"text": "hi"}}\n```',
    '```{"action": "echo", "action_input": "no newline"}```',
    '```\n[{"action": "echo", "action_input": "a"}, {"action": "x"}]\n```',
    '```\n{"action": "Final Answer", "action_input": "done"}\n```',
    '```\n{"action": "echo"}\n```\nFinal Answer: both',
    "```\nnot json\n```",
    "```\nnot json\n```\nFinal Answer: fallback",
    "<tool>echo</tool><tool_input>hi</tool_input>",
    "<tool>echo</tool>",
    "<tool>a</tool><tool>b</tool>",
    "<tool>echo</tool><tool_input>1</tool_input><tool_input>2</tool_input>",
    "<tool>[[tool]]x</tool><tool_input>[[observation]]y</tool_input>",
    "<final_answer>done</final_answer>",
    "<final_answer>a</final_answer><final_answer>b</final_answer>",
    "Yes.\nFollow up: who?",
    "Followup: how?",
    "So the final answer is: Ann",
    "Intermediate answer: x\nSo the final answer is: Bob",
    "Follow up: a: b: c",
]

PARSERS: list[tuple[Callable[[], Any], Callable[[], Any]]] = [
    (MRKLOutputParser, LcMRKLParser),
    (ChatOutputParser, LcChatParser),
    (ReActJsonSingleInputOutputParser, LcReJson),
    (ConvoOutputParser, LcConvo),
    (XMLAgentOutputParser, LcXMLParser),
    (SelfAskOutputParser, LcSelfAskParser),
    (StructuredChatOutputParser, LcStructuredParser),
]


def _outcome(parse: Callable[[str], Any], text: str) -> tuple[Any, ...]:
    try:
        result = parse(text)
    except Exception as exc:
        error = getattr(exc, "observation", None), getattr(exc, "llm_output", None)
        return ("error", type(exc).__name__.replace("Lc", ""), str(exc), *error)
    if hasattr(result, "return_values"):
        return ("finish", result.return_values, result.log)
    return ("action", result.tool, result.tool_input, result.log)


@pytest.mark.parametrize(("ours", "ref"), PARSERS, ids=[p[0].__name__ for p in PARSERS])
def test_legacy_parsers_match_langchain(ours: Callable[[], Any], ref: Callable[[], Any]) -> None:
    ours_parser, ref_parser = ours(), ref()
    for text in CORPUS:
        assert _outcome(ours_parser.parse, text) == _outcome(ref_parser.parse, text), text
