"""The runner: start a conversation, resume one, take follow-ups, and journal all of it.

Every run is journaled; there is no opt-in. The journal is the truth: the conversation a turn
starts from, the counters a result reports and the resume position are folded from its records.

A resume reads and folds the journal (or takes the records a caller already read), refuses a
completed conversation, applies the resume gate, and appends a claim before it does anything
else, which fences off any worker that still thinks it holds the session. It then runs only the
calls the last turn left unanswered and carries on.

The journal is read once per turn at most: from then on the runner folds the records it read
plus the ones it appended, which are the journal for as long as it holds the session.

Suspend is an ``asyncio.Event`` the caller sets (the first Ctrl-C, a SIGTERM, a cancel). A model
call in flight is cancelled at once and journaled as nothing; a tool already running finishes and
is journaled; no tool starts after it. Nothing runs after the last record, so a clean suspend
resumes without repeating a model call or a tool call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Never, Self

from fisk_ai.agent.events import EventSink, WarningEvent, WarningKind
from fisk_ai.agent.gate import ConfirmGate
from fisk_ai.agent.hooks import Deny, Hooks
from fisk_ai.agent.loop import (
    Aborted,
    AgentError,
    AgentLoop,
    Crash,
    JournalLost,
    JournalWriter,
    TurnState,
    deferred_turn,
)
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
    RunResult,
    Suspended,
    TurnOutcome,
    continuable,
)
from fisk_ai.agent.pii import PiiError, guarded_hooks
from fisk_ai.agent.prompt import SystemPrompt, memory_index
from fisk_ai.agent.replay import stopped_at_the_iteration_cap
from fisk_ai.agent.resources import Resources, current_tools
from fisk_ai.llm.types import Message, Role, Usage, user_text
from fisk_ai.memory import MemoryStoreError, Scope, using_scope
from fisk_ai.sessions.errors import JournalLocked
from fisk_ai.sessions.fingerprint import (
    RESUME_ADVICE,
    Fingerprint,
    FingerprintInputs,
    ResumeAdvice,
    compute_fingerprint,
    conversation_allowance,
    resume_gate,
)
from fisk_ai.sessions.fold import Conversation, fold
from fisk_ai.sessions.records import (
    Assistant,
    Claim,
    MemoryRevisions,
    Meta,
    Payload,
    Record,
    Terminal,
    TerminalReason,
    Timestamp,
    User,
)
from fisk_ai.sessions.store import Journal
from fisk_ai.telemetry import Telemetry
from fisk_ai.tools.builtin.deferral import plan_definitions
from fisk_ai.tools.builtin.hitl import HITL_TOOL_NAMES
from fisk_ai.tools.questions import Prompter
from fisk_ai.tools.toolset import ToolSet
from fisk_ai.util.ids import new_ksuid

__all__ = ["PromptDenied", "Runner", "SessionCompleted"]


class PromptDenied(AgentError):
    """A UserPromptSubmit hook refused the prompt; nothing of it was journaled."""


class SessionCompleted(AgentError):
    """The session already completed, so it cannot be resumed."""


class _MeasuredJournal(JournalWriter):
    """The run's journal, reporting how long each append took to telemetry (a histogram the
    caller measures: a span per append would double a run's span count)."""

    def __init__(
        self, journal: Journal, records: Sequence[Record], telemetry: Telemetry, backend: str
    ) -> None:
        super().__init__(journal, records)
        self._telemetry = telemetry
        self._backend = backend

    async def append(self, payload: Payload) -> Record:
        began = time.perf_counter()
        try:
            return await super().append(payload)
        finally:
            self._telemetry.session_append(time.perf_counter() - began, self._backend)


