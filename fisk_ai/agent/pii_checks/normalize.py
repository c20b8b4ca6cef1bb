"""The text the checks read, and the way from its offsets back to the original's.

A value written with look-alike characters is still the value: a zero-width space inside a key,
fullwidth digits and at sign, a no-break space or an en dash between a card's groups. The checks
read a view of the text in NFKC, with format characters (zero-width spaces and joiners, the
byte order mark, soft hyphens, bidi controls) removed, every space separator read as a space
and every dash as ``-``; each finding is then mapped back onto the original text, so what is
redacted is what was written, look-alike characters included.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_MINUS_SIGN = "\u2212"
# Enough for the characters of any script's text; a hostile text of many distinct characters
# only evicts.
_FOLD_CACHE = 4096
_SHORT_RUN = 8


@lru_cache(maxsize=_FOLD_CACHE)
def _fold(character: str) -> str:
    """What one non-ASCII character reads as in the view (empty for a format character)."""
    if unicodedata.category(character) == "Cf":
        return ""
    folded = unicodedata.normalize("NFKC", character)
    return "".join(_fold_separator(c) for c in folded)


def _fold_separator(character: str) -> str:
    category = unicodedata.category(character)
    if category == "Zs":
        return " "
    if category == "Pd" or character == _MINUS_SIGN:
        return "-"
    return character


# Unicode's dash punctuation (category Pd, as of Unicode 14) and the minus sign: a run holding
# none of them, and nothing else the view changes, is copied whole.
_DASHES = re.compile(
    "[\u058a\u05be\u1400\u1806\u2010-\u2015\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d\u301c"
    "\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead\u2212]"
)


# ASCII's control characters (a line break, a tab) are not printable, and the view keeps them.
_WITHOUT_ASCII_CONTROLS = dict.fromkeys([*range(0x20), 0x7F])


def _stays(text: str) -> bool:
    """Whether ``text`` reads the same in the view: in NFKC already, and holding no format
    character, no space but the ASCII one, and no dash; most text in any script is such text
    and is copied whole rather than read a character at a time."""
    return (
        text.translate(_WITHOUT_ASCII_CONTROLS).isprintable()
        and unicodedata.is_normalized("NFKC", text)
        and not _DASHES.search(text)
    )


@dataclass(frozen=True)
class NormalizedView:
    """``text`` as the checks read it; ``starts[i]`` is the view offset where segment ``i``
    begins, ``origins[i]`` the original offset it came from, and ``linear[i]`` whether the
    segment is a run copied as it was (offsets advance together) or what one original
    character became."""

    text: str
    starts: tuple[int, ...] = ()
    origins: tuple[int, ...] = ()
    linear: tuple[bool, ...] = ()

    @property
    def unchanged(self) -> bool:
        return not self.starts

    def _original(self, offset: int) -> int:
        index = bisect.bisect_right(self.starts, offset) - 1
        origin = self.origins[index]
        return origin + offset - self.starts[index] if self.linear[index] else origin

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that the view's ``[start, end)`` was made from."""
        if self.unchanged:
            return start, end
        return self._original(start), self._original(end - 1) + 1


def normalized(text: str) -> NormalizedView:
    """The view of ``text`` the checks read; ASCII text, and text the view would not change, is
    its own view."""
    if text.isascii() or _stays(text):
        return NormalizedView(text)
    parts: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    linear: list[bool] = []
    length = 0
    changed = False

    def copied(origin: int, piece: str) -> None:
        nonlocal length
        continues = linear and linear[-1] and origins[-1] + length - starts[-1] == origin
        if not continues:
            starts.append(length)
            origins.append(origin)
            linear.append(True)
        parts.append(piece)
        length += len(piece)

    position = 0
    for run in _NON_ASCII.finditer(text):
        if run.start() > position:
            copied(position, text[position : run.start()])
        position = run.end()
        # A short run (an accented letter, a curly quote) is cheaper read a character at a time
        # through the fold cache than tested whole.
        if len(run.group()) > _SHORT_RUN and _stays(run.group()):
            copied(run.start(), run.group())
            continue
        for origin, character in enumerate(run.group(), run.start()):
            folded = _fold(character)
            if folded == character:
                copied(origin, character)
                continue
            changed = True
            if folded:
                starts.append(length)
                origins.append(origin)
                linear.append(False)
                parts.append(folded)
                length += len(folded)
    if position < len(text):
        copied(position, text[position:])
    if not changed:
        return NormalizedView(text)
    return NormalizedView("".join(parts), tuple(starts), tuple(origins), tuple(linear))
