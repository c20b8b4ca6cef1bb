"""One turn of the agent loop: call the model, run the tools it asked for, feed the results back.

Each iteration polls for suspend at its boundary (before the iteration index is consumed, so a
suspend never burns one), takes one snapshot of the tool set for the model call and its whole
batch, calls the model, and journals the assistant turn before any tool runs, so a crash mid-batch
resumes without paying for the model call again. Each call then passes eight exits in order:
lookup, describe and gating on the original call, PreToolUse, argument validation, the confirm
gate, dependencies, the takeover check, and execution followed by PostToolUse. Every result is
journaled as it lands, and all of them go back to the model as one user message.

A stop is heard at once where nothing is lost by it. A model call in flight is cancelled, since
it has no side effect: nothing is journaled for it and the turn ends suspended, so the next turn
asks the model again. No tool starts once a stop was asked (the calls not started stay
unanswered in the journal, for the resume to run once each); a tool already running finishes, or
meets its own timeout, and its result is journaled.

A tool may defer instead of answering. Its call is journaled as deferred, never as a result, and
the rest of the batch still runs; the turn then ends suspended with nothing sent back, because
the model API needs every call of a turn answered before it is called again.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
import traceback
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from typing import Protocol, runtime_checkable

from fisk_ai.agent.events import (
    DeltaSink,
    EventSink,
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    TextEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
    WarningKind,
)
from fisk_ai.agent.gate import ConfirmGate, denial_content
from fisk_ai.agent.hooks import Deny, Hooks, Rewrite
from fisk_ai.agent.outcome import (
    BudgetSpent,
    Completed,
    Declined,
    Failed,
    IterationsSpent,
    Suspended,
    TurnOutcome,
)
from fisk_ai.agent.outcome import Deferred as DeferredTurn
from fisk_ai.agent.resources import Resources, current_tools
from fisk_ai.errors import FiskError
from fisk_ai.llm.codec import message_to_json
from fisk_ai.llm.deltas import Delta, DeltaKind, deltas_reported_to
from fisk_ai.llm.retries import RetryNotice, retries_reported_to
from fisk_ai.llm.types import (
    STOP_MAX_TOKENS,
    STOP_PAUSE_TURN,
    STOP_REFUSAL,
    Message,
    Request,
    Response,
    Role,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    answers_the_prompt,
)
from fisk_ai.sessions.errors import SessionError
from fisk_ai.sessions.records import Assistant, Decision, Deferred, Payload, Record, ToolResult
from fisk_ai.sessions.store import Journal
from fisk_ai.telemetry import TOOL_FAILED, ErrorClass, Span, ToolRefusal
from fisk_ai.tools.base import (
    AsksOperator,
    Confirmable,
    Deferral,
    ExecDeps,
    Kind,
    Outcome,
    Presentation,
    ShowsCommand,
    Tool,
)
from fisk_ai.tools.builtin.deferral import plan_definitions
from fisk_ai.tools.imported import ImportedOutcome
from fisk_ai.tools.prepared import PreparedCall, prepare_call, readable_arguments
from fisk_ai.tools.questions import ApprovalQuestion, Prompter, QuestionInterrupted
from fisk_ai.tools.toolset import ToolSet
from fisk_ai.tools.validation import holdable_message
from fisk_ai.util.durations import format_duration

__all__ = [
    "AgentError",
    "AgentLoop",
    "Fenced",
    "JournalWriter",
    "TurnState",
    "deferred_turn",
]


def _given_up_question(interrupted: QuestionInterrupted) -> str:
    """Why a turn stopped at a question nobody answered, in the words of the prompter that gave
    it up: an operator who interrupted it, or a caller who canceled or went quiet."""
    reason = str(interrupted) or "a question was interrupted, which is not an answer"
    return f"{reason}; it is asked again when the conversation continues"


def deferred_turn(run_id: str, deferred: Iterable[Deferred]) -> DeferredTurn:
    """How a turn ends while deferred calls have no answer: what they wait for and how to
    supply it."""
    calls = list(deferred)
    return DeferredTurn(_waiting_message(run_id, calls), tuple(call.tool_use_id for call in calls))


def _waiting_message(run_id: str, calls: list[Deferred]) -> str:
    described = ", ".join(
        f'call {call.tool_use_id} to "{call.tool_name}"' + (f" ({call.note})" if call.note else "")
        for call in calls
    )
    if len(calls) == 1:
        return (
            f"the run is waiting on the deferred result of {described}; supply it with fisk "
            f"session answer {run_id} {calls[0].tool_use_id}, then resume"
        )
    return (
        f"the run is waiting on the deferred results of {described}; supply each with fisk "
        f"session answer {run_id} CALL_ID, then resume"
    )


MODEL_CALL_FAILED = ErrorClass("model_call_failed")
MODEL_CALL_STOPPED = ErrorClass("cancelled")


class AgentError(FiskError):
    """A run ended by a failure: a tool or hook that raised, a hook that rewrote a call into
    one that cannot run, or a session that could no longer be journaled."""


@dataclass
class TurnState:
    """The conversation as one turn advances it, seeded from the folded journal."""

    messages: list[Message]
    usage: Usage
    next_iteration: int


class Crash(Exception):
    """Caller code (a tool or a hook) raised; the runner's barrier turns this into AgentError."""

    def __init__(self, where: str, error: BaseException) -> None:
        super().__init__(where)
        self.where = where
        self.error = error
        self.stack = "".join(traceback.format_exception(error))


