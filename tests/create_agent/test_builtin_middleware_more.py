"""More built-in middleware against LangChain 1.5's: todo list, context editing, summarization,
PII, tool selection. Same scripted replies on both sides; the final states are compared field by
field, and so is what the model was sent on each call where the middleware changes it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import langchain.agents.middleware as lc_mw
import langchain_core.messages as lc_messages
import pytest
from _both import LcScripted, al_tools_of, fields, lc_tools_of, reply, state_fields
from langchain.agents import create_agent as lc_create_agent
from pydantic import Field

import actloop.agents.middleware as al_mw
import actloop.messages as al_messages
from actloop.agents import create_agent
from actloop.testing import FunctionChatModel


def sent_fields(messages: Any) -> list[dict[str, Any]]:
    """What a model call was sent: each message's fields and its response metadata."""
    rows = fields(messages)
    for row, message in zip(rows, messages, strict=True):
        row["response_metadata"] = dict(message.response_metadata)
    return rows


class LcRecording(LcScripted):
    """LangChain's scripted model, keeping the messages of each call."""

    sent: list[Any] = Field(default_factory=lambda: [])

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.sent.append(sent_fields(messages))
        return super()._generate(messages, *args, **kwargs)


def recording_pair(replies: Sequence[dict[str, Any]]) -> tuple[Any, Any, list[Any], list[Any]]:
    """Scripted models on both sides playing `replies`, and the lists of what each was sent."""
    lc = LcRecording(messages=iter([lc_messages.AIMessage(**r) for r in replies]))
    al_sent: list[Any] = []
    al_replies = iter([al_messages.AIMessage(**r) for r in replies])

    def answer(messages: Any) -> Any:
        al_sent.append(sent_fields(messages))
        return next(al_replies)

    return lc, FunctionChatModel(answer), lc.sent, al_sent


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def echo(text: str) -> str:
    """Repeat a text."""
    return text


TOOLS: list[Callable[..., Any]] = [add, echo]


async def run_both(
    replies: Sequence[dict[str, Any]],
    make: Callable[[Any], list[Any]],
    inputs: Callable[[Any], dict[str, Any]],
    *,
    use_async: bool,
    tools: Sequence[Callable[..., Any]] = TOOLS,
    **kwargs: Any,
) -> tuple[Any, Any]:
    """(final state or error, what the model was sent) of LangChain's run and of actloop's."""
    lc_model, al_model, lc_sent, al_sent = recording_pair(replies)
    lc = lc_create_agent(lc_model, lc_tools_of(tools), middleware=make(lc_mw), **kwargs)
    al = create_agent(al_model, al_tools_of(tools), middleware=make(al_mw), **kwargs)
    out: list[Any] = []
    for agent, side, sent in ((lc, lc_messages, lc_sent), (al, al_messages, al_sent)):
        try:
            if use_async:
                state = await agent.ainvoke(inputs(side))
            else:
                state = agent.invoke(inputs(side))
            result: Any = state_fields(state)
        except Exception as exc:
            result = (type(exc).__name__, str(exc))
        out.append((result, sent))
    return out[0], out[1]


def ask(text: str) -> Callable[[Any], dict[str, Any]]:
    return lambda m: {"messages": [m.HumanMessage(text, id="h1")]}


def todo_args(*items: tuple[str, str]) -> dict[str, Any]:
    return {"todos": [{"content": c, "status": s} for c, s in items]}


# -- TodoListMiddleware ------------------------------------------------------------------------

