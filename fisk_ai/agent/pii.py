"""The PII guard: personal data and credentials kept from the model.

The run installs the guard itself around UserPromptSubmit and PostToolUse, after the caller's
own hooks, so every path into the loop is scanned and the scan reads whatever the caller's hooks
left behind. Under ``redact`` each finding is replaced with a typed placeholder
(``[EMAIL-REDACTED]``); under ``reject`` a prompt is denied and a tool output is replaced with a
fixed withholding message. A scan that fails counts as a hit. The operator is warned once per
run, naming the checks that matched and never the matched text.

The checks are patterns with a validator where one exists (Luhn for card numbers, ISO 13616
mod 97 for IBANs, the SSA's unissued ranges for SSNs), so a look-alike such as a sixteen-digit
order number that fails the checksum is left alone.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache

from fisk_ai.agent.events import EventSink, WarningEvent, WarningKind
from fisk_ai.agent.hooks import Deny, Hooks
from fisk_ai.config.models import PiiMode
from fisk_ai.errors import FiskError
from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.tools.base import Outcome

__all__ = [
    "WITHHELD_OUTPUT",
    "Check",
    "Finding",
    "PiiError",
    "PiiGuard",
    "Scanner",
    "guarded_hooks",
    "redact",
    "scanner",
]

WITHHELD_OUTPUT = (
    "[output withheld: it holds personal data or a credential, and harness.pii.mode is reject]"
)
SCAN_FAILED_OUTPUT = "[output withheld: the personal data scan failed, so it was not sent]"


class PiiError(FiskError):
    """The PII guard could not be built; the run does not start without it."""


class Check(enum.StrEnum):
    """What a finding is; the value names the placeholder that replaces it."""

    SECRET = "SECRET"  # noqa: S105 - a label, not a password
    CREDIT_CARD = "CREDIT-CARD"
    IBAN = "IBAN"
    SSN = "SSN"
    EMAIL = "EMAIL"
    PHONE = "PHONE"

    @property
    def placeholder(self) -> str:
        return f"[{self.value}-REDACTED]"


@dataclass(frozen=True)
class Finding:
    check: Check
    start: int
    end: int


Validator = Callable[[str], bool]


@dataclass(frozen=True)
class _Pattern:
    check: Check
    regex: re.Pattern[str]
    valid: Validator | None = None

    def findings(self, text: str) -> Iterator[Finding]:
        for match in self.regex.finditer(text):
            # A pattern with a "v" group redacts only the value (the token after "Bearer ").
            group = "v" if "v" in self.regex.groupindex else 0
            start, end = match.span(group)
            if start < 0:
                continue
            if self.valid is None or self.valid(match.group(group)):
                yield Finding(self.check, start, end)


def luhn_valid(candidate: str) -> bool:
    digits = [int(c) for c in candidate if c.isdigit()]
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
    digits = "".join(c for c in candidate if c.isdigit())
    return bool(_CARD_PREFIX.match(digits)) and luhn_valid(digits)


_IBAN_LENGTHS = {
    "AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18,
    "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22,
    "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18,
    "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TR": 26,
}  # fmt: skip


def iban_valid(candidate: str) -> bool:
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
    area, group, serial = candidate.split("-")
    if area in ("000", "666") or area.startswith("9"):
        return False
    return group != "00" and serial != "0000"


def _phone_valid(candidate: str) -> bool:
    return 8 <= sum(c.isdigit() for c in candidate) <= 15


_SECRET_PATTERNS = (
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----",
    r"-----BEGIN (?:NATS USER JWT|USER NKEY SEED)-----[\s\S]*?"
    r"------END (?:NATS USER JWT|USER NKEY SEED)------",
    r"\bS[UAONCX][A-Z2-7]{56}\b",  # NATS nkey seeds
    r"\bsk-ant-[A-Za-z0-9_-]{20,}",
    r"\bsk-(?:proj-)?[A-Za-z0-9_-]{32,}",
    r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
    r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{22,}",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"\bAIza[0-9A-Za-z_-]{35}\b",
    r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bglpat-[A-Za-z0-9_-]{20,}",
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)",
    r"(?i)\b(?:api[_-]?key|secret|access[_-]?token|auth[_-]?token|token|password|passwd)\b"
    r"[\"']?\s*[:=]\s*[\"']?(?P<v>[^\s\"',;]{8,})",
)


_IBAN = r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"
_CARD = r"(?<![\d.-])(?:\d[ -]?){12,18}\d(?![\d-]|\.\d)"
_SSN = r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"
_EMAIL = r"\b[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"
_PHONE = (
    r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,4}){1,4}"
    r"|\(?\b[2-9]\d{2}\)?[ .-]\d{3}[ .-]\d{4})(?![\w-]|\.\d)"
)


def _patterns() -> tuple[_Pattern, ...]:
    secrets = tuple(_Pattern(Check.SECRET, re.compile(p)) for p in _SECRET_PATTERNS)
    return (
        *secrets,
        _Pattern(Check.IBAN, re.compile(_IBAN), iban_valid),
        _Pattern(Check.CREDIT_CARD, re.compile(_CARD), card_valid),
        _Pattern(Check.SSN, re.compile(_SSN), ssn_valid),
        _Pattern(Check.EMAIL, re.compile(_EMAIL)),
        _Pattern(Check.PHONE, re.compile(_PHONE), _phone_valid),
    )


class Scanner:
    """Finds personal data and credentials in text; built once, shared by every run."""

    def __init__(self, patterns: Sequence[_Pattern]) -> None:
        self._patterns = tuple(patterns)

    def scan(self, text: str) -> list[Finding]:
        """The findings in ``text``, in order, none overlapping (the earlier check wins where
        two overlap, so a private key block is one secret, not a dozen phone numbers)."""
        found: list[Finding] = []
        taken: list[tuple[int, int]] = []
        for pattern in self._patterns:
            for finding in pattern.findings(text):
                if any(finding.start < end and start < finding.end for start, end in taken):
                    continue
                taken.append((finding.start, finding.end))
                found.append(finding)
        return sorted(found, key=lambda f: f.start)


@cache
def scanner() -> Scanner:
    """The shared scanner; a pattern that will not compile raises here, at the run's start."""
    return Scanner(_patterns())


