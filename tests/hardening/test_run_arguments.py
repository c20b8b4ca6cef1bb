"""`fisk run` refuses a prompt that is not UTF-8 and an empty --resume with one sentence
(issue 16, items 4 and 11)."""

from __future__ import annotations

import pytest

from fisk_ai.cli.main import main


def test_a_prompt_that_is_not_utf8_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    # What Python makes of the bytes "bad\xff" on the command line.
    assert main(["run", "--no-tui", "bad\udcff"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "fisk: error: the prompt is not valid UTF-8 text (byte 0xff); pass the prompt in UTF-8\n"
    )


def test_an_empty_resume_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--no-tui", "--resume", ""]) == 1
    err = capsys.readouterr().err
    assert err.startswith("fisk: error: --resume needs a session id")
    assert err.count("\n") == 1
