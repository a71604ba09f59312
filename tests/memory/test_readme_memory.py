"""The README's memory example runs as shown and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_memory_example_prints_its_comment() -> None:
    text = README.read_text()
    section = text[text.index("### Memory and chat histories") :]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    printed = [line[2:] for line in code.group(1).splitlines() if line.startswith("# ")]
    out = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out):
        warnings.simplefilter("ignore", DeprecationWarning)
        exec(compile(code.group(1), "README.md", "exec"), {})
    assert out.getvalue().splitlines() == printed == ["Human: I am Ann", "AI: Hello Ann"]
