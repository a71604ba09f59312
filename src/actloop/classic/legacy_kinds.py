"""The remaining legacy `AgentType` classes: `ChatAgent`, `ConversationalAgent`,
`ConversationalChatAgent`, `ReActDocstoreAgent` and `SelfAskWithSearchAgent`, each a small
`Agent` with LangChain's prompt, parser, scratchpad and stop words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from actloop.callbacks import Callbacks
from actloop.classic._agent import Agent, validate_tools_single_input
from actloop.classic._chain import LLMChain
from actloop.classic._prompt_texts import SELF_ASK_TEMPLATE, WIKI_EXAMPLES, WIKI_SUFFIX
from actloop.classic.chat import FORMAT_INSTRUCTIONS as CHAT_FORMAT_INSTRUCTIONS
from actloop.classic.chat import ChatOutputParser
from actloop.classic.conversational import FORMAT_INSTRUCTIONS as CONVO_FORMAT_INSTRUCTIONS
from actloop.classic.conversational import ConvoOutputParser
from actloop.classic.self_ask import SelfAskOutputParser
from actloop.classic.xml import XML_AGENT_INSTRUCTIONS, XMLAgentOutputParser
from actloop.exceptions import OutputParserException
from actloop.executor import BaseSingleActionAgent
from actloop.json_agent import first_json_object
from actloop.messages import AIMessage, BaseMessage, HumanMessage
from actloop.output_parsers import AgentOutputParser
from actloop.prompts import (
    BasePromptTemplate,
    ChatPromptTemplate,
    HumanMessagePromptTemplate,
    MessagesPlaceholder,
    PromptTemplate,
    SystemMessagePromptTemplate,
)
from actloop.runnables._base import Runnable
from actloop.steps import AgentAction, AgentFinish
from actloop.tools import BaseTool

__all__ = [
    "ChatAgent",
    "ConversationalAgent",
    "ConversationalChatAgent",
    "ConversationalChatOutputParser",
    "ReActDocstoreAgent",
    "ReActOutputParser",
    "SelfAskWithSearchAgent",
    "XMLAgent",
]

Steps = list[tuple[AgentAction, Any]]
_PREVIOUS_WORK = (
    "This was your previous work (but I haven't seen any of it! I only see what you return as "
    "final answer):\n"
)


class _ThoughtAgent(Agent):
    """`Observation: ` after each action, the model goes on after `Thought:`."""

    @property
    def observation_prefix(self) -> str:
        return "Observation: "

    @property
    def llm_prefix(self) -> str:
        return "Thought:"

    @classmethod
    def _validate_tools(cls, tools: Sequence[BaseTool]) -> None:
        validate_tools_single_input(cls.__name__, tools)


# -- chat zero-shot -------------------------------------------------------------------------------

CHAT_SYSTEM_MESSAGE_PREFIX = (
    "Answer the following questions as best you can. You have access to the following tools:"
)
CHAT_SYSTEM_MESSAGE_SUFFIX = (
    "Begin! Reminder to always use the exact characters `Final Answer` when responding."
)
CHAT_HUMAN_MESSAGE = "{input}\n\n{agent_scratchpad}"


class ChatAgent(_ThoughtAgent):
    """AgentType.CHAT_ZERO_SHOT_REACT_DESCRIPTION: the JSON-blob ReAct format on a chat model."""

    _agent_type: ClassVar[str] = "chat-zero-shot-react-description"

    @property
    def _stop(self) -> list[str]:
        return ["Observation:"]

    def _construct_scratchpad(self, intermediate_steps: Steps) -> Any:
        scratchpad = super()._construct_scratchpad(intermediate_steps)
        return f"{_PREVIOUS_WORK}{scratchpad}" if scratchpad else scratchpad

    @classmethod
    def _get_default_output_parser(cls, **kwargs: Any) -> AgentOutputParser:
        return ChatOutputParser()

    @classmethod
    def create_prompt(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        tools: Sequence[BaseTool],
        system_message_prefix: str = CHAT_SYSTEM_MESSAGE_PREFIX,
        system_message_suffix: str = CHAT_SYSTEM_MESSAGE_SUFFIX,
        human_message: str = CHAT_HUMAN_MESSAGE,
        format_instructions: str = CHAT_FORMAT_INSTRUCTIONS,
        input_variables: list[str] | None = None,
    ) -> BasePromptTemplate:
        """A system message with the tools and instructions, then the human message."""
        tool_strings = "\n".join(f"{t.name}: {t.description}" for t in tools)
        instructions = format_instructions.format(tool_names=", ".join(t.name for t in tools))
        template = (
            f"{system_message_prefix}\n\n{tool_strings}\n\n{instructions}\n\n"
            f"{system_message_suffix}"
        )
        messages: list[Any] = [
            SystemMessagePromptTemplate.from_template(template),
            HumanMessagePromptTemplate.from_template(human_message),
        ]
        return ChatPromptTemplate(
            messages=messages, input_variables=input_variables or ["input", "agent_scratchpad"]
        )

    @classmethod
    def from_llm_and_tools(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        output_parser: AgentOutputParser | None = None,
        system_message_prefix: str = CHAT_SYSTEM_MESSAGE_PREFIX,
        system_message_suffix: str = CHAT_SYSTEM_MESSAGE_SUFFIX,
        human_message: str = CHAT_HUMAN_MESSAGE,
        format_instructions: str = CHAT_FORMAT_INSTRUCTIONS,
        input_variables: list[str] | None = None,
        **kwargs: Any,
    ) -> Agent:
        """The agent with its chat prompt for `tools`."""
        cls._validate_tools(tools)
        prompt = cls.create_prompt(
            tools,
            system_message_prefix,
            system_message_suffix,
            human_message,
            format_instructions,
            input_variables,
        )
        return cls._from_prompt(llm, tools, prompt, callback_manager, output_parser, kwargs)


# -- conversational -------------------------------------------------------------------------------

CONVO_PREFIX = (
    "Assistant is a large language model trained by OpenAI.\n\nAssistant is designed to be able "
    "to assist with a wide range of tasks, from answering simple questions to providing in-depth "
    "explanations and discussions on a wide range of topics. As a language model, Assistant is "
    "able to generate human-like text based on the input it receives, allowing it to engage in "
    "natural-sounding conversations and provide responses that are coherent and relevant to the "
    "topic at hand.\n\nAssistant is constantly learning and improving, and its capabilities are "
    "constantly evolving. It is able to process and understand large amounts of text, and can "
    "use this knowledge to provide accurate and informative responses to a wide range of "
    "questions. Additionally, Assistant is able to generate its own text based on the input it "
    "receives, allowing it to engage in discussions and provide explanations and descriptions on "
    "a wide range of topics.\n\nOverall, Assistant is a powerful {noun} that can help with a wide "
    "range of tasks and provide valuable insights and information on a wide range of topics. "
    "Whether you need help with a specific question or just want to have a conversation about a "
    "particular topic, Assistant is here to assist."
)
CONVO_SUFFIX = (
    "Begin!\n\nPrevious conversation history:\n{chat_history}\n\nNew input: {input}\n"
    "{agent_scratchpad}"
)


class ConversationalAgent(_ThoughtAgent):
    """AgentType.CONVERSATIONAL_REACT_DESCRIPTION: ReAct with chat history, `AI:` to answer."""

    _agent_type: ClassVar[str] = "conversational-react-description"
    ai_prefix: str = "AI"

    @classmethod
    def _get_default_output_parser(cls, ai_prefix: str = "AI", **kwargs: Any) -> AgentOutputParser:
        return ConvoOutputParser(ai_prefix=ai_prefix)

    @classmethod
    def create_prompt(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        tools: Sequence[BaseTool],
        prefix: str = CONVO_PREFIX.format(noun="tool") + "\n\nTOOLS:\n------\n\n"
        "Assistant has access to the following tools:",
        suffix: str = CONVO_SUFFIX,
        format_instructions: str = CONVO_FORMAT_INSTRUCTIONS,
        ai_prefix: str = "AI",
        human_prefix: str = "Human",
        input_variables: list[str] | None = None,
    ) -> PromptTemplate:
        """Prefix, the tools as `> name: description`, the instructions, then the suffix."""
        tool_strings = "\n".join(f"> {t.name}: {t.description}" for t in tools)
        instructions = format_instructions.format(
            tool_names=", ".join(t.name for t in tools),
            ai_prefix=ai_prefix,
            human_prefix=human_prefix,
        )
        return PromptTemplate(
            template=f"{prefix}\n\n{tool_strings}\n\n{instructions}\n\n{suffix}",
            input_variables=input_variables or ["input", "chat_history", "agent_scratchpad"],
        )

    @classmethod
    def from_llm_and_tools(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        output_parser: AgentOutputParser | None = None,
        ai_prefix: str = "AI",
        human_prefix: str = "Human",
        input_variables: list[str] | None = None,
        **kwargs: Any,
    ) -> Agent:
        """The agent with its prompt for `tools` (`chat_history` is an input)."""
        cls._validate_tools(tools)
        prompt = cls.create_prompt(
            tools, ai_prefix=ai_prefix, human_prefix=human_prefix, input_variables=input_variables
        )
        parser = output_parser or cls._get_default_output_parser(ai_prefix=ai_prefix)
        kwargs["ai_prefix"] = ai_prefix
        return cls._from_prompt(llm, tools, prompt, callback_manager, parser, kwargs)


# -- conversational chat --------------------------------------------------------------------------

CONVO_CHAT_SUFFIX = (
    "TOOLS\n------\nAssistant can ask the user to use tools to look up information that may be "
    "helpful in answering the users original question. The tools the human can use are:\n\n"
    "{{tools}}\n\n{format_instructions}\n\nUSER'S INPUT\n--------------------\nHere is the "
    "user's input (remember to respond with a markdown code snippet of a json blob with a single "
    "action, and NOTHING else):\n\n{{{{input}}}}"
)
CONVO_CHAT_FORMAT_INSTRUCTIONS = (
    "RESPONSE FORMAT INSTRUCTIONS\n----------------------------\n\nWhen responding to me, please "
    "output a response in one of two formats:\n\n**Option 1:**\nUse this if you want the human "
    "to use a tool.\nMarkdown code snippet formatted in the following schema:\n\n```json\n"
    '{{{{\n    "action": string, \\\\ The action to take. Must be one of {tool_names}\n    '
    '"action_input": string \\\\ The input to the action\n}}}}\n```\n\n**Option #2:**\nUse this '
    "if you want to respond directly to the human. Markdown code snippet formatted in the "
    'following schema:\n\n```json\n{{{{\n    "action": "Final Answer",\n    "action_input": '
    "string \\\\ You should put what you want to return to use here\n}}}}\n```"
)
CONVO_CHAT_TOOL_RESPONSE = (
    "TOOL RESPONSE:\n---------------------\n{observation}\n\nUSER'S INPUT\n"
    "--------------------\n\nOkay, so what is the response to my last comment? If using "
    "information obtained from the tools you must mention it explicitly without mentioning the "
    "tool names - I have forgotten all TOOL RESPONSES! Remember to respond with a markdown code "
    "snippet of a json blob with a single action, and NOTHING else."
)


class ConversationalChatOutputParser(AgentOutputParser):
    """The conversational chat agent's parser: a markdown JSON blob with `action` and
    `action_input` (`"Final Answer"` finishes); LangChain names it `ConvoOutputParser` too."""

    format_instructions: str = CONVO_CHAT_FORMAT_INSTRUCTIONS

    def get_format_instructions(self) -> str:
        """The JSON response instructions."""
        return self.format_instructions

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action, a finish, or OutputParserException."""
        try:
            response = first_json_object(text)
            if "action" not in response or "action_input" not in response:
                raise OutputParserException(
                    f"Missing 'action' or 'action_input' in LLM output: {text}"
                )
            action, action_input = response["action"], response["action_input"]
            if action == "Final Answer":
                return AgentFinish({"output": action_input}, text)
            return AgentAction(action, action_input, text)
        except Exception as exc:
            raise OutputParserException(f"Could not parse LLM output: {text}") from exc


