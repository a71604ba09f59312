"""Structured JSON agents, for models without native tool calling (small local models).

The model replies with one JSON object, either a tool call or the final answer:

    {"action": "<tool name>", "action_input": {<the tool's arguments>}}
    {"action": "Final Answer", "action_input": "<the answer>"}

A tool that takes one string (a `Tool`) gets its input as a string: `"action_input": "<text>"`.

`json_agent_schema(tools)` is the JSON schema of exactly these replies. With `constrained=True`
the model is bound with `response_format={"type": "json_object", "schema": schema}`, so a model
that decodes under a grammar (llama.cpp) can only write valid replies; models that ignore it
still work. The schema uses only what llama.cpp's schema-to-grammar converter supports: `oneOf`,
`anyOf`, `type`, `properties`, `required`, `const`, `enum`, `items`. Tool argument schemas are
cut down to these keywords (titles, defaults, descriptions and formats are dropped).

`JSONAgentOutputParser` reads the first JSON object in the reply (code fences and text around it
are ignored). Well-formed replies parse as with LangChain's parser of that name; a malformed reply
raises `OutputParserException(send_to_llm=True)` whose observation tells the model what was wrong,
where LangChain sends no observation. Unknown tool names pass through (the executor answers them).

The scratchpad (`format_json_scratchpad`) is plain alternating turns, which every chat template
accepts: per step the model's reply as an AI message, then a human message
`"Observation: <result>"` (non-text results as JSON).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from actloop.exceptions import OutputParserException
from actloop.format_scratchpad import Steps, from_steps, observation_text
from actloop.messages import AIMessage, BaseMessage, HumanMessage
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import BasePromptTemplate, ChatPromptTemplate, MessagesPlaceholder
from actloop.prompts._agent_checks import require_variables
from actloop.runnables._base import Runnable
from actloop.runnables._compose import RunnablePassthrough
from actloop.steps import AgentAction, AgentFinish
from actloop.tool_calling import MessageFormatter
from actloop.tools import BaseTool, convert_to_openai_tool
from actloop.tools.render import ToolsRenderer

__all__ = [
    "FINAL_ANSWER",
    "JSON_AGENT_PROMPT",
    "JSONAgentOutputParser",
    "create_structured_json_agent",
    "first_json_object",
    "format_json_scratchpad",
    "json_agent_schema",
    "render_json_tools",
]

FINAL_ANSWER = "Final Answer"
_EXAMPLE = (
    '{"action": "<tool name>", "action_input": <its input>} or '
    '{"action": "Final Answer", "action_input": "<your answer>"}'
)
_ASK = f"Reply with exactly one JSON object like {_EXAMPLE}, and nothing else."
_KEEP = frozenset(("type", "required", "enum", "const"))
_MAX_ATTEMPTS = 16
"""At most this many `{` are tried as the start of the reply's object (keeps parsing linear)."""
_DECODER = json.JSONDecoder(strict=False)  # models write raw newlines inside strings

JSON_AGENT_SYSTEM = (
    "Answer the user's question as well as you can. You can use these tools:\n\n{tools}\n\n"
    "Reply with exactly one JSON object and nothing else. To use a tool, reply\n"
    '{{"action": "<one of: {tool_names}>", "action_input": <the tool\'s input>}}\n'
    'and you will get its result as the next message, starting with "Observation:". '
    "When you know the answer, reply\n"
    '{{"action": "Final Answer", "action_input": "<your answer>"}}'
)

JSON_AGENT_PROMPT = ChatPromptTemplate.from_messages(
    [
        ("system", JSON_AGENT_SYSTEM),
        ("human", "{input}"),
        MessagesPlaceholder("agent_scratchpad"),
    ]
)
"""The default prompt: variables `tools`, `tool_names` (filled in by the agent) and `input`."""


def _simplify(schema: Any) -> Any:
    """A JSON schema cut down to the keywords llama.cpp's grammar converter handles."""
    if not isinstance(schema, dict):
        return schema
    items: dict[str, Any] = schema  # pyright: ignore[reportUnknownVariableType]
    out: dict[str, Any] = {}
    for key, value in items.items():
        if key in _KEEP:
            out[key] = value
        elif key == "properties":
            properties: dict[str, Any] = value
            out[key] = {name: _simplify(sub) for name, sub in properties.items()}
        elif key == "items":
            out[key] = _simplify(value)
        elif key in ("anyOf", "oneOf"):
            alternatives: list[Any] = value
            out[key] = [_simplify(sub) for sub in alternatives]
    return out


def _input_schema(tool: BaseTool) -> dict[str, Any]:
    """The schema of a tool's `action_input`: a string for one-string tools, else its args."""
    parameters: dict[str, Any] = convert_to_openai_tool(tool)["function"]["parameters"]
    if list(parameters.get("properties", {})) == ["__arg1"]:
        return {"type": "string"}
    simple: dict[str, Any] = _simplify(parameters)
    simple.setdefault("type", "object")
    simple.setdefault("properties", {})
    return simple


def _reply_schema(action: dict[str, Any], action_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"action": action, "action_input": action_input},
        "required": ["action", "action_input"],
    }