TODO_REPLIES = [
    reply(
        "", ("write_todos", todo_args(("plan", "in_progress"), ("do", "pending")), "t1"), id="r1"
    ),
    reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r2"),
    reply(
        "", ("write_todos", todo_args(("plan", "completed"), ("do", "completed")), "t2"), id="r3"
    ),
    reply("3", id="r4"),
]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("system_prompt", [None, "Be brief."])
@pytest.mark.parametrize("custom", [False, True])
async def test_todo_list(use_async: bool, system_prompt: str | None, custom: bool) -> None:
    options = {"system_prompt": "Track it.", "tool_description": "Write todos."} if custom else {}
    lc, al = await run_both(
        TODO_REPLIES,
        lambda m: [m.TodoListMiddleware(**options)],
        ask("sum"),
        use_async=use_async,
        system_prompt=system_prompt,
    )
    assert al == lc
    state, sent = al
    assert state["todos"] == [
        {"content": "plan", "status": "completed"},
        {"content": "do", "status": "completed"},
    ]
    assert len(sent) == 4
    assert state["messages"][2]["content"] == (
        "Updated todo list to [{'content': 'plan', 'status': 'in_progress'}, "
        "{'content': 'do', 'status': 'pending'}]"
    )


@pytest.mark.parametrize("use_async", [False, True])
async def test_todo_list_parallel_calls_are_errors(use_async: bool) -> None:
    replies = [
        reply(
            "",
            ("write_todos", todo_args(("a", "pending")), "t1"),
            ("write_todos", todo_args(("b", "pending")), "t2"),
            ("add", {"a": 1, "b": 1}, "c1"),
            id="r1",
        ),
        reply("done", id="r2"),
    ]
    lc, al = await run_both(
        replies, lambda m: [m.TodoListMiddleware()], ask("go"), use_async=use_async
    )
    assert al == lc
    assert "todos" not in al[0]
    errors = [m for m in al[0]["messages"] if m["type"] == "tool" and m["status"] == "error"]
    assert [m["tool_call_id"] for m in errors] == ["t1", "t2"]


@pytest.mark.parametrize("use_async", [False, True])
async def test_todo_list_bad_status_is_the_validation_error(use_async: bool) -> None:
    replies = [
        reply("", ("write_todos", {"todos": [{"content": "a", "status": "nope"}]}, "t1"), id="r1"),
        reply("done", id="r2"),
    ]
    lc, al = await run_both(
        replies, lambda m: [m.TodoListMiddleware()], ask("go"), use_async=use_async
    )
    assert al == lc
    assert al[0]["messages"][2]["status"] == "error"


# -- ContextEditingMiddleware ------------------------------------------------------------------


