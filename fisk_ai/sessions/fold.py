"""The fold: a journal's records in, the conversation they describe out.

Everything a resume or a listing needs (the messages, the calls still to run, the counters, the
grants) is recomputed here from the records and nowhere else, so it cannot drift from what was
journaled. The fold is pure: no I/O, no clock, no state beyond its argument.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from fisk_ai.llm.types import Message, Role, ToolResultBlock, ToolUseBlock, Usage, user_text
from fisk_ai.sessions.errors import JournalError
from fisk_ai.sessions.records import (
    JOURNAL_VERSION,
    Assistant,
    CallApproval,
    Claim,
    Decision,
    Deferred,
    MemoryRevisions,
    Meta,
    Record,
    Terminal,
    TerminalReason,
    ToolResult,
    Unrecognized,
    User,
)

__all__ = ["Conversation", "SessionStatus", "fold"]


class SessionStatus(enum.Enum):
    """Where a session stands: open while no terminal record stands, else the terminal reason.
    ``corrupt`` is never folded; a listing reports it for a journal that cannot be read."""

    OPEN = "open"
    COMPLETED = "completed"
    SUSPENDED = "suspended"
    ERROR = "error"
    BUDGET = "budget"
    MAX_ITERATIONS = "max_iterations"
    CORRUPT = "corrupt"


@dataclass(frozen=True)
class Conversation:
    """A folded journal.

    ``messages`` holds the committed conversation, ready to send. When the last assistant turn
    still has calls without results, that turn is not committed: it is ``pending_turn``, with
    ``pending`` the calls still to run (in call order, deferred calls excluded), ``answered``
    the results it already has, and ``deferred`` the calls of it waiting on a deferred answer.

    ``terminal`` is the latest terminal record, unless conversation (an assistant turn, a
    follow-up or a tool result) was journaled after it: the session is then open again.
    ``call_approvals`` holds the tool_use ids approved since the last terminal record.
    """

    meta: Meta
    messages: tuple[Message, ...]
    pending_turn: Message | None
    pending: tuple[ToolUseBlock, ...]
    answered: tuple[ToolResultBlock, ...]
    usage: Usage
    llm_calls: int
    tool_calls: int
    remote_tool_calls: int
    next_iteration: int
    terminal: Terminal | None
    standing_grants: frozenset[str]
    call_approvals: frozenset[str]
    deferred: tuple[Deferred, ...]
    memory_revisions: Mapping[str, int]
    last_seq: int
    first_prompt: str
    stop_reasons: tuple[str, ...] = ()
    """The provider's stop reason for each model turn, in order: one per assistant message of
    ``messages`` and ``pending_turn`` together."""

    @property
    def status(self) -> SessionStatus:
        if self.terminal is None:
            return SessionStatus.OPEN
        return SessionStatus(self.terminal.reason.value)

    @property
    def completed(self) -> bool:
        """A completed session cannot be resumed."""
        return self.terminal is not None and self.terminal.reason is TerminalReason.COMPLETED

    @property
    def run_id(self) -> str:
        return self.meta.run_id

    def is_answered(self, tool_use_id: str) -> bool:
        """Whether a result for the call is journaled, committed or in the pending turn."""
        if any(result.tool_use_id == tool_use_id for result in self.answered):
            return True
        return any(
            isinstance(block, ToolResultBlock) and block.tool_use_id == tool_use_id
            for message in self.messages
            if message.role is Role.USER
            for block in message.content
        )


@dataclass
class _Turn:
    message: Message
    results: dict[str, ToolResultBlock] = field(default_factory=dict)

    def calls(self) -> tuple[ToolUseBlock, ...]:
        return self.message.tool_uses

    def results_in_call_order(self) -> tuple[ToolResultBlock, ...]:
        return tuple(self.results[call.id] for call in self.calls() if call.id in self.results)

    def unanswered(self) -> tuple[ToolUseBlock, ...]:
        return tuple(call for call in self.calls() if call.id not in self.results)


def fold(records: Sequence[Record]) -> Conversation:
    """Rebuild the conversation a journal describes; a malformed journal raises JournalError."""
    if not records:
        raise JournalError("the session journal is empty; it has no meta record")
    first = records[0]
    if not isinstance(first.payload, Meta):
        raise JournalError("the session journal does not start with a meta record")
    meta = first.payload
    _check_version(meta)
    if first.seq != 1:
        raise JournalError(f"session {meta.run_id} starts at record {first.seq} instead of 1")

    messages: list[Message] = [user_text(meta.prompt)] if meta.prompt else []
    turn: _Turn | None = None
    usage = Usage()
    llm_calls = tool_calls = remote_tool_calls = 0
    stop_reasons: list[str] = []
    last_iteration = 0
    terminal: Terminal | None = None
    standing_grants: set[str] = set()
    call_approvals: set[str] = set()
    deferred: dict[str, Deferred] = {}
    memory_revisions: Mapping[str, int] = MappingProxyType({})
    first_prompt = meta.prompt

    def commit() -> None:
        nonlocal turn
        if turn is None:
            return
        messages.append(turn.message)
        results = turn.results_in_call_order()
        if results:
            _append_user(messages, Message(Role.USER, results))
        turn = None

    last_seq = first.seq
    for record in records[1:]:
        if record.seq != last_seq + 1:
            what = "repeats" if record.seq <= last_seq else "skips ahead of"
            raise JournalError(
                f"session {meta.run_id} is corrupt: record {record.seq} {what} record {last_seq}"
            )
        last_seq = record.seq
        payload = record.payload
        if isinstance(payload, Assistant):
            commit()
            turn = _Turn(payload.message)
            stop_reasons.append(payload.stop_reason)
            usage += Usage(
                payload.in_tokens,
                payload.out_tokens,
                payload.cache_read_tokens,
                payload.cache_create_tokens,
                payload.thinking_tokens,
            )
            llm_calls += 1
            last_iteration = payload.iteration
            terminal = None
        elif isinstance(payload, User):
            commit()
            _append_user(messages, payload.message)
            if not first_prompt:
                first_prompt = payload.message.text
            terminal = None
        elif isinstance(payload, ToolResult):
            turn = _answer(turn, payload, record.seq, meta.run_id)
            deferred.pop(payload.tool_use_id, None)
            tool_calls += 1
            remote_tool_calls += int(payload.remote)
            terminal = None
        elif isinstance(payload, Deferred):
            deferred[payload.tool_use_id] = payload
        elif isinstance(payload, Decision):
            standing_grants.add(payload.tool)
        elif isinstance(payload, CallApproval):
            call_approvals.add(payload.tool_use_id)
        elif isinstance(payload, MemoryRevisions):
            memory_revisions = payload.revisions
        elif isinstance(payload, Terminal):
            terminal = payload
            call_approvals.clear()
        elif isinstance(payload, Meta):
            raise JournalError(
                f"session {meta.run_id} is corrupt: record {record.seq} is a second meta record"
            )
        else:
            # A claim only fences other writers, and an unrecognized optional record is one a
            # reader may skip; touching the current turn here would commit it early.
            assert isinstance(payload, Claim | Unrecognized)

    pending_turn: Message | None = None
    pending: tuple[ToolUseBlock, ...] = ()
    answered: tuple[ToolResultBlock, ...] = ()
    waiting_on: tuple[Deferred, ...] = ()
    if turn is not None and turn.unanswered():
        pending_turn = turn.message
        pending = tuple(call for call in turn.unanswered() if call.id not in deferred)
        answered = turn.results_in_call_order()
        # Only a call of the pending turn can still be answered; a result for any other would
        # be refused by the next fold.
        waiting_on = tuple(deferred[call.id] for call in turn.unanswered() if call.id in deferred)
    else:
        commit()

    return Conversation(
        meta=meta,
        messages=tuple(messages),
        pending_turn=pending_turn,
        pending=pending,
        answered=answered,
        usage=usage,
        llm_calls=llm_calls,
        tool_calls=tool_calls,
        remote_tool_calls=remote_tool_calls,
        next_iteration=last_iteration + 1,
        terminal=terminal,
        standing_grants=frozenset(standing_grants),
        call_approvals=frozenset(call_approvals),
        deferred=waiting_on,
        memory_revisions=memory_revisions,
        last_seq=last_seq,
        first_prompt=first_prompt,
        stop_reasons=tuple(stop_reasons),
    )


def _check_version(meta: Meta) -> None:
    if meta.version > JOURNAL_VERSION:
        raise JournalError(
            f"session {meta.run_id} was written by a newer fisk-ai (journal version "
            f"{meta.version}, this one reads {JOURNAL_VERSION}); upgrade fisk-ai to open it"
        )
    if meta.version < JOURNAL_VERSION:
        raise JournalError(
            f"session {meta.run_id} was written by an older fisk-ai (journal version "
            f"{meta.version}, this one reads only {JOURNAL_VERSION}) and cannot be opened"
        )


def _answer(turn: _Turn | None, result: ToolResult, seq: int, run_id: str) -> _Turn:
    if turn is None:
        raise JournalError(
            f"session {run_id} is corrupt: record {seq} answers call {result.tool_use_id} "
            "with no assistant turn before it"
        )
    if result.tool_use_id not in {call.id for call in turn.calls()}:
        raise JournalError(
            f"session {run_id} is corrupt: record {seq} answers call {result.tool_use_id}, "
            "which the current assistant turn did not make"
        )
    if result.tool_use_id in turn.results:
        raise JournalError(
            f"session {run_id} is corrupt: record {seq} answers call {result.tool_use_id} "
            "a second time"
        )
    turn.results[result.tool_use_id] = result.result
    return turn


def _append_user(messages: list[Message], message: Message) -> None:
    # The API refuses two user messages in a row, so a second one joins the first.
    if messages and messages[-1].role is Role.USER:
        messages[-1] = Message(Role.USER, messages[-1].content + message.content)
    else:
        messages.append(message)
