"""A PostgreSQL connection string with its password hidden, read by libpq's rules.

Both forms libpq takes: a URI (`postgresql://user:pw@host/db?password=...`, percent-encoded) and
keyword pairs (`host=h password='S3cr\\'et PW'`: quoted values with `\\'` and `\\\\` escapes,
unquoted ones with `\\` escaping the next character). Where the text does not parse (libpq would
refuse it too), the rest is hidden rather than guessed at: hiding too much is safe, too little is a
leak. `passwords` gives the values to mask out of the messages of libpq and psycopg, which quote
pieces of the string (a URI with a bad percent-escape is quoted whole).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

__all__ = ["MASK", "mask_passwords", "passwords", "redacted"]

MASK = "***"
_SCHEMES = ("postgresql://", "postgres://")
_SHORT = 4
_QUERY_PAIR = re.compile(r"([?&])([^=&?]*)=([^&]*)")


def redacted(conninfo: str) -> str:
    """`conninfo` with every password value replaced by `***`."""
    return _scan(conninfo)[0]


def passwords(conninfo: str) -> list[str]:
    """The password values in `conninfo`, as written and percent-decoded (longest first)."""
    found = {v for raw in _scan(conninfo)[1] for v in (raw, unquote(raw)) if v}
    return sorted(found, key=len, reverse=True)


def mask_passwords(text: str, conninfo: str) -> str:
    """`text` (say a libpq error) with the passwords of `conninfo` masked out of it."""
    for secret in passwords(conninfo):
        if len(secret) >= _SHORT:
            text = text.replace(secret, MASK)
        else:  # a short one only as a word of its own, not inside every longer word
            text = re.sub(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", MASK, text)
    return text


def _scan(conninfo: str) -> tuple[str, list[str]]:
    if conninfo.startswith(_SCHEMES):
        return _scan_uri(conninfo)
    return _scan_keywords(conninfo)


def _scan_uri(uri: str) -> tuple[str, list[str]]:
    """Query `password=` values (the key percent-decoded, as libpq does), then the userinfo:
    everything between the first `:` after the scheme and the last `@` (libpq stops at the
    first `@`, but a password with an unencoded `@` or `/` must not show its tail as a host)."""
    found: list[str] = []

    def pair(match: re.Match[str]) -> str:
        if unquote(match[2]).strip().lower() != "password":
            return match[0]
        found.append(match[3])
        return f"{match[1]}{match[2]}={MASK}"

    scheme, _, rest = uri.partition("://")
    rest = _QUERY_PAIR.sub(pair, rest)
    at = rest.rfind("@")
    colon = rest.find(":", 0, max(at, 0))
    if at >= 0 and colon >= 0:
        found.append(rest[colon + 1 : at])
        rest = f"{rest[: colon + 1]}{MASK}{rest[at:]}"
    return f"{scheme}://{rest}", found


def _scan_keywords(text: str) -> tuple[str, list[str]]:
    """libpq's `conninfo_parse`: `key = value` pairs split by white space."""
    out: list[str] = []
    found: list[str] = []
    i, n = 0, len(text)
    while i < n:
        start = i
        i = _skip_space(text, i)
        key_end = i
        while key_end < n and text[key_end] != "=" and not text[key_end].isspace():
            key_end += 1
        eq = _skip_space(text, key_end)
        if key_end == i or eq >= n or text[eq] != "=":
            out.append(text[start:i] + (MASK if i < n else ""))  # not a pair: hide the rest
            break
        value_start = _skip_space(text, eq + 1)
        value, end, ok = _value(text, value_start)
        if not ok:
            out.append(text[start:value_start] + MASK)  # an unclosed quote: hide the rest
            found.extend((value, text[value_start:]))
            break
        if text[i:key_end].lower() == "password":
            found.extend((value, text[value_start:end]))
            out.append(text[start:value_start] + MASK)
        else:
            out.append(text[start:end])
        i = end
    return "".join(out), found


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _value(text: str, i: int) -> tuple[str, int, bool]:
    """The value starting at `i` (unescaped), where it ends, and whether it was well formed."""
    quoted = i < len(text) and text[i] == "'"
    i += quoted
    chars: list[str] = []
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            chars.append(text[i + 1])
            i += 2
            continue
        if quoted and char == "'":
            return "".join(chars), i + 1, True
        if not quoted and char.isspace():
            break
        chars.append(char)
        i += 1
    return "".join(chars), i, not quoted
