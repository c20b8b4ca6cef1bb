"""Email addresses, found from their @ outward, in any script.

A regex that starts at every character that could open an address scans each run of letters to
its end looking for an @, which is quadratic on a long run with none; this reads the domain
forward from each @ and the local part back from it, each bounded by RFC 5321's lengths.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from fisk_ai.agent.pii_checks.base import Check, Finding

_LOCAL_PART_PUNCTUATION = frozenset("._%+-_")
_LOCAL_PART_LENGTH = 64
_DOMAIN_LENGTH = 255
# Labels of letters and digits of any script (an IDN as written, bücher.de, or a CJK name)
# joined by dots, the ideographic full stop among them as IDNA reads it; a letter TLD or a
# punycode one, so pkg@1.2.3 is not an address; root@localhost has no dot and is not either.
_DOMAIN = re.compile(
    r"(?:[^\W_]|-)+(?:[.\u3002](?:[^\W_]|-)+)*[.\u3002](?:xn--[A-Za-z0-9-]+|[^\W\d_]{2,})\b"
)


@dataclass(frozen=True)
class EmailCheck:
    check: Check = Check.EMAIL
    needles: tuple[str, ...] = ("@",)

    def findings(self, text: str, lowered: str) -> Iterator[Finding]:
        at = text.find("@")
        while at >= 0:
            start = at
            floor = max(at - _LOCAL_PART_LENGTH, 0)
            while start > floor and (
                text[start - 1].isalnum() or text[start - 1] in _LOCAL_PART_PUNCTUATION
            ):
                start -= 1
            # The local part opens with a letter or digit, not with the dot or dash before it.
            while start < at and not text[start].isalnum():
                start += 1
            domain = _DOMAIN.match(text, at + 1, at + 1 + _DOMAIN_LENGTH) if start < at else None
            if domain:
                yield Finding(self.check, start, domain.end())
                at = text.find("@", domain.end())
            else:
                at = text.find("@", at + 1)