class ConversationalChatAgent(_ThoughtAgent):
    """AgentType.CHAT_CONVERSATIONAL_REACT_DESCRIPTION: chat history, JSON replies, tool results
    sent back as human messages."""

    _agent_type: ClassVar[str] = "chat-conversational-react-description"
    template_tool_response: str = CONVO_CHAT_TOOL_RESPONSE

    @classmethod
    def _get_default_output_parser(cls, **kwargs: Any) -> AgentOutputParser:
        return ConversationalChatOutputParser()

    def _construct_scratchpad(self, intermediate_steps: Steps) -> list[BaseMessage]:
        thoughts: list[BaseMessage] = []
        for action, observation in intermediate_steps:
            thoughts.append(AIMessage(content=action.log))
            text = self.template_tool_response.format(observation=observation)
            thoughts.append(HumanMessage(content=text))
        return thoughts

    @classmethod
    def create_prompt(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        tools: Sequence[BaseTool],
        system_message: str = CONVO_PREFIX.format(noun="system"),
        human_message: str = CONVO_CHAT_SUFFIX,
        input_variables: list[str] | None = None,
        output_parser: AgentOutputParser | None = None,
    ) -> BasePromptTemplate:
        """System message, chat history, the human message with tools and format, scratchpad."""
        parser = output_parser or cls._get_default_output_parser()
        human = human_message.format(format_instructions=parser.get_format_instructions())
        final = human.format(
            tool_names=", ".join(t.name for t in tools),
            tools="\n".join(f"> {t.name}: {t.description}" for t in tools),
        )
        messages: list[Any] = [
            SystemMessagePromptTemplate.from_template(system_message),
            MessagesPlaceholder(variable_name="chat_history"),
            HumanMessagePromptTemplate.from_template(final),
            MessagesPlaceholder(variable_name="agent_scratchpad"),
        ]
        return ChatPromptTemplate(
            messages=messages,
            input_variables=input_variables or ["input", "chat_history", "agent_scratchpad"],
        )

    @classmethod
    def from_llm_and_tools(  # pyright: ignore[reportIncompatibleMethodOverride]
        cls,
        llm: Runnable[Any, Any],
        tools: Sequence[BaseTool],
        callback_manager: Callbacks = None,
        output_parser: AgentOutputParser | None = None,
        input_variables: list[str] | None = None,
        **kwargs: Any,
    ) -> Agent:
        """The agent with its chat prompt for `tools` (`chat_history` is an input)."""
        cls._validate_tools(tools)
        parser = output_parser or cls._get_default_output_parser()
        prompt = cls.create_prompt(tools, input_variables=input_variables, output_parser=parser)
        return cls._from_prompt(llm, tools, prompt, callback_manager, parser, kwargs)


