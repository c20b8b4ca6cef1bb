"""The text both surfaces show: tool call lines, tool results, thinking, warnings, what a
waiting question is about, the run summary and the resume hint, and how a stored session stands.

Neither the line surface nor the workstation owns these: a tool call line is rendered from what
the call is, so a live run, a resumed one, a journal dump and the full screen show the same line.
Everything here returns plain text already stripped of control sequences; no styling, no
terminal library.
"""

from __future__ import annotations

import enum
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, assert_never

from fisk_ai.agent.events import ToolCallEvent, ToolResultEvent, WarningEvent
from fisk_ai.llm.types import Usage
from fisk_ai.tools.questions import ApprovalQuestion, Question
from fisk_ai.util.durations import format_duration
from fisk_ai.util.sanitize import single_line, strip_control

if TYPE_CHECKING:
    from fisk_ai.sessions.fold import Conversation, SessionStatus
    from fisk_ai.sessions.store import SessionSummary

CALL_PREFIX = "-> "
RESULT_PREFIX = "<-"
THOUGHT_PREFIX = "\N{THOUGHT BALLOON} "
DISPLAY_LIMIT = 2000
# A value longer than this is shown as its first and last characters when the line is too wide.
LONG_VALUE = 19
KEEP_HEAD = 10
KEEP_TAIL = 6


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """Arguments as compact JSON with sorted keys: a decoded object has no order of its own."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tool_call_line(event: ToolCallEvent, width: int | None = None) -> str:
    """``-> stream rm --force -- ORDERS``; the short form when ``width`` is too narrow for it."""
    if not event.command:
        text = event.name
        if event.input:
            text += " " + arguments_text(event.input)
        return CALL_PREFIX + single_line(text, DISPLAY_LIMIT)
    full = CALL_PREFIX + single_line(" ".join(event.command), DISPLAY_LIMIT)
    if width is None or len(full) <= width - len(CALL_PREFIX) - 1:
        return full
    return CALL_PREFIX + single_line(" ".join(short_tokens(event.command)), DISPLAY_LIMIT)


def short_tokens(tokens: Sequence[str]) -> list[str]:
    """Each flag value and positional longer than 19 characters cut to its ends."""
    shortened = []
    for token in tokens:
        if token.startswith("--") and "=" in token:
            name, value = token.split("=", 1)
            shortened.append(f"{name}={_elide(value)}")
        elif token.startswith("-"):
            shortened.append(token)
        else:
            shortened.append(_elide(token))
    return shortened


def _elide(value: str) -> str:
    if len(value) <= LONG_VALUE:
        return value
    return f"{value[:KEEP_HEAD]}...{value[-KEEP_TAIL:]}"


def tool_result_text(event: ToolResultEvent) -> str:
    """What a tool returned, as an operator reads it: a command's output with a non-zero exit
    kept, a silent success said explicitly, an error marked."""
    if event.is_error:
        return "(error) " + strip_control(event.output)
    output = strip_control(event.output)
    if event.exec is not None and event.exec.exit_code != 0:
        output = f"(exit {event.exec.exit_code}) {output}"
    return output if output.strip() else "(no output)"


def warning_text(event: WarningEvent) -> str:
    """A warning event as one sentence: its error when it has one, else its kind and subject."""
    if event.error:
        return single_line(event.error)
    subject = f" ({single_line(event.name)})" if event.name else ""
    return single_line(event.kind.replace("_", " ")) + subject


def blocked_reason(question: Question) -> str:
    """What a watching operator needs to know about a question, in one line."""
    if isinstance(question, ApprovalQuestion):
        return f"approve {single_line(question.display, 200)} ({single_line(question.trigger)})"
    return question.question


def retry_wait_text(seconds_left: int) -> str:
    """How long until the model is asked again, as the activity line counts it down."""
    return "retrying now" if seconds_left <= 0 else f"retrying in {seconds_left}s"


def retry_text(seconds_left: int, attempt: int, attempts: int) -> str:
    """A model call the provider tries again (429, 529): the wait and the attempt."""
    return f"{retry_wait_text(seconds_left)} (attempt {attempt} of {attempts})"


def turn_end_lines(word: str, message: str) -> list[str]:
    """How a turn that did not answer ended: ``--- run WORD ---``, then ``run ended: MESSAGE``
    when there is one."""
    lines = [f"--- run {word} ---"]
    if message:
        lines.append(f"run ended: {single_line(message, DISPLAY_LIMIT)}")
    return lines


def stored_ending_lines(conversation: Conversation) -> list[str]:
    """How a stored conversation's last turn ended, said as the live run said it; nothing when
    it answered."""
    from fisk_ai.agent.replay import last_turn_ending
    from fisk_ai.sessions.records import TerminalReason

    ending = last_turn_ending(conversation)
    if ending is None:
        return []
    match ending.reason:
        case TerminalReason.ERROR:
            word = "error"
        case TerminalReason.SUSPENDED:
            word = "suspended"
        case TerminalReason.BUDGET | TerminalReason.MAX_ITERATIONS:
            word = "aborted"
        case TerminalReason.COMPLETED:
            return []
        case _:
            assert_never(ending.reason)
    return turn_end_lines(word, ending.message)


def thinking_lines(text: str) -> list[str]:
    return [THOUGHT_PREFIX + line for line in strip_control(text).splitlines() if line.strip()]


@dataclass(frozen=True)
class RunSummary:
    suspended: bool
    session: str
    model: str
    llm_calls: int
    tool_calls: int
    remote_tool_calls: int
    usage: Usage
    latency: timedelta


def summary_line(summary: RunSummary, *, verbose: bool = False) -> str:
    """``Run summary: session=... model=... llm_calls=2 tool_calls=2 tokens=3536/113 ...``"""
    usage = summary.usage
    parts = ["Run suspended:" if summary.suspended else "Run summary:"]
    if summary.session:
        parts.append(f"session={summary.session}")
    if summary.model:
        parts.append(f"model={summary.model}")
    parts += [f"llm_calls={summary.llm_calls}", f"tool_calls={summary.tool_calls}"]
    if summary.remote_tool_calls:
        parts.append(f"remote_tool_calls={summary.remote_tool_calls}")
    parts.append(f"tokens={usage.input_tokens}/{usage.output_tokens}")
    parts.append(f"thinking={usage.thinking_tokens}")
    if usage.cache_read_tokens:
        parts.append(f"cached={usage.cache_read_tokens}")
    if verbose and usage.cache_create_tokens:
        parts.append(f"cache_write={usage.cache_create_tokens}")
    latency = timedelta(milliseconds=round(summary.latency.total_seconds() * 1000))
    parts.append(f"latency={format_duration(latency)}")
    return " ".join(parts)


DEFAULT_AGENT_CONFIG = "agent.yaml"
"""The configuration ``fisk run`` reads when no --config names one."""


def resume_flags(
    *, config: str, state_dir: str | None = None, nats_context: str = "", identity: str = ""
) -> str:
    """The flags of a run that a resume needs again to reach the same conversation: a
    configuration or a journal directory other than the default, and a remote agent's
    context and identity. Each value is quoted as a shell reads it, so the hint runs as
    printed."""
    flags: list[str] = []
    if nats_context:
        flags += ["--nats-context", nats_context]
    if identity:
        flags += ["--identity", identity]
    if config != DEFAULT_AGENT_CONFIG:
        flags += ["--config", config]
    if state_dir:
        flags += ["--state-dir", state_dir]
    return shlex.join(flags)


def resume_command(session: str, flags: str = "") -> str:
    """The command that continues ``session``; ``flags`` are what ``resume_flags`` gave for
    the run that left it."""
    return f"fisk run {flags + ' ' if flags else ''}--resume {session}"


def resume_hint(session: str, flags: str = "", *, next_prompt: bool = False) -> str:
    """The line a surface prints when ``session`` can be continued. A conversation that goes
    on only with ``next_prompt`` (its turn used every iteration) is continued from the full
    screen's chat bar, which the same command opens on a terminal."""
    if next_prompt:
        return f"continue with another prompt in the full screen: {resume_command(session, flags)}"
    return f"resume with: {resume_command(session, flags)}"


