"""A replayed answer is handed on in pieces, as a streaming provider hands on a live one."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.llm import registry
from fisk_ai.llm.deltas import Delta, DeltaKind, deltas_reported_to
from fisk_ai.llm.replay import CASSETTE_ENV, PACE_ENV, REPLAY_PIECE, ReplayProvider
from tests.llm.cassette_turns import (
    final_turn,
    first_request,
    record,
    second_request,
    tool_call_turn,
)


@pytest.fixture
async def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "cassette.jsonl"
    await record(path)
    return path


async def test_a_replayed_answer_arrives_in_pieces_that_make_up_its_text(cassette: Path) -> None:
    replay = ReplayProvider(cassette)
    pieces: list[Delta] = []
    with deltas_reported_to(pieces.append):
        await replay.call(first_request())
        answer = await replay.call(second_request())
    text = [piece.text for piece in pieces if piece.kind is DeltaKind.TEXT]
    assert "".join(text) == answer.message.text == final_turn().message.text
    assert all(len(piece) <= REPLAY_PIECE for piece in text)


async def test_replayed_thinking_arrives_as_thinking(cassette: Path) -> None:
    replay = ReplayProvider(cassette)
    pieces: list[Delta] = []
    with deltas_reported_to(pieces.append):
        await replay.call(first_request())
    assert {piece.kind for piece in pieces} == {DeltaKind.THINKING}
    assert "".join(piece.text for piece in pieces) == "the cow should speak"


async def test_a_paced_replay_still_answers_what_was_recorded(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CASSETTE_ENV, str(cassette))
    monkeypatch.setenv(PACE_ENV, "1")
    replay = registry.lookup("replay").factory()
    pieces: list[Delta] = []
    with deltas_reported_to(pieces.append):
        assert await replay.call(first_request()) == tool_call_turn()
    assert pieces


def test_a_pace_that_is_not_a_number_names_the_variable(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CASSETTE_ENV, str(cassette))
    monkeypatch.setenv(PACE_ENV, "fast")
    with pytest.raises(registry.ProviderError, match=PACE_ENV):
        registry.lookup("replay").factory()