def calls_then_answer(n: int) -> list[dict[str, Any]]:
    """`n` replies each calling echo or add with a long-ish argument, then a final answer."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        if i % 2:
            out.append(reply("", ("add", {"a": i, "b": 100}, f"c{i}"), id=f"r{i}"))
        else:
            out.append(reply("", ("echo", {"text": f"result {i} " * 20}, f"c{i}"), id=f"r{i}"))
    return [*out, reply("done", id="rf")]


EDITS: list[dict[str, Any]] = [
    {},
    {"trigger": 60},
    {"trigger": 60, "keep": 0},
    {"trigger": 60, "keep": 1, "clear_tool_inputs": True},
    {"trigger": 60, "keep": 1, "exclude_tools": ["echo"]},
    {"trigger": 60, "keep": 1, "clear_at_least": 40, "placeholder": "<gone>"},
    {"trigger": 400, "keep": 2},
]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("edit", EDITS)
async def test_context_editing(use_async: bool, edit: dict[str, Any]) -> None:
    lc, al = await run_both(
        calls_then_answer(5),
        lambda m: [m.ContextEditingMiddleware(edits=[m.ClearToolUsesEdit(**edit)])],
        ask("go"),
        use_async=use_async,
        system_prompt="Be brief.",
    )
    assert al == lc
    state, sent = al
    assert len(sent) == 6
    assert all(m["content"] != "[cleared]" for m in state["messages"])  # only the model's view
    if edit.get("trigger") == 60 and not edit.get("exclude_tools") and "keep" not in edit:
        last = [m for m in sent[-1] if m["type"] == "tool"]
        assert [m["content"] for m in last] == [
            "[cleared]",
            "[cleared]",
            "result 2 " * 20,
            "103",
            "result 4 " * 20,
        ]


@pytest.mark.parametrize("use_async", [False, True])
async def test_context_editing_custom_counter(use_async: bool) -> None:
    """A `token_counter` function: here one token per message, trigger at 4."""
    lc, al = await run_both(
        calls_then_answer(3),
        lambda m: [
            m.ContextEditingMiddleware(
                edits=[m.ClearToolUsesEdit(trigger=4, keep=1)], token_counter=len
            )
        ],
        ask("go"),
        use_async=use_async,
    )
    assert al == lc
    assert [m["content"] for m in al[1][-1] if m["type"] == "tool"][:2] == ["[cleared]"] * 2


# -- SummarizationMiddleware -------------------------------------------------------------------


def summary_models(*summaries: str) -> tuple[Any, Any, list[Any], list[Any]]:
    """The summarizing model on both sides: scripted summaries, what it was sent."""
    return recording_pair([reply(text, id=f"s{i}") for i, text in enumerate(summaries)])


SUMMARY_CASES: list[dict[str, Any]] = [
    {"trigger": ("messages", 4), "keep": ("messages", 2)},
    {"trigger": ("messages", 6), "keep": ("messages", 3)},
    {"trigger": ("tokens", 120), "keep": ("tokens", 60)},
    {"trigger": [{"tokens": 10, "messages": 8}, ("messages", 100)], "keep": ("messages", 1)},
    {"trigger": ("messages", 4), "keep": ("messages", 2), "trim_tokens_to_summarize": 40},
    {"trigger": ("messages", 4), "keep": ("messages", 2), "trim_tokens_to_summarize": 110},
    {"trigger": ("messages", 4), "keep": ("messages", 2), "trim_tokens_to_summarize": None},
    {"trigger": ("messages", 4), "keep": ("messages", 2), "summary_prompt": "Sum: {messages}"},
    {"trigger": ("messages", 50)},
]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("options", SUMMARY_CASES)
async def test_summarization(use_async: bool, options: dict[str, Any]) -> None:
    lc_summary, al_summary, lc_summary_sent, al_summary_sent = summary_models(
        *(f"summary {i}" for i in range(12))
    )
    summarizing = {"lc": lc_summary, "al": al_summary}

    def make(m: Any) -> list[Any]:
        side = "lc" if m is lc_mw else "al"
        return [m.SummarizationMiddleware(summarizing[side], **options)]

    lc, al = await run_both(
        calls_then_answer(5), make, ask("go"), use_async=use_async, system_prompt="Be brief."
    )
    assert al == lc
    assert al_summary_sent == lc_summary_sent
    if options == SUMMARY_CASES[0]:
        state = al[0]
        assert state["messages"][0]["content"] == (
            "Here is a summary of the conversation to date:\n\nsummary 3"
        )
        assert state["messages"][0]["additional_kwargs"] == {"lc_source": "summarization"}
        assert len(al_summary_sent) == 4


@pytest.mark.parametrize("use_async", [False, True])
async def test_summarization_with_a_summarizer_function(use_async: bool) -> None:
    seen: dict[str, list[int]] = {"lc": [], "al": []}

    def make(m: Any) -> list[Any]:
        side = "lc" if m is lc_mw else "al"

        def summarize(messages: list[Any]) -> str:
            seen[side].append(len(messages))
            return f"  {len(messages)} messages  "

        model = recording_pair([])[0 if side == "lc" else 1]
        return [
            m.SummarizationMiddleware(
                model, trigger=("messages", 5), keep=("messages", 2), summarizer=summarize
            )
        ]

    lc, al = await run_both(calls_then_answer(4), make, ask("go"), use_async=use_async)
    assert al == lc
    assert seen["al"] == seen["lc"] != []


def test_summarization_options_errors_are_langchains() -> None:
    cases: list[dict[str, Any]] = [
        {"trigger": ("fraction", 1.5)},
        {"trigger": ("tokens", 0)},
        {"trigger": ("bogus", 1)},
        {"trigger": {"tokens": True}},
        {"trigger": {"messages": 1.5}},
        {"trigger": {}},
        {"trigger": {"other": 1}},
        {"trigger": "x"},
        {"trigger": [1]},
        {"keep": ("messages", -1)},
        {"trigger": ("fraction", 0.5)},
    ]
    for options in cases:
        errors = []
        for m, model in ((lc_mw, recording_pair([])[0]), (al_mw, recording_pair([])[1])):
            try:
                m.SummarizationMiddleware(model, **options)
                errors.append(None)
            except Exception as exc:
                errors.append((type(exc).__name__, str(exc)))
        assert errors[1] == errors[0], options
        assert errors[1] is not None


# -- PIIMiddleware -----------------------------------------------------------------------------

PII_TEXT = (
    "mail ann.lee@example.co.uk or bob@test.io, card 4532015112830366 and 4532-0151-1283-0366, "
    "ip 192.168.1.20 (not 999.1.1.1), mac 00:1A:2B:3C:4D:5E, see https://example.com/a?b=1 "
    "and www.example.org/page"
)
PII_REPLIES = [
    reply("", ("echo", {"text": PII_TEXT}, "c1"), id="r1"),
    reply("Answer: " + PII_TEXT, id="r2"),
]
PII_TYPES = ["email", "credit_card", "ip", "mac_address", "url"]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("strategy", ["block", "redact", "mask", "hash"])
@pytest.mark.parametrize("pii_type", PII_TYPES)
async def test_pii(use_async: bool, strategy: str, pii_type: str) -> None:
    lc, al = await run_both(
        PII_REPLIES,
        lambda m: [
            m.PIIMiddleware(
                pii_type,
                strategy=strategy,
                apply_to_input=True,
                apply_to_output=True,
                apply_to_tool_results=True,
            )
        ],
        ask("hello " + PII_TEXT),
        use_async=use_async,
    )
    assert al == lc
    if strategy == "block":
        assert al[0][0] == "PIIDetectionError"
    elif strategy == "redact":
        assert f"[REDACTED_{pii_type.upper()}]" in al[0]["messages"][-1]["content"]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize(
    "where",
    [
        {"apply_to_input": True},
        {"apply_to_input": False, "apply_to_output": True},
        {"apply_to_input": False, "apply_to_tool_results": True},
    ],
)
async def test_pii_each_place_and_all_types_together(
    use_async: bool, where: dict[str, Any]
) -> None:
    lc, al = await run_both(
        PII_REPLIES,
        lambda m: [m.PIIMiddleware(t, strategy="mask", **where) for t in PII_TYPES],
        ask("hello " + PII_TEXT),
        use_async=use_async,
    )
    assert al == lc


@pytest.mark.parametrize("use_async", [False, True])
async def test_pii_custom_detectors(use_async: bool) -> None:
    def detect_ids(content: str) -> list[dict[str, Any]]:
        at = content.find("ID-")
        return [] if at < 0 else [{"text": content[at : at + 6], "start": at, "end": at + 6}]

    lc, al = await run_both(
        [reply("ok ID-123 and 555-1234", id="r1")],
        lambda m: [
            m.PIIMiddleware("phone", detector=r"\d{3}-\d{4}", apply_to_output=True),
            m.PIIMiddleware("ids", detector=detect_ids, strategy="hash", apply_to_output=True),
        ],
        ask("call 555-1234 about ID-999"),
        use_async=use_async,
    )
    assert al == lc
    assert (
        al[0]["messages"][0]["content"]
        == "call [REDACTED_PHONE] about <ids_hash:"
        + (al[0]["messages"][0]["content"].split("<ids_hash:")[1])
    )


def test_pii_detectors_match_langchains_on_random_text() -> None:
    """Every built-in detector finds exactly LangChain's matches on 20,000 random strings made
    of the characters its patterns turn on."""
    import random

    from langchain.agents.middleware import _redaction as lc_redaction

    from actloop.agents.middleware import _redaction as al_redaction

    rng = random.Random(7)
    alphabet = "ab.@-_|%+ 1é/:wcom4"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(20000)]
    digits = "0123456789 -4"  # card numbers: 13-19 digits, spaces or dashes between groups
    cards = ["".join(rng.choice(digits) for _ in range(rng.randint(0, 40))) for _ in range(20000)]
    cases = [(n, texts) for n in ["detect_email", "detect_url", "detect_ip", "detect_mac_address"]]
    for name, strings in [*cases, ("detect_credit_card", cards + texts)]:
        al_detect, lc_detect = getattr(al_redaction, name), getattr(lc_redaction, name)
        assert [al_detect(t) for t in strings] == [lc_detect(t) for t in strings], name
    assert any(al_redaction.detect_credit_card(t) for t in cards)  # the card texts hold some


def test_pii_unknown_type_is_langchains_error() -> None:
    errors = []
    for m in (lc_mw, al_mw):
        with pytest.raises(ValueError) as caught:
            m.PIIMiddleware("ssn")
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


# -- LLMToolSelectorMiddleware -----------------------------------------------------------------


def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def whisper(text: str) -> str:
    """Lower-case a text."""
    return text.lower()


SELECT_TOOLS: list[Callable[..., Any]] = [add, echo, shout, whisper]


def select(*names: str, id: str) -> dict[str, Any]:
    """A selection model's reply choosing `names`."""
    return reply("", ("ToolSelectionResponse", {"tools": list(names)}, f"s-{id}"), id=id)