class SessionState(enum.Enum):
    """How a stored session stands, in the one word the session browser, the transcript viewer,
    ``fisk session show`` and ``fisk session ls`` all give it. The journal's own terminal
    reason (``SessionStatus``) is what the Go version prints; this is what an operator reads."""

    ANSWERED = "answered"
    """Its last turn was answered and it waits for a next prompt; resuming continues it."""
    COMPLETED = "completed"
    """Its run finished; it cannot resume."""
    SUSPENDED = "suspended"
    """Stopped part way through a turn: a question left unanswered, a stop, a deferred call."""
    FAILED = "failed"
    """Its last turn ended on an error (the API, the configuration, a truncated reply)."""
    BUDGET = "budget"
    """Its last turn spent the token budget."""
    LIMIT = "limit"
    """Its last turn reached the iteration limit (max_iterations)."""
    OPEN = "open"
    """No ending is journaled: a run is in it now, or one was killed before it could say."""
    CORRUPT = "corrupt"
    """Its journal cannot be read."""


STATE_WIDTH = max(len(state.value) for state in SessionState)
"""The widest state word: a column this wide holds every one."""


class StoredSession(Protocol):
    """What the state of a stored session is read from: a listing's summary or a folded
    conversation."""

    @property
    def status(self) -> SessionStatus: ...

    @property
    def between_turns(self) -> bool: ...


