"""Go-shaped inputs through the public surfaces: the Python fisk-ai as a drop-in for the Go one.

Everything "Go" here is written out by hand from the Go implementation's documented rules (the
upstream digest and the compatibility notes in docs/compatibility.md), not computed by this
project's code, so a drift in either direction fails a test: agent.yaml read as yaml (goccy) and
fisk's duration parser read it, journals as Go writes them (nanosecond times with a zone offset,
Go's field order, Go's fingerprint), and a journal this project writes checked against the
fingerprint Go would compute for the same configuration.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai.config import Mode, PiiMode, parse
from fisk_ai.sessions import decode_record, encode_record
from fisk_ai.util.durations import parse_duration
from tests.e2e.agent_runs import fisk, fisk_environment
from tests.fakes.messages_api import FakeMessagesAPI, reply, text

MODEL = "claude-test-1"
SYSTEM_PROMPT = "You answer <briefly> & plainly."

# agent.yaml as written for the Go fisk-ai: unquoted off/on/yes in text fields, a day-long
# duration, a blank confirm tag, a mixed-case effort, a sample ratio Go does not check while
# telemetry is off.
GO_AGENT_YAML = f"""\
identity: go-agent
system_prompt: "{SYSTEM_PROMPT}"
harness:
  tool_timeout: 1d
  confirm_tags: [impact:rw, "", "  ", impact:rw]
  pii:
    mode: off
llm:
  model: {MODEL}
  reasoning_effort: XHigh
  budget:
    call_timeout: 1w
telemetry:
  sample_ratio: 2