# -- ReAct docstore and self-ask ------------------------------------------------------------------


class ReActOutputParser(AgentOutputParser):
    """The last line `Action: Tool[input]`; `Finish[answer]` finishes."""

    def parse(self, text: str) -> AgentAction | AgentFinish:
        """An action, a finish, or OutputParserException."""
        prefix = "Action: "
        last = text.strip().split("\n")[-1]
        if not last.startswith(prefix):
            raise OutputParserException(f"Could not parse LLM Output: {text}")
        directive = last[len(prefix) :]
        # LangChain's `re.search(r"(.*?)\[(.*?)\]", directive)` as a linear scan (the regex is
        # cubic on `[[[[...`): the text up to the first `[`, then up to the next `]`.
        opened = directive.find("[")
        closed = directive.find("]", opened + 1) if opened != -1 else -1
        if closed == -1:
            raise OutputParserException(f"Could not parse action directive: {directive}")
        action, action_input = directive[:opened], directive[opened + 1 : closed]
        if action == "Finish":
            return AgentFinish({"output": action_input}, text)
        return AgentAction(action, action_input, text)


class _FixedPromptAgent(Agent):
    """A legacy agent whose prompt does not depend on the tools (a few-shot text)."""

    _prompt: ClassVar[PromptTemplate]
    _tool_names: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def create_prompt(cls, tools: Sequence[BaseTool]) -> BasePromptTemplate:
        return cls._prompt

    @classmethod
    def _validate_tools(cls, tools: Sequence[BaseTool]) -> None:
        validate_tools_single_input(cls.__name__, tools)
        names = frozenset(t.name for t in tools)
        if len(tools) != len(cls._tool_names) or names != cls._tool_names:
            expected = " and ".join(sorted(cls._tool_names))
            raise ValueError(f"{cls.__name__} needs exactly the tools {expected}, got {names}")


