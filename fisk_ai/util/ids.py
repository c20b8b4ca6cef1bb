"""Identifiers for local runs: KSUIDs, which sort by the second they were made.

A KSUID is 20 bytes, a big-endian count of seconds since 2014-05-13 16:53:20 UTC followed by 16
random bytes, written as 27 base62 digits. The digits are padded to a fixed width and the
alphabet is in ASCII order, so sorting the text sorts by time.
"""

from __future__ import annotations

import secrets
import time

__all__ = ["KSUID_EPOCH", "KSUID_LENGTH", "ksuid_timestamp", "new_ksuid"]

KSUID_EPOCH = 1_400_000_000
KSUID_LENGTH = 27

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_PAYLOAD_BYTES = 16
_MAX_TIMESTAMP = 2**32 - 1


def new_ksuid(now: float | None = None) -> str:
    """A fresh KSUID for the moment ``now`` (seconds since the Unix epoch; the clock if None)."""
    seconds = int(time.time() if now is None else now) - KSUID_EPOCH
    if not 0 <= seconds <= _MAX_TIMESTAMP:
        raise ValueError(f"{now} is outside the range a KSUID timestamp can hold")
    raw = seconds.to_bytes(4, "big") + secrets.token_bytes(_PAYLOAD_BYTES)
    return _base62(int.from_bytes(raw, "big"))


def ksuid_timestamp(ksuid: str) -> int:
    """The Unix time, in whole seconds, a KSUID was made at."""
    if len(ksuid) != KSUID_LENGTH:
        raise ValueError(f"a KSUID has {KSUID_LENGTH} characters, not {len(ksuid)}")
    value = 0
    for digit in ksuid:
        index = _ALPHABET.find(digit)
        if index < 0:
            raise ValueError(f"{digit!r} is not a base62 digit")
        value = value * 62 + index
    if value >= 1 << 160:
        raise ValueError(f"{ksuid} is larger than 20 bytes")
    return (value >> (_PAYLOAD_BYTES * 8)) + KSUID_EPOCH


def _base62(value: int) -> str:
    digits = []
    while value:
        value, remainder = divmod(value, 62)
        digits.append(_ALPHABET[remainder])
    return "".join(reversed(digits)).rjust(KSUID_LENGTH, "0")