"""


def go_sha256(go_json: bytes) -> str:
    return hashlib.sha256(go_json).hexdigest()


# Go: json.Marshal([]string{SYSTEM_PROMPT}), HTML characters escaped.
GO_SYSTEM_HASH = go_sha256(b'["You answer \\u003cbriefly\\u003e \\u0026 plainly."]')
# Go: json.Marshal of an empty []ToolDef (make(..., 0)): no tools at all.
GO_TOOLS_HASH = go_sha256(b"[]")


def test_a_go_agent_yaml_reads_as_go_reads_it() -> None:
    config = parse(GO_AGENT_YAML, Mode.AGENT)

    assert config.harness.pii.mode is PiiMode.OFF
    assert config.harness.tool_timeout == timedelta(days=1)
    assert config.llm.budget.call_timeout == timedelta(weeks=1)
    assert config.harness.confirm_tags == ["impact:rw"]
    assert config.llm.reasoning_effort == "xhigh"
    assert config.telemetry.sample_ratio == 2


def test_a_bare_dash_in_a_list_of_names_is_a_blank_entry_and_dropped() -> None:
    written = (
        "identity: go-agent\napplication_path: /bin/true\nsystem_prompt: hi\n"
        "llm:\n  model: m\n"
        "harness:\n  confirm_tags:\n    - impact:rw\n    -\n"
        "global_flags:\n  -\n  - --context\n"
    )

    config = parse(written, Mode.AGENT)

    assert config.harness.confirm_tags == ["impact:rw"]
    assert config.global_flags == ["context"]


@pytest.mark.parametrize(
    ("written", "read"),
    [("on", "on"), ("off", "off"), ("yes", "yes"), ("no", "no"), ("42", "42"), ("1.10", "1.10")],
)
def test_an_unquoted_scalar_in_a_text_field_is_that_text(written: str, read: str) -> None:
    config = parse(f"system_prompt: {written}\nllm: {{model: {written}}}\n", Mode.AGENT)
    assert config.system_prompt == read
    assert config.llm.model == read


@pytest.mark.parametrize("written", ["true", "True", "TRUE"])
def test_a_bool_field_takes_what_go_takes_as_true(written: str) -> None:
    assert parse(f"harness: {{no_tui: {written}}}", Mode.LENIENT).harness.no_tui


@pytest.mark.parametrize("written", ["yes", "on", "y"])
def test_a_bool_field_refuses_yaml_1_1_words_as_go_does(written: str) -> None:
    with pytest.raises(Exception, match=r"harness\.no_tui") as caught:
        parse(f"harness:\n  no_tui: {written}\n", Mode.LENIENT)
    assert "line 2" in str(caught.value)


@pytest.mark.parametrize(
    ("written", "duration"),
    [
        ("1d", timedelta(days=1)),
        ("2w", timedelta(weeks=2)),
        ("1M", timedelta(days=30)),
        ("1y", timedelta(days=365)),
        ("1d12h", timedelta(hours=36)),
        ("1.5d", timedelta(hours=36)),
        ("90m", timedelta(minutes=90)),
        ("0", timedelta(0)),
    ],
)
def test_durations_take_fisk_units(written: str, duration: timedelta) -> None:
    assert parse_duration(written) == duration


def test_a_prompt_less_mcp_config_with_jobs_is_refused_in_run_mode() -> None:
    with pytest.raises(Exception, match="system_prompt"):
        parse(
            "llm: {model: m}\nnats_context: n\nexpose: {agent: {mcp: {}, jobs: {}}}",
            Mode.AGENT,
        )


def test_a_jobs_block_without_nats_context_is_refused_in_run_mode() -> None:
    with pytest.raises(Exception, match="nats_context") as caught:
        parse("llm: {model: m}\nsystem_prompt: p\nexpose: {agent: {jobs: {}}}", Mode.AGENT)
    assert getattr(caught.value, "key", None) == "nats_context"


# A journal as Go writes it: local time with nanoseconds and an offset, Go's field order.
GO_META = (
    b'{"seq":1,"protocol":"io.choria.fisk-ai.v1.session.meta","meta":{"version":3,'
    b'"run_id":"2zKeGoJournal00000000000000","created":"2026-08-15T13:30:00.123456789+02:00",'
    b'"fingerprint":{"provider":"anthropic","model":"' + MODEL.encode() + b'",'
    b'"system_hash":"'
    + GO_SYSTEM_HASH.encode()
    + b'","tools_hash":"'
    + GO_TOOLS_HASH.encode()
    + b'","thinking_mode":"off","reasoning_effort":"xhigh","max_tokens":500000,'
    b'"max_iterations":50},"prompt":"how is the fleet?"}}'
)
GO_CLAIM = (
    b'{"seq":2,"protocol":"io.choria.fisk-ai.v1.session.claim","claim":{"by":"host-a",'
    b'"claimed":"2026-08-15T11:31:00.5Z"}}'
)
GO_TERMINAL = (
    b'{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":'
    b'{"reason":"suspended"}}'
)


@pytest.mark.parametrize("line", [GO_META, GO_CLAIM, GO_TERMINAL])
def test_a_go_record_round_trips_byte_for_byte(line: bytes) -> None:
    assert encode_record(decode_record(line)) == line


def go_config(directory: Path) -> Path:
    path = directory / "agent.yaml"
    path.write_text(GO_AGENT_YAML)
    return path


@pytest.mark.e2e
def test_a_session_journaled_by_go_resumes_without_force(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir(mode=0o700)
    session = "2zKeGoJournal00000000000000"
    journal = sessions / f"{session}.json"
    journal.write_bytes(b"\n".join([GO_META, GO_CLAIM, GO_TERMINAL]) + b"\n")
    journal.chmod(0o600)
    config = go_config(tmp_path)

    with FakeMessagesAPI([reply(text("All nodes healthy."))]) as api:
        result = fisk(
            "run",
            "--no-tui",
            "--state-dir",
            str(sessions),
            "--config",
            str(config),
            "--resume",
            session,
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api),
        )

    assert result.returncode == 0, result.stderr
    assert "All nodes healthy." in result.stdout
    assert "changed" not in result.stderr
    assert api.requests[0]["messages"][0]["content"][0]["text"] == "how is the fleet?"
    # What Go wrote is still there, byte for byte, ahead of what this run appended.
    assert journal.read_bytes().startswith(GO_META + b"\n" + GO_CLAIM + b"\n")


@pytest.mark.e2e
def test_a_session_journaled_here_carries_the_fingerprint_go_computes(tmp_path: Path) -> None:
    config = go_config(tmp_path)
    sessions = tmp_path / "sessions"

    with FakeMessagesAPI([reply(text("All nodes healthy."))]) as api:
        result = fisk(
            "run",
            "--no-tui",
            "--state-dir",
            str(sessions),
            "--config",
            str(config),
            "how is the fleet?",
            cwd=tmp_path,
            env=fisk_environment(tmp_path, api),
        )

    assert result.returncode == 0, result.stderr
    (journal,) = sessions.glob("*.json")
    meta = json.loads(journal.read_bytes().splitlines()[0])
    assert list(meta) == ["seq", "protocol", "meta"]
    assert meta["meta"]["fingerprint"] == {
        "provider": "anthropic",
        "model": MODEL,
        "system_hash": GO_SYSTEM_HASH,
        "tools_hash": GO_TOOLS_HASH,
        "thinking_mode": "off",
        "max_tokens": 500000,
        "max_iterations": 50,
        "reasoning_effort": "xhigh",
    }
