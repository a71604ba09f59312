"""Prompts: f-string templates, chat templates, placeholders, prompt values and buffer strings."""

from __future__ import annotations

import subprocess
import sys

import pytest

from actloop.messages import AIMessage, FunctionMessage, HumanMessage, SystemMessage, ToolMessage
from actloop.prompts import (
    AIMessagePromptTemplate,
    ChatPromptTemplate,
    ChatPromptValue,
    HumanMessagePromptTemplate,
    MessagesPlaceholder,
    PromptTemplate,
    StringPromptTemplate,
    StringPromptValue,
    SystemMessagePromptTemplate,
    get_buffer_string,
)

DOCS = "\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langchain/errors/"

# -- PromptTemplate --------------------------------------------------------------------------


def test_from_template_sorts_variables_and_formats() -> None:
    p = PromptTemplate.from_template("{b} and {a} {{x}} {a}")
    assert p.input_variables == ["a", "b"]
    assert p.format(a=1, b=2) == "2 and 1 {x} 1"
    assert p.invoke({"a": 1, "b": 2}) == StringPromptValue("2 and 1 {x} 1")


def test_format_spec_and_conversion_follow_str_format() -> None:
    p = PromptTemplate.from_template("{a:>5}|{b!r}|{c:.2f}")
    assert p.format(a="x", b="y", c=3.14159) == "    x|'y'|3.14"


def test_constructor_reads_variables_from_the_template() -> None:
    assert PromptTemplate(template="{a}", input_variables=["a", "b"]).input_variables == ["a"]
    p = PromptTemplate(template="{a}{b}", input_variables=[], partial_variables={"b": lambda: "B"})
    assert p.input_variables == ["a"]
    assert p.format(a=1) == "1B"


def test_partial_binds_values_and_callables() -> None:
    p = PromptTemplate.from_template("{a} {b} {c}")
    q = p.partial(b="B")
    assert q.input_variables == ["a", "c"]
    assert q.partial_variables == {"b": "B"}
    assert q.format(a=1, c=3) == "1 B 3"
    assert q.partial(c=lambda: "C").invoke("x") == StringPromptValue("x B C")
    assert p.input_variables == ["a", "b", "c"]  # the original is unchanged
    assert PromptTemplate.from_template("{a}").partial(a="x").partial(a="y").format() == "y"


def test_extra_variables_are_ignored() -> None:
    assert PromptTemplate.from_template("{a}").invoke({"a": 1, "b": 2}) == StringPromptValue("1")


def test_missing_variable_errors() -> None:
    p = PromptTemplate.from_template("{b} and {a}")
    with pytest.raises(KeyError) as info:
        p.format(b=1)
    assert info.value.args == ("a",)
    with pytest.raises(KeyError) as info:
        p.invoke({"b": 1})
    assert info.value.args == (
        "Input to PromptTemplate is missing variables {'a'}.  Expected: ['a', 'b'] Received: ['b']"
        "\nNote: if you intended {a} to be part of the string and not a variable, please escape it"
        " with double curly braces like: '{{a}}'." + DOCS + "INVALID_PROMPT_INPUT ",
    )


