"""`actloop.mcp` is optional: `import actloop` does not load the SDK, and the package's names
report their public path."""

from __future__ import annotations

import subprocess
import sys

import actloop.mcp


def test_import_actloop_does_not_load_the_mcp_sdk() -> None:
    code = "import sys, actloop, actloop.tools; print('mcp' in sys.modules, 'anyio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False False\n"


def test_names_report_the_public_module() -> None:
    assert {getattr(actloop.mcp, n).__module__ for n in actloop.mcp.__all__} == {"actloop.mcp"}
    assert actloop.mcp.__all__ == sorted(actloop.mcp.__all__)


def test_missing_sdk_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from actloop.mcp import MCPToolset\n"
        "try:\n    MCPToolset.stdio('python')\n"
        "except ImportError as e:\n    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == (
        'MissingDependencyError actloop.mcp needs the mcp package: pip install "actloop[mcp]"\n'
    )
