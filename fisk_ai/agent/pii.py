"""The PII guard: personal data and credentials kept from the model.

The run installs the guard itself around UserPromptSubmit and PostToolUse, after the caller's
own hooks, so every path into the loop is scanned and the scan reads whatever the caller's hooks
left behind. Under ``redact`` each finding is replaced with a typed placeholder
(``[EMAIL-REDACTED]``); under ``reject`` a prompt is denied and a tool output is replaced with a
fixed withholding message. A scan that fails counts as a hit. The operator is warned once per
run, naming the checks that matched and never the matched text.

The answer to a deferred call is journaled as its result and reaches the model on the next resume
without passing PostToolUse, so whoever journals it screens it with ``deferred_answer_screen``,
through the same ``screen_output`` the hook uses.

The checks are patterns with a validator where one exists (Luhn for card numbers, ISO 13616
mod 97 for IBANs, the SSA's unissued ranges for SSNs), so a look-alike such as a sixteen-digit
order number that fails the checksum is left alone.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache

from fisk_ai.agent.events import EventSink, WarningEvent, WarningKind
from fisk_ai.agent.hooks import Deny, Hooks
from fisk_ai.agent.pii_checks.base import Check, Detector, Finding
from fisk_ai.agent.pii_checks.normalize import normalized
from fisk_ai.agent.pii_checks.validators import card_valid, iban_valid, luhn_valid, ssn_valid
from fisk_ai.config.models import PiiMode
from fisk_ai.errors import FiskError
from fisk_ai.llm.types import ToolUseBlock
from fisk_ai.tools.base import Outcome

__all__ = [
    "WITHHELD_OUTPUT",
    "AnswerScreen",
    "Check",
    "Detector",
    "Finding",
    "PiiError",
    "PiiGuard",
    "Scanner",
    "Screened",
    "card_valid",
    "deferred_answer_screen",
    "guarded_hooks",
    "iban_valid",
    "luhn_valid",
    "redact",
    "scanner",
    "screen_output",
    "ssn_valid",
]

WITHHELD_OUTPUT = (
    "[output withheld: it holds personal data or a credential, and harness.pii.mode is reject]"
)
SCAN_FAILED_OUTPUT = "[output withheld: the personal data scan failed, so it was not sent]"


class PiiError(FiskError):
    """The PII guard could not be built; the run does not start without it."""


_ASCII_UPPERCASE = re.compile("[A-Z]+")


class Scanner:
    """Finds personal data and credentials in text; built once, shared by every run."""

    def __init__(self, detectors: Sequence[Detector]) -> None:
        self._detectors = tuple(detectors)

    def scan(self, text: str) -> list[Finding]:
        """The findings in ``text``, in order, none overlapping (the earlier detector wins where
        two overlap, so a private key block is one secret, not a dozen phone numbers).

        The checks read the text normalised (``pii_checks.normalize``), so a value written with
        zero-width, fullwidth or look-alike separator characters is still found; each finding
        is mapped back onto ``text``, look-alike characters included."""
        view = normalized(text)
        found = self._scan(view.text)
        if view.unchanged:
            return found
        spans = [view.original_span(finding.start, finding.end) for finding in found]
        return [
            replace(finding, start=start, end=end)
            for finding, (start, end) in zip(found, spans, strict=True)
        ]

    def _scan(self, text: str) -> list[Finding]:
        lowered = text.lower()
        if len(lowered) != len(text):
            # A few characters lowercase to two (İ), which would shift every offset a detector
            # finds in the lowercased text; ASCII alone is lowered instead.
            lowered = _ASCII_UPPERCASE.sub(lambda run: run.group().lower(), text)
        starts: list[int] = []
        found: list[Finding] = []
        for detector in self._detectors:
            if detector.needles and not any(n in lowered for n in detector.needles):
                continue
            for finding in detector.findings(text, lowered):
                index = bisect.bisect_left(starts, finding.start)
                after = found[index] if index < len(found) else None
                before = found[index - 1] if index else None
                if (after is not None and after.start < finding.end) or (
                    before is not None and before.end > finding.start
                ):
                    continue
                starts.insert(index, finding.start)
                found.insert(index, finding)
        return found


@cache
def scanner() -> Scanner:
    """The shared scanner; a pattern that will not compile raises here, at the run's start."""
    from fisk_ai.agent.pii_checks.catalog import detectors

    return Scanner(detectors())