class Runner:
    """Runs one conversation: ``start`` or ``resume`` it, then any number of ``follow_up``
    turns, then ``close`` it (or use the runner as an async context manager).

    ``resources`` are what every run of the agent shares. Its tool set is read once per model
    call, so a set that changes mid-batch never strands a call the model already made.

    A served ``conversation`` takes turns from callers over the life of a deployment: a changed
    tool set or budget does not stop it (the standing grants still go with a changed tool set),
    and its token allowance is the lowest it was ever given, so a budget a caller lowers on one
    turn limits the conversation rather than the turn. ``resume_advice`` is what a refusal of
    the resume gate tells whoever sent the turn to do, in its surface's terms.
    """

    def __init__(
        self,
        resources: Resources,
        *,
        events: EventSink,
        prompter: Prompter | None = None,
        suspend: asyncio.Event | None = None,
        traceparent: str = "",
        conversation: bool = False,
        resume_advice: ResumeAdvice = RESUME_ADVICE,
    ) -> None:
        # The W3C trace context of whoever sent the prompt; the run's span continues it.
        self.traceparent = traceparent
        # The run installs the PII guard itself, after the caller's hooks, so every path into
        # the loop is scanned; a scanner that will not build stops the run here.
        try:
            hooks = guarded_hooks(resources.hooks, resources.settings.pii_mode, events)
        except PiiError as exc:
            raise AgentError(str(exc)) from None
        resources = replace(resources, hooks=hooks)
        self._resources = resources
        self._settings = resources.settings
        self._provider = resources.provider
        self._tools = current_tools(resources)
        self._store = resources.store
        self._events = events
        self._prompter = prompter
        self._hooks = resources.hooks or Hooks()
        self.suspend = suspend or asyncio.Event()
        self._conversation = conversation
        self._resume_advice = resume_advice
        self._system = resources.system
        self._memory = resources.memory
        # The memories this conversation has read, at which revision: what authorizes an
        # overwrite. It lives as long as the conversation, across turns and resumes.
        self._memory_scope = Scope()
        self._journaled_revisions: dict[str, int] = {}
        self._journal: JournalWriter | None = None
        self._loop: AgentLoop | None = None
        self._open_turn: TurnOutcome | None = None
        """How the last turn of an interactive conversation ended while it stays open for the
        next prompt; journaled with the suspension when the conversation is left."""

    @property
    def session_id(self) -> str:
        """The id of the conversation this runner holds; empty before start or resume."""
        return self._journal.run_id if self._journal is not None else ""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        conversation_token: str = "",
        caller: str = "",
    ) -> RunResult:
        """Start a new conversation with ``prompt``, journaled under ``session_id`` or a new
        KSUID, and run its first turn. A served run names the ``conversation_token`` it is
        continued by and the ``caller`` that asked, and its journal's meta keeps both."""
        self._require_idle()
        try:
            submitted = await self._hooks.submit_prompt(prompt)
        except Exception as exc:
            raise AgentError(_crash_sentence("a UserPromptSubmit hook", exc, "")) from None
        if isinstance(submitted, Deny):
            raise PromptDenied(_denied_sentence(submitted))

        run_id = session_id or new_ksuid()
        tools = self._tools()
        system = self._system_prompt(tools, await self._memory_index())
        meta = Meta(
            run_id=run_id,
            created=Timestamp.now_utc(),
            fingerprint=self._fingerprint(tools, system),
            prompt=submitted,
            interactive=self._settings.interactive,
            conversation_token=conversation_token,
            caller=caller,
        )
        journal = self._journal_writer(await self._store.create(run_id, meta), [Record(1, meta)])
        loop = self._attach(journal, system.blocks(resumed=False), ConfirmGate(self._prompter))
        state = TurnState([user_text(submitted)], Usage(), next_iteration=1)
        return await self._run(lambda: loop.turn(state, allowance=self._settings.max_iterations))

    async def resume(
        self, session_id: str, *, force: bool = False, records: Sequence[Record] = ()
    ) -> RunResult:
        """Continue a stored conversation where it stopped. ``records`` is the journal when the
        caller has just read it, so it is not read again.

        Raises SessionCompleted for a completed conversation and ResumeRefused when the
        configuration changed (``force`` overrides every change except the provider).
        """
        conversation, journal, loop = await self._claim(session_id, force=force, records=records)
        if conversation.deferred:
            return await self._run(lambda: _awaiting(_waiting_on(conversation)))
        state = _state_of(conversation)
        if conversation.pending_turn is None and _at_rest(journal.records, state.messages):
            answer = Completed(state.messages[-1].text)
            return await self._run(lambda: _awaiting(answer))
        if stopped_at_the_iteration_cap(conversation):
            # The turn is over: what carries the conversation on is another prompt, so the
            # resume calls no model and says again how the turn ended.
            spent = IterationsSpent(_cap_sentence(conversation))
            return await self._run(lambda: _awaiting(spent))

        allowance = self._settings.max_iterations
        if not self._settings.interactive:
            allowance = max(allowance - _iterations_of_current_turn(journal.records), 0)

        async def body() -> TurnOutcome:
            if conversation.pending_turn is not None:
                end = await loop.finish_pending(
                    state, conversation.pending_turn, conversation.pending, conversation.answered
                )
                if end is not None:
                    return end
            return await loop.turn(state, allowance=allowance)

        return await self._run(body)

    async def follow_up_stored(
        self, session_id: str, prompt: str, *, force: bool = False, records: Sequence[Record] = ()
    ) -> RunResult:
        """Take a stored conversation and add ``prompt`` to it as a new turn, as ``follow_up``
        does. A turn that failed or was cut short is not sent again first: the prompt goes in
        after it, so the model sees what the operator wrote rather than the old request."""
        await self._claim(session_id, force=force, records=records)
        return await self.follow_up(prompt)

    async def _claim(
        self, session_id: str, *, force: bool, records: Sequence[Record]
    ) -> tuple[Conversation, JournalWriter, AgentLoop]:
        """Open a stored conversation for this runner and fence off any other writer."""
        self._require_idle()
        if not records:
            records = await self._store.read(session_id)
        conversation = _resumable(session_id, records)
        stored = conversation.meta.fingerprint
        if self._conversation:
            self._keep_allowance(stored)
        self._memory_scope = Scope(conversation.memory_revisions)
        self._journaled_revisions = dict(conversation.memory_revisions)
        tools = self._tools()
        system = self._system_prompt(tools, await self._memory_index())
        decision = resume_gate(
            stored,
            self._fingerprint(tools, system),
            force=force,
            conversation=self._conversation,
            advice=self._resume_advice,
        )

        # Taken only while the journal still ends where it was read, so of two runs that read
        # it, one claims it and the other stops here, before anything runs.
        opened = await self._store.open(session_id, read_seq=records[-1].seq)
        journal = self._journal_writer(opened, records)
        try:
            await journal.append(Claim(by=_claimant(), claimed=Timestamp.now_utc()))
        except JournalLost as exc:
            await journal.journal.close()
            if isinstance(exc.__cause__, JournalLocked):
                raise exc.__cause__ from None
            raise AgentError(str(exc)) from None
        except BaseException:
            await journal.journal.close()
            raise
        standing = () if decision.drop_standing_grants else conversation.standing_grants
        gate = ConfirmGate(
            self._prompter,
            standing_grants=standing,
            call_approvals=conversation.call_approvals,
        )
        loop = self._attach(journal, system.blocks(resumed=True), gate)
        return conversation, journal, loop

    def _keep_allowance(self, stored: Fingerprint) -> None:
        """Hold the conversation to the token allowance it was journaled under."""
        allowance = conversation_allowance(self._settings.max_tokens, stored)
        if allowance != self._settings.max_tokens:
            self._settings = replace(self._settings, max_tokens=allowance)
            self._resources = replace(self._resources, settings=self._settings)

    async def follow_up(self, prompt: str) -> RunResult:
        """Add ``prompt`` to the conversation as a new turn, with a fresh iteration allowance.

        A conversation at its token allowance refuses the prompt before it is recorded. Calls a
        previous turn left unanswered (an interrupted question) are run first.
        """
        journal, loop = self._require_attached()
        self._open_turn = None
        try:
            submitted = await self._hooks.submit_prompt(prompt)
        except Exception as exc:
            return await self._run(_raise(Crash("a UserPromptSubmit hook", exc)))
        if isinstance(submitted, Deny):
            raise PromptDenied(_denied_sentence(submitted))

        conversation = fold(journal.records)
        if loop.over_budget(conversation.usage):
            return await self._run(lambda: _awaiting(loop.budget_end(conversation.usage)))
        if conversation.deferred:
            return await self._run(lambda: _awaiting(_waiting_on(conversation)))

        async def body() -> TurnOutcome:
            if conversation.pending_turn is not None:
                state = _state_of(conversation)
                end = await loop.finish_pending(
                    state, conversation.pending_turn, conversation.pending, conversation.answered
                )
                if end is not None:
                    return end
            await journal.append(User(user_text(submitted)))
            state = _state_of(fold(journal.records))
            return await loop.turn(state, allowance=self._settings.max_iterations)

        return await self._run(body)

    async def close(self) -> None:
        """Release the session. An interactive conversation left between turns is journaled
        suspended, so it reads as one to continue rather than as finished or crashed; a served
        conversation left on an answer is journaled completed, the outcome a listing shows for
        it, and resumes all the same, since its meta says it is interactive."""
        journal = self._journal
        if journal is None:
            return
        self._journal = None
        self._loop = None
        try:
            if self._open_turn is not None and not journal.lost:
                await journal.append(_resting_record(self._open_turn, self._conversation))
                await self._journal_revisions(journal)
        except JournalLost:
            pass
        finally:
            self._open_turn = None
            await journal.journal.close()

    def _require_idle(self) -> None:
        if self._journal is not None:
            raise RuntimeError(f"this runner already holds session {self.session_id}")

    def _journal_writer(self, journal: Journal, records: Sequence[Record]) -> JournalWriter:
        # The backend is the first word of the store's description: "file", "jetstream".
        backend = self._store.describe().partition(",")[0]
        return _MeasuredJournal(journal, records, self._resources.telemetry, backend)

    def _require_attached(self) -> tuple[JournalWriter, AgentLoop]:
        if self._journal is None or self._loop is None:
            raise RuntimeError("follow_up needs a conversation: call start or resume first")
        return self._journal, self._loop

    def _system_prompt(self, tools: ToolSet, index: str = "") -> SystemPrompt:
        hitl = tuple(name for name in HITL_TOOL_NAMES if name in tools)
        if self._system is not None:
            return SystemPrompt(
                system_prompt=self._system.system_prompt,
                hitl_tools=hitl,
                memory_note=self._system.memory_note,
                knowledge_note=self._system.knowledge_note,
                memory_index=index or self._system.memory_index,
            )
        return SystemPrompt(
            system_prompt=self._settings.system_prompt, hitl_tools=hitl, memory_index=index
        )

    async def _memory_index(self) -> str:
        """The index of stored memories as the run starts, or "" without one. A store that
        cannot be listed costs the run its index, said in a warning, not the run itself."""
        memory = self._memory
        if memory is None or not memory.index:
            return ""
        try:
            items = await memory.store.list()
        except MemoryStoreError as exc:
            self._events.emit(WarningEvent(WarningKind.MEMORY_INDEX_UNAVAILABLE, error=f"{exc}"))
            return ""
        return memory_index(items)

    async def _journal_revisions(self, journal: JournalWriter) -> None:
        """Keep the conversation's read revisions after its terminal record, when they changed,
        so a resumed conversation may still overwrite what it read before."""
        if self._memory is None:
            return
        revisions = self._memory_scope.snapshot()
        if revisions != self._journaled_revisions:
            await journal.append(MemoryRevisions(revisions))
            self._journaled_revisions = revisions

    def _fingerprint(self, tools: ToolSet, system: SystemPrompt) -> Fingerprint:
        settings = self._settings
        capabilities = self._provider.capabilities
        plan = plan_definitions(
            tools,
            supported=capabilities.tool_search,
            disabled=settings.no_tool_search,
            model=settings.model,
        )
        return compute_fingerprint(
            FingerprintInputs(
                provider=capabilities.provider,
                model=settings.model,
                system=system.fingerprinted(),
                tools=plan.definitions,
                thinking=settings.thinking,
                reasoning_effort=settings.reasoning_effort,
                max_tokens=settings.max_tokens,
                max_iterations=settings.max_iterations,
            )
        )

    def _attach(
        self, journal: JournalWriter, system: tuple[str, ...], gate: ConfirmGate
    ) -> AgentLoop:
        self._journal = journal
        self._loop = AgentLoop(
            self._resources,
            journal=journal,
            events=self._events,
            system=system,
            gate=gate,
            prompter=self._prompter,
            suspend=self.suspend,
        )
        return self._loop

    async def _run(self, body: Callable[[], Awaitable[TurnOutcome]]) -> RunResult:
        """Run a turn inside its root span, which continues the caller's trace if it sent one;
        the span is outermost so it sees whatever the barrier made of a failure."""
        journal, _ = self._require_attached()
        telemetry = self._resources.telemetry
        with telemetry.run(
            self._settings.identity,
            traceparent=self.traceparent,
            interactive=self._settings.interactive,
            # A claimed journal is a stored conversation this process took up.
            resumed=telemetry.enabled
            and any(isinstance(record.payload, Claim) for record in journal.records),
        ) as span:
            result = await self._run_turn(body)
            span.terminal_reason(_terminal_reason(result.outcome))
            return result

    async def _run_turn(self, body: Callable[[], Awaitable[TurnOutcome]]) -> RunResult:
        """Run a turn behind the barrier: whatever raises ends the run once, journaled."""
        journal, _ = self._require_attached()
        try:
            with using_scope(self._memory_scope):
                outcome = await body()
        except JournalLost as exc:
            raise AgentError(str(exc)) from None
        except Crash as crash:
            await self._crashed(journal, crash.where, crash.error, crash.stack)
        except Aborted as exc:
            sentence = f"{exc}, so the run stopped{_kept(journal.run_id)}"
            await self._crashed(journal, "", exc, "", sentence=sentence)
        except Exception as exc:
            import traceback

            stack = "".join(traceback.format_exception(exc))
            await self._crashed(journal, "the agent loop", exc, stack)

        left_open = self._settings.interactive and continuable(outcome)
        self._open_turn = outcome if left_open else None
        terminal = None if left_open else _terminal_record(outcome)
        if terminal is not None:
            try:
                await journal.append(terminal)
                await self._journal_revisions(journal)
            except JournalLost as exc:
                raise AgentError(str(exc)) from None
        return self._result(outcome)

    async def _crashed(
        self,
        journal: JournalWriter,
        where: str,
        error: BaseException,
        stack: str,
        *,
        sentence: str = "",
    ) -> Never:
        message = sentence or _crash_sentence(where, error, journal.run_id)
        self._open_turn = None
        if stack and self._settings.verbose:
            self._events.emit(WarningEvent(WarningKind.RUN_CRASHED, name=where, error=stack))
        if not journal.lost:
            with contextlib.suppress(JournalLost):
                await journal.append(Terminal(TerminalReason.ERROR, message))
        raise AgentError(message) from None

    def _result(self, outcome: TurnOutcome) -> RunResult:
        journal, _ = self._require_attached()
        conversation = fold(journal.records)
        return RunResult(
            outcome,
            journal.run_id,
            usage=conversation.usage,
            llm_calls=conversation.llm_calls,
            tool_calls=conversation.tool_calls,
            remote_tool_calls=conversation.remote_tool_calls,
        )


