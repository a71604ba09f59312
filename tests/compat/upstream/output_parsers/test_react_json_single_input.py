# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/agents/output_parsers/test_react_json_single_input.py
# sha256 of the source: 5f9312e54559e2eca6c4d0541c5bc0d65a152354657e9744bea9cb59d75d8c83
# Only the imports are changed (scripts/port_upstream.py).
from actloop.agents import AgentAction, AgentFinish

from actloop.classic.chat import (
    ReActJsonSingleInputOutputParser,
)


def test_action() -> None:
    """Test standard parsing of action/action input."""
    parser = ReActJsonSingleInputOutputParser()
    _input = """Thought: agent thought here
```
{
    "action": "search",
    "action_input": "what is the temperature in SF?"
}
```
"""
    output = parser.invoke(_input)
    expected_output = AgentAction(
        tool="search",
        tool_input="what is the temperature in SF?",
        log=_input,
    )
    assert output == expected_output


def test_finish() -> None:
    """Test standard parsing of agent finish."""
    parser = ReActJsonSingleInputOutputParser()
    _input = """Thought: agent thought here
Final Answer: The temperature is 100"""
    output = parser.invoke(_input)
    expected_output = AgentFinish(
        return_values={"output": "The temperature is 100"},
        log=_input,
    )
    assert output == expected_output
