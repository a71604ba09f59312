"""The embedded local model, in process, and the same model behind a real llama.cpp server."""

from __future__ import annotations

import json
import subprocess
import sys

from actloop import AgentExecutor, AIMessage
from actloop.json_agent import json_agent_schema
from actloop.models import ChatOpenAI, LocalChatModel
from actloop.models.local import default_model_path, local_json_agent
from actloop.tools.builtin import calculator, clock

QUESTION = "What is 12 * 7 + 5?"


def test_model_file_comes_from_the_installed_package() -> None:
    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


def test_invoke_and_stream_agree_at_temperature_zero() -> None:
    model = LocalChatModel(temperature=0.0, max_tokens=24, seed=1)
    reply = model.invoke("Say hello in three words.")
    assert isinstance(reply, AIMessage)
    assert reply.text.strip() != ""
    assert reply.usage_metadata is not None and reply.usage_metadata["output_tokens"] > 0
    streamed = list(
        LocalChatModel(temperature=0.0, max_tokens=24, seed=1).stream("Say hello in three words.")
    )
    assert len(streamed) > 2
    assert "".join(c.text for c in streamed) == reply.text


def test_schema_constrained_reply_always_parses() -> None:
    schema = json_agent_schema([calculator, clock])
    model = LocalChatModel(temperature=1.0, max_tokens=120, seed=7).bind(
        response_format={"type": "json_object", "schema": schema}
    )
    for _ in range(3):
        reply = json.loads(model.invoke("Tell me a story about a cat.").text)
        assert reply["action"] in ("calculator", "clock", "Final Answer")


def test_demo_task_in_process() -> None:
    llm = LocalChatModel(seed=0)
    executor = AgentExecutor(
        agent=local_json_agent(llm, [calculator, clock]),
        tools=[calculator, clock],
        max_iterations=4,
        handle_parsing_errors=True,
        return_intermediate_steps=True,
    )
    result = executor.invoke({"input": QUESTION})
    (action, observation), *_ = result["intermediate_steps"]
    assert (action.tool, observation) == ("calculator", "89")
    assert "89" in result["output"]


def test_missing_llama_cpp_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['llama_cpp'] = None\n"
        "from actloop.models import LocalChatModel\n"
        "try:\n    LocalChatModel().invoke('hi')\n"
        "except ImportError as e:\n    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == (
        "MissingDependencyError the local model needs llama-cpp-python: "
        'pip install "actloop[local]"\n'
    )


def test_chat_openai_against_the_real_server(llama_server: str) -> None:
    model = ChatOpenAI(model="smollm2", base_url=llama_server, temperature=0.0, seed=3)
    reply = model.bind(max_tokens=20).invoke("Name a colour.")
    assert reply.text.strip() != ""
    assert reply.usage_metadata is not None and reply.usage_metadata["input_tokens"] > 0
    chunks = list(model.bind(max_tokens=20).stream("Name a colour."))
    assert len(chunks) > 2
    assert "".join(c.text for c in chunks) == reply.text


def test_agent_end_to_end_through_the_real_server(llama_server: str) -> None:
    llm = ChatOpenAI(model="smollm2", base_url=llama_server, temperature=0.0, seed=0)
    executor = AgentExecutor(
        agent=local_json_agent(llm, [calculator, clock]),
        tools=[calculator, clock],
        max_iterations=4,
        handle_parsing_errors=True,
        return_intermediate_steps=True,
    )
    result = executor.invoke({"input": QUESTION})
    (action, observation), *_ = result["intermediate_steps"]
    assert (action.tool, observation) == ("calculator", "89")
    assert "89" in result["output"]
