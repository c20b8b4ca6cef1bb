from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.sessions import (
    AppendAction,
    FileSessionStore,
    JournalGapError,
    SessionError,
    check_append,
    lookup_backend,
    register_backend,
    registered_backends,
)
from fisk_ai.sessions import backends as backends_module


@pytest.mark.parametrize("seq", [1, 4, 5])
def test_a_record_at_or_below_the_last_is_a_duplicate_to_skip(seq: int) -> None:
    assert check_append(5, seq) is AppendAction.SKIP


def test_the_record_after_the_last_is_written() -> None:
    assert check_append(5, 6) is AppendAction.WRITE


def test_a_record_further_ahead_is_a_gap() -> None:
    with pytest.raises(JournalGapError, match="record 8 cannot follow record 5"):
        check_append(5, 8)


def test_the_file_backend_is_registered() -> None:
    assert "file" in registered_backends()


def test_the_file_factory_uses_the_directory_it_is_given(tmp_path: Path) -> None:
    store = lookup_backend("file")(directory=tmp_path / "runs")

    assert isinstance(store, FileSessionStore)
    assert store.directory == tmp_path / "runs"


def test_an_unknown_backend_names_the_key_and_the_choices() -> None:
    with pytest.raises(SessionError, match=r"harness.sessions.backend 'etcd'.*one of: file"):
        lookup_backend("etcd")


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    registered_backends()
    monkeypatch.setattr(backends_module, "_backends", backends_module._backends.copy())


@pytest.mark.usefixtures("scratch_registry")
def test_a_registered_backend_is_found_by_name(tmp_path: Path) -> None:
    register_backend("memory", lambda: FileSessionStore(tmp_path))

    assert "memory" in registered_backends()
    assert isinstance(lookup_backend("memory")(), FileSessionStore)


@pytest.mark.usefixtures("scratch_registry")
def test_registration_refuses_an_empty_name() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        register_backend("", lambda: None)  # type: ignore[arg-type,return-value]


@pytest.mark.usefixtures("scratch_registry")
def test_registration_refuses_a_missing_factory() -> None:
    with pytest.raises(ValueError, match="needs a factory"):
        register_backend("memory", None)  # type: ignore[arg-type]


@pytest.mark.usefixtures("scratch_registry")
def test_registration_refuses_a_duplicate() -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_backend("file", lambda: None)  # type: ignore[arg-type,return-value]