def redact(text: str, findings: Sequence[Finding]) -> str:
    parts: list[str] = []
    position = 0
    for finding in findings:
        parts += [text[position : finding.start], finding.placeholder]
        position = finding.end
    parts.append(text[position:])
    return "".join(parts)


def _scanned(scan: Scanner, text: str) -> tuple[list[Finding], str]:
    """The findings, or none and the reason the scan failed."""
    try:
        return scan.scan(text), ""
    except Exception as exc:  # a failed scan is a hit, never a pass
        return [], f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class Screened:
    """A tool's output as the model may see it, and what the scan found to make it so."""

    text: str
    findings: tuple[Finding, ...] = ()
    failure: str = ""
    """Why the scan failed; empty when it ran."""

    @property
    def hit(self) -> bool:
        return bool(self.findings or self.failure)


def screen_output(text: str, mode: PiiMode, scan: Scanner) -> Screened:
    """``text``, the output of a tool (or whatever stands in for one), as the model may see it
    under ``mode``: redacted, withheld, or left alone when the mode is off or nothing is found."""
    if mode is PiiMode.OFF:
        return Screened(text)
    findings, failure = _scanned(scan, text)
    if failure:
        return Screened(SCAN_FAILED_OUTPUT, failure=failure)
    if not findings:
        return Screened(text)
    fitted = WITHHELD_OUTPUT if mode is PiiMode.REJECT else redact(text, findings)
    return Screened(fitted, tuple(findings))


class PiiGuard:
    """The guard of one run: scans, rewrites or refuses, and warns the operator once."""

    def __init__(self, mode: PiiMode, events: EventSink, scan: Scanner) -> None:
        self.mode = mode
        self._events = events
        self._scanner = scan
        self._warned = False

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
        findings, failure = _scanned(self._scanner, prompt)
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
        screened = self._screen(f"the output of {call.name}", outcome.output)
        return outcome if screened is outcome.output else replace(outcome, output=screened)

    def on_deferred_answer(self, tool_name: str, answer: str) -> str:
        """The answer somebody gave a deferred call of ``tool_name``, screened as its output
        would have been had the tool answered itself."""
        return self._screen(f"the answer to a deferred call of {tool_name}", answer)

    def _screen(self, where: str, text: str) -> str:
        screened = screen_output(text, self.mode, self._scanner)
        if screened.hit:
            self._warn(where, screened.findings, screened.failure)
        return screened.text


AnswerScreen = Callable[[str, str], str]
"""What the answer to a deferred call of a tool becomes before it is journaled: called with the
tool's name and the answer."""


def _guard(
    mode: PiiMode, events: EventSink, build: Callable[[], Scanner], stopped: str
) -> PiiGuard | None:
    """The guard of ``mode``, None when it is off; a scanner that will not build raises, saying
    what was ``stopped`` for want of it."""
    if mode is PiiMode.OFF:
        return None
    try:
        scan = build()
    except Exception as exc:
        raise PiiError(
            f"the personal data scanner could not be built ({type(exc).__name__}: {exc}); "
            f"{stopped}. Set harness.pii.mode to off to run without it"
        ) from None
    return PiiGuard(mode, events, scan)


def guarded_hooks(
    hooks: Hooks | None,
    mode: PiiMode,
    events: EventSink,
    build: Callable[[], Scanner] = scanner,
) -> Hooks:
    """The caller's hooks with the guard after theirs, or theirs alone when the mode is off."""
    hooks = hooks or Hooks()
    guard = _guard(mode, events, build, "the run did not start")
    if guard is None:
        return hooks
    return replace(
        hooks,
        user_prompt_submit=(*hooks.user_prompt_submit, guard.on_prompt),
        post_tool_use=(*hooks.post_tool_use, guard.on_tool_result),
    )


def deferred_answer_screen(
    mode: PiiMode, events: EventSink, build: Callable[[], Scanner] = scanner
) -> AnswerScreen:
    """How answers to deferred calls are screened under ``mode`` before they are journaled: as a
    tool's output is, with one warning to ``events``. The answer reaches the model on the next
    resume as the call's result, past the run's PostToolUse hook, so it is scanned here."""
    guard = _guard(mode, events, build, "the answer was not journaled")
    if guard is None:
        return _unscreened
    return guard.on_deferred_answer


def _unscreened(tool_name: str, answer: str) -> str:
    return answer
