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
from typing import assert_never

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
    def between_turns(self) -> bool:
        """Suspended with its last turn answered, as a served or chat conversation rests until
        its next prompt, rather than stopped part way through a turn."""
        return (
            self.terminal is not None
            and self.terminal.reason is TerminalReason.SUSPENDED
            and self.pending_turn is None
            and bool(self.messages)
            and self.messages[-1].role is Role.ASSISTANT
            and not any(isinstance(block, ToolUseBlock) for block in self.messages[-1].content)
        )

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


@dataclass(slots=True)
class _Turn:
    message: Message
    calls: tuple[ToolUseBlock, ...]
    """The message's tool calls, kept rather than recomputed for each result the turn gets."""
    results: dict[str, ToolResultBlock] = field(default_factory=dict)

    def results_in_call_order(self) -> tuple[ToolResultBlock, ...]:
        return tuple(self.results[call.id] for call in self.calls if call.id in self.results)

    def unanswered(self) -> tuple[ToolUseBlock, ...]:
        return tuple(call for call in self.calls if call.id not in self.results)


def fold(records: Sequence[Record]) -> Conversation:
    """Rebuild the conversation a journal describes; a malformed journal raises JournalError."""
    folding = _Folding(_opening_meta(records))
    for record in records[1:]:
        folding.add(record)
    return folding.conversation()


def _opening_meta(records: Sequence[Record]) -> Meta:
    if not records:
        raise JournalError("the session journal is empty; it has no meta record")
    first = records[0]
    if not isinstance(first.payload, Meta):
        raise JournalError("the session journal does not start with a meta record")
    meta = first.payload
    _check_version(meta)
    if first.seq != 1:
        raise JournalError(f"session {meta.run_id} starts at record {first.seq} instead of 1")
    return meta