SELECTION_CASES: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [
    ({}, [select("shout", "add", id="s1"), select("echo", id="s2")]),
    ({"max_tools": 1}, [select("shout", "add", id="s1"), select("echo", "add", id="s2")]),
    ({"always_include": ["whisper"]}, [select("add", id="s1"), select(id="s2")]),
    ({"system_prompt": "Pick."}, [reply("no", id="bad"), select("add", id="s1"), select(id="s2")]),
    ({"on_parsing_failure": "all"}, [reply("no", id="b1"), reply("no", id="b2")] * 2),
    ({"on_parsing_failure": "none", "max_retries": 0}, [reply("no", id="b1")] * 2),
    ({"on_parsing_failure": ["echo"]}, [reply("no", id="b1")] * 4),
    ({"on_parsing_failure": "error"}, [reply("no", id="b1")] * 4),
    ({}, [select("nope", id="s1")]),
]


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize(("options", "selections"), SELECTION_CASES)
async def test_llm_tool_selector(
    use_async: bool, options: dict[str, Any], selections: list[dict[str, Any]]
) -> None:
    lc_selector, al_selector, lc_selector_sent, al_selector_sent = recording_pair(selections)
    models = {"lc": lc_selector, "al": al_selector}
    given: dict[str, list[list[str]]] = {"lc": [], "al": []}

    def make(m: Any) -> list[Any]:
        side = "lc" if m is lc_mw else "al"

        def record(request: Any, handler: Any) -> Any:
            given[side].append([t.name for t in request.tools])
            return handler(request)

        async def arecord(request: Any, handler: Any) -> Any:
            given[side].append([t.name for t in request.tools])
            return await handler(request)

        recorder = m.wrap_model_call(arecord if use_async else record)
        return [m.LLMToolSelectorMiddleware(model=models[side], **options), recorder]

    replies = [reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"), reply("3", id="r2")]
    lc, al = await run_both(
        replies, make, ask("add 1 and 2"), use_async=use_async, tools=SELECT_TOOLS
    )
    assert al == lc
    assert al_selector_sent == lc_selector_sent
    assert given["al"] == given["lc"]
    if (options, selections) == SELECTION_CASES[0]:
        assert given["al"] == [["add", "shout"], ["echo"]]
    if (options, selections) == SELECTION_CASES[2]:
        assert given["al"] == [["add", "whisper"], ["whisper"]]


@pytest.mark.parametrize("use_async", [False, True])
async def test_llm_tool_selector_defaults_to_the_agents_model(use_async: bool) -> None:
    replies = [
        select("add", id="s1"),
        reply("", ("add", {"a": 1, "b": 2}, "c1"), id="r1"),
        select("add", "echo", id="s2"),
        reply("3", id="r2"),
    ]
    lc, al = await run_both(
        replies,
        lambda m: [m.LLMToolSelectorMiddleware(max_tools=2)],
        ask("add 1 and 2"),
        use_async=use_async,
        tools=SELECT_TOOLS,
    )
    assert al == lc
    assert al[1][0][0]["type"] == "system"
    assert al[1][0][0]["content"] == (
        "Your goal is to select the most relevant tools for answering the user's query.\n"
        "IMPORTANT: List the tool names in order of relevance, with the most relevant first. "
        "If you exceed the maximum number of tools, only the first 2 will be used."
    )


def test_llm_tool_selector_option_errors_are_langchains() -> None:
    errors = []
    for m in (lc_mw, al_mw):
        with pytest.raises(ValueError) as caught:
            m.LLMToolSelectorMiddleware(max_retries=-1)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


async def test_summarization_retries_a_failed_summary_call() -> None:
    """A summary call that fails once is tried again (LangChain's `with_retry`), and the run
    ends as LangChain's."""
    lc_sum, al_sum, _, al_sent = summary_models(*(f"summary {i}" for i in range(6)))
    failures = {"lc": 0, "al": 0}

    class LcFlaky(type(lc_sum)):  # type: ignore[misc]
        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            if failures["lc"] == 0:
                failures["lc"] += 1
                raise ValueError("flaky")
            return super()._generate(messages, *args, **kwargs)

    lc_flaky = LcFlaky(messages=lc_sum.messages)
    al_inner = al_sum.fn

    def al_flaky(messages: Any) -> Any:
        if failures["al"] == 0:
            failures["al"] += 1
            raise ValueError("flaky")
        return al_inner(messages)

    models = {"lc": lc_flaky, "al": FunctionChatModel(al_flaky)}
    lc, al = await run_both(
        calls_then_answer(3),
        lambda m: [
            m.SummarizationMiddleware(
                models["lc" if m is lc_mw else "al"], trigger=("messages", 6), keep=("messages", 2)
            )
        ],
        ask("go"),
        use_async=False,
    )
    assert al == lc
    assert failures == {"lc": 1, "al": 1}
    assert lc_flaky.sent == al_sent != []


def test_todo_list_on_a_durable_thread(tmp_path: Any) -> None:
    """`write_todos`'s Command is journaled by a durable run; the thread keeps `todos` as
    LangGraph's checkpointer does."""
    from langgraph.checkpoint.memory import InMemorySaver

    from actloop.checkpoint import SqliteCheckpointer

    lc_model, al_model, _, _ = recording_pair(TODO_REPLIES)
    lc = lc_create_agent(
        lc_model,
        lc_tools_of(TOOLS),
        middleware=[lc_mw.TodoListMiddleware()],
        checkpointer=InMemorySaver(),
    )
    al = create_agent(
        al_model,
        al_tools_of(TOOLS),
        middleware=[al_mw.TodoListMiddleware()],
        checkpointer=SqliteCheckpointer(tmp_path / "runs.db"),
    )
    config: Any = {"configurable": {"thread_id": "t"}}
    lc_out = lc.invoke({"messages": [("user", "sum")]}, config)
    al_out = al.invoke({"messages": [("user", "sum")]}, config)
    assert state_fields(al_out) == state_fields(lc_out)
    assert al.get_state(config).values["todos"] == lc.get_state(config).values["todos"]
