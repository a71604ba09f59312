# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/agents/output_parsers/test_json.py
# sha256 of the source: 52a8cf94c6ad6539033b2fb5cd3cd815e1eeae1bbea628ac65a38b7512430167
# Only the imports are changed (scripts/port_upstream.py).
from actloop.agents import AgentAction, AgentFinish

from actloop.json_agent import JSONAgentOutputParser


def test_tool_usage() -> None:
    parser = JSONAgentOutputParser()
    _input = """    ```
{
  "action": "search",
  "action_input": "2+2"
}
```"""
    output = parser.invoke(_input)
    expected_output = AgentAction(tool="search", tool_input="2+2", log=_input)
    assert output == expected_output


def test_finish() -> None:
    parser = JSONAgentOutputParser()
    _input = """```
{
  "action": "Final Answer",
  "action_input": "4"
}
```"""
    output = parser.invoke(_input)
    expected_output = AgentFinish(return_values={"output": "4"}, log=_input)
    assert output == expected_output