def redact(text: str, findings: Sequence[Finding]) -> str:
    parts: list[str] = []
    position = 0
    for finding in findings:
        parts += [text[position : finding.start], finding.check.placeholder]
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)


class PiiGuard:
    """The guard of one run: scans, rewrites or refuses, and warns the operator once."""

    def __init__(self, mode: PiiMode, events: EventSink, scan: Scanner) -> None:
        self.mode = mode
        self._events = events
        self._scanner = scan
        self._warned = False

    def _scan(self, text: str) -> tuple[list[Finding], str]:
        """The findings, or none and the reason the scan failed."""
        try:
            return self._scanner.scan(text), ""
        except Exception as exc:  # a failed scan is a hit, never a pass
            return [], f"{type(exc).__name__}: {exc}"

    def _warn(self, where: str, findings: Sequence[Finding], failure: str) -> None:
        if self._warned:
            return
        self._warned = True
        checks = tuple(sorted({f.check.name.lower() for f in findings}))
        if failure:
            error = f"the personal data scan of {where} failed ({failure}); it was withheld"
        else:
            verb = "redacted" if self.mode is PiiMode.REDACT else "withheld"
            error = (
                f"personal data or a credential ({', '.join(checks)}) was found in {where} and "
                f"{verb} (harness.pii.mode is {self.mode.value}); later findings in this run "
                "are not announced"
            )
        self._events.emit(
            WarningEvent(
                WarningKind.PII_FOUND, name=where, count=len(findings), params=checks, error=error
            )
        )

    async def on_prompt(self, prompt: str) -> str | Deny:
        findings, failure = self._scan(prompt)
        if not findings and not failure:
            return prompt
        self._warn("a prompt", findings, failure)
        if failure:
            return Deny("the prompt could not be scanned for personal data, so it was not sent")
        if self.mode is PiiMode.REJECT:
            kinds = ", ".join(sorted({f.check.name.lower() for f in findings}))
            return Deny(
                f"the prompt holds personal data or a credential ({kinds}) and "
                "harness.pii.mode is reject"
            )
        return redact(prompt, findings)

    async def on_tool_result(self, call: ToolUseBlock, outcome: Outcome) -> Outcome:
        findings, failure = self._scan(outcome.output)
        if not findings and not failure:
            return outcome
        self._warn(f"the output of {call.name}", findings, failure)
        if failure:
            return replace(outcome, output=SCAN_FAILED_OUTPUT)
        if self.mode is PiiMode.REJECT:
            return replace(outcome, output=WITHHELD_OUTPUT)
        return replace(outcome, output=redact(outcome.output, findings))


def guarded_hooks(
    hooks: Hooks | None,
    mode: PiiMode,
    events: EventSink,
    build: Callable[[], Scanner] = scanner,
) -> Hooks:
    """The caller's hooks with the guard after theirs, or theirs alone when the mode is off."""
    hooks = hooks or Hooks()
    if mode is PiiMode.OFF:
        return hooks
    try:
        scan = build()
    except Exception as exc:
        raise PiiError(
            f"the personal data scanner could not be built ({type(exc).__name__}: {exc}); "
            "the run did not start. Set harness.pii.mode to off to run without it"
        ) from None
    guard = PiiGuard(mode, events, scan)
    return replace(
        hooks,
        user_prompt_submit=(*hooks.user_prompt_submit, guard.on_prompt),
        post_tool_use=(*hooks.post_tool_use, guard.on_tool_result),
    )