def test_non_dict_input() -> None:
    assert PromptTemplate.from_template("hi {x}").invoke(5) == StringPromptValue("hi 5")
    assert PromptTemplate.from_template("{a}").invoke(None) == StringPromptValue("None")
    with pytest.raises(TypeError) as info:
        PromptTemplate.from_template("{a}{b}").invoke("yo")
    assert str(info.value) == (
        "Expected mapping type as input to PromptTemplate. Received <class 'str'>."
        + DOCS
        + "INVALID_PROMPT_INPUT "
    )


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            "{a.b}",
            "Invalid variable name 'a.b' in f-string template. Variable names cannot contain "
            "attribute access (.) or indexing ([]).",
        ),
        (
            "{0}",
            "Invalid variable name '0' in f-string template. Variable names cannot be all digits "
            "as they are interpreted as positional arguments.",
        ),
        (
            "{a:{b}}",
            "Invalid format specifier in f-string template. Nested replacement fields are not "
            "allowed.",
        ),
        ("{a", "expected '}' before end of string"),
        ("a}", "Single '}' encountered in format string"),
    ],
)
def test_invalid_templates_raise_at_construction(template: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        PromptTemplate.from_template(template)
    assert str(info.value) == message


def test_reserved_and_unsupported() -> None:
    with pytest.raises(ValueError, match="Cannot have an input variable named 'stop'"):
        PromptTemplate.from_template("{stop}")
    with pytest.raises(ValueError, match="template_format 'jinja2' is not supported"):
        PromptTemplate.from_template("{{ a }}", template_format="jinja2")


def test_validate_template() -> None:
    p = PromptTemplate(template="{a}", input_variables=["a"], validate_template=True)
    assert p.input_variables == ["a"]
    with pytest.raises(ValueError) as info:
        PromptTemplate(template="{a}{b}", input_variables=["a"], validate_template=True)
    assert str(info.value) == (
        "Invalid prompt schema; check for mismatched or missing input parameters from ['a']."
    )


def test_add_prompt_templates() -> None:
    p = PromptTemplate.from_template("{a}") + "{b} x"
    assert (p.template, p.input_variables) == ("{a}{b} x", ["a", "b"])
    one = PromptTemplate.from_template("{a}", partial_variables={"a": 1})
    with pytest.raises(ValueError, match=r"^Cannot have same variable partialed twice\.$"):
        one + one


def test_equality_and_repr() -> None:
    assert PromptTemplate.from_template("{a}") == PromptTemplate(template="{a}")
    assert PromptTemplate.from_template("{a}") != PromptTemplate.from_template("{b}")
    assert repr(PromptTemplate.from_template("{a}")) == (
        "PromptTemplate(input_variables=['a'], input_types={}, partial_variables={}, "
        "template='{a}')"
    )


def test_custom_string_prompt_template() -> None:
    class Upper(StringPromptTemplate):
        template: str

        def format(self, **kwargs: object) -> str:
            return self.template.format(**self._merge_partial_and_user_variables(**kwargs)).upper()

    p = Upper(template="say {x}", input_variables=["x"])
    assert p.invoke({"x": "hi"}) == StringPromptValue("SAY HI")
    assert p.partial(x="yo").invoke({}) == StringPromptValue("SAY YO")
    assert repr(p) == "Upper(input_variables=['x'], input_types={}, partial_variables={})"


async def test_ainvoke_string_prompt() -> None:
    p = PromptTemplate.from_template("{a}!")
    assert await p.ainvoke({"a": "x"}) == StringPromptValue("x!")
    assert await p.aformat(a="y") == "y!"


# -- ChatPromptTemplate ---------------------------------------------------------------------

AGENT = [
    ("system", "sys {s}"),
    ("placeholder", "{hist}"),
    ("human", "{q}"),
    MessagesPlaceholder("agent_scratchpad"),
]


def test_chat_variables() -> None:
    c = ChatPromptTemplate.from_messages(AGENT)
    assert c.input_variables == ["agent_scratchpad", "q", "s"]
    assert c.optional_variables == ["hist"]
    assert c.partial_variables == {"hist": []}


def test_chat_invoke_coerces_placeholder_values() -> None:
    c = ChatPromptTemplate.from_messages(AGENT)
    value = c.invoke(
        {
            "s": 1,
            "q": "Q",
            "agent_scratchpad": [("ai", "x"), "hello", {"role": "user", "content": "d"}],
        }
    )
    assert value == ChatPromptValue(
        [
            SystemMessage("sys 1"),
            HumanMessage("Q"),
            AIMessage("x"),
            HumanMessage("hello"),
            HumanMessage("d"),
        ]
    )
    assert value.to_string() == "System: sys 1\nHuman: Q\nAI: x\nHuman: hello\nHuman: d"
    assert [type(m) for m in value.to_messages()] == [
        SystemMessage,
        HumanMessage,
        AIMessage,
        HumanMessage,
        HumanMessage,
    ]


def test_chat_missing_variables_message() -> None:
    c = ChatPromptTemplate.from_messages(AGENT)
    with pytest.raises(KeyError) as info:
        c.invoke({"s": 1, "q": 2})
    assert info.value.args == (
        "Input to ChatPromptTemplate is missing variables {'agent_scratchpad'}.  Expected: "
        "['agent_scratchpad', 'q', 's'] Received: ['s', 'q']\nNote: if you intended "
        "{agent_scratchpad} to be part of the string and not a variable, please escape it with "
        "double curly braces like: '{{agent_scratchpad}}'." + DOCS + "INVALID_PROMPT_INPUT ",
    )


def test_placeholder_value_must_be_a_list() -> None:
    c = ChatPromptTemplate.from_messages(AGENT)
    with pytest.raises(ValueError) as info:
        c.invoke({"s": 1, "q": 2, "agent_scratchpad": "str"})
    assert str(info.value) == (
        "variable agent_scratchpad should be a list of base messages, got str of type <class 'str'>"
    )


def test_roles_messages_and_fixed_messages() -> None:
    fixed = SystemMessage("fixed {x}")
    c = ChatPromptTemplate.from_messages(
        [
            ("system", "S {a}"),
            ("human", "H {b}"),
            fixed,
            ("ai", "A"),
            ("assistant", "{c}"),
            ("user", "u"),
            "{d}",
            {"role": "system", "content": "s{e}"},
            (HumanMessage, "{f}"),
            (SystemMessagePromptTemplate, "{g}"),
        ]
    )
    assert c.input_variables == ["a", "b", "c", "d", "e", "f", "g"]
    msgs = c.format_messages(a=1, b=2, c=3, d=4, e=5, f=6, g=7)
    assert msgs == [
        SystemMessage("S 1"),
        HumanMessage("H 2"),
        fixed,
        AIMessage("A"),
        AIMessage("3"),
        HumanMessage("u"),
        HumanMessage("4"),
        SystemMessage("s5"),
        HumanMessage("6"),
        SystemMessage("7"),
    ]
    assert msgs[2] is fixed


def test_format_returns_the_buffer_string() -> None:
    c = ChatPromptTemplate.from_messages([("system", "be {x}"), ("human", "{q}")])
    assert c.format(x="brief", q="hi") == "System: be brief\nHuman: hi"


def test_chat_from_template_and_single_input() -> None:
    c = ChatPromptTemplate.from_template("hello {name}")
    assert c.input_variables == ["name"]
    assert c.invoke("bob") == ChatPromptValue([HumanMessage("hello bob")])


def test_chat_partial() -> None:
    c = ChatPromptTemplate.from_messages([("system", "{a}"), ("human", "{b} {c}")])
    p = c.partial(a="A", c=lambda: "C")
    assert p.input_variables == ["b"]
    assert p.invoke({"b": "B"}).to_messages() == [SystemMessage("A"), HumanMessage("B C")]
    assert c.input_variables == ["a", "b", "c"]


def test_optional_placeholder_forms() -> None:
    c = ChatPromptTemplate.from_messages([("placeholder", "{x}")])
    assert (c.input_variables, c.optional_variables) == ([], ["x"])
    assert c.invoke({}) == ChatPromptValue([])
    required = ChatPromptTemplate.from_messages([("placeholder", ["{x}", False])])
    assert required.input_variables == ["x"]
    last = ChatPromptTemplate.from_messages([MessagesPlaceholder("x", n_messages=1)])
    assert last.invoke({"x": ["a", "b"]}) == ChatPromptValue([HumanMessage("b")])


@pytest.mark.parametrize(
    ("message", "error", "text"),
    [
        (
            ("foo", "x"),
            ValueError,
            "Unexpected message type: foo. Use one of 'human', 'user', 'ai', 'assistant', or "
            "'system'.",
        ),
        (
            ("placeholder", "x"),
            ValueError,
            "Invalid placeholder template: x. Expected a variable name surrounded by curly braces.",
        ),
        (("a", "b", "c"), ValueError, "Expected 2-tuple of (role, template), got ('a', 'b', 'c')"),
        (
            {"role": "human"},
            ValueError,
            "Expected dict to have exact keys 'role' and 'content'. Got: {'role': 'human'}",
        ),
        (["human", "x"], NotImplementedError, "Unsupported message type: <class 'list'>"),
    ],
)
def test_bad_message_specs(message: object, error: type[Exception], text: str) -> None:
    with pytest.raises(error) as info:
        ChatPromptTemplate.from_messages([message])
    assert str(info.value) == text


def test_placeholder_coercion_of_dicts_and_errors() -> None:
    p = MessagesPlaceholder("x")
    call = {"id": "c1", "function": {"name": "f", "arguments": '{"a": 1}'}}
    msgs = p.format_messages(
        x=[
            {"role": "tool", "content": "c", "tool_call_id": "7"},
            {"type": "human", "content": None, "name": "n"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "developer", "content": "d"},
        ]
    )
    assert msgs == [
        ToolMessage("c", tool_call_id="7"),
        HumanMessage("", name="n"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}]),
        SystemMessage("d", additional_kwargs={"__openai_role__": "developer"}),
    ]
    with pytest.raises(ValueError, match=r"^Unexpected message type: 'bogus'\."):
        p.format_messages(x=[("bogus", "h")])
    with pytest.raises(NotImplementedError, match=r"^Unsupported message type: <class 'int'>\n"):
        p.format_messages(x=[5])
    with pytest.raises(KeyError):
        p.format_messages()