def session_state(session: StoredSession) -> SessionState:
    """The one word for how ``session`` stands."""
    # Imported here: the record models are a large part of the first frame's imports,
    # and only a stored session needs them.
    from fisk_ai.sessions.fold import SessionStatus

    match session.status:
        case SessionStatus.SUSPENDED:
            return SessionState.ANSWERED if session.between_turns else SessionState.SUSPENDED
        case SessionStatus.COMPLETED:
            return SessionState.COMPLETED
        case SessionStatus.ERROR:
            return SessionState.FAILED
        case SessionStatus.BUDGET:
            return SessionState.BUDGET
        case SessionStatus.MAX_ITERATIONS:
            return SessionState.LIMIT
        case SessionStatus.OPEN:
            return SessionState.OPEN
        case SessionStatus.CORRUPT:
            return SessionState.CORRUPT
        case _:
            assert_never(session.status)


# Fixed rather than the locale's: the rest of the display is English.
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
RELATIVE_TIME_WIDTH = len("yesterday")


def relative_time(moment: datetime, now: datetime) -> str:
    """When ``moment`` was, seen from ``now``, in local time and at most nine cells:
    ``just now``, ``3m ago``, ``2h ago``, ``yesterday``, ``Nov 28``, ``Nov 2024``."""
    elapsed = now - moment
    if elapsed < timedelta(minutes=1):
        # A moment ahead of the clock (another host's clock) is also now.
        return "just now"
    if elapsed < timedelta(hours=1):
        return f"{elapsed // timedelta(minutes=1)}m ago"
    if elapsed < timedelta(days=1):
        return f"{elapsed // timedelta(hours=1)}h ago"
    local = moment.astimezone()
    today = now.astimezone().date()
    if local.date() == today - timedelta(days=1):
        return "yesterday"
    month = MONTHS[local.month - 1]
    if local.year == today.year:
        return f"{month} {local.day}"
    return f"{month} {local.year}"


PROMPT_IN_LISTING = 50
LISTING_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def session_listing(summaries: Sequence[SessionSummary]) -> str:
    """``fisk session ls``: ``ID MODEL STATUS UPDATED`` as the Go version prints them (STATUS is
    the journal's terminal reason, or ``open``), then ``STATE``, the word every other surface
    shows, then the first prompt. STATE comes after the columns a script reads by position."""
    rows = [("ID", "MODEL", "STATUS", "UPDATED", "STATE", "PROMPT")]
    for summary in sorted(summaries, key=lambda s: s.updated, reverse=True):
        rows.append(
            (
                single_line(summary.run_id),
                single_line(summary.model) or "-",
                summary.status.value,
                summary.updated.astimezone().strftime(LISTING_TIME_FORMAT),
                session_state(summary).value,
                single_line(summary.first_prompt, PROMPT_IN_LISTING),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return (
        "\n".join(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in rows
        )
        + "\n"
    )
