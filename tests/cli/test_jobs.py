"""`fisk jobs` where it cannot work: one sentence and exit 1, at once, never a traceback."""

from __future__ import annotations

import json
import socket
from logging import WARNING
from pathlib import Path

import pytest

from fisk_ai.cli.main import main


@pytest.fixture
def dead_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A NATS context whose server refuses connections: a loopback port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    contexts = tmp_path / "nats" / "context"
    contexts.mkdir(parents=True)
    (contexts / "dead.json").write_text(json.dumps({"url": f"nats://127.0.0.1:{port}"}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    return "dead"


@pytest.mark.parametrize(
    "action", [["ls"], ["show", "3Hwxl119ZbwKHCKPzWlslXZYnB0"], ["submit", "hi"]]
)
def test_an_unreachable_server_is_one_sentence_and_exit_1(
    dead_context: str,
    action: list[str],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert main(["jobs", "--context", dead_context, *action]) == 1

    # Without a handler, each would reach stderr with its traceback.
    assert [record.getMessage() for record in caplog.records if record.levelno >= WARNING] == []

    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("fisk: error: cannot connect to NATS at nats://127.0.0.1:")
    assert 'NATS context "dead"' in captured.err
    assert "Traceback" not in captured.err


def test_a_queue_name_asyncjobs_refuses_is_one_sentence(
    dead_context: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["jobs", "--context", dead_context, "--queue", "no such.queue", "ls"]) == 1

    assert capsys.readouterr().err == (
        "fisk: error: --queue 'no such.queue' is not a queue name asyncjobs accepts; use "
        "letters, digits, '_', ':' and '-'\n"
    )
