"""Tool arguments that cannot become an argument vector, and model text no encoder can write,
are results and text the run carries on with, never an aborted run (issue 16, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fisk_ai.agent.outcome import Completed
from fisk_ai.lineui.sessions import transcript
from fisk_ai.llm.types import Message, Role, ToolResultBlock
from fisk_ai.sessions import fold
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.records import Assistant, Record, ToolResult, encode_record
from fisk_ai.tools.base import ExecDeps
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.fiskapp.tool import FiskCommandTool
from fisk_ai.tools.validation import ArgumentsError, holdable_message, parse_arguments
from tests.agent.conftest import make_runner, payloads, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.fiskapp import application, arg, command
from tests.fakes.provider import ScriptedProvider, answer, call, calls


def say_tool(tmp_path: Path) -> FiskCommandTool:
    leaf = command("say", args=[arg("text", required=True)])
    model = ApplicationModel.model_validate(application(commands=[leaf]))
    return load_application(model, str(tmp_path / "absent")).tools[0]


async def run_with(tmp_path: Path, *replies: object) -> tuple[object, list[ToolResultBlock]]:
    store = FileSessionStore(tmp_path / "runs")
    provider = ScriptedProvider(list(replies))  # type: ignore[arg-type]
    async with make_runner(
        provider=provider, tools=toolset(say_tool(tmp_path)), store=store, events=RecordingSink()
    ) as runner:
        result = await runner.start("go")
    records = await store.read(result.session_id)
    results = [p.result for p in payloads(records) if isinstance(p, ToolResult)]
    return result, results


async def test_a_nul_byte_in_an_argument_is_an_error_result_and_the_run_completes(
    tmp_path: Path,
) -> None:
    result, results = await run_with(
        tmp_path, calls(call("t1", "say", {"text": "a\x00b"})), answer("understood")
    )
    assert isinstance(result.outcome, Completed)  # type: ignore[attr-defined]
    assert results[0].is_error
    assert "NUL byte" in results[0].content


async def test_a_lone_surrogate_in_an_argument_is_an_error_result_and_the_run_completes(
    tmp_path: Path,
) -> None:
    result, results = await run_with(
        tmp_path, calls(call("t1", "say", '{"text": "bad\\ud800"}')), answer("understood")
    )
    assert isinstance(result.outcome, Completed)  # type: ignore[attr-defined]
    assert results[0].is_error
    assert "lone surrogate" in results[0].content


async def test_a_lone_surrogate_in_model_text_is_journaled_and_shown(tmp_path: Path) -> None:
    store = FileSessionStore(tmp_path / "runs")
    async with make_runner(
        provider=ScriptedProvider([answer("half \ud800 done")]),
        tools=toolset(),
        store=store,
        events=RecordingSink(),
    ) as runner:
        result = await runner.start("go")
    assert isinstance(result.outcome, Completed)
    lines = transcript(fold(await store.read(result.session_id)), thinking=True)
    assert "half \ufffd done" in "\n".join(lines)


async def test_a_nul_byte_never_reaches_the_process_launcher(tmp_path: Path) -> None:
    outcome = await say_tool(tmp_path).execute('{"text": "a\\u0000b"}', ExecDeps())
    assert outcome.is_error
    assert "NUL byte" in outcome.output


DEEP_INPUT = '{"text": ' + "[" * 500 + "]" * 500 + "}"


def test_a_500_deep_input_is_held_as_a_stand_in_the_journal_can_read() -> None:
    reply = Message(Role.ASSISTANT, (call("t1", "say", DEEP_INPUT),))
    held = holdable_message(reply)
    (stand_in,) = held.tool_uses
    assert stand_in.id == "t1"
    assert encode_record(
        Record(seq=1, payload=Assistant(iteration=1, message=held, in_tokens=1, out_tokens=1))
    )
    with pytest.raises(ArgumentsError, match="nests deeper than 100 levels"):
        parse_arguments("say", stand_in.input)


def test_a_readable_input_is_held_unchanged() -> None:
    reply = Message(Role.ASSISTANT, (call("t1", "say", {"text": "moo"}),))
    assert holdable_message(reply) is reply


@pytest.mark.parametrize(
    "text",
    ['{"text": ' + "9" * 5000 + "}", '{"text": 1e999}', "not json"],
    ids=["5000-digits", "past-a-float", "not-json"],
)
def test_an_unreadable_input_is_refused_in_one_sentence(text: str) -> None:
    with pytest.raises(ArgumentsError, match=r'tool "say" .* cannot be read'):
        parse_arguments("say", text)


async def test_a_500_deep_input_is_an_error_result_and_the_run_completes(tmp_path: Path) -> None:
    result, results = await run_with(
        tmp_path, calls(call("t1", "say", DEEP_INPUT)), answer("understood")
    )
    assert isinstance(result.outcome, Completed)  # type: ignore[attr-defined]
    assert results[0].is_error
    assert "nests deeper than 100 levels" in results[0].content
