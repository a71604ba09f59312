"""`content_blocks` (langchain-core 1.x's standard content blocks) against langchain-core's own,
part by part, and the `content_blocks=` constructor argument."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core import messages as lc

from actloop.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

PNG = "data:image/png;base64,iVBORw0KGgo="
CASES: list[Any] = [
    "plain words",
    "",
    [],
    ["a", {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}],
    [{"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "high"}}],
    [{"type": "image_url", "image_url": {"url": PNG}}],
    [{"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}],
    [{"type": "file", "file": {"file_id": "file-123"}}],
    [
        {
            "type": "file",
            "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"},
        }
    ],
    [
        {
            "type": "image",
            "source_type": "url",
            "url": "https://example.com/b.png",
            "mime_type": "image/png",
        }
    ],
    [{"type": "image", "source_type": "base64", "data": "AAAA", "mime_type": "image/jpeg", "x": 1}],
    [{"type": "audio", "source_type": "id", "id": "aud-1"}],
    [{"type": "file", "source_type": "text", "url": "some text"}],
    [{"type": "reasoning", "reasoning": "thinking"}, {"type": "weird", "v": 2}, {"no": "type"}],
    [{"type": "image", "url": "https://example.com/c.png"}],
]


def _without_generated_ids(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """langchain-core gives converted media blocks a random `lc_...` id; actloop gives none."""
    return [
        {k: v for k, v in b.items() if not (k == "id" and str(v).startswith("lc_"))} for b in blocks
    ]


@pytest.mark.parametrize("content", CASES)
def test_blocks_equal_langchain_cores(content: Any) -> None:
    ours = HumanMessage(content).content_blocks
    theirs = _without_generated_ids(lc.HumanMessage(content=content).content_blocks)  # type: ignore[arg-type]
    assert ours == theirs


def test_ai_blocks_add_tool_calls_and_reasoning_as_langchain_core_does() -> None:
    calls = [{"name": "add", "args": {"a": 1}, "id": "c1"}, {"name": "mul", "args": {}, "id": "c2"}]
    kwargs = {"reasoning_content": "first add"}
    content = [{"type": "tool_call", "id": "c1", "name": "add", "args": {"a": 1}}, "text"]
    ours = AIMessage(content, tool_calls=calls, additional_kwargs=kwargs).content_blocks
    theirs = lc.AIMessage(content=content, tool_calls=calls, additional_kwargs=kwargs)  # type: ignore[arg-type]
    assert ours == theirs.content_blocks
    assert [b["type"] for b in ours] == ["reasoning", "tool_call", "text", "tool_call"]
    v1 = [{"type": "text", "text": "x", "id": "b1"}]
    meta = {"output_version": "v1"}
    assert AIMessage(v1, response_metadata=meta).content_blocks == v1


def test_content_blocks_argument_sets_the_content() -> None:
    blocks = [{"type": "text", "text": "Base"}, {"type": "text", "text": "x", "cache_control": {}}]
    message = SystemMessage(content_blocks=blocks)
    assert message.content == blocks
    assert message.content_blocks == blocks
    assert AIMessage(content_blocks=[{"type": "text", "text": "hi"}]).text == "hi"
    tool = ToolMessage(content_blocks=[{"type": "text", "text": "4"}], tool_call_id="c1")
    assert tool.content == [{"type": "text", "text": "4"}]
    with pytest.raises(TypeError, match="a message needs `content` or `content_blocks`"):
        HumanMessage()
