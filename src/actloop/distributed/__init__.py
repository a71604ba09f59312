"""Runs spread over machines, on existing engines: `RayRunner` (`pip install 'actloop[ray]'`).

Ray is imported when a runner starts, never by `import actloop.distributed`.
"""

from actloop.distributed.ray import RayRunner, RunHandle, RunnerShutdownError

__all__ = ["RayRunner", "RunHandle", "RunnerShutdownError"]

for _cls in (RayRunner, RunHandle, RunnerShutdownError):
    _cls.__module__ = __name__
del _cls
