"""`dumpd`/`dumps`/`load`/`loads` in LangChain's serialized shape, with an allow-listed loader."""

from actloop.serialization._json import (
    dumpd,
    dumps,
    load,
    loads,
)

__all__ = [
    "dumpd",
    "dumps",
    "load",
    "loads",
]