class _Folding:
    """A fold part way through a journal: what the records after the meta record have built."""

    # Slots: the fold reads and writes these for every record of journals thousands long.
    __slots__ = (
        "call_approvals",
        "deferred",
        "first_prompt",
        "last_iteration",
        "last_seq",
        "llm_calls",
        "memory_revisions",
        "messages",
        "meta",
        "remote_tool_calls",
        "standing_grants",
        "stop_reasons",
        "terminal",
        "tool_calls",
        "turn",
        "usage",
    )

    def __init__(self, meta: Meta) -> None:
        self.meta = meta
        self.messages: list[Message] = [user_text(meta.prompt)] if meta.prompt else []
        self.turn: _Turn | None = None
        self.usage = Usage()
        self.llm_calls = 0
        self.tool_calls = 0
        self.remote_tool_calls = 0
        self.stop_reasons: list[str] = []
        self.last_iteration = 0
        self.terminal: Terminal | None = None
        self.standing_grants: set[str] = set()
        self.call_approvals: set[str] = set()
        self.deferred: dict[str, Deferred] = {}
        self.memory_revisions: Mapping[str, int] = MappingProxyType({})
        self.first_prompt = meta.prompt
        self.last_seq = 1

    def add(self, record: Record) -> None:
        seq = record.seq
        if seq != self.last_seq + 1:
            what = "repeats" if seq <= self.last_seq else "skips ahead of"
            raise JournalError(
                f"session {self.meta.run_id} is corrupt: record {seq} {what} record {self.last_seq}"
            )
        self.last_seq = seq
        payload = record.payload
        match payload:
            case Assistant():
                self._add_assistant(payload)
            case User():
                self._add_user(payload)
            case ToolResult():
                self._add_tool_result(payload, seq)
            case Deferred():
                self.deferred[payload.tool_use_id] = payload
            case Decision():
                self.standing_grants.add(payload.tool)
            case CallApproval():
                self.call_approvals.add(payload.tool_use_id)
            case MemoryRevisions():
                self.memory_revisions = payload.revisions
            case Terminal():
                self.terminal = payload
                self.call_approvals.clear()
            case Meta():
                raise JournalError(
                    f"session {self.meta.run_id} is corrupt: record {seq} is a second meta record"
                )
            case Claim() | Unrecognized():
                # A claim only fences other writers, and an unrecognized optional record is one
                # a reader may skip; touching the current turn here would commit it early.
                pass
            case _:
                assert_never(payload)

    def _add_assistant(self, assistant: Assistant) -> None:
        self._commit()
        self.turn = _Turn(assistant.message, assistant.message.tool_uses)
        self.stop_reasons.append(assistant.stop_reason)
        self.usage += Usage(
            assistant.in_tokens,
            assistant.out_tokens,
            assistant.cache_read_tokens,
            assistant.cache_create_tokens,
            assistant.thinking_tokens,
        )
        self.llm_calls += 1
        self.last_iteration = assistant.iteration
        self.terminal = None

    def _add_user(self, user: User) -> None:
        self._commit()
        _append_user(self.messages, user.message)
        if not self.first_prompt:
            self.first_prompt = user.message.text
        self.terminal = None

    def _add_tool_result(self, result: ToolResult, seq: int) -> None:
        run_id = self.meta.run_id
        tool_use_id = result.tool_use_id
        turn = self.turn
        if turn is None:
            raise JournalError(
                f"session {run_id} is corrupt: record {seq} answers call {tool_use_id} "
                "with no assistant turn before it"
            )
        if tool_use_id not in {call.id for call in turn.calls}:
            raise JournalError(
                f"session {run_id} is corrupt: record {seq} answers call {tool_use_id}, "
                "which the current assistant turn did not make"
            )
        if tool_use_id in turn.results:
            raise JournalError(
                f"session {run_id} is corrupt: record {seq} answers call {tool_use_id} "
                "a second time"
            )
        turn.results[tool_use_id] = result.result
        self.deferred.pop(tool_use_id, None)
        self.tool_calls += 1
        self.remote_tool_calls += int(result.remote)
        self.terminal = None

    def _commit(self) -> None:
        turn = self.turn
        if turn is None:
            return
        self.messages.append(turn.message)
        results = turn.results_in_call_order()
        if results:
            _append_user(self.messages, Message(Role.USER, results))
        self.turn = None

    def conversation(self) -> Conversation:
        """End the fold: a turn with every call answered is committed, one still waiting on a
        call is returned as pending."""
        pending_turn: Message | None = None
        pending: tuple[ToolUseBlock, ...] = ()
        answered: tuple[ToolResultBlock, ...] = ()
        waiting_on: tuple[Deferred, ...] = ()
        turn = self.turn
        if turn is not None and (unanswered := turn.unanswered()):
            pending_turn = turn.message
            pending = tuple(call for call in unanswered if call.id not in self.deferred)
            answered = turn.results_in_call_order()
            # Only a call of the pending turn can still be answered; a result for any other
            # would be refused by the next fold.
            waiting_on = tuple(
                self.deferred[call.id] for call in unanswered if call.id in self.deferred
            )
        else:
            self._commit()
        return Conversation(
            meta=self.meta,
            messages=tuple(self.messages),
            pending_turn=pending_turn,
            pending=pending,
            answered=answered,
            usage=self.usage,
            llm_calls=self.llm_calls,
            tool_calls=self.tool_calls,
            remote_tool_calls=self.remote_tool_calls,
            # As in Go, the resume position exists only once a model turn does: a journal of
            # its meta record alone (or of follow-ups alone) folds to 0, which the runner reads
            # as "start at the first iteration".
            next_iteration=self.last_iteration + 1 if self.llm_calls else 0,
            terminal=self.terminal,
            standing_grants=frozenset(self.standing_grants),
            call_approvals=frozenset(self.call_approvals),
            deferred=waiting_on,
            memory_revisions=self.memory_revisions,
            last_seq=self.last_seq,
            first_prompt=self.first_prompt,
            stop_reasons=tuple(self.stop_reasons),
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


def _append_user(messages: list[Message], message: Message) -> None:
    # The API refuses two user messages in a row, so a second one joins the first.
    if messages and messages[-1].role is Role.USER:
        messages[-1] = Message(Role.USER, messages[-1].content + message.content)
    else:
        messages.append(message)
