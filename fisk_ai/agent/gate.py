"""The confirm gate: a gated call runs only with an operator's say-so.

The gate is default-deny. It first asks whether anybody could be asked at all, and only then
consults grants, so a grant restored from a journal never runs a gated command with nobody
present. A standing grant (an "always" answer) covers a tool by name for the rest of the
conversation, whatever its arguments; a call approval covers one call by id and is spent by it.
A decline may carry the operator's sentence, which the model reads inside the refusal: the
decision is as final as a plain No.

An "always" answer is honored at once but staged: the loop journals it as a decision only after
the call it was given for is answered, so a crash in between loses the grant and the resume asks
again for the command it is about to re-run. There is no standing denial, so a run that ended
before the operator answered never persists a decision they did not make.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from fisk_ai.tools.questions import (
    ApprovalChoice,
    ApprovalQuestion,
    DeclineWithReason,
    NobodyToAsk,
    Prompter,
)

__all__ = ["FINAL", "NO_OPERATOR", "ConfirmGate", "GateVerdict", "denial_content"]

FINAL = "this decision is final, do not retry"
NO_OPERATOR = f"no interactive terminal is attached, so no operator could be asked; {FINAL}"


@dataclass(frozen=True)
class GateVerdict:
    """Whether the call may run; ``reason`` says why not, for the model. ``standing`` marks a
    call allowed by an "always" given earlier in the conversation, without asking."""

    allowed: bool
    reason: str = ""
    standing: bool = False


def denial_content(reason: str) -> str:
    """The result a denied call is answered with. It is an answer, not an error: the model is
    told the decision is final so it stops rather than working around the refusal."""
    return json.dumps(
        {"allowed": False, "reason": reason}, ensure_ascii=False, separators=(",", ":")
    )


def declined_reason(command: str, said: str = "") -> str:
    """Why the call did not run, for the model; ``said`` is the operator's own sentence."""
    if said:
        return f'the operator declined to run "{command}" and said: "{said}"; {FINAL}'
    return f'the operator declined to run "{command}"; {FINAL}'


class ConfirmGate:
    """The grants of one conversation and the questions that add to them."""

    def __init__(
        self,
        prompter: Prompter | None,
        *,
        standing_grants: Iterable[str] = (),
        call_approvals: Iterable[str] = (),
    ) -> None:
        self._prompter = prompter
        self._standing: set[str] = set(standing_grants)
        self._call_approvals: set[str] = set(call_approvals)
        self._staged: dict[str, str] = {}

    @property
    def standing_grants(self) -> frozenset[str]:
        return frozenset(self._standing)

    async def decide(self, question: ApprovalQuestion) -> GateVerdict:
        """Decide one gated call. Raises QuestionInterrupted when the operator leaves the
        question unanswered; that is not a decision, and nothing is granted or denied."""
        prompter = self._prompter
        if prompter is None or not prompter.can_prompt():
            return GateVerdict(False, NO_OPERATOR)
        if question.tool_name in self._standing:
            return GateVerdict(True, standing=True)
        if question.tool_use_id in self._call_approvals:
            self._call_approvals.discard(question.tool_use_id)
            return GateVerdict(True)
        answer = await prompter.ask(question)
        if answer is ApprovalChoice.ALWAYS:
            self._standing.add(question.tool_name)
            self._staged[question.tool_use_id] = question.tool_name
            return GateVerdict(True)
        if answer is ApprovalChoice.ONCE:
            return GateVerdict(True)
        if isinstance(answer, NobodyToAsk):
            return GateVerdict(
                False, f'{answer.reason}, so nobody approved "{question.display}"; {FINAL}'
            )
        said = answer.sentence if isinstance(answer, DeclineWithReason) else ""
        return GateVerdict(False, declined_reason(question.display, said))

    def take_staged(self, tool_use_id: str) -> str | None:
        """The tool granted "always" by the answer to this call, once its result is journaled."""
        return self._staged.pop(tool_use_id, None)
