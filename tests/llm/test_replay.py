import json
import stat
from pathlib import Path

import pytest

from fisk_ai.llm import registry
from fisk_ai.llm.anthropic import CAPABILITIES, AnthropicProvider
from fisk_ai.llm.replay import (
    CASSETTE_ENV,
    CassetteError,
    CassetteMismatch,
    RecordingProvider,
    ReplayProvider,
)
from fisk_ai.llm.types import (
    Message,
    Role,
    TextBlock,
    ThinkingBlock,
    ThinkingMode,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    user_text,
)
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, thinking, tool_use, usage
from tests.llm.cassette_turns import (
    TOOLS,
    ScriptedProvider,
    final_turn,
    first_request,
    record,
    second_request,
    tool_call_turn,
)
from tests.llm.conftest import API_KEY


@pytest.fixture
async def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "cassette.jsonl"
    await record(path)
    return path


async def test_a_recorded_run_replays_the_same_responses_offline(tmp_path: Path) -> None:
    path = tmp_path / "cassette.jsonl"
    with FakeMessagesAPI() as api:
        api.script(
            [
                reply(
                    thinking("the cow should speak", "c2ln"),
                    tool_use("tu_1", "say", {"m": "moo"}),
                    stop_reason="tool_use",
                    usage_counts=usage(100, 20, cache_read=5, cache_create=6, thinking_tokens=7),
                ),
                reply(text("The cow said moo.")),
            ]
        )
        live = AnthropicProvider(API_KEY, base_url=api.base_url, max_retries=0)
        recorder = RecordingProvider(live, path)
        first = await recorder.call(first_request())
        follow_up = first_request(
            messages=(
                *first_request().messages,
                first.message,
                Message(Role.USER, (ToolResultBlock("tu_1", "moo"),)),
            )
        )
        second = await recorder.call(follow_up)
        await recorder.aclose()

    replay = ReplayProvider(path)
    assert await replay.call(first_request()) == first
    assert await replay.call(follow_up) == second


async def test_the_cassette_is_private_and_written_as_the_run_goes(tmp_path: Path) -> None:
    path = tmp_path / "cassette.jsonl"
    recorder = RecordingProvider(ScriptedProvider([tool_call_turn()]), path)
    await recorder.call(first_request())
    lines = path.read_text().splitlines()
    await recorder.aclose()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(lines) == 1
    assert json.loads(lines[0])["request"]["tools"][0]["name"] == "say"


async def test_a_changed_tool_result_names_the_call_and_the_message(cassette: Path) -> None:
    replay = ReplayProvider(cassette)
    await replay.call(first_request())
    with pytest.raises(CassetteMismatch) as diverged:
        await replay.call(second_request(result="baa"))
    assert str(diverged.value) == (
        f"the cassette {cassette} diverges at model call 2: message 3 was recorded as a "
        'tool_result for tu_1 "moo" but is now a tool_result for tu_1 "baa"'
    )


async def test_a_changed_model_is_named(cassette: Path) -> None:
    with pytest.raises(CassetteMismatch, match='model call 1: the model was recorded as "claude'):
        await ReplayProvider(cassette).call(first_request(model="claude-haiku-4-5"))


async def test_a_changed_prompt_names_the_first_message(cassette: Path) -> None:
    with pytest.raises(CassetteMismatch, match='message 1 was recorded as text "make the cow'):
        await ReplayProvider(cassette).call(first_request(messages=(user_text("hello"),)))


async def test_a_message_the_recording_lacks_is_named_as_new(cassette: Path) -> None:
    longer = (*first_request().messages, Message(Role.ASSISTANT, (TextBlock("extra"),)))
    with pytest.raises(CassetteMismatch, match=r'message 2 is new \(assistant: text "extra"\)'):
        await ReplayProvider(cassette).call(first_request(messages=longer))


async def test_a_changed_tool_set_names_the_tools(cassette: Path) -> None:
    tools = (TOOLS[0], ToolDef("moo", "Moo", {"type": "object"}))
    with pytest.raises(CassetteMismatch, match="think recorded but now absent and moo new"):
        await ReplayProvider(cassette).call(first_request(tools=tools))


async def test_running_out_of_calls_names_the_count(cassette: Path) -> None:
    replay = ReplayProvider(cassette)
    await replay.call(first_request())
    await replay.call(second_request())
    with pytest.raises(CassetteMismatch, match="holds 2 model calls and the run asked for call 3"):
        await replay.call(second_request())


async def test_settings_that_do_not_change_the_conversation_are_ignored(cassette: Path) -> None:
    described_differently = tuple(
        ToolDef(tool.name, "other words", {"type": "object"}, defer_loading=True) for tool in TOOLS
    )
    answer = await ReplayProvider(cassette).call(
        first_request(
            system=("A different system prompt.",),
            tools=described_differently,
            thinking=ThinkingMode.ON,
            prompt_cache=False,
            interactive=True,
        )
    )
    assert answer == tool_call_turn()


async def test_tool_input_is_compared_as_json(cassette: Path) -> None:
    replay = ReplayProvider(cassette)
    await replay.call(first_request())
    respaced = second_request()
    assistant = Message(
        Role.ASSISTANT,
        (
            ThinkingBlock("the cow should speak", b"sig"),
            ToolUseBlock("tu_1", "say", '{ "m":"moo" }'),
        ),
    )
    messages = (respaced.messages[0], assistant, respaced.messages[2])
    assert await replay.call(first_request(messages=messages)) == final_turn()


async def test_a_recording_cut_off_mid_line_still_replays(cassette: Path) -> None:
    cut_off(cassette)
    replay = ReplayProvider(cassette)
    await replay.call(first_request())
    assert await replay.call(second_request()) == final_turn()


def cut_off(cassette: Path) -> None:
    whole = cassette.read_text()
    cassette.write_text(whole + whole.splitlines()[0][:40])


def test_a_malformed_line_is_named(cassette: Path) -> None:
    cassette.write_text("not json\n" + cassette.read_text())
    with pytest.raises(CassetteError, match="line 1 of the cassette"):
        ReplayProvider(cassette)


def test_a_missing_cassette_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match=CASSETTE_ENV):
        ReplayProvider(tmp_path / "absent.jsonl")


def test_replay_is_registered_without_credentials() -> None:
    assert registry.lookup("replay").credential_env == ()


async def test_the_replay_factory_reads_the_cassette_from_the_environment(
    cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CASSETTE_ENV, str(cassette))
    replay = registry.lookup("replay").factory(api_key="ignored")
    assert replay.capabilities == CAPABILITIES
    assert await replay.call(first_request()) == tool_call_turn()


def test_the_replay_factory_without_a_cassette_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CASSETTE_ENV, raising=False)
    with pytest.raises(registry.ProviderError, match=CASSETTE_ENV):
        registry.lookup("replay").factory()
