"""`actloop run --json` in a fresh process, as a user runs it (seed 0, the local model)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any


def run_json(question: str, *options: str) -> dict[str, Any]:
    """The run's JSON result; the process must exit 0."""
    command = [sys.executable, "-m", "actloop", "run", "--json", "--seed", "0", *options]
    done = subprocess.run(
        [*command, question], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
