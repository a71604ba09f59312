"""`AgentExecutor`: runs an agent's think-act-observe loop with LangChain classic's API."""

from actloop.executor._agent_executor import (
    AgentExecutor,
    AgentExecutorIterator,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    RunnableAgent,
    RunnableMultiActionAgent,
)
from actloop.executor._chain_api import RUN_KEY, RunInfo
from actloop.executor.trim import TokenBudgetTrim

__all__ = [
    "RUN_KEY",
    "AgentExecutor",
    "AgentExecutorIterator",
    "BaseMultiActionAgent",
    "BaseSingleActionAgent",
    "RunInfo",
    "RunnableAgent",
    "RunnableMultiActionAgent",
    "TokenBudgetTrim",
]