def _resumable(session_id: str, records: Sequence[Record]) -> Conversation:
    conversation = fold(records)
    # An interactive conversation completes each answered turn and takes the next prompt.
    if conversation.completed and not conversation.meta.interactive:
        raise SessionCompleted(
            f"session {session_id} already completed, so it cannot be resumed; start a new "
            "run, or remove it with fisk session rm"
        )
    return conversation


def _terminal_record(outcome: TurnOutcome) -> Terminal | None:
    """The journal's terminal record for how a turn ended; None for endings the runner never
    journals. The journal has five reasons: a model refusal is journaled as an error (its
    assistant record keeps stop reason refusal), a deferred run as suspended (its deferred
    records name the calls)."""
    match outcome:
        case Completed():
            return Terminal(TerminalReason.COMPLETED)
        case Suspended() | Deferred():
            return Terminal(TerminalReason.SUSPENDED, outcome.message)
        case IterationsSpent():
            return Terminal(TerminalReason.MAX_ITERATIONS, outcome.message)
        case BudgetSpent():
            return Terminal(TerminalReason.BUDGET, outcome.message)
        case Declined() | Failed() | Crashed():
            return Terminal(TerminalReason.ERROR, outcome.message)
        case Abandoned() | NotRun():
            return None


def _resting_record(outcome: TurnOutcome, conversation: bool) -> Terminal:
    """The terminal record of an interactive conversation left between turns after
    ``outcome``: completed after an answer in a served ``conversation``; otherwise suspended,
    saying why when the turn failed, as the screen did."""
    if conversation and isinstance(outcome, Completed):
        return Terminal(TerminalReason.COMPLETED)
    return Terminal(TerminalReason.SUSPENDED, outcome.message)


