import json

from fisk_ai.tools.base import ExecRecord, Outcome


def test_command_outcome_is_sent_as_a_compact_envelope_in_key_order() -> None:
    outcome = Outcome("hello\n", exec=ExecRecord(command="stream rm -- ORDERS", exit_code=0))

    assert outcome.model_content == (
        '{"command":"stream rm -- ORDERS","exit_code":0,"output":"hello\\n"}'
    )


def test_envelope_says_truncated_only_when_output_was_cut() -> None:
    outcome = Outcome("x", exec=ExecRecord(command="spew", exit_code=3, truncated=True))

    assert json.loads(outcome.model_content) == {
        "command": "spew",
        "exit_code": 3,
        "output": "x",
        "truncated": True,
    }
    assert list(json.loads(outcome.model_content)) == [
        "command",
        "exit_code",
        "output",
        "truncated",
    ]


def test_envelope_keeps_non_ascii_text_readable() -> None:
    outcome = Outcome("héllo <b>", exec=ExecRecord(command="say", exit_code=0))

    assert "héllo <b>" in outcome.model_content


def test_outcome_without_exec_record_passes_output_through() -> None:
    outcome = Outcome('{"allowed":false}', is_error=False)

    assert outcome.model_content == '{"allowed":false}'
