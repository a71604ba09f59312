"""Bridges to other libraries, each imported only on use: `actloop.integrations.langchain`."""

__all__: list[str] = []
