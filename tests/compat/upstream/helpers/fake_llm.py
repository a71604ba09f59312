# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/llms/fake_llm.py
# sha256 of the source: 4b289ba3781cfe10c135cb3b7867c1ed0b008af0e28c8291b19917d6dffa4af9
# Only the imports are changed (scripts/port_upstream.py).
"""Fake LLM wrapper for testing purposes."""

from collections.abc import Mapping
from typing import Any, cast

from actloop.callbacks import CallbackManagerForLLMRun
from actloop.llms import LLM
from pydantic import model_validator
from typing_extensions import override


class FakeLLM(LLM):
    """Fake LLM wrapper for testing purposes."""

    queries: Mapping | None = None
    sequential_responses: bool | None = False
    response_index: int = 0

    @model_validator(mode="before")
    @classmethod
    def check_queries_required(cls, values: dict) -> dict:
        if values.get("sequential_response") and not values.get("queries"):
            msg = "queries is required when sequential_response is set to True"
            raise ValueError(msg)
        return values

    def get_num_tokens(self, text: str) -> int:
        """Return number of tokens."""
        return len(text.split())

    @property
    def _llm_type(self) -> str:
        """Return type of llm."""
        return "fake"

    @override
    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        if self.sequential_responses:
            return self._get_next_response_in_sequence
        if self.queries is not None:
            return self.queries[prompt]
        if stop is None:
            return "foo"
        return "bar"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {}

    @property
    def _get_next_response_in_sequence(self) -> str:
        queries = cast("Mapping", self.queries)
        response = queries[list(queries.keys())[self.response_index]]
        self.response_index = self.response_index + 1
        return response
