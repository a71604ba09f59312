"""TokenBudgetTrim: which steps a model is shown under a token budget (issue 14, item 7)."""

from __future__ import annotations

from typing import Any

import pytest

from actloop import (
    AgentAction,
    AgentExecutor,
    AIMessage,
    ChatPromptTemplate,
    ConfigurationError,
    HumanMessage,
    Tool,
    ToolAgentAction,
    ToolMessage,
    create_tool_calling_agent,
)
from actloop.executor.trim import TokenBudgetTrim, approximate_tokens
from actloop.testing import ScriptedAgent, ScriptedChatModel
from support.executor import finish, seen

MODES = ["sync", "async"]


async def run(executor: AgentExecutor, inputs: dict[str, Any], mode: str) -> dict[str, Any]:
    if mode == "sync":
        return executor.invoke(inputs)
    return await executor.ainvoke(inputs)


def steps_costing(*costs: int) -> list[tuple[AgentAction, Any]]:
    """One step per cost; with `count_tokens=len` step i costs exactly `costs[i]` tokens."""
    return [(AgentAction("t", str(i), ""), "x" * cost) for i, cost in enumerate(costs)]


def kept(trim: TokenBudgetTrim, steps: list[tuple[AgentAction, Any]]) -> list[Any]:
    return [action.tool_input for action, _ in trim(steps)]


def test_everything_within_the_budget_is_shown_unchanged() -> None:
    steps = steps_costing(3, 4, 3)
    assert TokenBudgetTrim(10, count_tokens=len)(steps) is steps


def test_keeps_the_first_step_and_the_latest_that_fit() -> None:
    # 3 (first) + 3 (newest) + 2 = 8 fits; the 5 before them would make 13 > 10.
    trim = TokenBudgetTrim(10, count_tokens=len)
    assert kept(trim, steps_costing(3, 4, 5, 2, 3)) == ["0", "3", "4"]


def test_the_kept_tail_has_no_gap() -> None:
    # Step 1 (cost 1) would fit, but step 2 (cost 9) does not: the search ends there.
    trim = TokenBudgetTrim(10, count_tokens=len)
    assert kept(trim, steps_costing(3, 1, 9, 2, 3)) == ["0", "3", "4"]


def test_first_and_newest_are_kept_even_over_budget() -> None:
    trim = TokenBudgetTrim(10, count_tokens=len)
    assert kept(trim, steps_costing(8, 5, 9)) == ["0", "2"]
    assert kept(trim, steps_costing(50, 60)) == ["0", "1"]


def test_keep_first_and_keep_last_counts() -> None:
    costs = (2, 2, 9, 9, 1, 1, 1)
    assert kept(TokenBudgetTrim(8, keep_first=2, count_tokens=len), steps_costing(*costs)) == [
        "0",
        "1",
        "4",
        "5",
        "6",
    ]
    assert kept(
        TokenBudgetTrim(8, keep_first=0, keep_last=0, count_tokens=len), steps_costing(*costs)
    ) == [
        "4",
        "5",
        "6",
    ]
    assert kept(
        TokenBudgetTrim(3, keep_first=1, keep_last=0, count_tokens=len), steps_costing(3, 20)
    ) == ["0"]
    assert kept(TokenBudgetTrim(3, keep_last=3, count_tokens=len), steps_costing(*costs)) == [
        "0",
        "4",
        "5",
        "6",
    ]


def parallel_steps() -> list[tuple[AgentAction, Any]]:
    """Turn A (cost 2), turn B: two calls of one model reply (3 + 3), turn C (2), turn D (2)."""
    reply = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "b1", "type": "tool_call"}])
    twin = AIMessage("", tool_calls=[{"name": "t", "args": {}, "id": "b2", "type": "tool_call"}])
    return [
        (ToolAgentAction("t", "A", "", [AIMessage("a")], "a"), "xx"),
        (ToolAgentAction("t", "B1", "", [reply], "b1"), "xxx"),
        (ToolAgentAction("t", "B2", "", [reply], "b2"), "xxx"),
        (ToolAgentAction("t", "C", "", [twin], "c"), "xx"),
        (ToolAgentAction("t", "D", "", [AIMessage("d")], "d"), "xx"),
    ]


def test_the_calls_of_one_model_reply_are_kept_or_dropped_together() -> None:
    steps = parallel_steps()
    assert kept(TokenBudgetTrim(12, count_tokens=len), steps) == ["A", "B1", "B2", "C", "D"]
    assert kept(TokenBudgetTrim(11, count_tokens=len), steps) == ["A", "C", "D"]
    # The newest turn is kept whole even when it alone is over the budget.
    assert kept(TokenBudgetTrim(1, count_tokens=len), steps[:3]) == ["A", "B1", "B2"]


def test_a_step_costs_its_log_and_its_observation() -> None:
    trim = TokenBudgetTrim(100, count_tokens=lambda text: len(text.split()))
    step = (AgentAction("search", "q", "I will search now. "), "three word observation")
    assert trim.cost(step) == 7


def test_the_fallback_counts_four_characters_a_token() -> None:
    trim = TokenBudgetTrim(100)
    assert trim.count_tokens is approximate_tokens
    assert [approximate_tokens(t) for t in ["", "a", "abcd", "abcde", "x" * 44]] == [0, 1, 1, 2, 11]


