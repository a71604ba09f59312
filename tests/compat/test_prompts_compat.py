"""The same templates in langchain-core and actloop: same variables, messages, strings, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import langchain_core.messages as lc_messages
import langchain_core.prompts as lc_prompts
import pytest

from actloop import messages, prompts

STRING_CASES: list[tuple[str, dict[str, Any]]] = [
    ("{b} and {a} {{x}} {a}", {"a": 1, "b": 2}),
    ("{a:>5}|{b!r}|{c:.2f}", {"a": "x", "b": "y", "c": 3.14159}),
    ("no variables at all", {}),
    ("Question: {input}\nThought:{agent_scratchpad}", {"input": "q", "agent_scratchpad": ""}),
    ("{x} {{ {y} }}", {"x": [1, 2], "y": None}),
]


@pytest.mark.parametrize(("template", "values"), STRING_CASES)
def test_prompt_template_renders_identically(template: str, values: dict[str, Any]) -> None:
    ours = prompts.PromptTemplate.from_template(template)
    ref = lc_prompts.PromptTemplate.from_template(template)
    assert ours.input_variables == ref.input_variables
    assert ours.format(**values) == ref.format(**values)
    assert ours.invoke(values).to_string() == ref.invoke(values).to_string()
    assert _pairs(ours.invoke(values).to_messages()) == _pairs(ref.invoke(values).to_messages())


def test_partial_and_constructor_variables_match() -> None:
    def build(mod: Any) -> Any:
        return mod.PromptTemplate(
            template="{a} {b} {c}", input_variables=["zzz"], partial_variables={"c": "C"}
        ).partial(b=lambda: "B")

    ours, ref = build(prompts), build(lc_prompts)
    assert ours.input_variables == ref.input_variables == ["a"]
    assert ours.format(a=1) == ref.format(a=1) == "1 B C"
    added_ours = prompts.PromptTemplate.from_template("{z}") + "{a} tail"
    added_ref = lc_prompts.PromptTemplate.from_template("{z}") + "{a} tail"
    assert added_ours.input_variables == added_ref.input_variables
    assert added_ours.template == added_ref.template


def _chat_spec(mod: Any, msgs: Any) -> list[Any]:
    return [
        ("system", "You are {name}. Tools:\n{tools}"),
        ("placeholder", "{chat_history}"),
        ("human", "{input}"),
        msgs.AIMessage("fixed {not_a_var}"),
        ("assistant", "{{literal}} {x}"),
        ("user", "u"),
        "{y}",
        {"role": "system", "content": "s{z}"},
        (msgs.HumanMessage, "{w}"),
        mod.MessagesPlaceholder("agent_scratchpad"),
    ]


def _chat_values(msgs: Any) -> dict[str, Any]:
    return {
        "name": "bot",
        "tools": "a - b",
        "input": "hi",
        "x": 1,
        "y": 2,
        "z": 3,
        "w": 4,
        "agent_scratchpad": [
            msgs.AIMessage("", tool_calls=[{"name": "t", "args": {"q": 1}, "id": "c1"}]),
            msgs.ToolMessage("result", tool_call_id="c1"),
            ("ai", "x"),
            "plain",
            {"role": "user", "content": "d"},
            {"role": "developer", "content": "dev"},
            {"role": "tool", "content": "t", "tool_call_id": "9"},
        ],
    }


def test_chat_prompt_renders_identically() -> None:
    ours = prompts.ChatPromptTemplate.from_messages(_chat_spec(prompts, messages))
    ref = lc_prompts.ChatPromptTemplate.from_messages(_chat_spec(lc_prompts, lc_messages))
    assert ours.input_variables == ref.input_variables
    assert ours.optional_variables == ref.optional_variables
    assert ours.partial_variables == ref.partial_variables
    got, want = ours.invoke(_chat_values(messages)), ref.invoke(_chat_values(lc_messages))
    assert _pairs(got.to_messages()) == _pairs(want.to_messages())
    assert [m.additional_kwargs for m in got.to_messages()] == [
        m.additional_kwargs for m in want.to_messages()
    ]
    assert got.to_string() == want.to_string()
    history = [("human", "earlier"), ("ai", "reply")]
    with_history = {**_chat_values(messages), "chat_history": history}
    ref_history = {**_chat_values(lc_messages), "chat_history": history}
    assert ours.format(**with_history) == ref.format(**ref_history)


def test_chat_partial_add_and_from_template_match() -> None:
    def build(mod: Any) -> Any:
        base = mod.ChatPromptTemplate.from_messages([("system", "{a} {b}")]).partial(a="A")
        return base + mod.ChatPromptTemplate.from_template("{q}") + [("ai", "{r}")] + "{s}"

    ours, ref = build(prompts), build(lc_prompts)
    assert ours.input_variables == ref.input_variables
    values = {"b": "B", "q": "Q", "r": "R", "s": "S"}
    assert _pairs(ours.format_messages(**values)) == _pairs(ref.format_messages(**values))


def test_multipart_content_matches() -> None:
    parts = [{"type": "text", "text": "{a}"}, "{b}", {"type": "image_url", "image_url": "u/{c}"}]
    ours = prompts.ChatPromptTemplate.from_messages([("human", parts)])
    ref = lc_prompts.ChatPromptTemplate.from_messages([("human", parts)])
    values = {"a": "x", "b": "", "c": "1.png"}
    assert ours.input_variables == ref.input_variables
    assert _pairs(ours.format_messages(**values)) == _pairs(ref.format_messages(**values))


def test_single_non_dict_input_matches() -> None:
    for mod in (prompts, lc_prompts):
        assert mod.PromptTemplate.from_template("hi {x}").invoke(5).to_string() == "hi 5"
        assert (
            mod.ChatPromptTemplate.from_template("hi {x}").invoke("b").to_string() == "Human: hi b"
        )


def test_buffer_string_matches() -> None:
    def build(msgs: Any) -> list[Any]:
        return [
            msgs.HumanMessage("h"),
            msgs.AIMessage(["a", {"type": "text", "text": "b"}, {"type": "image_url"}]),
            msgs.SystemMessage("s"),
            msgs.FunctionMessage("f", name="fn"),
            msgs.ToolMessage("t", tool_call_id="1"),
            msgs.AIMessage(
                "", additional_kwargs={"function_call": {"name": "x", "arguments": "{}"}}
            ),
            msgs.AIMessage("r", tool_calls=[{"name": "t", "args": {"x": 1}, "id": "1"}]),
        ]

    ours, ref = build(messages), build(lc_messages)
    assert prompts.get_buffer_string(ours) == lc_messages.get_buffer_string(ref)
    assert prompts.get_buffer_string(ours, "U", "B") == lc_messages.get_buffer_string(ref, "U", "B")
    assert prompts.get_buffer_string(
        ours, system_prefix="S", tool_prefix="T", message_separator="|"
    ) == lc_messages.get_buffer_string(
        ref, system_prefix="S", tool_prefix="T", message_separator="|"
    )


ERROR_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("missing-string", lambda m: m.PromptTemplate.from_template("{b} {a} {c}").invoke({"b": 1})),
    ("missing-chat", lambda m: _agent(m).invoke({"s": 1})),
    ("missing-placeholder", lambda m: _agent(m).invoke({"s": 1, "q": 2})),
    ("non-dict", lambda m: m.PromptTemplate.from_template("{a}{b}").invoke("x")),
    ("placeholder-not-list", lambda m: _agent(m).invoke({"s": 1, "q": 2, "pad": "str"})),
    ("format-missing", lambda m: m.PromptTemplate.from_template("{a}").format()),
    ("attr-field", lambda m: m.PromptTemplate.from_template("{a.b}")),
    ("digit-field", lambda m: m.PromptTemplate.from_template("{0}")),
    ("nested-spec", lambda m: m.PromptTemplate.from_template("{a:{b}}")),
    ("unclosed", lambda m: m.PromptTemplate.from_template("{a")),
    ("bad-role", lambda m: m.ChatPromptTemplate.from_messages([("foo", "x")])),
    ("bad-placeholder", lambda m: m.ChatPromptTemplate.from_messages([("placeholder", "x")])),
    ("bad-tuple", lambda m: m.ChatPromptTemplate.from_messages([("a", "b", "c")])),
    ("bad-dict", lambda m: m.ChatPromptTemplate.from_messages([{"role": "human"}])),
    ("bad-list", lambda m: m.ChatPromptTemplate.from_messages([["human", "x"]])),
    ("coerce-role", lambda m: _agent(m).invoke({"s": 1, "q": 2, "pad": [("bogus", "x")]})),
    ("coerce-type", lambda m: _agent(m).invoke({"s": 1, "q": 2, "pad": [5]})),
    ("coerce-seq", lambda m: _agent(m).invoke({"s": 1, "q": 2, "pad": [("a", "b", "c")]})),
    ("coerce-dict", lambda m: _agent(m).invoke({"s": 1, "q": 2, "pad": [{"content": "c"}]})),
    ("partial-twice", lambda m: _twice(m)),
]


def _agent(mod: Any) -> Any:
    return mod.ChatPromptTemplate.from_messages(
        [("system", "{s}"), ("human", "{q}"), mod.MessagesPlaceholder("pad")]
    )


def _twice(mod: Any) -> Any:
    one = mod.PromptTemplate.from_template("{a}", partial_variables={"a": 1})
    return one + one


# langchain-core raises these from pydantic validators, so they arrive wrapped in a
# ValidationError (a ValueError); actloop raises the plain ValueError with the same text.
VALIDATOR_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("stop", lambda m: m.PromptTemplate.from_template("{stop}")),
    (
        "validate",
        lambda m: m.PromptTemplate(
            template="{a}{b}", input_variables=["a"], validate_template=True
        ),
    ),
]


@pytest.mark.parametrize(("name", "call"), VALIDATOR_CASES, ids=[c[0] for c in VALIDATOR_CASES])
def test_validator_errors_match_text(name: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises(ValueError) as ours:
        call(prompts)
    with pytest.raises(ValueError) as ref:
        call(lc_prompts)
    assert type(ours.value) is ValueError
    assert f"Value error, {ours.value}" in str(ref.value)


@pytest.mark.parametrize(("name", "call"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match(name: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises(Exception) as ours:
        call(prompts)
    with pytest.raises(Exception) as ref:
        call(lc_prompts)
    assert type(ours.value) is type(ref.value)
    assert ours.value.args == ref.value.args


def _pairs(msgs: list[Any]) -> list[tuple[str, Any]]:
    """Each message as (type, content) so both libraries' messages compare directly."""
    out: list[tuple[str, Any]] = []
    for m in msgs:
        out.append((m.type, m.content))
        if getattr(m, "tool_calls", None):
            out.append(("tool_calls", m.tool_calls))
        if getattr(m, "tool_call_id", None):
            out.append(("tool_call_id", m.tool_call_id))
    return out