def json_agent_schema(tools: Sequence[BaseTool]) -> dict[str, Any]:
    """`{"oneOf": [<one reply schema per tool>, <the final answer's>]}`; see the module doc."""
    replies = [_reply_schema({"const": t.name}, _input_schema(t)) for t in tools]
    replies.append(_reply_schema({"const": FINAL_ANSWER}, {"type": "string"}))
    return {"oneOf": replies}


def _type_hint(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "anyOf" in schema:
        return " | ".join(_type_hint(s) for s in schema["anyOf"])
    return str(schema.get("type", "value"))


def _input_hint(schema: dict[str, Any]) -> str:
    """A compact picture of an input: `"<text>"` or `{"query": string, "limit": integer}`."""
    if schema.get("type") == "string":
        return '"<text>"'
    required = set(schema.get("required", ()))
    fields = [
        f'"{name}": {_type_hint(sub)}{"" if name in required else " (optional)"}'
        for name, sub in schema.get("properties", {}).items()
    ]
    return "{" + ", ".join(fields) + "}"


def render_json_tools(tools: Sequence[BaseTool]) -> str:
    """One entry per tool: `- name: description` then the shape of its `action_input`."""
    return "\n".join(
        f"- {t.name}: {t.description}\n  action_input: {_input_hint(_input_schema(t))}"
        for t in tools
    )


def format_json_scratchpad(intermediate_steps: Steps) -> list[BaseMessage]:
    """Per step: the model's reply (AI message), then `Observation: <result>` (human message)."""
    messages: list[BaseMessage] = []
    for action, observation in intermediate_steps:
        messages.append(AIMessage(action.log))
        messages.append(HumanMessage(f"Observation: {observation_text(observation)}"))
    return messages


def _error(text: str, observation: str) -> OutputParserException:
    return OutputParserException(
        f"Could not parse LLM output: {text}",
        observation=observation,
        llm_output=text,
        send_to_llm=True,
    )


def first_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`; a `{` that does not start one is skipped. Without one it
    raises the `OutputParserException` whose observation tells the model what was wrong."""
    start = text.find("{")
    if start == -1:
        raise _error(text, f"Your reply was not valid JSON: it has no JSON object. {_ASK}")
    first_error: Exception | None = None
    for _ in range(_MAX_ATTEMPTS):
        try:
            value: dict[str, Any] = _DECODER.raw_decode(text, start)[0]
            return value
        except (ValueError, RecursionError) as exc:  # also too deep or too big to decode
            first_error = first_error or exc
            # Retry only past the failure, so the text is scanned about once in all.
            failed_at = exc.pos if isinstance(exc, json.JSONDecodeError) else len(text)
            start = text.find("{", max(failed_at, start + 1))
            if start == -1:
                break
    if isinstance(first_error, json.JSONDecodeError):
        reason = str(first_error)
    else:
        reason = "it is too large or too deeply nested"
    raise _error(text, f"Your reply was not valid JSON: {reason}. {_ASK}")


def _to_step(data: dict[str, Any], text: str) -> AgentAction | AgentFinish:
    """The action or finish a decoded reply stands for, or a parse error explaining its shape."""
    action = data.get("action")
    if not isinstance(action, str):
        raise _error(text, f'Your reply needs an "action" key with a tool name as a string. {_ASK}')
    if action == FINAL_ANSWER:
        if "action_input" not in data:
            raise _error(text, f'Put your final answer in "action_input". {_ASK}')
        return AgentFinish({"output": data["action_input"]}, text)
    tool_input = data.get("action_input")
    if tool_input is None:
        tool_input = {}
    if not isinstance(tool_input, (str, dict)):
        raise _error(
            text, f'The "action_input" of {action} must be a JSON object or a string. {_ASK}'
        )
    return AgentAction(action, tool_input, text)  # pyright: ignore[reportUnknownArgumentType]


class JSONAgentOutputParser(AgentOutputParser):
    """Parses `{"action": ..., "action_input": ...}` replies; bad ones go back to the model."""

    def get_format_instructions(self) -> str:
        """How the model must reply."""
        return _ASK

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """The action or finish of the first JSON object in `text`."""
        return _to_step(first_json_object(text), text)


def create_structured_json_agent(
    llm: Runnable[Any, Any],
    tools: Sequence[BaseTool],
    prompt: BasePromptTemplate | None = None,
    *,
    constrained: bool = True,
    tools_renderer: ToolsRenderer = render_json_tools,
    message_formatter: MessageFormatter = format_json_scratchpad,
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """A JSON agent: `prompt | llm (optionally schema-constrained) | JSONAgentOutputParser()`."""
    prompt = JSON_AGENT_PROMPT if prompt is None else prompt
    require_variables(prompt, {"agent_scratchpad"})
    prompt = prompt.partial(
        tools=tools_renderer(list(tools)), tool_names=", ".join(t.name for t in tools)
    )
    if constrained:
        schema = json_agent_schema(tools)
        llm = llm.bind(response_format={"type": "json_object", "schema": schema})
    return (
        RunnablePassthrough.assign(agent_scratchpad=from_steps(message_formatter))
        | prompt
        | llm
        | JSONAgentOutputParser()
    )