class Aborted(Exception):
    """A hook asked for something that must not be dispatched; the message says what."""


class StoppedBeforeStart(Exception):
    """A stop was asked before the call's tool started, so it was not started: the call stays
    unanswered in the journal and the turn ends suspended."""


class JournalLost(Exception):
    """A record could not be appended: another writer took the session over, or the store
    failed. Nothing more may run, since nothing more could be recorded."""


@runtime_checkable
class Fenced(Protocol):
    """A journal that can confirm, before an irreversible effect, that no other worker has
    taken the session over. A backend that fences only at append need not implement it."""

    async def ensure_ours(self) -> None:
        """Raise a SessionError when another writer holds the session."""
        ...


class JournalWriter:
    """The run's journal. The first failed append marks it lost, and the run stops there.

    ``records`` is the journal as this writer knows it: what was read when it was opened, then
    every record it appended, so the conversation can be folded again without reading the store.
    """

    def __init__(self, journal: Journal, records: Sequence[Record]) -> None:
        self.journal = journal
        self.records = list(records)
        self._lost: str = ""

    @property
    def run_id(self) -> str:
        return self.journal.run_id

    async def append(self, payload: Payload) -> Record:
        self._check()
        try:
            record = await self.journal.append(payload)
        except (SessionError, OSError) as exc:
            self._lost = str(exc)
            raise JournalLost(self._message()) from exc
        self.records.append(record)
        return record

    async def ensure_ours(self) -> None:
        self._check()
        if isinstance(self.journal, Fenced):
            try:
                await self.journal.ensure_ours()
            except (SessionError, OSError) as exc:
                self._lost = str(exc)
                raise JournalLost(self._message()) from exc

    @property
    def lost(self) -> bool:
        return bool(self._lost)

    def _check(self) -> None:
        if self._lost:
            raise JournalLost(self._message())

    def _message(self) -> str:
        return (
            f"session {self.run_id} can no longer be journaled ({self._lost}), so the run "
            "stopped before anything else ran"
        )


def _rewritten(call: ToolUseBlock, rewrite: Rewrite, tools: ToolSet) -> PreparedCall:
    """The call a PreToolUse hook rewrote ``call`` into, prepared; Aborted when it cannot run."""
    tool = tools.get(rewrite.name)
    if tool is None:
        raise Aborted(
            f'a PreToolUse hook rewrote call {call.id} to the unknown tool "{rewrite.name}"'
        )
    prepared = prepare_call(tool, rewrite.input, call_id=call.id)
    if not prepared.readable:
        raise Aborted(f"a PreToolUse hook rewrote call {call.id} badly: {prepared.problem}")
    return prepared


def _approval_question(prepared: PreparedCall, trigger: str) -> ApprovalQuestion:
    """What the operator is asked: the call as it will run, its argument vector the very one
    the command is handed."""
    tool = prepared.tool
    command = tool.command_line if isinstance(tool, ShowsCommand) else tool.name
    return ApprovalQuestion(
        tool_use_id=prepared.call_id,
        tool_name=tool.name,
        command=command,
        display=prepared.display,
        trigger=trigger,
        argv=prepared.argv if tool.presentation is Presentation.COMMAND else (),
    )


