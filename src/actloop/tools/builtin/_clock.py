"""Current date and time for the built-in clock tool, in an IANA time zone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["ClockError", "now"]

_MAX_ZONE_LENGTH = 64
_UTC_NAMES = ("UTC", "Z", "GMT")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class ClockError(ValueError):
    """The time zone is not known; the message says what to pass instead."""


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def now(tz: str | None = None, *, clock: Callable[[], datetime] = _utc_now) -> str:
    """Return the current date and time, e.g. "2026-12-02T17:27:31+01:00 (Europe/Paris, Wednesday)".

    `tz` is an IANA time zone name such as "Europe/Paris" or "America/New_York"; None means UTC.
    `clock` returns the current aware datetime (tests pass a fixed one); naive values count as UTC.
    """
    zone_name = (tz or "").strip() or "UTC"
    if zone_name.upper() in _UTC_NAMES:
        zone_name = "UTC"
    zone = _zone(zone_name)
    current = clock()
    if current.tzinfo is None:
        current = current.replace(tzinfo=timezone.utc)
    local = current.astimezone(zone)
    return f"{local.isoformat(timespec='seconds')} ({zone_name}, {_WEEKDAYS[local.weekday()]})"


def _zone(name: str) -> tzinfo:
    if name == "UTC":
        return timezone.utc  # works even where no time zone database is installed
    if len(name) <= _MAX_ZONE_LENGTH:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise ClockError(
        f"unknown time zone {name[:_MAX_ZONE_LENGTH]!r}; use an IANA name such as 'UTC', "
        "'Europe/Paris', 'America/New_York' or 'Asia/Tokyo'"
    )
