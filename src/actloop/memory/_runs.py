"""How a chain uses its `memory=` (LangChain's `Chain.prep_inputs` / `prep_outputs`): the
memory's variables are merged into the inputs before the run (they win over given ones), and the
run's inputs and outputs are saved after it. Any object with LangChain's memory methods works,
a LangChain memory included (the messages it loads become actloop messages)."""

from __future__ import annotations

from typing import Any

from actloop.runnables._foreign import adopt_messages, is_langchain

__all__ = ["aload_into", "asave_run", "load_into", "one_input_key", "save_run"]


def one_input_key(input_keys: list[str], memory: Any) -> str:
    """The key a bare (non-dict) input goes to: the one input key memory does not fill."""
    keys = set(input_keys)
    if memory is not None:
        keys -= set(memory.memory_variables)
    if len(keys) != 1:
        raise ValueError(
            "A single string input was passed in, but this chain expects multiple inputs "
            f"({keys}). When a chain expects multiple inputs, please call it by passing "
            "in a dictionary, eg `chain({'foo': 1, 'bar': 2})`"
        )
    return next(iter(keys))


def _ours(variables: dict[str, Any], memory: Any) -> dict[str, Any]:
    """A LangChain memory's message lists as actloop messages."""
    if not is_langchain(memory):
        return variables
    return {k: adopt_messages(v) if isinstance(v, list) else v for k, v in variables.items()}


def load_into(memory: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """`inputs` with the memory's variables merged in (a new dict)."""
    return {**inputs, **_ours(memory.load_memory_variables(inputs), memory)}


async def aload_into(memory: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    """Async `load_into` (a memory without `aload_memory_variables` loads on a worker)."""
    aload = getattr(memory, "aload_memory_variables", None)
    if aload is None:
        import asyncio  # on first use: asyncio is heavy to import

        variables = await asyncio.to_thread(memory.load_memory_variables, inputs)
    else:
        variables = await aload(inputs)
    return {**inputs, **_ours(variables, memory)}


def save_run(memory: Any, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
    """The memory saves a finished run."""
    memory.save_context(inputs, outputs)


async def asave_run(memory: Any, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
    """Async `save_run` (a memory without `asave_context` saves on a worker)."""
    asave = getattr(memory, "asave_context", None)
    if asave is None:
        import asyncio  # on first use: asyncio is heavy to import

        await asyncio.to_thread(memory.save_context, inputs, outputs)
    else:
        await asave(inputs, outputs)
