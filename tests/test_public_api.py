"""The top-level package: `__all__` sorted and complete, and a fast, SDK-free import."""

from __future__ import annotations

import importlib
import subprocess
import sys

import actloop

PUBLIC_MODULES = [
    "agents",
    "callbacks",
    "chat_models",
    "exceptions",
    "executor",
    "format_scratchpad",
    "messages",
    "output_parsers",
    "prompts",
    "react",
    "runnables",
    "serialization",
    "tool_calling",
    "tools",
]

# Public in their module, not re-exported at the top: helper types and module-level constants.
NOT_AT_TOP = {
    "ACTION_INPUT_PATTERN",
    "ACTION_PATTERN",
    "ArgsSchema",
    "BaseMessagePromptTemplate",
    "BasePromptTemplate",
    "CallNote",
    "Callbacks",
    "Content",
    "FINAL_ANSWER_ACTION",
    "FORMAT_INSTRUCTIONS",
    "Generation",
    "IncrementalToolMessages",
    "InvalidToolCall",
    "LanguageModelInput",
    "MessageFormatter",
    "MessageLike",
    "PAUSED_KEY",
    "PromptValue",
    "PromptValueLike",
    "RunView",
    "StringPromptTemplate",
    "ToolCallChunk",
    "UsageMetadata",
    "attach_steps",
    "call_note",
    "called_by_user",
    "coerce_to_runnable",
    "convert_to_messages",
    "convert_to_openai_function",
    "ensure_config",
    "format_error",
    "get_color_mapping",
    "merge_configs",
    "message_chunk_to_message",
    "parse_ai_message_to_openai_tool_action",
    "parse_ai_message_to_tool_action",
    "print_text",
    "warn_deprecated",
}


def test_all_is_sorted() -> None:
    assert actloop.__all__ == sorted(actloop.__all__)


def test_every_name_in_all_exists() -> None:
    missing = [name for name in actloop.__all__ if not hasattr(actloop, name)]
    assert missing == []


# LangChain 1.x's agent API stays in `actloop.agents`, as in `langchain.agents`: `import actloop`
# does not load it (the package root sits below it in the layers).
ONLY_IN_AGENTS = {
    *("AgentState", "Command", "CompiledAgent", "GraphInterrupt", "GraphRecursionError"),
    *("Interrupt", "create_agent", "interrupt"),
    # what `create_agent` agents fill in or type, loaded lazily from `actloop.tools` / `.messages`
    *("InjectedState", "InjectedStore", "InjectedToolArg", "InjectedToolCallId", "ToolRuntime"),
    *("AnyMessage", "TextContentBlock"),
}


def test_all_is_complete() -> None:
    expected: set[str] = set()
    for module in PUBLIC_MODULES:
        expected |= set(importlib.import_module(f"actloop.{module}").__all__)
    assert sorted(expected - NOT_AT_TOP - ONLY_IN_AGENTS - set(actloop.__all__)) == []


def test_import_pulls_in_no_provider_sdk_and_no_pydantic() -> None:
    code = (
        "import sys, actloop\n"
        "heavy = ['openai', 'llama_cpp', 'langchain_core', 'pydantic', 'rich', 'httpx']\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
