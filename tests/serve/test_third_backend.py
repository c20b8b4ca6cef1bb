"""A session or memory backend declares what it needs from the host, and the host provides it
without naming any backend: a third backend registered here needs no change in serve/."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fisk_ai import config
from fisk_ai.errors import FiskError
from fisk_ai.memory import backends as memory_backends
from fisk_ai.serve.banner import reaches_nats, sessions_label
from fisk_ai.serve.stores import open_session_store
from fisk_ai.sessions import FileSessionStore, SessionError, SessionStore
from fisk_ai.sessions import backends as session_backends
from fisk_ai.sessions.backends import SessionBackend, register_backend
from fisk_ai.util.registry import Registry


@pytest.fixture(autouse=True)
def scratch_registries(monkeypatch: pytest.MonkeyPatch) -> None:
    session_backends.registered_backends()
    memory_backends.registered_backends()
    monkeypatch.setattr(session_backends, "_backends", session_backends._backends.copy())
    monkeypatch.setattr(memory_backends, "_backends", memory_backends._backends.copy())


def recording_backend(tmp_path: Path) -> tuple[Callable[..., SessionStore], list[dict[str, Any]]]:
    """A factory that keeps the arguments it was built with, and the list they are kept in."""
    calls: list[dict[str, Any]] = []

    def factory(**arguments: Any) -> SessionStore:
        calls.append(arguments)
        return FileSessionStore(tmp_path / "runs")

    return factory, calls


def slack_config(sessions: str = "") -> config.Config:
    return config.parse(
        "identity: helper\nsystem_prompt: You help.\nllm: {model: m}\n"
        f"expose:\n  agent:\n    slack: {{}}\n{sessions}",
        config.Mode.SERVE,
    )


def context_file(tmp_path: Path) -> Path:
    path = tmp_path / "shelves.json"
    path.write_text(json.dumps({"url": "nats://127.0.0.1:4222"}))
    return path


def test_a_third_backend_that_needs_nats_is_given_a_connection_through_the_context(
    tmp_path: Path,
) -> None:
    factory, calls = recording_backend(tmp_path)
    register_backend("shelves", factory, requires_nats=True)
    open_session_store("shelves", {"shelf": "S1"}, nats_context=str(context_file(tmp_path)))
    (arguments,) = calls
    assert arguments["shelf"] == "S1"
    assert arguments["nats_context"] == "shelves"
    assert callable(arguments["open_connection"])
    assert "jetstream_options" in arguments


def test_a_third_backend_without_needs_gets_only_its_options(tmp_path: Path) -> None:
    factory, calls = recording_backend(tmp_path)
    register_backend("ledger", factory)
    open_session_store("ledger", {"book": "B"}, nats_context="never-read")
    assert calls == [{"book": "B"}]


def test_state_dir_moves_a_third_backend_kept_in_a_directory(tmp_path: Path) -> None:
    factory, calls = recording_backend(tmp_path)
    register_backend("ledger", factory)
    open_session_store("ledger", {"directory": "books"}, state_dir=str(tmp_path / "elsewhere"))
    assert calls == [{"directory": tmp_path / "elsewhere"}]


def test_state_dir_is_refused_by_a_backend_with_no_directory(tmp_path: Path) -> None:
    factory, _ = recording_backend(tmp_path)
    register_backend("shelves", factory, requires_nats=True)
    with pytest.raises(FiskError, match="--state-dir applies only to the file session backend"):
        open_session_store("shelves", {"shelf": "S1"}, state_dir=str(tmp_path))


def test_whether_serve_reaches_nats_is_the_registered_backends_answer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The name "file" registered anew, as a backend that needs NATS: the host asks the
    # registry rather than knowing which name is which.
    scratch = Registry[SessionBackend]("session backend", key="k", error=SessionError)
    monkeypatch.setattr(session_backends, "_backends", scratch)
    factory, _ = recording_backend(tmp_path)
    register_backend("file", factory, requires_nats=True)
    slack_bot = slack_config()
    assert reaches_nats(slack_bot)


def test_a_slack_bot_keeping_sessions_in_files_reaches_no_nats() -> None:
    slack_bot = slack_config()
    assert not reaches_nats(slack_bot)
    assert sessions_label(slack_bot) == "file"


def test_the_jetstream_backends_declare_that_they_need_nats() -> None:
    assert session_backends.backend_requires_nats("jetstream")
    assert memory_backends.backend_requires_nats("jetstream")
    assert not session_backends.backend_requires_nats("file")
    assert not memory_backends.backend_requires_nats("file")


def test_the_sessions_row_names_a_stream_but_no_directory() -> None:
    jetstream = slack_config(
        "harness:\n  sessions:\n    backend: jetstream\n    options: {stream: FISK_SESSIONS}\n"
    )
    assert sessions_label(jetstream) == "jetstream (FISK_SESSIONS)"