def test_add_chat_prompts() -> None:
    base = ChatPromptTemplate.from_messages([("system", "a {x}")]).partial(x="X")
    other = ChatPromptTemplate.from_messages([("human", "{b}")]).partial(b="B")
    both = base + other
    assert (both.input_variables, both.partial_variables) == ([], {"x": "X", "b": "B"})
    assert both.format_messages() == [SystemMessage("a X"), HumanMessage("B")]
    plus_str = ChatPromptTemplate.from_messages([("system", "s")]) + "{q}"
    assert plus_str.format_messages(q=1) == [SystemMessage("s"), HumanMessage("1")]
    plus_list = ChatPromptTemplate.from_messages([("system", "s")]).__add__([("ai", "{r}")])
    assert plus_list.format_messages(r=2) == [SystemMessage("s"), AIMessage("2")]


def test_nested_chat_prompt_and_indexing() -> None:
    inner = ChatPromptTemplate.from_messages([("human", "{b}")])
    outer = ChatPromptTemplate.from_messages([("system", "{x}"), inner])
    assert outer.input_variables == ["b", "x"]
    assert outer.format_messages(x=1, b=2) == [SystemMessage("1"), HumanMessage("2")]
    assert len(outer) == 2
    assert outer[1] is inner
    assert outer[:1].input_variables == ["x"]


