# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/agents/test_chat.py
# sha256 of the source: a394b23d167f32214bd6b96027e030ef0b8e1d6f79068fd177b91aadc827acb4
# Only the imports are changed (scripts/port_upstream.py).
"""Unittests for langchain.agents.chat package."""

from actloop.agents import AgentAction

from actloop.classic.chat import ChatOutputParser

output_parser = ChatOutputParser()


def get_action_and_input(text: str) -> tuple[str, str]:
    output = output_parser.parse(text)
    if isinstance(output, AgentAction):
        return output.tool, str(output.tool_input)
    return "Final Answer", output.return_values["output"]


def test_parse_with_language() -> None:
    llm_output = """I can use the `foo` tool to achieve the goal.

    Action:
    ```json
    {
      "action": "foo",
      "action_input": "bar"
    }
    ```
    """
    action, action_input = get_action_and_input(llm_output)
    assert action == "foo"
    assert action_input == "bar"


def test_parse_without_language() -> None:
    llm_output = """I can use the `foo` tool to achieve the goal.

    Action:
    ```
    {
      "action": "foo",
      "action_input": "bar"
    }
    ```
    """
    action, action_input = get_action_and_input(llm_output)
    assert action == "foo"
    assert action_input == "bar"
