"""Phone numbers: a cheap regex proposes, libphonenumber decides.

``PhoneNumberMatcher`` over a whole 64 KiB tool output takes hundreds of milliseconds, so it
only reads the few spans a regex proposes; a span it will not call a valid number (a wrong
length, an unassigned area code, a timestamp) is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fisk_ai.agent.pii_checks.base import Check, Finding

# International numbers with a +, and North American numbers written (415) 555-2671.
# Each pattern leads with a literal, which the regex engine finds by a fast substring search; a
# character class instead is tested at every position and costs ten times as much on 64 KiB.
_BRACKETED_OR_PLUS = tuple(
    re.compile(
        rf"\{lead}(?<![\w+.-]\{lead})\d{{1,4}}[ .)-]{{0,2}}\d{{1,4}}(?:[ .-]?\d{{2,4}}){{1,4}}"
        r"(?![\w-]|\.\d)"
    )
    for lead in "+("
)
# The tail of a North American number written 415-555-2671, 415.555.2671 or 415 555 2671; the
# area code in front of it is checked in code.
_NATIONAL_TAILS = tuple(
    re.compile(rf"\{separator}\d{{3}}[ .-]\d{{4}}(?![\w-]|\.\d)") for separator in " .-"
)
_AREA_CODE = re.compile(r"\d{3}")
_AREA_CODE_WIDTH = 3
_NOT_BEFORE_A_NUMBER = frozenset("+.(-_")
# Numbers written without a +, read as North American (libphonenumber's region code). A national
# number of another country is not proposed: without its country it cannot be told from a
# reference number.
_DEFAULT_REGION = "US"


@dataclass(frozen=True)
class PhoneCheck:
    check: Check
    needles: tuple[str, ...]
    _matcher: Any
    _leniency: Any

    @classmethod
    def build(cls) -> PhoneCheck:
        # Imported here, when a run builds its scanner, so a run with the guard off never
        # loads it.
        import phonenumbers

        return cls(Check.PHONE, (), phonenumbers.PhoneNumberMatcher, phonenumbers.Leniency.VALID)

    def _candidates(self, text: str) -> Iterator[tuple[int, int]]:
        for pattern in _BRACKETED_OR_PLUS:
            for match in pattern.finditer(text):
                yield match.span()
        for pattern in _NATIONAL_TAILS:
            for match in pattern.finditer(text):
                start = match.start() - _AREA_CODE_WIDTH
                if start < 0 or not _AREA_CODE.fullmatch(text, start, match.start()):
                    continue
                before = text[start - 1] if start else " "
                if before.isalnum() or before in _NOT_BEFORE_A_NUMBER:
                    continue
                yield start, match.end()

    def findings(self, text: str, lowered: str) -> Iterator[Finding]:
        for start, end in self._candidates(text):
            for match in self._matcher(text[start:end], _DEFAULT_REGION, self._leniency):
                yield Finding(self.check, start + match.start, start + match.end)
