"""Memories made of other memories, as `langchain_classic.memory`'s: a read-only view of a
shared memory, several memories as one, and fixed variables."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from actloop.memory._base import BaseChatMemory, BaseMemory

__all__ = ["CombinedMemory", "ReadOnlySharedMemory", "SimpleMemory"]


class ReadOnlySharedMemory(BaseMemory):
    """Loads what `memory` holds and never saves to it (a tool's chain reading the agent's)."""

    def __init__(self, *, memory: Any) -> None:
        self.memory = memory

    @property
    def memory_variables(self) -> list[str]:
        """The shared memory's variables."""
        return self.memory.memory_variables

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The shared memory's variables for `inputs`."""
        return self.memory.load_memory_variables(inputs)

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Nothing: the memory is read-only."""

    def clear(self) -> None:
        """Nothing: the memory is read-only."""


class CombinedMemory(BaseMemory):
    """Several memories as one: their variables together (no name twice), each saves."""

    def __init__(self, *, memories: Sequence[Any]) -> None:
        seen: set[str] = set()
        for memory in memories:
            overlap = seen.intersection(memory.memory_variables)
            if overlap:
                raise ValueError(
                    f"The same variables {overlap} are found in multiplememory object, which "
                    "is not allowed by CombinedMemory."
                )
            seen |= set(memory.memory_variables)
        for memory in memories:
            if isinstance(memory, BaseChatMemory) and memory.input_key is None:
                warnings.warn(
                    "When using CombinedMemory, input keys should be so the input is known.  "
                    f"Was not set on {memory}",
                    stacklevel=2,
                )
        self.memories = list(memories)

    @property
    def memory_variables(self) -> list[str]:
        """Every memory's variables, in order."""
        return [name for memory in self.memories for name in memory.memory_variables]

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """Every memory's variables (ValueError if two give the same name)."""
        data: dict[str, Any] = {}
        for memory in self.memories:
            for key, value in memory.load_memory_variables(inputs).items():
                if key in data:
                    raise ValueError(f"The variable {key} is repeated in the CombinedMemory.")
                data[key] = value
        return data

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Each memory saves the run."""
        for memory in self.memories:
            memory.save_context(inputs, outputs)

    def clear(self) -> None:
        """Each memory forgets."""
        for memory in self.memories:
            memory.clear()


class SimpleMemory(BaseMemory):
    """Fixed variables that never change between runs."""

    def __init__(self, *, memories: dict[str, Any] | None = None) -> None:
        self.memories = dict(memories or {})

    @property
    def memory_variables(self) -> list[str]:
        """The variables' names."""
        return list(self.memories)

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The variables."""
        return self.memories

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> None:
        """Nothing: the variables are fixed."""

    def clear(self) -> None:
        """Nothing: the variables are fixed."""
