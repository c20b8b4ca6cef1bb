"""What a check finds, and the regex check most of them are."""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol


class Check(enum.StrEnum):
    """What a finding is; the value names the placeholder that replaces it."""

    SECRET = "SECRET"  # noqa: S105 - a label, not a password
    CLOUD_RESOURCE = "CLOUD-RESOURCE"
    IBAN = "IBAN"
    BANK_ACCOUNT = "BANK-ACCOUNT"
    CREDIT_CARD = "CREDIT-CARD"
    SSN = "SSN"
    MEDICAL_ID = "MEDICAL-ID"
    PASSPORT = "PASSPORT"
    DRIVERS_LICENSE = "DRIVERS-LICENSE"
    DATE_OF_BIRTH = "DATE-OF-BIRTH"
    OTP = "OTP"
    VIN = "VIN"
    EMAIL = "EMAIL"
    PHYSICAL_ADDRESS = "PHYSICAL-ADDRESS"
    PHONE = "PHONE"

    @property
    def placeholder(self) -> str:
        return f"[{self.value}-REDACTED]"


class SecretKind(enum.StrEnum):
    """The narrower names the Go fisk-ai gives some secrets in their placeholder, so a journal
    or a prompt reads the same from both; a secret of no kind is ``[SECRET-REDACTED]``."""

    API_KEY = "API_KEY"
    NATS_SEED = "NATS_SEED"
    NATS_CREDENTIALS = "NATS_CREDENTIALS"
    BEARER_TOKEN = "BEARER_TOKEN"  # noqa: S105 - a label, not a password


@dataclass(frozen=True)
class Finding:
    check: Check
    start: int
    end: int
    kind: SecretKind | None = None

    @property
    def placeholder(self) -> str:
        return f"[{self.kind.value}-REDACTED]" if self.kind else self.check.placeholder


Validator = Callable[[str], bool]


class Detector(Protocol):
    """One way of finding one check's values.

    ``needles`` are lowercase literals of which every match holds one, or none: the scanner
    skips a detector whose needles are all absent from the lowercased text, so a keyword-led
    check costs a substring search on the log output that holds none of its keywords.
    """

    @property
    def check(self) -> Check: ...

    @property
    def needles(self) -> tuple[str, ...]: ...

    def findings(self, text: str, lowered: str) -> Iterator[Finding]:
        """The findings in ``text``; ``lowered`` is ``text`` lowercased once a scan, the same
        length, so an offset found in one is an offset in the other."""
        ...


@dataclass(frozen=True)
class RegexCheck:
    """A pattern, and a validator where the value carries one (a checksum, an issued range).

    A pattern with a ``v`` group redacts only that value, so the context word that led to it
    (``passport no.``, ``Bearer``) stays and the model can still tell what was there.
    """

    check: Check
    regex: re.Pattern[str]
    valid: Validator | None = None
    needles: tuple[str, ...] = ()
    # The match must not continue a word. Checked here rather than with a leading \b, which
    # stops the regex engine from jumping to a literal prefix and costs a millisecond a pattern
    # on 64 KiB.
    word_start: bool = False
    # The pattern starts with one of the needles (a context word): it is tried only where one
    # occurs in the lowercased text, found by substring search.
    at_needles: bool = False
    # A cheap pattern, searched in the lowercased text, that every match holds (a street
    # suffix, the tail of an SSN); the full pattern then runs only around each hit, from
    # ``reach`` characters before it to ``window`` characters after it.
    anchor: re.Pattern[str] | None = None
    reach: int = 0
    window: int = 160
    # The Go fisk-ai's narrower name for the secret, written into the placeholder.
    kind: SecretKind | None = None

    def _needle_positions(self, lowered: str) -> list[int]:
        positions: list[int] = []
        for needle in self.needles:
            position = lowered.find(needle)
            while position >= 0:
                positions.append(position)
                position = lowered.find(needle, position + 1)
        return sorted(set(positions))

    def _windows(self, hits: Iterable[re.Match[str]]) -> Iterator[tuple[int, int]]:
        """The stretches around the anchor's hits, overlapping ones merged, so a text dense with
        hits (a row of street suffixes) is searched once rather than once per hit."""
        start = end = -1
        for hit in hits:
            low, high = max(hit.start() - self.reach, 0), hit.end() + self.window
            if low > end:
                if end >= 0:
                    yield start, end
                start = low
            end = high
        if end >= 0:
            yield start, end

    def _matches(self, text: str, lowered: str) -> Iterator[re.Match[str]]:
        anchor = self.anchor
        if not (self.at_needles or anchor):
            yield from self.regex.finditer(text)
            return
        if self.at_needles:
            around: Iterable[re.Match[str] | None] = (
                self.regex.match(text, position, position + self.window)
                for position in self._needle_positions(lowered)
            )
        else:
            around = (
                match
                for start, end in self._windows(anchor.finditer(lowered) if anchor else ())
                for match in self.regex.finditer(text, start, end)
            )
        end = -1
        for match in around:
            if match and match.start() > end:
                end = match.end() - 1
                yield match

    def findings(self, text: str, lowered: str) -> Iterator[Finding]:
        group = "v" if "v" in self.regex.groupindex else 0
        for match in self._matches(text, lowered):
            if self.word_start and match.start() and _continues_word(text[match.start() - 1]):
                continue
            start, end = match.span(group)
            if start < 0:
                continue
            if self.valid is None or self.valid(match.group(group)):
                yield Finding(self.check, start, end, self.kind)


def _continues_word(character: str) -> bool:
    return character.isalnum() or character == "_"
