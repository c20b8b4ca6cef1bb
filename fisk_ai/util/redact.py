"""Text fit to print: the parts of a URL that carry credentials, and known secret values, are
taken out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from fisk_ai.util.sanitize import single_line

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "redact_url", "redact_urls", "redact_values"]

REDACTED = "REDACTED"
MIN_SECRET_LENGTH = 8
"""A secret value shorter than this is never searched for: replacing a string that short would
blank digits and words all through an unrelated message."""


def redact_url(url: str) -> str:
    """Return ``url`` with its userinfo removed, every query value replaced by REDACTED and its
    fragment removed, keeping the scheme, host, port, path and query parameter names so an
    operator still recognizes the endpoint.

    A URL written without a scheme (``user:secret@host:4222``, as NATS clients accept) is read
    as a host rather than as a scheme followed by a path, so its userinfo is found too. Text
    that cannot be parsed as a URL at all is replaced whole.
    """
    text = url.strip()
    has_scheme = "://" in text
    try:
        parts = urlsplit(text if has_scheme else f"//{text}")
    except ValueError:
        return REDACTED
    host_and_port = parts.netloc.rpartition("@")[2]
    query = "&".join(_redact_parameter(item) for item in parts.query.split("&") if item)
    rebuilt = urlunsplit((parts.scheme, host_and_port, parts.path, query, ""))
    if not has_scheme:
        rebuilt = rebuilt.removeprefix("//")
    return single_line(rebuilt)


_URL_IN_TEXT = re.compile(r"https?://[^\s\"'<>]+")
_SENTENCE_PUNCTUATION = frozenset(".,;:!?")
_OPENER_OF = {")": "(", "]": "[", "}": "{"}


def redact_urls(text: str) -> str:
    """``text`` with every http(s) URL in it redacted as ``redact_url`` does.

    A URL found in a sentence ends before the punctuation that closes the sentence or a clause,
    and before a closing bracket it did not open, so ``(https://host/mcp?key=...)`` keeps its
    ``)`` rather than losing it inside a redacted query value.
    """
    return _URL_IN_TEXT.sub(lambda found: _redact_found(found.group(0)), text)


def _redact_found(found: str) -> str:
    end = len(found)
    while end:
        last = found[end - 1]
        opener = _OPENER_OF.get(last)
        unopened = opener is not None and found.count(last, 0, end) > found.count(opener, 0, end)
        if last not in _SENTENCE_PUNCTUATION and not unopened:
            break
        end -= 1
    return redact_url(found[:end]) + found[end:]


def _redact_parameter(item: str) -> str:
    name, separator, _ = item.partition("=")
    # A parameter with no "=" may be a bare key standing alone, so it is treated as a value.
    return f"{name}={REDACTED}" if separator else REDACTED


def redact_values(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each of ``secrets`` replaced by REDACTED, longest first
    so a value holding another is replaced whole; values shorter than ``MIN_SECRET_LENGTH`` are
    left alone."""
    kept = sorted({value for value in secrets if len(value) >= MIN_SECRET_LENGTH}, key=len)
    for secret in reversed(kept):
        text = text.replace(secret, REDACTED)
    return text