def _terminal_reason(outcome: TurnOutcome) -> str:
    """How a turn ended as its root span says it: the journal's terminal reason, else
    ``setup_failed`` for a turn refused before it ran and ``suspended`` for one whose process
    stopped under it."""
    terminal = _terminal_record(outcome)
    if terminal is not None:
        return terminal.reason.value
    return "setup_failed" if isinstance(outcome, NotRun) else TerminalReason.SUSPENDED.value


def _state_of(conversation: Conversation) -> TurnState:
    return TurnState(
        list(conversation.messages),
        conversation.usage,
        next_iteration=max(conversation.next_iteration, 1),
    )


def _at_rest(records: Sequence[Record], messages: Sequence[Message]) -> bool:
    """Whether the conversation ends on an answer waiting for the next prompt, rather than part
    way through a turn (after tool results, or on a reply the model paused)."""
    if not messages or messages[-1].role is not Role.ASSISTANT:
        return False
    last = next(
        (record.payload for record in reversed(records) if isinstance(record.payload, Assistant)),
        None,
    )
    return last is None or last.stop_reason != "pause_turn"


def _cap_sentence(conversation: Conversation) -> str:
    terminal = conversation.terminal
    if terminal is not None and terminal.message:
        return terminal.message
    return "the last turn used all the iterations it was allowed; continue with another prompt"