def _hand_delta(sink: DeltaSink, delta: Delta) -> None:
    if delta.kind is DeltaKind.THINKING:
        sink.emit_delta(ThinkingDeltaEvent(delta.text))
    else:
        sink.emit_delta(TextDeltaEvent(delta.text))


def messages_json(messages: Sequence[Message]) -> str:
    """Messages as a span carries them under content capture: the journal's own encoding."""
    return json.dumps(
        [message_to_json(message) for message in messages],
        ensure_ascii=False,
        separators=(",", ":"),
    )


class AgentLoop:
    """The loop of one conversation: what stays fixed across its turns (the model settings, the
    system prompt, the gate's grants, the journal) and the turns themselves."""

    def __init__(
        self,
        resources: Resources,
        *,
        journal: JournalWriter,
        events: EventSink,
        system: tuple[str, ...],
        gate: ConfirmGate,
        prompter: Prompter | None,
        suspend: asyncio.Event,
    ) -> None:
        self._settings = resources.settings
        self._provider = resources.provider
        self._tools = current_tools(resources)
        self._journal = journal
        self._events = events
        self._system = system
        self._gate = gate
        self._prompter = prompter
        self._hooks = resources.hooks or Hooks()
        self._telemetry = resources.telemetry
        self._messages_captured = 0
        self._suspend = suspend
        self._warned_sent_directly = False

    def over_budget(self, usage: Usage) -> bool:
        return usage.processed >= self._settings.max_tokens

    def budget_end(self, usage: Usage) -> BudgetSpent:
        return BudgetSpent(
            f"the conversation has processed {usage.processed} tokens, reaching its "
            f"llm.budget.max_tokens allowance of {self._settings.max_tokens}; start a new "
            "conversation or raise llm.budget.max_tokens"
        )

    async def turn(self, state: TurnState, *, allowance: int) -> TurnOutcome:
        """Run iterations until the model answers or something stops the turn."""
        used = 0
        while True:
            if self._suspend.is_set():
                return Suspended()
            if used >= allowance:
                return IterationsSpent(
                    f"the turn used all {self._settings.max_iterations} iterations allowed by "
                    "llm.budget.max_iterations before the model finished; continue with another "
                    "prompt or raise llm.budget.max_iterations"
                )
            iteration = state.next_iteration
            state.next_iteration += 1
            used += 1

            tools = self._tools()
            end = await self._iterate(state, tools, iteration)
            if end is not None:
                return end

    async def finish_pending(
        self,
        state: TurnState,
        turn: Message,
        pending: Sequence[ToolUseBlock],
        answered: Sequence[ToolResultBlock],
    ) -> TurnOutcome | None:
        """Run the calls a journaled turn left unanswered, then feed the turn's results back.
        None means the batch finished and the conversation can go on."""
        if self.over_budget(state.usage):
            return self.budget_end(state.usage)
        state.messages.append(turn)
        return await self._run_batch(
            state, self._tools(), turn.tool_uses, pending, answered, resumed=True
        )

    async def _iterate(
        self, state: TurnState, tools: ToolSet, iteration: int
    ) -> TurnOutcome | None:
        settings = self._settings
        capabilities = self._provider.capabilities
        plan = plan_definitions(
            tools,
            supported=capabilities.tool_search,
            disabled=settings.no_tool_search,
            model=settings.model,
        )
        if plan.sent_directly and not self._warned_sent_directly:
            self._warned_sent_directly = True
            self._events.emit(
                WarningEvent(
                    WarningKind.TOOLS_SENT_DIRECTLY,
                    name=plan.responsible_setting,
                    count=len(plan.definitions),
                )
            )
        request = Request(
            model=settings.model,
            system=self._system,
            messages=tuple(state.messages),
            tools=plan.definitions,
            max_output_tokens=settings.max_output_tokens,
            thinking=settings.thinking,
            reasoning_effort=settings.reasoning_effort,
            prompt_cache=settings.prompt_cache,
            interactive=settings.interactive,
            tool_search=plan.tool_search,
            call_timeout=settings.call_timeout,
        )
        with self._telemetry.model_call(
            capabilities.semconv_provider,
            settings.model,
            system=request.system,
            iteration=iteration,
            messages=len(request.messages),
            tools=len(request.tools),
            max_tokens=request.max_output_tokens,
        ) as span:
            span.conversation(self._journal.run_id)
            sent_from = 0 if self._telemetry.full_messages else self._messages_captured
            sent = request.messages[sent_from:]
            span.content("gen_ai.input.messages", lambda: messages_json(sent), from_index=sent_from)
            try:
                sink = self._events
                with (
                    retries_reported_to(partial(self._report_retry, iteration)),
                    deltas_reported_to(partial(_hand_delta, sink))
                    if isinstance(sink, DeltaSink)
                    else nullcontext(),
                ):
                    response = await self._reply_unless_stopped(request)
            except FiskError as exc:
                span.fail(MODEL_CALL_FAILED)
                return Failed(str(exc))
            if response is None:
                span.fail(MODEL_CALL_STOPPED)
                return Suspended()
            # A call whose input no reader could take is journaled with a stand-in holding why,
            # so it becomes an error result the model reads instead of aborting the run.
            response = replace(response, message=holdable_message(response.message))
            span.usage(
                response.usage.input_tokens,
                response.usage.output_tokens,
                cache_read_tokens=response.usage.cache_read_tokens,
                cache_creation_tokens=response.usage.cache_create_tokens,
                reasoning_tokens=response.usage.thinking_tokens,
            )
            span.response(response.response_id, response.response_model)
            span.finish_reasons(response.stop_reason)
            if response.time_to_first_chunk is not None:
                span.time_to_first_chunk(response.time_to_first_chunk)
            span.content("gen_ai.output.messages", lambda: messages_json((response.message,)))
        # The reply is the next request's too: a delta starts after it.
        self._messages_captured = len(request.messages) + 1

        usage = response.usage
        message = response.message
        await self._journal.append(
            Assistant(
                iteration=iteration,
                message=message,
                in_tokens=usage.input_tokens,
                out_tokens=usage.output_tokens,
                stop_reason=response.stop_reason,
                cache_read_tokens=usage.cache_read_tokens,
                cache_create_tokens=usage.cache_create_tokens,
                thinking_tokens=usage.thinking_tokens,
            )
        )
        state.usage += usage
        state.messages.append(message)

        self._events.emit(
            StatusEvent(iteration=iteration, phase=StatusPhase.CALLING_LLM, usage=usage)
        )
        calls = message.tool_uses
        self._emit_prose(message, final=answers_the_prompt(message, response.stop_reason))

        if response.stop_reason == STOP_MAX_TOKENS:
            return Failed(
                "the model's reply was cut off at its output limit before it finished; raise "
                "llm.budget.max_output_tokens to give it more room"
            )
        if not calls:
            if response.stop_reason == STOP_PAUSE_TURN:
                return None
            if response.stop_reason == STOP_REFUSAL:
                return Declined(message.text)
            return Completed(message.text)
        if self.over_budget(state.usage):
            return self.budget_end(state.usage)
        return await self._run_batch(state, tools, calls, calls, ())

    async def _reply_unless_stopped(self, request: Request) -> Response | None:
        """The model's reply, or None when a stop was asked before it came: the call in flight
        is cancelled then. A reply that lands together with the stop is kept, since it is paid
        for and journaling it repeats nothing."""
        if self._suspend.is_set():
            return None
        calling = asyncio.ensure_future(self._provider.call(request))
        stopping = asyncio.ensure_future(self._suspend.wait())
        try:
            await asyncio.wait((calling, stopping), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not calling.done():
                calling.cancel()
                # Waited on, not awaited: the call's own CancelledError is no cancel of this task.
                await asyncio.wait((calling,))
        if calling.cancelled():
            return None
        return calling.result()

    def _emit_prose(self, message: Message, *, final: bool) -> None:
        provider = self._provider.capabilities.provider
        for block in message.content:
            if isinstance(block, ThinkingBlock):
                signature = base64.b64encode(block.signature).decode("ascii")
                self._events.emit(ThinkingEvent(block.text, signature, provider))
        text = message.text
        if text:
            self._events.emit(TextEvent(text, final=final))

    def _report_retry(self, iteration: int, notice: RetryNotice) -> None:
        self._events.emit(
            StatusEvent(
                iteration=iteration,
                phase=StatusPhase.RETRYING,
                attempt=notice.attempt,
                attempts=notice.attempts,
                wait_seconds=notice.wait_seconds,
            )
        )

    async def _run_batch(
        self,
        state: TurnState,
        tools: ToolSet,
        order: Sequence[ToolUseBlock],
        calls: Sequence[ToolUseBlock],
        answered: Sequence[ToolResultBlock],
        *,
        resumed: bool = False,
    ) -> TurnOutcome | None:
        results = {result.tool_use_id: result for result in answered}
        deferred: list[Deferred] = []
        for call in calls:
            try:
                if self._suspend.is_set():
                    raise StoppedBeforeStart
                answer = await self._run_call(call, tools, resumed=resumed)
            except QuestionInterrupted as interrupted:
                return Suspended(_given_up_question(interrupted))
            except StoppedBeforeStart:
                # The calls not started stay unanswered in the journal: a resume runs them.
                return deferred_turn(self._journal.run_id, deferred) if deferred else Suspended()
            if isinstance(answer, Deferred):
                deferred.append(answer)
            else:
                results[call.id] = answer
        if deferred:
            # The turn cannot be sent back with a call unanswered; it resumes once the answer
            # is journaled, and the model then sees it among the batch's other results.
            return deferred_turn(self._journal.run_id, deferred)
        blocks = tuple(results[call.id] for call in order if call.id in results)
        state.messages.append(Message(Role.USER, blocks))
        return None

    async def _run_call(
        self, call: ToolUseBlock, tools: ToolSet, *, resumed: bool
    ) -> ToolResultBlock | Deferred:
        # One span covers every exit, so a call that never ran is still a span.
        tool = tools.get(call.name)
        kind = tool.kind if tool is not None else Kind.UNKNOWN
        with self._telemetry.tool_call(
            call.name,
            call_id=call.id,
            kind=kind.value,
            arguments=call.input,
            confirm_gated=tool is not None and self._trigger(tool) is not None,
            resumed=resumed,
        ) as span:
            span.content("gen_ai.tool.call.arguments", lambda: call.input)
            answer = await self._handle_call(call, tools, span)
            if isinstance(answer, ToolResultBlock):
                if answer.is_error:
                    span.fail(TOOL_FAILED)
                span.content("gen_ai.tool.call.result", lambda: answer.content)
            return answer

    async def _handle_call(
        self, call: ToolUseBlock, tools: ToolSet, span: Span
    ) -> ToolResultBlock | Deferred:
        # 1. Registry lookup: an unknown tool is answered, never dispatched.
        tool = tools.get(call.name)
        if tool is None:
            arguments = readable_arguments(call.name, call.input)
            self._events.emit(ToolCallEvent(call.id, call.name, arguments, ()))
            self._events.emit(WarningEvent(WarningKind.UNKNOWN_TOOL, name=call.name))
            return await self._answer(call.id, Outcome(f'unknown tool "{call.name}"', True))

        # 2. Describe and check gating on the original call, before any hook can change it.
        original_trigger = self._trigger(tool)

        # 3. PreToolUse may deny the call, or rewrite its tool and arguments. From here on the
        # call is prepared once: the trace line, the gate, the journal and the tool all read it.
        try:
            decision = await self._hooks.before_tool(call)
        except Exception as exc:
            raise Crash("a PreToolUse hook", exc) from exc
        if isinstance(decision, Rewrite):
            prepared = _rewritten(call, decision, tools)
            span.rewritten(prepared.tool.name, prepared.tool.kind.value)
        else:
            prepared = prepare_call(tool, call.input, call_id=call.id)
        self._emit_call(prepared)
        if isinstance(decision, Deny):
            span.refused(ToolRefusal.POLICY_DENIED)
            return await self._answer_prepared(prepared, Outcome(decision.reason, is_error=True))

        # 4. Validation, so nobody is asked to approve a call that cannot run.
        if prepared.problem is not None:
            span.refused(ToolRefusal.MISSING_ARGUMENTS)
            return await self._answer_prepared(prepared, Outcome(prepared.problem, is_error=True))

        # 5. The confirm gate, when the original or the effective tool is gated.
        tool = prepared.tool
        trigger = self._trigger(tool) or original_trigger
        if trigger is not None:
            denied = await self._denied(prepared, trigger, span)
            if denied is not None:
                return denied

        # 6. Dependencies: a prompter only for a tool that asks the operator, the work
        # directory and the timeout only for a command.
        operator_paced = isinstance(tool, AsksOperator) and tool.asks_operator
        deps = ExecDeps(prompter=self._prompter if operator_paced else None)
        if tool.presentation is Presentation.COMMAND:
            deps = ExecDeps(work_dir=self._settings.work_dir, timeout=self._settings.tool_timeout)

        # 7. The last checks before an irreversible effect: no stop was asked meanwhile (a hook
        # or the gate may have taken a while), and the session must still be ours.
        if self._suspend.is_set():
            raise StoppedBeforeStart
        await self._journal.ensure_ours()

        # 8. Execute, put the timeout text in place, then PostToolUse sees the final outcome.
        outcome = await self._execute(prepared, deps, operator_paced=operator_paced)
        span.exit_code(outcome.exec.exit_code if outcome.exec is not None else None)
        if outcome.deferral is not None:
            # PostToolUse is for a result, and a deferral has none yet; the answer arrives from
            # outside the run and reaches the model as it was supplied.
            return await self._defer(prepared, outcome.deferral)
        try:
            outcome = await self._hooks.after_tool(prepared.block, outcome)
        except Exception as exc:
            raise Crash("a PostToolUse hook", exc) from exc
        return await self._answer_prepared(prepared, outcome)

    async def _execute(
        self, prepared: PreparedCall, deps: ExecDeps, *, operator_paced: bool
    ) -> Outcome:
        tool = prepared.tool
        limit = self._settings.tool_timeout
        # A command enforces its own deadline (it must kill its process group), and a question
        # to the operator has none.
        enforce = (
            not operator_paced
            and tool.presentation is not Presentation.COMMAND
            and limit is not None
            and limit > timedelta(0)
        )
        try:
            if not enforce or limit is None:
                return await prepared.execute(deps)
            async with asyncio.timeout(limit.total_seconds()) as scope:
                return await prepared.execute(deps)
        except QuestionInterrupted:
            raise
        except TimeoutError as exc:
            if enforce and limit is not None and scope.expired():
                return Outcome(
                    f'tool "{tool.name}" did not finish within {format_duration(limit)} '
                    "(harness.tool_timeout) and was stopped",
                    is_error=True,
                    timed_out=True,
                )
            raise Crash(f'tool "{tool.name}"', exc) from exc
        except Exception as exc:
            raise Crash(f'tool "{tool.name}"', exc) from exc

    async def _denied(
        self, prepared: PreparedCall, trigger: str, span: Span
    ) -> ToolResultBlock | None:
        """Ask the confirm gate about ``prepared``: the answer the model gets when it is denied,
        or None when it may run."""
        asked = time.monotonic()
        verdict = await self._gate.decide(_approval_question(prepared, trigger))
        if not verdict.standing:
            span.confirm_waited(time.monotonic() - asked)
        if not verdict.allowed:
            span.refused(ToolRefusal.CONFIRM_DENIED)
            return await self._answer_prepared(prepared, Outcome(denial_content(verdict.reason)))
        if verdict.standing:
            self._events.emit(StatusEvent(phase=StatusPhase.STANDING_APPROVAL))
        return None

    def _trigger(self, tool: Tool) -> str | None:
        if isinstance(tool, Confirmable):
            return tool.confirm_trigger(self._settings.confirm_tags)
        return None

    def _emit_call(self, prepared: PreparedCall) -> None:
        self._events.emit(
            ToolCallEvent(prepared.call_id, prepared.tool.name, prepared.arguments, prepared.argv)
        )

    async def _answer_prepared(self, prepared: PreparedCall, outcome: Outcome) -> ToolResultBlock:
        remote = prepared.tool.kind is Kind.REMOTE
        return await self._answer(prepared.call_id, outcome, remote=remote)

    async def _answer(
        self, call_id: str, outcome: Outcome, *, remote: bool = False
    ) -> ToolResultBlock:
        images = outcome.images if isinstance(outcome, ImportedOutcome) else ()
        result = ToolResultBlock(call_id, outcome.model_content, outcome.is_error, images)
        await self._journal.append(ToolResult(result, remote=remote))
        self._events.emit(
            ToolResultEvent(
                call_id, outcome.output, outcome.is_error, outcome.exec, timed_out=outcome.timed_out
            )
        )
        await self._flush_grant(call_id)
        return result

    async def _defer(self, prepared: PreparedCall, deferral: Deferral) -> Deferred:
        record = Deferred(
            prepared.call_id, prepared.tool.name, note=deferral.note, handle=deferral.handle
        )
        await self._journal.append(record)
        await self._flush_grant(prepared.call_id)
        return record

    async def _flush_grant(self, call_id: str) -> None:
        """Journal the standing grant given for call ``call_id`` now that it is settled."""
        granted = self._gate.take_staged(call_id)
        if granted is not None:
            await self._journal.append(Decision(granted))
