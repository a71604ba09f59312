# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/agents/test_initialize.py
# sha256 of the source: 8ae6d7be99636638c69979fe73d7b32b7ea3c7e51b17171c5eda183afbb5c24f
# Only the imports are changed (scripts/port_upstream.py).
"""Test the initialize module."""

from actloop.tools import tool

from actloop.classic import AgentType
from actloop.classic import initialize_agent
from upstream.helpers.fake_llm import FakeLLM


@tool
def my_tool(query: str) -> str:  # noqa: ARG001
    """A fake tool."""
    return "fake tool"


def test_initialize_agent_with_str_agent_type() -> None:
    """Test initialize_agent with a string."""
    fake_llm = FakeLLM()
    agent_executor = initialize_agent(
        [my_tool],
        fake_llm,
        "zero-shot-react-description",  # type: ignore[arg-type]
    )
    assert (
        agent_executor._action_agent._agent_type
        == AgentType.ZERO_SHOT_REACT_DESCRIPTION
    )
    assert isinstance(agent_executor.tags, list)
    assert "zero-shot-react-description" in agent_executor.tags
