"""PII detectors and redaction strategies (LangChain 1.5's `_redaction`, ported).

The detectors find what LangChain's find, in linear time: LangChain's email pattern
(`[A-Za-z0-9._%+-]+@...`) retries its unbounded runs from every start position (quadratic on a
long run of letters), so `detect_email` scans from each `@` instead, with the same matches; the
other patterns are bounded per start position, and `detect_url`'s overlap check uses bisection.
"""

from __future__ import annotations

import bisect
import hashlib
import ipaddress
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import urlparse

from typing_extensions import TypedDict

__all__ = [
    "BUILTIN_DETECTORS",
    "PIIDetectionError",
    "PIIMatch",
    "RedactionRule",
    "ResolvedRedactionRule",
    "apply_strategy",
    "detect_credit_card",
    "detect_email",
    "detect_ip",
    "detect_mac_address",
    "detect_url",
]

RedactionStrategy = Literal["block", "redact", "mask", "hash"]


class PIIMatch(TypedDict):
    """One detected value: its type, text and span."""

    type: str
    value: str
    start: int
    end: int


class PIIDetectionError(Exception):
    """Raised by the `block` strategy when a value is detected."""

    def __init__(self, pii_type: str, matches: Sequence[PIIMatch]) -> None:
        self.pii_type = pii_type
        self.matches = list(matches)
        super().__init__(f"Detected {len(matches)} instance(s) of {pii_type} in text content")


Detector = Callable[[str], list[PIIMatch]]

_ASCII_ALNUM = string.ascii_letters + string.digits
_LOCAL = frozenset(_ASCII_ALNUM + "._%+-")
_DOMAIN = frozenset(_ASCII_ALNUM + ".-")
_TLD = frozenset(string.ascii_letters + "|")


def _word(ch: str) -> bool:
    """Whether `ch` is a regex word character (`\\w` for str patterns)."""
    return ch.isalnum() or ch == "_"


def _boundary(s: str, i: int) -> bool:
    """Whether `\\b` holds at position `i` of `s`."""
    left = i > 0 and _word(s[i - 1])
    right = i < len(s) and _word(s[i])
    return left != right


def _email_end(s: str, at: int) -> int | None:
    """Where an email whose `@` is at `at` ends (LangChain's pattern: the domain run backed off
    to the last dot followed by a two-letter-or-longer top-level part and a word boundary)."""
    j = at + 1
    while j < len(s) and s[j] in _DOMAIN:
        j += 1
    for dot in range(j - 1, at + 1, -1):
        if s[dot] != ".":
            continue
        k = dot + 1
        while k < len(s) and s[k] in _TLD:
            k += 1
        for end in range(k, dot + 2, -1):
            if _boundary(s, end):
                return end
    return None


def detect_email(content: str) -> list[PIIMatch]:
    """Email addresses (`\\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Z|a-z]{2,}\\b`'s matches)."""
    matches: list[PIIMatch] = []
    floor = 0
    at = content.find("@")
    while at != -1:
        start = at
        while start > floor and content[start - 1] in _LOCAL:
            start -= 1
        end = _email_end(content, at) if start < at else None
        begin = None
        if end is not None:
            begin = next((p for p in range(start, at) if _boundary(content, p)), None)
        if end is not None and begin is not None:
            matches.append(PIIMatch(type="email", value=content[begin:end], start=begin, end=end))
            floor = end
            at = content.find("@", end)
        else:
            at = content.find("@", at + 1)
    return matches


_CARD = re.compile(r"\b\d{4}[\s-]?\d{4}[\s-]?\d{4}[\s-]?\d{4}\b")
_IPV4 = re.compile(r"\b(?:[0-9]{1,3}\.){3}[0-9]{1,3}\b")
_MAC = re.compile(r"\b([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}\b")
_URL_SCHEME = re.compile(r"https?://[^\s<>\"{}|\\^`\[\]]+")
_URL_BARE = re.compile(
    r"\b(?:www\.)?[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+(?:/[^\s]*)?"
)


def detect_credit_card(content: str) -> list[PIIMatch]:
    """Card numbers: 16 digits (optionally grouped by spaces or dashes) passing Luhn."""
    return [
        PIIMatch(type="credit_card", value=m.group(), start=m.start(), end=m.end())
        for m in _CARD.finditer(content)
        if _passes_luhn(m.group())
    ]


def detect_ip(content: str) -> list[PIIMatch]:
    """IPv4 addresses (dotted quads that are valid addresses)."""
    out: list[PIIMatch] = []
    for m in _IPV4.finditer(content):
        try:
            ipaddress.ip_address(m.group())
        except ValueError:
            continue
        out.append(PIIMatch(type="ip", value=m.group(), start=m.start(), end=m.end()))
    return out


def detect_mac_address(content: str) -> list[PIIMatch]:
    """MAC addresses (six hex pairs separated by colons or dashes)."""
    return [
        PIIMatch(type="mac_address", value=m.group(), start=m.start(), end=m.end())
        for m in _MAC.finditer(content)
    ]


def detect_url(content: str) -> list[PIIMatch]:
    """URLs: with an http(s) scheme, or bare ones with a path or starting `www.`."""
    matches: list[PIIMatch] = []
    for m in _URL_SCHEME.finditer(content):
        result = urlparse(m.group())
        if result.scheme in {"http", "https"} and result.netloc:
            matches.append(PIIMatch(type="url", value=m.group(), start=m.start(), end=m.end()))
    starts = [m["start"] for m in matches]
    schemed = list(matches)
    for m in _URL_BARE.finditer(content):
        start, end = m.start(), m.end()
        if _inside(schemed, starts, start, end):
            continue
        url = m.group()
        if "/" in url or url.startswith("www."):
            result = urlparse(f"http://{url}")
            if result.netloc and "." in result.netloc:
                matches.append(PIIMatch(type="url", value=url, start=start, end=end))
    return matches


