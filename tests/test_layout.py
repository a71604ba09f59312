"""The package layout: public paths in `__module__` and serialized ids, a short root, old ids."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

import actloop
from actloop import (
    AgentExecutor,
    PromptTemplate,
    RunnableLambda,
    SerializationError,
    dumpd,
    dumps,
    load,
    loads,
    tool,
)
from actloop.prompts import ChatPromptTemplate, MessagesPlaceholder
from actloop.testing import ScriptedChatModel
from actloop.tool_calling import create_tool_calling_agent

PUBLIC_PACKAGES = [
    "actloop",
    "actloop.agents",
    "actloop.callbacks",
    "actloop.checkpoint",
    "actloop.executor",
    "actloop.memory",
    "actloop.messages",
    "actloop.prompts",
    "actloop.runnables",
    "actloop.serialization",
    "actloop.testing",
    "actloop.tools",
]


def _exported(package: str) -> list[tuple[str, Any]]:
    """The classes and functions a public package lists in `__all__`."""
    module = importlib.import_module(package)
    objects = [(name, getattr(module, name)) for name in module.__all__]
    return [(n, o) for n, o in objects if inspect.isclass(o) or inspect.isfunction(o)]


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_exported_names_report_a_public_module(package: str) -> None:
    exported = _exported(package)
    assert exported  # every listed package exports classes or functions
    private = {
        name: obj.__module__
        for name, obj in exported
        if any(part.startswith("_") for part in obj.__module__.split("."))
    }
    assert private == {}


def _identity(x: Any) -> Any:
    return x


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_dumpd_of_a_runnable_lambda_names_actloop_runnables() -> None:
    assert dumpd(RunnableLambda(_identity)) == {
        "lc": 1,
        "type": "not_implemented",
        "id": ["actloop", "runnables", "RunnableLambda"],
        "repr": "RunnableLambda(_identity)",
    }


def test_dumpd_ids_name_public_modules_only() -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("human", "{input}"), MessagesPlaceholder("agent_scratchpad")]
    )
    agent = create_tool_calling_agent(ScriptedChatModel([]), [add], prompt)
    executor = AgentExecutor(agent=agent, tools=[add])
    assert dumpd(PromptTemplate.from_template("hi {name}"))["id"] == [
        "actloop",
        "prompts",
        "PromptTemplate",
    ]
    assert dumpd(add)["id"] == ["actloop", "tools", "StructuredTool"]
    assert dumpd(executor)["id"] == ["actloop", "executor", "AgentExecutor"]
    assert dumpd(prompt)["id"] == ["actloop", "prompts", "ChatPromptTemplate"]


# The root holds what users import plus the packages of LAYOUT.md's tree, nothing else: a private
# module belongs inside the package it serves.
ROOT_ENTRIES = {
    *("__init__.py", "__main__.py", "py.typed", "exceptions.py"),
    *(
        "steps.py",
        "agents",
        "outputs.py",
        "output_parsers.py",
        "chat_models.py",
        "llms.py",
        "testing.py",
    ),
    *("react.py", "tool_calling.py", "json_agent.py", "format_scratchpad.py", "classic"),
    *("messages", "serialization", "runnables", "callbacks", "prompts", "tools", "models"),
    *("executor", "checkpoint", "distributed", "server", "mcp", "tracing", "integrations", "cli"),
    *("memory", "chat_history.py"),
}


def test_the_package_root_holds_only_the_planned_entries() -> None:
    root = Path(actloop.__file__).parent
    entries = {p.name for p in root.iterdir() if p.name != "__pycache__"}
    assert entries == ROOT_ENTRIES


# What actloop wrote for a RunnableLambda before the layout change (commit c03a0ce).
OLD_NOT_IMPLEMENTED = {
    "lc": 1,
    "type": "not_implemented",
    "id": ["actloop", "_compose", "RunnableLambda"],
    "repr": "RunnableLambda(_identity)",
}
OLD_CONSTRUCTOR = {
    "lc": 1,
    "type": "constructor",
    "id": ["actloop", "_compose", "RunnableLambda"],
    "kwargs": {},
}


def test_old_not_implemented_ids_load_as_before() -> None:
    with pytest.raises(SerializationError) as info:
        load(OLD_NOT_IMPLEMENTED)
    assert str(info.value) == (
        "Cannot load ['actloop', '_compose', 'RunnableLambda']: it was serialized as "
        "not_implemented (repr='RunnableLambda(_identity)')."
    )
    assert load(OLD_NOT_IMPLEMENTED, ignore_unserializable_fields=True) is None
    stored = json.dumps({"step": OLD_NOT_IMPLEMENTED, "n": 1})  # as a journal holds it
    assert loads(stored, ignore_unserializable_fields=True) == {"step": None, "n": 1}


def test_old_constructor_ids_are_refused_as_before() -> None:
    for kwargs in ({}, {"ignore_unserializable_fields": True}):
        with pytest.raises(SerializationError) as info:
            load(OLD_CONSTRUCTOR, **kwargs)
        assert str(info.value) == (
            "Deserialization of ['actloop', '_compose', 'RunnableLambda'] is not allowed: "
            "load builds only actloop's messages and agent data classes "
            "(narrow them with allowed_objects=...)."
        )


def test_new_ids_load_like_the_old_ones() -> None:
    written = dumps(RunnableLambda(_identity))
    with pytest.raises(SerializationError) as info:
        loads(written)
    assert str(info.value) == (
        "Cannot load ['actloop', 'runnables', 'RunnableLambda']: it was serialized as "
        "not_implemented (repr='RunnableLambda(_identity)')."
    )
    assert loads(written, ignore_unserializable_fields=True) is None