def _iterations_of_current_turn(records: Sequence[Record]) -> int:
    """How many model calls the turn in progress has made since its prompt."""
    used = 0
    for record in reversed(records):
        if isinstance(record.payload, User):
            break
        if isinstance(record.payload, Assistant):
            used += 1
    return used


def _waiting_on(conversation: Conversation) -> Deferred:
    return deferred_turn(conversation.run_id, conversation.deferred)


async def _awaiting(outcome: TurnOutcome) -> TurnOutcome:
    return outcome


def _raise(crash: Crash) -> Callable[[], Awaitable[TurnOutcome]]:
    async def body() -> TurnOutcome:
        raise crash

    return body


def _claimant() -> str:
    return f"{socket.gethostname()} pid {os.getpid()}"


def _denied_sentence(denied: Deny) -> str:
    return f"a UserPromptSubmit hook refused the prompt: {denied.reason}"


def _crash_sentence(where: str, error: BaseException, run_id: str) -> str:
    detail = str(error) or "no detail"
    sentence = f"{where} failed with {type(error).__name__}: {detail}"
    if run_id:
        sentence += f"{_kept(run_id)} (run with --verbose to see the stack)"
    return sentence


def _kept(run_id: str) -> str:
    return f"; session {run_id} is kept and can be continued with fisk run --resume {run_id}"