def _inside(spans: list[PIIMatch], starts: list[int], start: int, end: int) -> bool:
    """Whether `start` or `end` falls in one of the sorted, disjoint `spans` (LangChain's
    overlap rule)."""
    i = bisect.bisect_right(starts, start) - 1
    if i >= 0 and start < spans[i]["end"]:
        return True
    j = bisect.bisect_left(starts, end) - 1
    return j >= 0 and end <= spans[j]["end"]


BUILTIN_DETECTORS: dict[str, Detector] = {
    "email": detect_email,
    "credit_card": detect_credit_card,
    "ip": detect_ip,
    "mac_address": detect_mac_address,
    "url": detect_url,
}


def _passes_luhn(card_number: str) -> bool:
    digits = [int(d) for d in card_number if d.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    checksum = 0
    for index, digit in enumerate(reversed(digits)):
        value = digit * 2 if index % 2 == 1 else digit
        checksum += value - 9 if value > 9 else value
    return checksum % 10 == 0


def _replace(content: str, matches: list[PIIMatch], text: Callable[[PIIMatch], str]) -> str:
    """`content` with each match replaced by `text(match)` (last first, as LangChain does)."""
    result = content
    for match in sorted(matches, key=lambda m: m["start"], reverse=True):
        result = result[: match["start"]] + text(match) + result[match["end"] :]
    return result


def _masked(match: PIIMatch) -> str:
    """LangChain's mask of one value (the last characters kept per type)."""
    value, kind = match["value"], match["type"]
    if kind == "email":
        parts = value.split("@")
        if len(parts) != 2:
            return "****"
        domain = parts[1].split(".")
        return f"{parts[0]}@****.{domain[-1]}" if len(domain) > 1 else f"{parts[0]}@****"
    if kind == "credit_card":
        digits = "".join(c for c in value if c.isdigit())
        sep = "-" if "-" in value else " " if " " in value else ""
        if sep:
            return f"****{sep}****{sep}****{sep}{digits[-4:]}"
        return f"************{digits[-4:]}"
    if kind == "ip":
        octets = value.split(".")
        return f"*.*.*.{octets[-1]}" if len(octets) == 4 else "****"
    if kind == "mac_address":
        sep = ":" if ":" in value else "-"
        return f"**{sep}**{sep}**{sep}**{sep}**{sep}{value[-2:]}"
    if kind == "url":
        return "[MASKED_URL]"
    return f"****{value[-4:]}" if len(value) > 4 else "****"


def _hashed(match: PIIMatch) -> str:
    digest = hashlib.sha256(match["value"].encode()).hexdigest()[:8]
    return f"<{match['type']}_hash:{digest}>"


def apply_strategy(content: str, matches: list[PIIMatch], strategy: RedactionStrategy) -> str:
    """`content` with `matches` redacted, masked or hashed; `block` raises PIIDetectionError."""
    if not matches:
        return content
    if strategy == "redact":
        return _replace(content, matches, lambda m: f"[REDACTED_{m['type'].upper()}]")
    if strategy == "mask":
        return _replace(content, matches, _masked)
    if strategy == "hash":
        return _replace(content, matches, _hashed)
    if strategy == "block":
        raise PIIDetectionError(matches[0]["type"], matches)
    raise ValueError(f"Unknown redaction strategy: {strategy}")


def resolve_detector(pii_type: str, detector: Detector | str | None) -> Detector:
    """The detector for `pii_type`: a built-in, a regex string's, or a function's (its matches
    normalized)."""
    if detector is None:
        if pii_type not in BUILTIN_DETECTORS:
            raise ValueError(
                f"Unknown PII type: {pii_type}. "
                f"Must be one of {list(BUILTIN_DETECTORS.keys())} or provide a custom detector."
            )
        return BUILTIN_DETECTORS[pii_type]
    if isinstance(detector, str):
        pattern = re.compile(detector)

        def regex_detector(content: str) -> list[PIIMatch]:
            return [
                PIIMatch(type=pii_type, value=m.group(), start=m.start(), end=m.end())
                for m in pattern.finditer(content)
            ]

        return regex_detector
    raw = detector

    def normalized(content: str) -> list[PIIMatch]:
        found = cast("list[dict[str, Any]]", raw(content))
        return [
            PIIMatch(
                type=m.get("type", pii_type),
                value=m.get("value", m.get("text", "")),
                start=m["start"],
                end=m["end"],
            )
            for m in found
        ]

    return normalized


@dataclass(frozen=True)
class RedactionRule:
    """How one PII type is handled: its strategy and detector (None: the built-in)."""

    pii_type: str
    strategy: RedactionStrategy = "redact"
    detector: Detector | str | None = None

    def resolve(self) -> ResolvedRedactionRule:
        """The rule with its detector resolved."""
        detector = resolve_detector(self.pii_type, self.detector)
        return ResolvedRedactionRule(self.pii_type, self.strategy, detector)


@dataclass(frozen=True)
class ResolvedRedactionRule:
    """A rule ready to run."""

    pii_type: str
    strategy: RedactionStrategy
    detector: Detector

    def apply(self, content: str) -> tuple[str, list[PIIMatch]]:
        """The content with the rule applied, and the matches."""
        matches = self.detector(content)
        if not matches:
            return content, []
        return apply_strategy(content, matches, self.strategy), matches
