"""Read-only file access for built-in tools, confined to one root directory.

Every path is resolved with its symlinks and must stay inside the root; the opened descriptor is
checked again (through /proc/self/fd where available), so a symlink swapped in after the check
cannot lead outside either. Everything returned is valid UTF-8 text: a path holding a lone
surrogate is refused, and names that are not UTF-8 on disk are listed with U+FFFD in place of
their stray bytes.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from pathlib import Path

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ENTRIES",
    "FileToolError",
    "list_dir",
    "read_file",
]

DEFAULT_MAX_BYTES = 32_768
"""Bytes `read_file` shows before truncating."""
DEFAULT_MAX_ENTRIES = 200
"""Entries `list_dir` shows before cutting the listing short."""
_MAX_PATH_LENGTH = 4_096
_BINARY_SNIFF_BYTES = 8_192
_SURROGATE = re.compile("[\ud800-\udfff]")
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class FileToolError(ValueError):
    """A path cannot be read or listed; the message says why, for the model to read."""


def read_file(root: Path, path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Return the text of the file at `path` (relative to `root`), UTF-8 decoded.

    Files larger than `max_bytes` are cut and end with a line saying so; invalid UTF-8 bytes
    show as U+FFFD; files that contain NUL bytes are refused as binary.
    """
    if not path.strip():
        raise FileToolError("the path is empty; give a file path such as 'README.md'")
    base, target = _resolve(root, path.strip())  # like list_dir: a model's stray space is no name
    fd = _open_inside(base, target, path)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FileToolError(f"{path!r} is a directory; use list_dir to see its contents")
        if not stat.S_ISREG(info.st_mode):
            raise FileToolError(f"{path!r} is not a regular file")
        data = _read_up_to(fd, max_bytes + 1)
    finally:
        os.close(fd)
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise FileToolError(f"{path!r} is a binary file and cannot be shown as text")
    if len(data) <= max_bytes:
        return data.decode("utf-8", errors="replace")
    # An incremental decoder holds back a character cut in half at the limit.
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(data[:max_bytes])
    return f"{text}\n[truncated: showing the first {max_bytes} of {info.st_size} bytes]"


def list_dir(root: Path, path: str = ".", max_entries: int = DEFAULT_MAX_ENTRIES) -> str:
    """List the directory at `path` (relative to `root`): one name per line, sorted.

    Directories end with "/"; past `max_entries` names a last line says how many were left out.
    """
    base, target = _resolve(root, path.strip() or ".")
    fd = _open_inside(base, target, path)
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            raise FileToolError(f"{path!r} is not a directory; use read_file to read it")
        with os.scandir(fd) as entries:
            names = sorted(_text(entry.name) + ("/" if _is_dir(entry) else "") for entry in entries)
    except PermissionError:
        raise FileToolError(f"permission denied: {path!r}") from None
    finally:
        os.close(fd)
    if not names:
        return "(empty directory)"
    shown = names[:max_entries]
    if len(names) > max_entries:
        shown.append(f"[... {len(names) - max_entries} more entries not shown]")
    return "\n".join(shown)


def _resolve(root: Path, path: str) -> tuple[Path, Path]:
    """Return the real root and the real target, refusing targets outside the root."""
    if "\x00" in path:
        raise FileToolError("the path contains a NUL character")
    if len(path) > _MAX_PATH_LENGTH:
        raise FileToolError(f"the path is too long (the limit is {_MAX_PATH_LENGTH} characters)")
    if _text(path) != path:
        raise FileToolError(f"the path {path!r} is not valid text (it holds a lone surrogate)")
    try:
        base = root.resolve(strict=True)
    except (OSError, RuntimeError):
        raise FileToolError("the directory you may access no longer exists") from None
    if not base.is_dir():
        raise FileToolError("the directory you may access no longer exists")
    try:
        # Not strict: a missing path outside the root is refused as outside, so the error
        # does not tell whether something exists there. Opening reports missing files.
        target = (base / path).resolve()
    except PermissionError:
        raise FileToolError(f"permission denied: {path!r}") from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop (Python < 3.13)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "symlink loop"
        raise FileToolError(f"cannot access {path!r}: {reason}") from None
    if not _is_within(target, base):
        raise FileToolError(_outside(path))
    return base, target


def _open_inside(base: Path, target: Path, path: str) -> int:
    """Open `target` without following a final symlink and check where the descriptor points."""
    try:
        fd = os.open(target, _OPEN_FLAGS)
    except FileNotFoundError:
        raise FileToolError(f"no such file or directory: {path!r}") from None
    except PermissionError:
        raise FileToolError(f"permission denied: {path!r}") from None
    except OSError as exc:  # ELOOP: the last component became a symlink after resolving
        raise FileToolError(f"cannot access {path!r}: {exc.strerror or 'error'}") from None
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return fd  # no /proc: the resolved-path check above is what we have
    if not _is_within(opened, base):
        os.close(fd)
        raise FileToolError(_outside(path))
    return fd


def _is_within(target: Path, base: Path) -> bool:
    return target == base or base in target.parents


def _outside(path: str) -> str:
    return f"{path!r} is outside the directory you may access; use a path inside it"


def _text(name: str) -> str:
    """`name` as valid UTF-8 text: each lone surrogate (a stray byte of a file name that is not
    UTF-8 is one) becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", name)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
