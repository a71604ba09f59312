"""Model results as callback handlers see them (langchain-core's LLMResult and generations)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from actloop.messages import AIMessageChunk, BaseMessage

__all__ = [
    "ChatGeneration",
    "ChatGenerationChunk",
    "ChatResult",
    "Generation",
    "GenerationChunk",
    "LLMResult",
]


class Generation:
    """A plain-text model output (a text-completion reply, or a string given to a parser)."""

    __slots__ = ("generation_info", "text")

    def __init__(self, text: str = "", generation_info: dict[str, Any] | None = None) -> None:
        self.text = text
        self.generation_info = generation_info

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and self.text == other.text  # pyright: ignore[reportAttributeAccessIssue]
            and self.generation_info == other.generation_info  # pyright: ignore[reportAttributeAccessIssue]
        )

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def __repr__(self) -> str:
        return f"{type(self).__name__}(text={self.text!r})"

    def model_dump(self) -> dict[str, Any]:
        """langchain-core's dump (what LangChain tracers store as a run's outputs)."""
        return {"text": self.text, "generation_info": self.generation_info, "type": "Generation"}


class GenerationChunk(Generation):
    """A streamed piece of a text reply; `+` joins the text."""

    __slots__ = ()

    def __add__(self, other: GenerationChunk) -> GenerationChunk:
        info = {**(self.generation_info or {}), **(other.generation_info or {})} or None
        return GenerationChunk(self.text + other.text, info)


class ChatGeneration:
    """One chat model reply: the message and its text."""

    __slots__ = ("generation_info", "message")
    message: BaseMessage
    generation_info: dict[str, Any] | None

    def __init__(self, message: BaseMessage, generation_info: dict[str, Any] | None = None) -> None:
        self.message = message
        self.generation_info = generation_info

    @property
    def text(self) -> str:
        """The reply's text content."""
        return str(self.message.text)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and self.message == other.message
            and self.generation_info == other.generation_info
        )

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def __repr__(self) -> str:
        return f"{type(self).__name__}(message={self.message!r})"

    def model_dump(self) -> dict[str, Any]:
        """langchain-core's dump; LangChain tracers replace `message` with their own dump of it."""
        return {
            "text": self.text,
            "generation_info": self.generation_info,
            "type": "ChatGeneration",
            "message": self.message.model_dump(),
        }


class ChatGenerationChunk(ChatGeneration):
    """A streamed piece of a chat reply; `+` merges the message chunks."""

    __slots__ = ()
    message: AIMessageChunk  # pyright: ignore[reportIncompatibleVariableOverride]  # chunks only

    def __add__(self, other: ChatGenerationChunk) -> ChatGenerationChunk:
        info = {**(self.generation_info or {}), **(other.generation_info or {})} or None
        return ChatGenerationChunk(self.message + other.message, info)


class ChatResult:
    """What a langchain-core style `_generate` returns: the reply generations and provider data."""

    __slots__ = ("generations", "llm_output")

    def __init__(
        self, generations: list[ChatGeneration], llm_output: dict[str, Any] | None = None
    ) -> None:
        self.generations = generations
        self.llm_output = llm_output

    def __repr__(self) -> str:
        return f"ChatResult(generations={self.generations!r}, llm_output={self.llm_output!r})"


class LLMResult:
    """What `on_llm_end` receives: one list of generations per prompt, plus provider output."""

    __slots__ = ("generations", "llm_output")

    def __init__(
        self, generations: list[list[Any]], llm_output: dict[str, Any] | None = None
    ) -> None:
        self.generations = generations
        self.llm_output = llm_output

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, LLMResult)
            and self.generations == other.generations
            and self.llm_output == other.llm_output
        )

    __hash__ = None  # pyright: ignore[reportAssignmentType]  # unhashable: equality is by value

    def __repr__(self) -> str:
        return f"LLMResult(generations={self.generations!r}, llm_output={self.llm_output!r})"

    def model_dump(self) -> dict[str, Any]:
        """langchain-core's dump: what a LangChain tracer (`collect_runs`) stores as outputs."""
        generations = [[g.model_dump() for g in batch] for batch in self.generations]
        return {
            "generations": generations,
            "llm_output": self.llm_output,
            "run": None,
            "type": "LLMResult",
        }
