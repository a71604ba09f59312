# Ported from langchain-classic 1.0.8 sdist: tests/unit_tests/agents/test_types.py
# sha256 of the source: bd491fd55d67069ca8e215f76cd687ff93a3e7d540737e8f983d72a7180a474d
# Only the imports are changed (scripts/port_upstream.py).
from actloop.classic import AgentType
from actloop.classic import AGENT_TO_CLASS


def test_confirm_full_coverage() -> None:
    assert list(AgentType) == list(AGENT_TO_CLASS.keys())