class ReActDocstoreAgent(_FixedPromptAgent):
    """AgentType.REACT_DOCSTORE: `Search[...]`/`Lookup[...]` over a document store (the tools
    must be named Search and Lookup), LangChain's few-shot Wikipedia prompt."""

    _agent_type: ClassVar[str] = "react-docstore"
    _prompt = PromptTemplate(
        template="\n\n".join(["", *WIKI_EXAMPLES, WIKI_SUFFIX]),
        input_variables=["agent_scratchpad", "input"],
    )
    _tool_names = frozenset({"Lookup", "Search"})

    @classmethod
    def _get_default_output_parser(cls, **kwargs: Any) -> AgentOutputParser:
        return ReActOutputParser()

    @property
    def observation_prefix(self) -> str:
        return "Observation: "

    @property
    def _stop(self) -> list[str]:
        return ["\nObservation:"]

    @property
    def llm_prefix(self) -> str:
        return "Thought:"


class SelfAskWithSearchAgent(_FixedPromptAgent):
    """AgentType.SELF_ASK_WITH_SEARCH: follow-up questions answered by the one tool named
    `Intermediate Answer`, LangChain's few-shot prompt."""

    _agent_type: ClassVar[str] = "self-ask-with-search"
    _prompt = PromptTemplate(
        template=SELF_ASK_TEMPLATE, input_variables=["input", "agent_scratchpad"]
    )
    _tool_names = frozenset({"Intermediate Answer"})

    @classmethod
    def _get_default_output_parser(cls, **kwargs: Any) -> AgentOutputParser:
        return SelfAskOutputParser()

    @property
    def observation_prefix(self) -> str:
        return "Intermediate answer: "

    @property
    def llm_prefix(self) -> str:
        return ""


