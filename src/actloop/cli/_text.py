"""Text the CLI prints, made inert: control sequences a model or a tool wrote cannot reach the
terminal as commands."""

from __future__ import annotations

import re

__all__ = ["inert"]

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""C0 controls but tab and newline (ESC, CR, BEL, ...), DEL, C1 controls (CSI, OSC, ...), the
bidirectional overrides and isolates, and lone surrogates (which no terminal can be sent)."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """`text` with every unsafe character written as a visible escape (`\\x1b`, `\\u202e`)."""
    return _UNSAFE.sub(_escape, text)