def test_message_prompt_templates() -> None:
    s = SystemMessagePromptTemplate.from_template("s {x}")
    assert s.input_variables == ["x"]
    assert s.format(x=1) == SystemMessage("s 1")
    assert AIMessagePromptTemplate.from_template("{y}").format_messages(y=2) == [AIMessage("2")]
    h = HumanMessagePromptTemplate.from_template(
        [{"type": "text", "text": "{a}"}, "{b}", {"type": "image_url", "image_url": "http://i/{c}"}]
    )
    assert h.input_variables == ["a", "b", "c"]
    assert h.format(a="x", b="", c="1.png") == HumanMessage(
        [
            {"type": "text", "text": "x"},
            {"type": "image_url", "image_url": {"url": "http://i/1.png"}},
        ]
    )
    assert repr(MessagesPlaceholder("h", optional=True)) == (
        "MessagesPlaceholder(variable_name='h', optional=True)"
    )


async def test_chat_ainvoke_and_pipe() -> None:
    c = ChatPromptTemplate.from_messages([("human", "{q}")])
    assert await c.ainvoke({"q": "hi"}) == ChatPromptValue([HumanMessage("hi")])
    chain = c | (lambda v: v.to_string())
    assert chain.invoke({"q": "x"}) == "Human: x"
    assert await chain.ainvoke({"q": "y"}) == "Human: y"


# -- prompt values and buffer strings -------------------------------------------------------


def test_prompt_values() -> None:
    s = StringPromptValue("x")
    assert (s.to_string(), s.to_messages()) == ("x", [HumanMessage("x")])
    assert repr(s) == "StringPromptValue(text='x')"
    v = ChatPromptValue([HumanMessage("x")])
    assert v == ChatPromptValue([HumanMessage("x")])
    assert v != ChatPromptValue([AIMessage("x")])
    assert v.to_messages() is not v.to_messages()


def test_get_buffer_string() -> None:
    messages = [
        HumanMessage("h"),
        AIMessage(["a", {"type": "text", "text": "b"}]),
        SystemMessage("s"),
        FunctionMessage("f", name="fn"),
        ToolMessage("t", tool_call_id="1"),
        AIMessage("", additional_kwargs={"function_call": {"name": "x", "arguments": "{}"}}),
        AIMessage("r", tool_calls=[{"name": "t", "args": {"x": 1}, "id": "1"}]),
    ]
    assert get_buffer_string(messages, human_prefix="U", ai_prefix="B") == (
        "U: h\nB: ab\nSystem: s\nFunction: f\nTool: t\nB: {'name': 'x', 'arguments': '{}'}\n"
        "B: r[{'name': 't', 'args': {'x': 1}, 'id': '1', 'type': 'tool_call'}]"
    )
    assert get_buffer_string([HumanMessage("a"), AIMessage("b")], message_separator=" | ") == (
        "Human: a | AI: b"
    )


def test_import_does_not_load_pydantic() -> None:
    code = "import sys, actloop.prompts; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
