"""Journals on disk for the viewer and browser tests, written with the sessions API."""

from __future__ import annotations

from pathlib import Path

from fisk_ai.llm.types import Message, Role, TextBlock, ThinkingBlock, ToolUseBlock
from fisk_ai.sessions import (
    Assistant,
    FileSessionStore,
    Record,
    Terminal,
    TerminalReason,
    encode_record,
    fold,
)
from fisk_ai.sessions.fold import Conversation
from tests.sessions.builders import journal, meta, result

OUTPUT_LINES = 30
THINKING = "\n".join(f"weighing option {number} against the stream limits" for number in range(12))


def stream_report(
    run_id: str = "orders-report", prompt: str = "report on the ORDERS stream"
) -> list[Record]:
    """A prompt, a turn that thinks and calls a tool, its long output, and an answer."""
    call = ToolUseBlock("c1", "stream_info", '{"stream": "ORDERS"}')
    thinking_turn = Assistant(
        1,
        Message(
            Role.ASSISTANT,
            (ThinkingBlock(THINKING), TextBlock("Looking at the stream first."), call),
        ),
        120,
        40,
    )
    output = "\n".join(
        f"subject orders.{number} holds 42 messages" for number in range(OUTPUT_LINES)
    )
    answer = Assistant(
        2, Message(Role.ASSISTANT, (TextBlock("ORDERS holds 1260 messages."),)), 80, 20
    )
    return journal(
        thinking_turn,
        result("c1", output),
        answer,
        Terminal(TerminalReason.COMPLETED),
        first=meta(run_id, prompt),
    )


def conversation_of(records: list[Record]) -> Conversation:
    return fold(records)


def write_journal(directory: Path, records: list[Record]) -> None:
    """Write a journal the way the file store lays one out, without a sync per file."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    run_id = records[0].payload.run_id  # type: ignore[union-attr]
    data = b"".join(encode_record(record) + b"\n" for record in records)
    path = directory / f"{run_id}.json"
    path.write_bytes(data)
    path.chmod(0o600)


def small_journal(run_id: str, prompt: str) -> list[Record]:
    return journal(first=meta(run_id, prompt))


def file_store(directory: Path) -> FileSessionStore:
    return FileSessionStore(directory)
