"""ChatOpenAI without a server: lazy imports, the missing extra, settings, secrets, bind_tools."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from actloop import tool
from actloop.exceptions import ActloopError, ConfigurationError, ModelError
from actloop.models import (
    AuthenticationError,
    BadRequestError,
    ChatOpenAI,
    InvalidResponseError,
    MissingDependencyError,
    ModelAPIError,
    ModelConnectionError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from actloop.runnables import RunnableBinding
from actloop.serialization import dumps


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )


def test_imports_stay_lazy() -> None:
    result = run_python(
        """
        import sys
        import actloop
        assert "openai" not in sys.modules, "import actloop imported openai"
        from actloop.models import ChatOpenAI, RateLimitError
        assert "openai" not in sys.modules, "accessing ChatOpenAI imported openai"
        ChatOpenAI(api_key="k")
        assert "openai" in sys.modules
        print("ok")
        """
    )
    assert (result.stdout, result.stderr) == ("ok\n", "")


def test_a_missing_openai_package_names_the_extra_to_install() -> None:
    result = run_python(
        """
        import sys
        sys.modules["openai"] = None
        from actloop.exceptions import ModelError
        from actloop.models import ChatOpenAI, MissingDependencyError
        try:
            ChatOpenAI(api_key="k")
        except MissingDependencyError as exc:
            assert isinstance(exc, ImportError) and isinstance(exc, ModelError)
            print(exc)
        """
    )
    assert result.stderr == ""
    assert result.stdout == 'ChatOpenAI needs the openai package: pip install "actloop[openai]"\n'


def test_an_unknown_name_in_models_is_an_attribute_error() -> None:
    import actloop.models

    with pytest.raises(AttributeError, match="has no attribute 'ChatNope'"):
        actloop.models.ChatNope  # noqa: B018  # pyright: ignore[reportAttributeAccessIssue]


def test_error_tree() -> None:
    assert issubclass(ModelError, ActloopError)
    assert issubclass(MissingDependencyError, ModelError)
    for cls in (
        BadRequestError,
        AuthenticationError,
        RateLimitError,
        ServerError,
        ModelConnectionError,
        InvalidResponseError,
        StreamInterruptedError,
    ):
        assert issubclass(cls, ModelAPIError) and issubclass(cls, ModelError)
    exc = StreamInterruptedError("cut")
    assert (exc.status_code, exc.body, exc.partial, exc.partial_text) == (None, None, None, "")


def test_the_key_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    llm = ChatOpenAI("gpt-4o", api_key="sk-very-secret", temperature=0.0)
    assert (
        repr(llm) == "ChatOpenAI(model='gpt-4o', api_key=SecretStr('**********'), temperature=0.0)"
    )
    assert str(llm.api_key) == "**********"
    assert llm.api_key.get_secret_value() == "sk-very-secret"
    assert llm.openai_api_key is llm.api_key
    assert "sk-very-secret" not in dumps(llm)
    assert "sk-very-secret" not in repr(llm.bind_tools([]))


def test_no_key_and_no_base_url_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match=r"pass api_key=\.\.\. or set OPENAI_API_KEY"):
        ChatOpenAI()
    local = ChatOpenAI("llama", base_url="http://127.0.0.1:8080/v1")
    assert local.api_key.get_secret_value() == ""


def test_settings_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    llm = ChatOpenAI("gpt-x", max_tokens=5, model_kwargs={"top_k": 3})
    assert (llm.model, llm.model_name, llm.base_url) == ("gpt-x", "gpt-x", "http://127.0.0.1:9/v1")
    assert llm.api_key.get_secret_value() == "sk-env"
    # a base URL (here from the environment): no usage chunk asked for, as in langchain-openai
    assert (llm.max_retries, llm.timeout, llm.stream_usage, llm.streaming) == (
        2,
        None,
        False,
        False,
    )
    assert llm._identifying_params() == {"model_name": "gpt-x", "max_tokens": 5, "top_k": 3}  # pyright: ignore[reportPrivateUsage]
    explicit = ChatOpenAI(api_key="sk-arg", base_url="http://127.0.0.1:10/v1")
    assert explicit.api_key.get_secret_value() == "sk-arg"
    assert explicit.base_url == "http://127.0.0.1:10/v1"


def test_langchain_field_names_are_accepted() -> None:
    llm = ChatOpenAI(
        model_name="gpt-y",
        openai_api_key="sk-lc",
        openai_api_base="http://127.0.0.1:11/v1",
        openai_organization="org-1",
        request_timeout=5.0,
        max_completion_tokens=7,
    )
    assert (llm.model, llm.base_url, llm.organization, llm.timeout, llm.max_tokens) == (
        "gpt-y",
        "http://127.0.0.1:11/v1",
        "org-1",
        5.0,
        7,
    )
    assert llm.api_key.get_secret_value() == "sk-lc"
    with pytest.raises(TypeError, match="unexpected keyword argument 'temprature'"):
        ChatOpenAI(api_key="k", temprature=0.1)


@tool
def search(query: str) -> str:
    """Search the web."""
    return query


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return term


def _kwargs(bound: Any) -> dict[str, Any]:
    assert isinstance(bound, RunnableBinding)
    return bound.kwargs  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("any", "required"),
        (True, "required"),
        ("lookup", {"type": "function", "function": {"name": "lookup"}}),
        (
            {"type": "function", "function": {"name": "search"}},
            {"type": "function", "function": {"name": "search"}},
        ),
    ],
)
def test_bind_tools_tool_choice(choice: Any, sent: Any) -> None:
    bound = ChatOpenAI(api_key="k").bind_tools([search, lookup], tool_choice=choice)
    assert _kwargs(bound)["tool_choice"] == sent
    assert [t["function"]["name"] for t in _kwargs(bound)["tools"]] == ["search", "lookup"]


def test_bind_tools_without_choice_and_with_options() -> None:
    llm = ChatOpenAI(api_key="k")
    assert set(_kwargs(llm.bind_tools([search]))) == {"tools"}
    bound = llm.bind_tools([search], strict=True, parallel_tool_calls=False)
    assert _kwargs(bound)["parallel_tool_calls"] is False
    assert _kwargs(bound)["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "Search the web.",
                "parameters": {
                    "properties": {"query": {"type": "string"}},
                    "required": ["query"],
                    "type": "object",
                    "additionalProperties": False,
                },
                "strict": True,
            },
        }
    ]


def test_bind_tools_rejects_a_choice_that_names_no_tool() -> None:
    with pytest.raises(ConfigurationError) as info:
        ChatOpenAI(api_key="k").bind_tools([search], tool_choice="serch")
    assert str(info.value) == (
        "tool_choice 'serch' names no bound tool; pass one of ['search'] or 'auto', 'none', "
        "'required', 'any'"
    )
