"""Checksums and issued ranges: what separates a value from a number of the same shape."""

from __future__ import annotations

import datetime
import re

_NOT_DIGIT = re.compile(r"\D")
_SEPARATORS = re.compile(r"[\s-]")


def digits_of(candidate: str) -> str:
    return _NOT_DIGIT.sub("", candidate)


def luhn_valid(candidate: str) -> bool:
    digits = [int(c) for c in digits_of(candidate)]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, digit in enumerate(reversed(digits)):
        doubled = digit * 2 if index % 2 else digit
        total += doubled - 9 if doubled > 9 else doubled
    return total % 10 == 0


# Issuer prefixes of the card networks: a Luhn-valid number outside them is an order number or
# an id, which is one in ten of all numbers of that length.
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|64[4-9]|65|62)")


def card_valid(candidate: str) -> bool:
    digits = digits_of(candidate)
    return bool(_CARD_PREFIX.match(digits)) and luhn_valid(digits)


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21, "CY": 28,
    "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23,
    "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26, "IT": 27, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24,
    "SA": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TR": 26,
}  # fmt: skip


def iban_valid(candidate: str) -> bool:
    """ISO 13616: the country's length where it is known, and mod 97 of the rearranged value."""
    compact = candidate.replace(" ", "").upper()
    expected = _IBAN_LENGTHS.get(compact[:2])
    if expected is not None and len(compact) != expected:
        return False
    if expected is None and not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


def ssn_valid(candidate: str) -> bool:
    """The SSA never issues area 000, 666 or 9xx, group 00 or serial 0000."""
    digits = digits_of(candidate)
    if len(digits) != 9:
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    if area in ("000", "666") or area.startswith("9"):
        return False
    return group != "00" and serial != "0000"


def aba_routing_valid(candidate: str) -> bool:
    """An ABA routing number's 3-7-1 weighted checksum."""
    digits = [int(c) for c in digits_of(candidate)]
    if len(digits) != 9 or not any(digits):
        return False
    weighted = sum(d * w for d, w in zip(digits, (3, 7, 1) * 3, strict=True))
    return weighted % 10 == 0


_VIN_VALUES = {
    **{str(d): d for d in range(10)},
    **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
    **dict(zip("JKLMN", range(1, 6), strict=True)),
    "P": 7,
    "R": 9,
    **dict(zip("STUVWXYZ", range(2, 10), strict=True)),
}
_VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


_HEX = frozenset("0123456789ABCDEF")
# Position ten is the model year, which is never U, Z or 0.
_NO_MODEL_YEAR = frozenset("UZ0")


def vin_valid(candidate: str) -> bool:
    """ISO 3779 with the North American check digit in position nine.

    A VIN mixes letters and digits, has a model year in position ten, and (the manufacturer
    codes being what they are) nearly always a letter past F; an uppercase hex id of seventeen
    characters passes the check digit one time in eleven, so it is refused for the last.
    """
    vin = candidate.upper()
    if len(vin) != len(_VIN_WEIGHTS) or vin.isdigit() or vin.isalpha():
        return False
    if vin[9] in _NO_MODEL_YEAR or set(vin) <= _HEX:
        return False
    try:
        total = sum(_VIN_VALUES[c] * w for c, w in zip(vin, _VIN_WEIGHTS, strict=True))
    except KeyError:  # I, O and Q are never used
        return False
    remainder = total % 11
    return vin[8] == ("X" if remainder == 10 else str(remainder))


def has_digit(candidate: str) -> bool:
    """An id after a context word mixes in digits; a word after it ("passport photo") does not."""
    return any(c.isdigit() for c in candidate)


_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
            ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
            ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip
_DATE_PARTS = re.compile(r"[A-Za-z]+|\d+")
_EARLIEST_BIRTH_YEAR = 1900
_TWO_DIGIT_YEAR = 100
_CENTURY_PIVOT = 30


def birth_date_valid(candidate: str) -> bool:
    """A real calendar date, in the past and after 1900, in any of the orders people write."""
    parts = _DATE_PARTS.findall(candidate)
    numbers = [int(p) for p in parts if p.isdigit()]
    month_names = [_MONTHS.get(p.lower().rstrip(".")) for p in parts if not p.isdigit()]
    if month_names and None not in month_names and len(numbers) == 2:
        day, year = sorted(numbers)
        orders = [(year, month_names[0] or 0, day)]
    elif len(numbers) == 3:
        first, second, third = numbers
        orders = (
            [(first, second, third)]
            if len(parts[0]) == 4
            else [(third, first, second), (third, second, first)]
        )
    else:
        return False
    today = datetime.date.today()
    for year, month, day in orders:
        full_year = year
        if year < _TWO_DIGIT_YEAR:
            full_year = year + (2000 if year < _CENTURY_PIVOT else 1900)
        try:
            date = datetime.date(full_year, month, day)
        except ValueError:
            continue
        if date.year >= _EARLIEST_BIRTH_YEAR and date <= today:
            return True
    return False