# -- XML ------------------------------------------------------------------------------------------


class XMLAgent(BaseSingleActionAgent):
    """The legacy XML agent: an `LLMChain` (with an `XMLAgentOutputParser`) gets the steps as
    XML, the tools and the question; it stops at `</tool_input>` or `</final_answer>`."""

    _agent_type: ClassVar[str] = "xml"

    def __init__(self, *, tools: Sequence[BaseTool], llm_chain: LLMChain) -> None:
        self.tools = list(tools)
        self.llm_chain = llm_chain

    @property
    def input_keys(self) -> list[str]:
        return ["input"]

    @staticmethod
    def get_default_prompt() -> ChatPromptTemplate:
        """LangChain's XML instructions, then the steps as the AI's message."""
        return ChatPromptTemplate.from_messages(
            [("human", XML_AGENT_INSTRUCTIONS), ("ai", "{intermediate_steps}")]
        )

    @staticmethod
    def get_default_output_parser() -> XMLAgentOutputParser:
        """The XML parser."""
        return XMLAgentOutputParser()

    def _inputs(self, intermediate_steps: Steps, kwargs: dict[str, Any]) -> dict[str, Any]:
        log = "".join(
            f"<tool>{a.tool}</tool><tool_input>{a.tool_input}</tool_input>"
            f"<observation>{o}</observation>"
            for a, o in intermediate_steps
        )
        tools = "".join(f"{t.name}: {t.description}\n" for t in self.tools)
        return {
            "intermediate_steps": log,
            "tools": tools,
            "question": kwargs["input"],
            "stop": ["</tool_input>", "</final_answer>"],
        }

    def plan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """One chain call; the chain's parser gives the action or the finish."""
        inputs = self._inputs(intermediate_steps, kwargs)
        config: Any = {"callbacks": callbacks} if callbacks is not None else {}
        return self.llm_chain.invoke(inputs, config)[self.llm_chain.output_key]

    async def aplan(
        self, intermediate_steps: Steps, callbacks: Callbacks = None, **kwargs: Any
    ) -> AgentAction | AgentFinish:
        """Async `plan`."""
        inputs = self._inputs(intermediate_steps, kwargs)
        config: Any = {"callbacks": callbacks} if callbacks is not None else {}
        return (await self.llm_chain.ainvoke(inputs, config))[self.llm_chain.output_key]
