"""Current date and time for the built-in clock tool, in an IANA time zone or one of its cities."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

__all__ = ["IANA_AREAS", "ClockError", "city_zones", "now"]

_MAX_ZONE_LENGTH = 64
_UTC_NAMES = ("UTC", "Z", "GMT")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class ClockError(ValueError):
    """The time zone is not known; the message says what to pass instead."""


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def now(tz: str | None = None, *, clock: Callable[[], datetime] = _utc_now) -> str:
    """Return the current date and time, e.g. "2026-12-02T17:27:31+01:00 (Europe/Paris, Wednesday)".

    `tz` is an IANA time zone name such as "Europe/Paris" or "America/New_York", or the city
    that names one ("Tokyo", "new york": the answer then names the zone, "Asia/Tokyo"); None
    means UTC. `clock` returns the current aware datetime (tests pass a fixed one); naive values
    count as UTC.
    """
    zone_name = (tz or "").strip() or "UTC"
    if zone_name.upper() in _UTC_NAMES:
        zone_name = "UTC"
    zone_name = city_zones().get(_city_key(zone_name), zone_name)
    zone = _zone(zone_name)
    current = clock()
    if current.tzinfo is None:
        current = current.replace(tzinfo=timezone.utc)
    local = current.astimezone(zone)
    return f"{local.isoformat(timespec='seconds')} ({zone_name}, {_WEEKDAYS[local.weekday()]})"


IANA_AREAS = ("Europe", "America", "Asia", "Africa", "Australia", "Pacific", "Atlantic", "Indian")
"""The IANA areas whose cities are zone names, in the order that wins a (rare) shared name."""


@cache
def city_zones() -> dict[str, str]:
    """Zone name by city, from the system's IANA database: "tokyo" -> "Asia/Tokyo",
    "new_york" -> "America/New_York" (the last part of the name, case-folded)."""
    zones: dict[str, str] = {}
    for name in sorted(available_timezones(), key=lambda z: (_area_rank(z), z)):
        area, _, city = name.rpartition("/")
        if area and _area_rank(name) < len(IANA_AREAS):
            zones.setdefault(_city_key(city), name)
    return zones


def _area_rank(name: str) -> int:
    area = name.split("/", 1)[0]
    return IANA_AREAS.index(area) if area in IANA_AREAS else len(IANA_AREAS)


def _city_key(name: str) -> str:
    return name.strip().replace(" ", "_").casefold() if "/" not in name else ""


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
