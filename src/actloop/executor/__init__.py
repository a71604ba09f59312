"""`AgentExecutor`: runs an agent's think-act-observe loop with LangChain classic's API."""

from actloop.executor._agent_executor import (
    AgentExecutor,
    AgentExecutorIterator,
    BaseMultiActionAgent,
    BaseSingleActionAgent,
    RunnableAgent,
    RunnableMultiActionAgent,
)

__all__ = [
    "AgentExecutor",
    "AgentExecutorIterator",
    "BaseMultiActionAgent",
    "BaseSingleActionAgent",
    "RunnableAgent",
    "RunnableMultiActionAgent",
]
