"""Per-library workload modules; each exposes the same small functions (see common.py)."""

LIBRARIES: dict[str, str] = {
    "actloop": "workloads.actloop_impl",
    "langchain": "workloads.langchain_ref",
    "langgraph": "workloads.langgraph_ref",
    "pydantic_ai": "workloads.pydantic_ai_ref",
    "smolagents": "workloads.smolagents_ref",
    "openai_agents": "workloads.openai_agents_ref",
}

LABELS: dict[str, str] = {
    "actloop": "actloop",
    "langchain": "LangChain classic AgentExecutor",
    "langgraph": "LangGraph / langchain.agents.create_agent",
    "pydantic_ai": "PydanticAI Agent",
    "smolagents": "smolagents ToolCallingAgent",
    "openai_agents": "OpenAI Agents SDK",
}

IMPORTS: dict[str, str] = {
    "actloop": "import actloop",
    "langchain": "from langchain_classic.agents import AgentExecutor",
    "langgraph": "from langchain.agents import create_agent",
    "pydantic_ai": "from pydantic_ai import Agent",
    "smolagents": "from smolagents import ToolCallingAgent",
    "openai_agents": "from agents import Agent, Runner",
}

# Also timed: what a user of the executor actually imports (the package import may be lazy).
EXTRA_IMPORTS: dict[str, str] = {
    "actloop": "from actloop import AgentExecutor, create_tool_calling_agent",
}
