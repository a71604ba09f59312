"""An adopted LangChain chat model gets the tags and metadata of the actloop call (as LangChain's
middleware marks its internal calls), and nothing else of its config."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from actloop.callbacks import BaseCallbackHandler
from actloop.runnables._foreign import adopt


class Recording(FakeListChatModel):
    """LangChain's fake list model that records the config of each call."""

    configs: list[Any] = []  # noqa: RUF012

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self.configs.append(config)
        return super().invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        self.configs.append(config)
        return await super().ainvoke(input, config, **kwargs)


def test_the_calls_tags_and_metadata_reach_the_langchain_model() -> None:
    lc = Recording(responses=["a", "b", "c"])
    lc.configs = []
    model = adopt(lc)
    config: Any = {
        "tags": ["nostream"],
        "metadata": {"lc_source": "summarization"},
        "callbacks": [BaseCallbackHandler()],
    }
    assert model.invoke("hi", config).content == "a"
    assert asyncio.run(model.ainvoke("hi", config)).content == "b"
    assert model.invoke("hi").content == "c"
    assert lc.configs == [
        {"tags": ["nostream"], "metadata": {"lc_source": "summarization"}},
        {"tags": ["nostream"], "metadata": {"lc_source": "summarization"}},
        None,
    ]
