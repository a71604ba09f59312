"""`AgentExecutor`: runs an agent's think-act-observe loop with LangChain classic's API."""

from actloop.executor._agent_executor import (
    AgentExecutor,
    AgentExecutorIterator,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    Resume,
    RunnableAgent,
    RunnableMultiActionAgent,
)
from actloop.executor._chain_api import RUN_KEY, RunInfo
from actloop.executor._resume import PAUSED_KEY
from actloop.executor._run import RunView
from actloop.executor.trim import TokenBudgetTrim

__all__ = [
    "PAUSED_KEY",
    "RUN_KEY",
    "AgentExecutor",
    "AgentExecutorIterator",
    "BaseMultiActionAgent",
    "BaseSingleActionAgent",
    "Resume",
    "RunInfo",
    "RunView",
    "RunnableAgent",
    "RunnableMultiActionAgent",
    "TokenBudgetTrim",
]
