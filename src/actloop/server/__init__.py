"""`actloop serve`: an AgentExecutor over HTTP (extra `[server]`: Starlette + uvicorn).

LangServe's protocol at `/agent/` (so `langserve.RemoteRunnable` works unmodified), durable
threads with approvals at `/threads`, a live page at `/`. Imported only by `actloop serve` or a
user's own code, never by `import actloop`.
"""

from __future__ import annotations

from actloop.server._app import create_app, load_executor

__all__ = ["create_app", "load_executor"]
