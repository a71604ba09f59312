"""Values handed down as a dict where `f(**values)` would copy them (prompts, the runnable agent's
plan, a bound chat model's transform): the same results and the same errors as `**` gives."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from actloop import AgentExecutor, AgentFinish, RunnableAgent
from actloop.executor._agents import plan_with
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, SystemMessage
from actloop.prompts import (
    ChatPromptTemplate,
    ChatPromptValue,
    HumanMessagePromptTemplate,
    MessagesPlaceholder,
    PromptTemplate,
    StringPromptValue,
)
from actloop.runnables import AddableDict, RunnableLambda, RunnablePassthrough
from actloop.runnables._base import unpackable
from actloop.testing import ScriptedChatModel

# -- the rule -------------------------------------------------------------------------------------


def test_unpackable_is_what_keyword_unpacking_accepts() -> None:
    assert unpackable({"a": 1, "b": 2}, ("self",))
    assert unpackable({}, ("self",))
    assert not unpackable({"a": 1, 2: 3}, ("self",))
    assert not unpackable({"self": 1}, ("self",))
    assert not unpackable({"callbacks": 1}, ("self", "callbacks"))


# -- prompts --------------------------------------------------------------------------------------


def _chat() -> ChatPromptTemplate:
    return ChatPromptTemplate.from_messages(
        [("system", "sys {a}"), ("human", "{input}"), MessagesPlaceholder("pad")]
    )


def test_chat_prompt_formats_every_kind_of_part() -> None:
    nested = ChatPromptTemplate.from_messages([("human", "nested {a}")])
    prompt = ChatPromptTemplate(
        [
            ("system", "sys {a}"),
            nested,
            HumanMessagePromptTemplate.from_template(
                [{"type": "text", "text": "{input}"}, {"type": "image_url", "image_url": "u/{a}"}]
            ),
            MessagesPlaceholder("pad", optional=True),
            AIMessage("fixed"),
        ]
    )
    value = prompt.invoke(AddableDict(a=1, input="q", pad=[("human", "p")]))
    assert value == ChatPromptValue(
        [
            SystemMessage("sys 1"),
            HumanMessage("nested 1"),
            HumanMessage(
                [{"type": "text", "text": "q"}, {"type": "image_url", "image_url": {"url": "u/1"}}]
            ),
            HumanMessage("p"),
            AIMessage("fixed"),
        ]
    )


def test_prompt_input_errors_as_keyword_unpacking_does() -> None:
    with pytest.raises(TypeError, match="keywords must be strings"):
        _chat().invoke({"a": 1, "input": "q", "pad": [], 3: 4})
    with pytest.raises(TypeError, match="multiple values for argument 'self'"):
        ChatPromptTemplate.from_messages([("human", "{self}")]).invoke({"self": 1})
    with pytest.raises(TypeError, match="multiple values for argument 'self'"):
        PromptTemplate.from_template("{self}").invoke({"self": 1})
    with pytest.raises(TypeError, match="keywords must be strings"):
        PromptTemplate.from_template("{x}").invoke({"x": 1, 2: 3})


def test_partials_named_like_no_keyword_error_as_before() -> None:
    with_self = ChatPromptTemplate([("human", "{x}")], partial_variables={"self": "S"})
    with pytest.raises(TypeError, match="multiple values for argument 'self'"):
        with_self.invoke({"x": 1})
    with_int = ChatPromptTemplate([("human", "{x}")], partial_variables={5: "S"})
    with pytest.raises(TypeError, match="keywords must be strings"):
        with_int.invoke({"x": 1})
    plain = ChatPromptTemplate([("human", "{x} {y}")], partial_variables={"y": lambda: "Y"})
    assert plain.invoke({"x": 1}) == ChatPromptValue([HumanMessage("1 Y")])


class _Overriding(dict[str, Any]):
    """A dict whose item reads say something else: `**` copies the items, never calling it."""

    def __getitem__(self, key: str) -> Any:
        return "overridden"


def test_a_dict_subclass_input_is_read_as_its_items() -> None:
    values = {"a": 1, "input": "q", "pad": []}
    expected = ChatPromptValue([SystemMessage("sys 1"), HumanMessage("q")])
    assert _chat().invoke(_Overriding(values)) == expected
    missing = defaultdict(lambda: "default", {"x": 1})
    assert PromptTemplate.from_template("{x}").invoke(missing) == StringPromptValue("1")


class _Mutating(HumanMessagePromptTemplate):
    """Overrides `format` and writes into the kwargs it gets."""

    def format(self, **kwargs: Any) -> BaseMessage:
        kwargs["extra"] = 1
        return AIMessage(",".join(sorted(kwargs)))


class _Upper(PromptTemplate):
    """Overrides `format`."""

    def format(self, **kwargs: Any) -> str:
        return super().format(**kwargs).upper()


def test_overridden_formatting_gets_its_own_copy() -> None:
    values = {"x": "a"}
    prompt = ChatPromptTemplate(
        [
            _Mutating.from_template("{x}"),
            ("human", "{x}"),
            HumanMessagePromptTemplate(_Upper(template="{x}")),
        ]
    )
    assert prompt.invoke(values) == ChatPromptValue(
        [AIMessage("extra,x"), HumanMessage("a"), HumanMessage("A")]
    )
    assert values == {"x": "a"}
    assert _Upper(template="{x}").invoke({"x": "b"}) == StringPromptValue("B")


# -- the runnable agent's plan --------------------------------------------------------------------


def _echo_agent() -> RunnableAgent:
    return RunnableAgent(RunnableLambda(lambda d: AgentFinish({"output": list(d.items())}, "")))


def test_plan_with_is_plan_with_keywords() -> None:
    inputs = {"input": "q"}
    finish = plan_with(_echo_agent(), [], None, inputs)
    assert finish == _echo_agent().plan([], None, **inputs)
    assert finish.return_values == {"output": [("input", "q"), ("intermediate_steps", [])]}
    assert inputs == {"input": "q"}


def test_plan_with_errors_as_keyword_unpacking_does() -> None:
    with pytest.raises(TypeError, match="multiple values for argument 'intermediate_steps'"):
        plan_with(_echo_agent(), [], None, {"input": "q", "intermediate_steps": []})
    with pytest.raises(TypeError, match="keywords must be strings"):
        plan_with(_echo_agent(), [], None, {"input": "q", 1: 2})


class _OwnPlan(RunnableAgent):
    """A runnable agent whose `plan` is its own: the executor calls it with keywords."""

    def plan(self, intermediate_steps: Any, callbacks: Any = None, **kwargs: Any) -> Any:
        return AgentFinish({"output": f"own plan: {sorted(kwargs)}"}, "")


def test_an_agent_overriding_plan_is_called_by_the_executor() -> None:
    executor = AgentExecutor(agent=_OwnPlan(RunnableLambda(lambda d: None)), tools=[])
    assert executor.invoke({"input": "q"})["output"] == "own plan: ['input']"


# -- a bound chat model in a chain ----------------------------------------------------------------


def test_bound_stop_reaches_the_model_through_transform() -> None:
    model = ScriptedChatModel(["hello world"])
    chain = RunnablePassthrough() | model.bind(stop=["wor"], tools=[{"t": 1}])
    assert "".join(str(c.content) for c in chain.stream("q")) == "hello "
    assert [(c.stop, c.kwargs) for c in model.calls] == [(["wor"], {"tools": [{"t": 1}]})]


def test_a_bound_input_keyword_errors_as_before() -> None:
    chain = RunnablePassthrough() | ScriptedChatModel(["x"]).bind(input="y")
    with pytest.raises(TypeError, match="multiple values for argument 'input'"):
        list(chain.stream("q"))


class _LoudModel(ScriptedChatModel):
    """Overrides `stream`: `transform` goes through it."""

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        for chunk in super().stream(input, config, **kwargs):
            yield AIMessageChunk(str(chunk.content).upper())


def test_transform_goes_through_an_overridden_stream() -> None:
    chain = RunnablePassthrough() | _LoudModel(["hello world"])
    assert "".join(str(c.content) for c in chain.stream("q")) == "HELLO WORLD"


# -- AddableDict and RunnableAssign ---------------------------------------------------------------


def test_addable_dicts_add_in_order() -> None:
    left = AddableDict(a=1, b="x")
    total = left + {"b": "y", "c": 3}
    assert list(total.items()) == [("a", 1), ("b", "xy"), ("c", 3)]
    assert type(total) is AddableDict
    assert left == {"a": 1, "b": "x"}


def test_assign_streams_the_passthrough_keys_then_the_computed_ones() -> None:
    assign = RunnablePassthrough.assign(n=lambda d: len(d["s"]))
    chunks = list(assign.stream({"s": "abc", "t": 1}))
    assert [list(c.items()) for c in chunks] == [[("s", "abc"), ("t", 1)], [("n", 3)]]
    assert all(type(c) is AddableDict for c in chunks)