class _WordTokenizerModel:
    """Stands for a langchain-core model: it has `get_num_tokens` (one token per word)."""

    def get_num_tokens(self, text: str) -> int:
        return len(text.split())


def test_counts_with_the_models_get_num_tokens() -> None:
    trim = TokenBudgetTrim(5, model=_WordTokenizerModel())
    steps = [(AgentAction("t", str(i), ""), "one two three") for i in range(4)]
    assert trim.count_tokens("one two three four") == 4
    assert kept(trim, steps) == ["0", "3"]


def test_counts_with_the_local_models_own_tokenizer() -> None:
    from actloop.models.local import LocalChatModel

    model = LocalChatModel()
    trim = TokenBudgetTrim(19, model=model)
    texts = ["Hello world", "The quick brown fox jumps over the lazy dog.", "Observation: 42"]
    assert [trim.count_tokens(t) for t in texts] == [2, 10, 6]
    assert model.get_token_ids("Hello world") == [19556, 905]
    steps = [(AgentAction("t", str(i), ""), text) for i, text in enumerate([*texts, "Hello world"])]
    # llama tokens 2 + 10 + 6 + 2 = 20 > 19: the 10 goes (approximate counts would say 3+11+4+3).
    assert kept(trim, steps) == ["0", "2", "3"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_tokens": 0}, "TokenBudgetTrim max_tokens must be an int >= 1, got 0"),
        (
            {"max_tokens": 10, "keep_first": -1},
            "TokenBudgetTrim keep_first must be an int >= 0, got -1",
        ),
        (
            {"max_tokens": 10, "keep_last": True},
            "TokenBudgetTrim keep_last must be an int >= 0, got True",
        ),
        ({"max_tokens": "10"}, "TokenBudgetTrim max_tokens must be an int >= 1, got '10'"),
        (
            {"max_tokens": 10, "count_tokens": len, "model": _WordTokenizerModel()},
            "TokenBudgetTrim counts with count_tokens or with the model's tokenizer; "
            "pass one of count_tokens=... and model=..., not both",
        ),
    ],
)
def test_bad_settings_raise_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        TokenBudgetTrim(**kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("mode", MODES)
async def test_the_executor_shows_the_agent_trimmed_steps_and_returns_them_all(mode: str) -> None:
    sizes = {"a": 30, "b": 50, "c": 10, "d": 10}
    echo = Tool(name="echo", func=lambda q: q * sizes[q], description="Repeats a letter.")
    actions = [AgentAction("echo", q, "") for q in "abcd"]
    agent = ScriptedAgent([*actions, finish("done")])
    executor = AgentExecutor(
        agent=agent,
        tools=[echo],
        trim_intermediate_steps=TokenBudgetTrim(60, count_tokens=len),
        return_intermediate_steps=True,
    )
    result = await run(executor, {"input": "q"}, mode)
    shown = [[action.tool_input for action, _ in plan] for plan in seen(agent)]
    assert shown == [[], ["a"], ["a", "b"], ["a", "c"], ["a", "c", "d"]]
    assert [(a.tool_input, o) for a, o in result["intermediate_steps"]] == [
        ("a", "a" * 30),
        ("b", "b" * 50),
        ("c", "c" * 10),
        ("d", "d" * 10),
    ]


def view(messages: list[Any]) -> list[tuple[Any, ...]]:
    """What a chat model is shown, compactly: human text, the AI replies' call ids, the results."""
    out: list[tuple[Any, ...]] = []
    for m in messages:
        if isinstance(m, HumanMessage):
            out.append(("human", m.content))
        elif isinstance(m, ToolMessage):
            out.append(("tool", m.tool_call_id, m.content))
        else:
            out.append(("ai", [call["id"] for call in m.tool_calls]))
    return out


def _call(call_id: str, query: str) -> dict[str, Any]:
    return {"name": "search", "args": {"__arg1": query}, "id": call_id, "type": "tool_call"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_calling_model_never_sees_a_call_without_its_result(mode: str) -> None:
    found = {"a": "A", "b": "B" * 100, "c": "C" * 100, "d": "D"}
    search = Tool(name="search", func=lambda q: found[q], description="Looks a letter up.")
    first = AIMessage("", tool_calls=[_call("1", "a")])
    both = AIMessage("", tool_calls=[_call("2", "b"), _call("3", "c")])
    last = AIMessage("", tool_calls=[_call("4", "d")])
    model = ScriptedChatModel([first, both, last, "done"])
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
    )
    agent = create_tool_calling_agent(model, [search], prompt)
    executor = AgentExecutor(
        agent=agent, tools=[search], trim_intermediate_steps=TokenBudgetTrim(150, count_tokens=len)
    )
    assert (await run(executor, {"input": "go"}, mode))["output"] == "done"
    model.assert_complete()
    a, b, c, d = (
        ("tool", "1", "A"),
        ("tool", "2", "B" * 100),
        ("tool", "3", "C" * 100),
        ("tool", "4", "D"),
    )
    assert [view(call.messages) for call in model.calls] == [
        [("human", "go")],
        [("human", "go"), ("ai", ["1"]), a],
        # over budget, but the newest reply is kept whole: both of its calls with their results
        [("human", "go"), ("ai", ["1"]), a, ("ai", ["2", "3"]), b, c],
        # the parallel reply no longer fits: both calls go, neither is left without its result
        [("human", "go"), ("ai", ["1"]), a, ("ai", ["4"]), d],
    ]
