"""`fisk session answer` scans the answer as a tool's output is, under harness.pii.mode of
--config (redact without one), before it is journaled as the deferred call's result; and
``answer_deferred`` hands its screen the call's tool name only once the call is known to wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fisk_ai.agent.events import WarningEvent, WarningKind
from fisk_ai.agent.pii import (
    SCAN_FAILED_OUTPUT,
    WITHHELD_OUTPUT,
    PiiError,
    Scanner,
    deferred_answer_screen,
)
from fisk_ai.cli.main import main
from fisk_ai.config.models import PiiMode
from fisk_ai.sessions import (
    Deferred,
    DeferredAnswerRefused,
    FileSessionStore,
    Terminal,
    TerminalReason,
    ToolResult,
    answer_deferred,
)
from tests.fakes.events import RecordingSink
from tests.sessions.builders import meta, turn

SESSION = "waiting-1"
ANSWER = "CAB approved; mail jane@example.com, SSN 123-45-6789"


async def write_waiting_session(directory: Path) -> FileSessionStore:
    """A session whose turn called tu_1, which deferred, then suspended."""
    store = FileSessionStore(directory)
    journal = await store.create(SESSION, meta(SESSION))
    await journal.append(turn(1, "tu_1", text="Asking for the change."))
    await journal.append(Deferred("tu_1", "approve_change", note="waiting for CAB"))
    await journal.append(Terminal(TerminalReason.SUSPENDED))
    await journal.close()
    return store


async def read_answer(directory: Path) -> str:
    records = await FileSessionStore(directory).read(SESSION)
    (supplied,) = [record.payload for record in records if isinstance(record.payload, ToolResult)]
    return supplied.result.content


def stored_answer(directory: Path) -> str:
    return asyncio.run(read_answer(directory))


def config_with(tmp_path: Path, mode: str) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(f"llm:\n  model: claude-sonnet\nharness:\n  pii:\n    mode: {mode}\n")
    return path


def answer_with_fisk(tmp_path: Path, *options: str) -> int:
    state = tmp_path / "runs"
    asyncio.run(write_waiting_session(state))
    return main(["session", "--state-dir", str(state), *options, "answer", SESSION, "tu_1", ANSWER])


def test_an_answer_under_a_redacting_config_is_journaled_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_with(tmp_path, "redact")

    assert answer_with_fisk(tmp_path, "--config", str(config)) == 0

    assert stored_answer(tmp_path / "runs") == (
        "CAB approved; mail [EMAIL-REDACTED], SSN [SSN-REDACTED]"
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "warning: personal data or a credential (email, ssn) was found in the answer to a "
        "deferred call of approve_change and redacted (harness.pii.mode is redact)" in err
    )
    assert "jane@example.com" not in err


def test_an_answer_under_a_rejecting_config_is_withheld(tmp_path: Path) -> None:
    config = config_with(tmp_path, "reject")

    assert answer_with_fisk(tmp_path, "--config", str(config)) == 0

    assert stored_answer(tmp_path / "runs") == WITHHELD_OUTPUT


def test_an_answer_under_a_config_with_the_guard_off_is_journaled_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = config_with(tmp_path, "off")

    assert answer_with_fisk(tmp_path, "--config", str(config)) == 0

    assert stored_answer(tmp_path / "runs") == ANSWER
    assert capsys.readouterr().err == ""


def test_an_answer_without_a_config_is_redacted_under_the_default_mode(tmp_path: Path) -> None:
    assert answer_with_fisk(tmp_path) == 0

    assert stored_answer(tmp_path / "runs") == (
        "CAB approved; mail [EMAIL-REDACTED], SSN [SSN-REDACTED]"
    )


class BrokenScanner(Scanner):
    def __init__(self) -> None:
        super().__init__(())

    def scan(self, text: str) -> list[object]:  # type: ignore[override]
        raise RuntimeError("regex engine gone")


async def test_an_answer_whose_scan_fails_is_withheld_and_the_operator_told(
    tmp_path: Path,
) -> None:
    store = await write_waiting_session(tmp_path / "runs")
    sink = RecordingSink()
    screen = deferred_answer_screen(PiiMode.REDACT, sink, BrokenScanner)

    await answer_deferred(store, SESSION, "tu_1", ANSWER, screen=screen)

    assert await read_answer(tmp_path / "runs") == SCAN_FAILED_OUTPUT
    (warning,) = sink.of(WarningEvent)
    assert warning.kind == WarningKind.PII_FOUND
    assert "regex engine gone" in warning.error and "approve_change" in warning.name


async def test_a_refused_answer_is_not_scanned_or_announced(tmp_path: Path) -> None:
    store = await write_waiting_session(tmp_path / "runs")
    sink = RecordingSink()
    screen = deferred_answer_screen(PiiMode.REDACT, sink)

    with pytest.raises(DeferredAnswerRefused, match="not waiting on call tu_9"):
        await answer_deferred(store, SESSION, "tu_9", ANSWER, screen=screen)

    assert sink.events == []


def test_a_scanner_that_will_not_build_refuses_the_answer_before_it_is_journaled() -> None:
    def broken() -> Scanner:
        raise ValueError("bad pattern")

    with pytest.raises(PiiError, match=r"the answer was not journaled.*harness\.pii\.mode"):
        deferred_answer_screen(PiiMode.REDACT, RecordingSink(), broken)
