"""Output parser base classes: string and message inputs, generations, streaming, output types."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from actloop.agents import AgentAction, AgentFinish
from actloop.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from actloop.output_parsers import (
    AgentOutputParser,
    AnyGeneration,
    BaseOutputParser,
    Generation,
    MultiActionAgentOutputParser,
    StrOutputParser,
)
from actloop.outputs import ChatGeneration


class Upper(BaseOutputParser[str]):
    def parse(self, text: str) -> str:
        return text.upper()


class Kinds(BaseOutputParser[list[str]]):
    def parse_result(self, result: Sequence[AnyGeneration], *, partial: bool = False) -> list[str]:
        return [type(g).__name__ for g in result]


def test_invoke_parses_text_of_strings_and_messages() -> None:
    assert Upper().invoke("abc") == "ABC"
    assert Upper().invoke(AIMessage("abc")) == "ABC"
    assert Upper().invoke(HumanMessage([{"type": "text", "text": "a"}, "b"])) == "AB"
    assert Kinds().invoke("x") == ["Generation"]
    assert Kinds().invoke(AIMessage("x")) == ["ChatGeneration"]
    assert Upper().parse_result([Generation("q"), Generation("r")]) == "Q"
    assert Upper().parse_result([ChatGeneration(AIMessage("m"))]) == "M"
    assert Generation("a") == Generation("a") != Generation("b")
    assert repr(Generation("a")) == "Generation(text='a')"


async def test_async_twins() -> None:
    assert await Upper().ainvoke("abc") == "ABC"
    assert await Upper().aparse("x") == "X"
    assert await Upper().aparse_result([Generation("y")]) == "Y"


def test_output_types() -> None:
    assert Upper().OutputType is str
    assert Kinds().OutputType == list[str]
    assert StrOutputParser().OutputType is str
    assert AgentOutputParser().OutputType == AgentAction | AgentFinish
    assert MultiActionAgentOutputParser().OutputType == list[AgentAction] | AgentFinish
    assert Upper().InputType == str | BaseMessage


def test_str_output_parser_streams_chunk_by_chunk() -> None:
    parser = StrOutputParser()
    assert parser.invoke(AIMessage("hi")) == "hi"
    assert list(parser.stream("hi")) == ["hi"]
    chunks = iter([AIMessageChunk("a"), AIMessageChunk("b"), "c"])
    assert list(parser.transform(chunks)) == ["a", "b", "c"]
    assert parser.parse_with_prompt("t", None) == "t"


async def test_str_output_parser_atransform() -> None:
    async def chunks() -> AsyncIterator[AIMessageChunk]:
        for piece in ("x", "y"):
            yield AIMessageChunk(piece)

    assert [c async for c in StrOutputParser().atransform(chunks())] == ["x", "y"]


def test_agent_parser_in_a_sequence_gets_the_merged_stream() -> None:
    class Final(AgentOutputParser):
        def parse(self, text: str) -> AgentAction | AgentFinish:
            return AgentFinish({"output": text}, text)

    chunks = iter([AIMessageChunk("Final"), AIMessageChunk(" answer")])
    assert list(Final().transform(chunks)) == [
        AgentFinish({"output": "Final answer"}, "Final answer")
    ]
