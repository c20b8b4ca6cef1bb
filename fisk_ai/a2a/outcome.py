"""How a turn ended, on the wire: the one mapping between the agent's outcome and the a2a
terminal messages, both ways.

A turn that ran ends its reply set with a result when the model had its say (answered, declined,
or ran out of iterations) and with an error otherwise; a turn refused before it ran ends with an
error whose code is the refusal. Every ending keeps its own code on the way out, so a caller
reading it back gets the same variant, with one exception the wire cannot carry: a turn its
server abandoned travels as ``failed`` with the server's sentence, as the Go agent sends it.
"""

from __future__ import annotations

from typing import assert_never

from fisk_ai.a2a.messages import ReplyHeader, TerminalError, TerminalResult, WireUsage
from fisk_ai.a2a.vocabulary import ErrorCode, StopReason
from fisk_ai.agent.outcome import (
    Abandoned,
    BudgetSpent,
    Completed,
    Crashed,
    Declined,
    Deferred,
    Failed,
    IterationsSpent,
    NotRun,
    Refusal,
    RunResult,
    Suspended,
    TurnOutcome,
)

__all__ = ["outcome_of", "terminal_message", "totals_of"]

Terminal = TerminalResult | TerminalError


def terminal_message(
    result: RunResult,
    header: ReplyHeader,
    *,
    identity: str,
    trace_id: str = "",
    content_exported: bool = False,
) -> Terminal:
    """The message ending the reply set of a turn that ended as ``result`` says, on agent
    ``identity`` (named in the sentences of endings that carry none of their own). ``trace_id``
    is the trace the run recorded (empty when it exported none) and ``content_exported`` whether
    the conversation rode on it; both go on every ending."""
    message = _terminal(result, header, identity=identity)
    if trace_id or content_exported:
        message = message.model_copy(
            update={"trace_id": trace_id, "content_exported": content_exported and bool(trace_id)}
        )
    return message


def _terminal(result: RunResult, header: ReplyHeader, *, identity: str) -> Terminal:
    usage = WireUsage.from_usage(
        result.usage,
        llm_calls=result.llm_calls,
        tool_calls=result.tool_calls,
        remote_tool_calls=result.remote_tool_calls,
    )
    outcome = result.outcome
    match outcome:
        case Completed():
            return TerminalResult(
                **header, stop_reason=StopReason.END_TURN, text=outcome.answer, usage=usage
            )
        case Declined():
            return TerminalResult(
                **header,
                stop_reason=StopReason.REFUSAL,
                text=outcome.answer or outcome.message,
                usage=usage,
            )
        case IterationsSpent():
            return TerminalResult(
                **header, stop_reason=StopReason.MAX_ITERATIONS, text=outcome.message, usage=usage
            )
        case BudgetSpent():
            return TerminalError(
                **header,
                error=outcome.message,
                code=ErrorCode.BUDGET_EXHAUSTED,
                stop_reason=StopReason.BUDGET_EXHAUSTED,
                usage=usage,
            )
        case Suspended():
            return TerminalError(
                **header,
                error=outcome.message or "the run was suspended; send another turn to continue",
                code=ErrorCode.SUSPENDED,
                stop_reason=StopReason.SUSPENDED,
                usage=usage,
            )
        case Deferred():
            return TerminalError(
                **header,
                error=outcome.message,
                code=ErrorCode.DEFERRED,
                stop_reason=StopReason.DEFERRED,
                usage=usage,
            )
        case Failed():
            return TerminalError(
                **header,
                error=outcome.message,
                code=ErrorCode.FAILED,
                stop_reason=StopReason.ERROR,
                usage=usage,
            )
        case Crashed():
            return TerminalError(
                **header,
                error=outcome.message
                or f"agent {identity} crashed running the prompt; its log has the details",
                code=ErrorCode.CRASHED,
                stop_reason=StopReason.ERROR,
            )
        case Abandoned():
            return TerminalError(
                **header,
                error=outcome.message
                or f"agent {identity} stopped before the run finished; send the turn again",
                code=ErrorCode.FAILED,
                stop_reason=StopReason.ERROR,
            )
        case NotRun():
            return TerminalError(
                **header,
                error=outcome.message,
                code=ErrorCode(outcome.refusal.value),
                stop_reason=StopReason.ERROR,
            )
        case _:
            assert_never(outcome)


def outcome_of(terminal: Terminal) -> TurnOutcome:
    """How the turn a terminal message ends ended. A stop reason or code this build does not
    name is carried as the nearest ending: an unknown result is an answer, an unknown error a
    failure."""
    if isinstance(terminal, TerminalResult):
        match terminal.stop_reason:
            case StopReason.REFUSAL:
                return Declined(terminal.text)
            case StopReason.MAX_ITERATIONS:
                return IterationsSpent(terminal.text)
            case _:
                return Completed(terminal.text)
    text = terminal.error
    match terminal.code:
        case ErrorCode.BUDGET_EXHAUSTED:
            return BudgetSpent(text)
        case ErrorCode.SUSPENDED | ErrorCode.CANCELED:
            return Suspended(text)
        case ErrorCode.DEFERRED:
            return Deferred(text)
        case ErrorCode.CRASHED:
            return Crashed(text)
        case code if code in _REFUSALS:
            return NotRun(Refusal(code), text)
    if terminal.stop_reason in (StopReason.SUSPENDED, StopReason.CANCELED):
        return Suspended(text)
    if terminal.stop_reason == StopReason.DEFERRED:
        return Deferred(text)
    if terminal.stop_reason == StopReason.BUDGET_EXHAUSTED:
        return BudgetSpent(text)
    return Failed(text)


def totals_of(terminal: Terminal, session_id: str) -> RunResult:
    """The turn a terminal message ends, with the conversation's totals it carries."""
    wire = terminal.usage or WireUsage()
    return RunResult(
        outcome_of(terminal),
        session_id,
        usage=wire.to_usage(),
        llm_calls=wire.llm_calls,
        tool_calls=wire.tool_calls,
        remote_tool_calls=wire.remote_tool_calls,
    )


_REFUSALS = frozenset(refusal.value for refusal in Refusal)
