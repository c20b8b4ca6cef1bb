"""Durations written the way Go writes them: "300ms", "1.5h", "2h45m", "1d", "0s".

agent.yaml files are shared with the Go implementation, which reads every duration key with
fisk's ParseDuration: Go's time.ParseDuration units plus "d"/"D" (24 hours), "w"/"W" (7 days),
"M" (30 days) and "y"/"Y" (365 days). The printed form follows Go's Duration.String.
"""

from __future__ import annotations

import struct
from datetime import timedelta

__all__ = ["DurationError", "format_duration", "parse_duration"]

_NANOSECONDS_PER_UNIT: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # micro sign
    "\u03bcs": 1_000,  # Greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}

# fisk's calendar units as the factors that turn one into hours, in the order fisk multiplies them
# (floating point is not associative). They count whole hours: fisk reads the number as a 32-bit
# float, multiplies it into hours and truncates, so "1.5d" is 36h and "0.01d" is nothing at all.
_CALENDAR_FACTORS: dict[str, tuple[int, ...]] = {
    "d": (24,),
    "D": (24,),
    "w": (7, 24),
    "W": (7, 24),
    "M": (24, 30),
    "y": (24, 365),
    "Y": (24, 365),
}
_NANOSECONDS_PER_HOUR = 3600 * 1_000_000_000

# Go keeps a duration in a signed 64-bit count of nanoseconds; a longer one is not a duration.
_MAX_NANOSECONDS = 2**63 - 1

_DIGITS = frozenset("0123456789")
_UNITS = "(ns, us, ms, s, m, h, d, w, M, y)"


class DurationError(ValueError):
    """Text that is not a non-negative Go-style duration; reason says what is wrong with it."""

    def __init__(self, text: str, reason: str) -> None:
        shown = text if len(text) <= 40 else text[:37] + "..."
        super().__init__(f'"{shown}" is not a duration: {reason}')
        self.text = text
        self.reason = reason


def parse_duration(text: str) -> timedelta:
    """Read a duration such as "30s", "1.5h", "2h45m" or "1d12h", as fisk's parser reads it.

    A unit is required on every number except a bare "0". Negative durations are refused.
    timedelta holds microseconds, so a finer value is rounded to the nearest microsecond, and
    a non-zero value never rounds down to zero (zero often means "no limit").
    """
    original = text
    if text.startswith("+"):
        text = text[1:]
    elif text.startswith("-"):
        raise DurationError(original, "it is negative")
    if text == "0":
        return timedelta(0)
    if not text:
        raise DurationError(original, "it is empty")

    nanoseconds = 0
    position = 0
    while position < len(text):
        part_nanoseconds, position = _parse_part(text, position, original)
        nanoseconds += part_nanoseconds
        if nanoseconds > _MAX_NANOSECONDS:
            raise DurationError(original, "it is longer than a duration can be (about 292 years)")

    microseconds, remainder = divmod(nanoseconds, 1_000)
    if remainder >= 500:
        microseconds += 1
    if microseconds == 0 and nanoseconds > 0:
        microseconds = 1
    return timedelta(microseconds=microseconds)


def _parse_part(text: str, position: int, original: str) -> tuple[int, int]:
    """Read the number and unit starting at position, such as "1.5h" in "1.5h30m": their
    nanoseconds, and the position after the unit."""
    number_start = position
    position = _end_of_digits(text, position)
    whole = text[number_start:position]
    fraction_digits = ""
    if position < len(text) and text[position] == ".":
        fraction_start = position + 1
        position = _end_of_digits(text, fraction_start)
        fraction_digits = text[fraction_start:position]
    fraction_part = text[number_start + len(whole) : position]
    if not whole and not fraction_digits:
        raise DurationError(original, "each part must start with a number")
    unit_start = position
    while position < len(text) and text[position] not in _DIGITS and text[position] != ".":
        position += 1
    unit = text[unit_start:position]
    if not unit:
        raise DurationError(original, f"{whole}{fraction_part} needs a unit {_UNITS}")
    if unit in _CALENDAR_FACTORS:
        return _calendar_nanoseconds(whole + fraction_part, unit, original), position
    unit_nanoseconds = _NANOSECONDS_PER_UNIT.get(unit)
    if unit_nanoseconds is None:
        raise DurationError(original, f'the unit "{unit}" is not one of {_UNITS}')
    if len(whole) > 20:
        raise DurationError(original, "it is longer than a duration can be (about 292 years)")
    # Digits past the eighteenth cannot change a nanosecond count; dropping them keeps the
    # arithmetic small whatever the input.
    fraction_digits = fraction_digits[:18]
    nanoseconds = int(whole or "0") * unit_nanoseconds
    if fraction_digits:
        # Integer arithmetic keeps "0.1s" exact; a float would not.
        nanoseconds += int(fraction_digits) * unit_nanoseconds // 10 ** len(fraction_digits)
    return nanoseconds, position


def _calendar_nanoseconds(number: str, unit: str, original: str) -> int:
    """A day, week, month or year count in nanoseconds, computed as fisk computes it: the number
    rounded to a 32-bit float, multiplied into hours in 64-bit floating point, truncated."""
    try:
        single = struct.unpack("f", struct.pack("f", float(number)))[0]
    except OverflowError:
        raise DurationError(
            original, "it is longer than a duration can be (about 292 years)"
        ) from None
    hours: float = single
    for factor in _CALENDAR_FACTORS[unit]:
        hours *= factor
    if hours * _NANOSECONDS_PER_HOUR > _MAX_NANOSECONDS:
        raise DurationError(original, "it is longer than a duration can be (about 292 years)")
    return int(hours) * _NANOSECONDS_PER_HOUR


def _end_of_digits(text: str, position: int) -> int:
    while position < len(text) and text[position] in _DIGITS:
        position += 1
    return position


def format_duration(duration: timedelta) -> str:
    """Print a duration the way Go does: "5m0s", "1h0m0s", "500ms", "1.5s", "0s"."""
    nanoseconds = (duration // timedelta(microseconds=1)) * 1_000
    sign = "-" if nanoseconds < 0 else ""
    magnitude = abs(nanoseconds)
    if magnitude == 0:
        return "0s"
    if magnitude < 1_000:
        return f"{sign}{magnitude}ns"
    if magnitude < 1_000_000:
        return f"{sign}{_with_fraction(magnitude, 1_000)}\u00b5s"
    if magnitude < 1_000_000_000:
        return f"{sign}{_with_fraction(magnitude, 1_000_000)}ms"

    seconds_part = _with_fraction(magnitude % 60_000_000_000, 1_000_000_000)
    total_minutes = magnitude // 60_000_000_000
    if total_minutes == 0:
        return f"{sign}{seconds_part}s"
    hours, minutes = divmod(total_minutes, 60)
    if hours == 0:
        return f"{sign}{minutes}m{seconds_part}s"
    return f"{sign}{hours}h{minutes}m{seconds_part}s"


def _with_fraction(value: int, per_unit: int) -> str:
    """value / per_unit in decimal, without trailing zeros after the point."""
    whole, remainder = divmod(value, per_unit)
    if remainder == 0:
        return str(whole)
    digits = str(remainder).rjust(len(str(per_unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
