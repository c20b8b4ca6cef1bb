import asyncio
import json
import os
import socket
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from fisk_ai.llm import registry
from fisk_ai.llm.anthropic import (
    CREDENTIAL_ENV,
    AnthropicProvider,
    build_params,
    plan_tool_search,
    validate_base_url,
)
from fisk_ai.llm.registry import (
    ProviderAuthError,
    ProviderError,
    ProviderRejected,
    ProviderTimeout,
    ProviderUnavailable,
    ProviderUnreachable,
)
from fisk_ai.llm.types import (
    Message,
    ProviderBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ThinkingMode,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    user_text,
)
from fisk_ai.util.fsx import PrivateFileError
from tests.fakes.messages_api import (
    FakeMessagesAPI,
    error,
    reply,
    text,
    thinking,
    tool_use,
    usage,
)
from tests.llm.anthropic_requests import make_request
from tests.llm.conftest import API_KEY, MODEL
from tests.patience import DEADLINE

REPO_ROOT = Path(__file__).resolve().parents[2]

SCHEMA = {
    "type": "object",
    "properties": {
        "stream": {"type": "string", "description": "The stream name"},
        "force": {"type": "boolean", "description": "Skip the check"},
        "count": {"type": "integer"},
    },
    "required": ["stream"],
    "additionalProperties": False,
    "x-fisk-flag-order": ["stream", "force"],
}

SERVER_TOOL_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "tool_search_tool_bm25",
    "input": {"query": "remove stream"},
}
TOOL_SEARCH_RESULT = {
    "type": "tool_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "stream_rm"}],
    },
}
REDACTED_THINKING = {"type": "redacted_thinking", "data": "EncryptedOpaqueBytes=="}


def tool(name: str, *, defer: bool = False) -> ToolDef:
    return ToolDef(name, f"the {name} tool", SCHEMA, defer_loading=defer)


def in_fresh_interpreter(code: str) -> str:
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=DEADLINE,
    )
    return completed.stdout.strip()


def test_importing_the_providers_does_not_import_the_sdk() -> None:
    shown = in_fresh_interpreter(
        "import sys\n"
        "from fisk_ai.llm import registry\n"
        "registry.registered_names()\n"
        "print(sorted(m for m in ('anthropic', 'httpx2', 'httpx') if m in sys.modules))"
    )
    assert shown == "[]"


def test_prewarm_imports_the_sdk_in_the_background() -> None:
    shown = in_fresh_interpreter(
        "import sys, threading\n"
        "from fisk_ai.llm.anthropic import prewarm\n"
        "prewarm()\n"
        "[t.join() for t in threading.enumerate() if t.name == 'anthropic-prewarm']\n"
        "print('anthropic' in sys.modules)"
    )
    assert shown == "True"


def test_the_provider_registers_its_credential_variables() -> None:
    assert registry.lookup("anthropic").credential_env == CREDENTIAL_ENV
    assert "ANTHROPIC_API_KEY" in registry.credential_env_names()


def test_the_factory_needs_an_api_key() -> None:
    with pytest.raises(ProviderError, match=r"ANTHROPIC_API_KEY.*--api-key"):
        registry.lookup("anthropic").factory(api_key="")


def test_the_last_system_block_carries_the_cache_breakpoint() -> None:
    params = build_params(make_request())
    assert [block.get("cache_control") for block in params["system"]] == [
        None,
        {"type": "ephemeral", "ttl": "5m"},
    ]


def test_the_conversation_tail_breakpoint_is_set_on_the_request() -> None:
    assert build_params(make_request())["cache_control"] == {"type": "ephemeral", "ttl": "5m"}


def test_an_interactive_run_caches_for_an_hour() -> None:
    params = build_params(make_request(interactive=True))
    assert params["cache_control"]["ttl"] == "1h"
    assert params["system"][-1]["cache_control"]["ttl"] == "1h"


def test_no_cache_marker_is_sent_when_prompt_cache_is_off() -> None:
    params = build_params(make_request(prompt_cache=False, tools=(tool("a"),)))
    assert "cache_control" not in json.dumps(params)


def test_unset_thinking_sends_no_thinking_parameter() -> None:
    params = build_params(make_request())
    assert "thinking" not in params
    assert params["max_tokens"] == 8192


def test_thinking_on_asks_for_adaptive_summarized_thinking_with_more_room() -> None:
    params = build_params(make_request(thinking=ThinkingMode.ON))
    assert params["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert params["max_tokens"] == 16384


def test_thinking_off_sends_the_parameter_disabled() -> None:
    assert build_params(make_request(thinking=ThinkingMode.OFF))["thinking"] == {"type": "disabled"}


def test_reasoning_effort_is_sent_as_output_config() -> None:
    params = build_params(make_request(reasoning_effort="xhigh"))
    assert params["output_config"] == {"effort": "xhigh"}


def test_no_output_config_without_an_effort() -> None:
    assert "output_config" not in build_params(make_request())


def test_max_output_tokens_replaces_the_default() -> None:
    params = build_params(make_request(max_output_tokens=1000, thinking=ThinkingMode.ON))
    assert params["max_tokens"] == 1000


def conversation_with_thinking() -> tuple[Message, ...]:
    return (
        user_text("go"),
        Message(
            Role.ASSISTANT,
            (
                ThinkingBlock("plan", b"sig-1"),
                ProviderBlock("redacted_thinking", json.dumps(REDACTED_THINKING)),
                ToolUseBlock("tu_1", "say", '{"m": "hi"}'),
            ),
        ),
        Message(Role.USER, (ToolResultBlock("tu_1", "said"),)),
    )


def test_thinking_is_stripped_from_history_when_thinking_is_off() -> None:
    params = build_params(
        make_request(messages=conversation_with_thinking(), thinking=ThinkingMode.OFF)
    )
    assert [block["type"] for block in params["messages"][1]["content"]] == ["tool_use"]


def test_thinking_is_kept_in_history_when_thinking_is_unset() -> None:
    params = build_params(make_request(messages=conversation_with_thinking()))
    kinds = [block["type"] for block in params["messages"][1]["content"]]
    assert kinds == ["thinking", "redacted_thinking", "tool_use"]
    assert params["messages"][1]["content"][0]["signature"] == "sig-1"


def test_a_turn_of_only_thinking_is_left_whole_rather_than_emptied() -> None:
    messages = (user_text("go"), Message(Role.ASSISTANT, (ThinkingBlock("hmm", b"s"),)))
    params = build_params(make_request(messages=messages, thinking=ThinkingMode.OFF))
    assert params["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "hmm", "signature": "s"}
    ]


def test_optional_properties_are_marked_on_the_wire_only() -> None:
    definition = tool("stream_rm")
    properties = build_params(make_request(tools=(definition,)))["tools"][0]["input_schema"][
        "properties"
    ]
    assert properties["stream"]["description"] == "The stream name"
    assert properties["force"]["description"] == "Skip the check (optional)"
    assert properties["count"]["description"] == "Optional."
    assert definition.input_schema["properties"]["force"]["description"] == "Skip the check"


def test_a_tool_is_sent_as_a_custom_tool_with_its_extra_schema_keys() -> None:
    sent = build_params(make_request(tools=(tool("stream_rm"),)))["tools"][0]
    assert sent["type"] == "custom"
    assert sent["name"] == "stream_rm"
    assert sent["description"] == "the stream_rm tool"
    assert sent["input_schema"]["additionalProperties"] is False
    assert sent["input_schema"]["x-fisk-flag-order"] == ["stream", "force"]
    assert sent["input_schema"]["required"] == ["stream"]


def test_a_deferred_tool_brings_the_bm25_search_tool() -> None:
    tools = build_params(make_request(tools=(tool("a", defer=True), tool("b"))))["tools"]
    assert tools[0]["defer_loading"] is True
    assert "defer_loading" not in tools[1]
    assert tools[-1] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}


def test_no_search_tool_is_sent_when_nothing_is_deferred() -> None:
    tools = build_params(make_request(tools=(tool("a"), tool("b"))))["tools"]
    assert [sent["name"] for sent in tools] == ["a", "b"]


def test_a_request_without_tool_search_defers_nothing() -> None:
    tools = build_params(make_request(tools=(tool("a", defer=True),), tool_search=False))["tools"]
    assert tools == [{k: v for k, v in tools[0].items() if k != "defer_loading"}]


def test_provider_blocks_go_back_to_the_api_verbatim() -> None:
    messages = (
        user_text("find it"),
        Message(
            Role.ASSISTANT,
            (ProviderBlock("tool_search_tool_result", json.dumps(TOOL_SEARCH_RESULT)),),
        ),
    )
    params = build_params(make_request(messages=messages))
    assert params["messages"][1]["content"] == [TOOL_SEARCH_RESULT]


def deferrable_tools(count: int) -> list[ToolDef]:
    return [tool(f"app_{n}", defer=True) for n in range(count)]


BUILTINS = [tool("ask_human_confirm"), tool("memory_read")]


def test_ten_tools_put_the_deferrable_ones_behind_tool_search() -> None:
    planned, warning = plan_tool_search(
        deferrable_tools(8), BUILTINS, supported=True, disabled=False, model=MODEL
    )
    assert [t.defer_loading for t in planned] == [True] * 8 + [False, False]
    assert warning is None


def test_nine_tools_are_all_sent_loaded() -> None:
    planned, warning = plan_tool_search(
        deferrable_tools(7), BUILTINS, supported=True, disabled=False, model=MODEL
    )
    assert not any(t.defer_loading for t in planned)
    assert warning is None


def test_built_ins_are_never_deferred_even_when_asked() -> None:
    builtins = [tool("memory_write", defer=True)]
    planned, _ = plan_tool_search(
        deferrable_tools(12), builtins, supported=True, disabled=False, model=MODEL
    )
    assert planned[-1].name == "memory_write"
    assert planned[-1].defer_loading is False


def test_a_no_defer_tool_stays_loaded_past_the_threshold() -> None:
    tools = [*deferrable_tools(11), tool("pinned")]
    planned, _ = plan_tool_search(tools, [], supported=True, disabled=False, model=MODEL)
    assert {t.name: t.defer_loading for t in planned}["pinned"] is False


def test_no_tool_search_sends_every_tool_directly_and_says_so() -> None:
    planned, warning = plan_tool_search(
        deferrable_tools(12), BUILTINS, supported=True, disabled=True, model=MODEL
    )
    assert not any(t.defer_loading for t in planned)
    assert warning == "llm.no_tool_search is set, so all 14 tools are sent to the model directly"


def test_a_provider_without_tool_search_warns_past_the_threshold() -> None:
    _, warning = plan_tool_search(
        deferrable_tools(12), [], supported=False, disabled=False, model=MODEL
    )
    assert warning is not None
    assert "does not support tool search" in warning


def test_no_tool_search_below_the_threshold_has_nothing_to_warn_about() -> None:
    _, warning = plan_tool_search(
        deferrable_tools(3), [], supported=True, disabled=True, model=MODEL
    )
    assert warning is None


@pytest.mark.parametrize(
    "url",
    ["http://localhost:1234", "http://192.168.1.20:11434/v1", "https://gateway.example.com"],
)
def test_http_and_https_are_accepted_for_any_host(url: str) -> None:
    assert validate_base_url(f" {url} ") == url


def test_a_base_url_with_credentials_is_refused_without_showing_them() -> None:
    with pytest.raises(ProviderError) as refused:
        validate_base_url("https://user:hunter2@api.example.com")
    assert "--base-url" in str(refused.value)
    assert "ANTHROPIC_BASE_URL" in str(refused.value)
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize("url", ["ftp://example.com", "example.com", "unix:///tmp/s"])
def test_a_base_url_that_is_not_http_names_the_flag(url: str) -> None:
    with pytest.raises(ProviderError, match=r"--base-url .*http or https"):
        validate_base_url(url)


def test_a_base_url_without_a_host_is_refused() -> None:
    with pytest.raises(ProviderError, match="must name a host"):
        validate_base_url("http:///v1")


def test_a_base_url_with_a_bad_port_is_refused() -> None:
    with pytest.raises(ProviderError, match="not a well-formed URL"):
        validate_base_url("http://localhost:99999")


async def test_the_request_reaches_the_api_with_bearer_auth(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text("hi"))])
    await provider.call(make_request())
    assert messages_api.headers[0]["authorization"] == f"Bearer {API_KEY}"


async def test_the_wire_body_is_what_build_params_assembled(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text("hi"))])
    request = make_request(
        tools=tuple(deferrable_tools(2)), thinking=ThinkingMode.ON, reasoning_effort="low"
    )
    await provider.call(request)
    assert messages_api.requests[0] == {**build_params(request), "stream": True}


async def test_every_response_block_kind_is_decoded(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script(
        [
            reply(
                thinking("let me look", "c2lnbmF0dXJl"),
                REDACTED_THINKING,
                SERVER_TOOL_USE,
                TOOL_SEARCH_RESULT,
                text("Removing it."),
                tool_use("tu_1", "stream_rm", {"stream": "ORDERS", "force": True}),
                stop_reason="tool_use",
            )
        ]
    )
    response = await provider.call(make_request())
    blocks = response.message.content
    assert response.message.role is Role.ASSISTANT
    assert blocks[0] == ThinkingBlock("let me look", b"c2lnbmF0dXJl")
    assert blocks[1] == ProviderBlock("redacted_thinking", json.dumps(REDACTED_THINKING))
    assert isinstance(blocks[2], ProviderBlock)
    assert json.loads(blocks[2].raw) == SERVER_TOOL_USE
    assert isinstance(blocks[3], ProviderBlock)
    assert blocks[3].kind == "tool_search_tool_result"
    assert json.loads(blocks[3].raw) == TOOL_SEARCH_RESULT
    assert blocks[4] == TextBlock("Removing it.")
    assert isinstance(blocks[5], ToolUseBlock)
    assert (blocks[5].id, blocks[5].name) == ("tu_1", "stream_rm")
    assert json.loads(blocks[5].input) == {"stream": "ORDERS", "force": True}


async def test_a_decoded_turn_goes_back_to_the_api_unchanged(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    sent_blocks = [
        thinking("let me look", "c2lnbmF0dXJl"),
        REDACTED_THINKING,
        SERVER_TOOL_USE,
        TOOL_SEARCH_RESULT,
        text("Removing it."),
        tool_use("tu_1", "stream_rm", {"stream": "ORDERS"}),
    ]
    messages_api.script([reply(*sent_blocks, stop_reason="tool_use"), reply(text("done"))])
    first = await provider.call(make_request())
    history = (
        *make_request().messages,
        first.message,
        Message(Role.USER, (ToolResultBlock("tu_1", "removed", is_error=True),)),
    )
    await provider.call(make_request(messages=history))
    echoed = messages_api.requests[1]["messages"]
    assert echoed[1] == {"role": "assistant", "content": sent_blocks}
    assert echoed[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "tu_1", "content": "removed", "is_error": True}
    ]


@pytest.mark.parametrize(
    "stop_reason",
    ["end_turn", "max_tokens", "tool_use", "pause_turn", "refusal", "stop_sequence", "new_reason"],
)
async def test_stop_reasons_are_passed_through_unchanged(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider, stop_reason: str
) -> None:
    messages_api.script([reply(text("x"), stop_reason=stop_reason)])
    assert (await provider.call(make_request())).stop_reason == stop_reason


async def test_usage_numbers_are_decoded(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    counts = usage(120, 45, cache_read=3000, cache_create=800, thinking_tokens=30)
    messages_api.script([reply(text("x"), usage_counts=counts)])
    response = await provider.call(make_request())
    assert response.usage == Usage(120, 45, 3000, 800, 30)


async def test_thinking_tokens_are_zero_when_not_reported(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text("x"), usage_counts={"input_tokens": 7, "output_tokens": 2})])
    assert (await provider.call(make_request())).usage == Usage(7, 2)


async def test_the_request_id_comes_from_the_response(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text("x"))])
    assert (await provider.call(make_request())).request_id == "req_fake_1"


async def test_a_refused_key_names_the_variable_and_the_flag(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([error(401, "invalid x-api-key")])
    with pytest.raises(ProviderAuthError) as refused:
        await provider.call(make_request())
    assert str(refused.value) == (
        "the Anthropic API refused the API key (401: invalid x-api-key); set a valid key in "
        "ANTHROPIC_API_KEY or pass it with --api-key"
    )


async def test_a_rejected_thinking_request_suggests_removing_the_block(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([error(400, "thinking is not supported")])
    with pytest.raises(ProviderRejected) as rejected:
        await provider.call(make_request(thinking=ThinkingMode.OFF))
    assert "remove the llm.thinking block" in str(rejected.value)
    assert "reasoning_effort" not in str(rejected.value)


async def test_a_rejected_effort_suggests_removing_it(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([error(400, "effort is not supported")])
    with pytest.raises(ProviderRejected) as rejected:
        await provider.call(make_request(reasoning_effort="max"))
    assert "remove llm.reasoning_effort" in str(rejected.value)
    assert "llm.thinking" not in str(rejected.value)


async def test_a_rejection_without_thinking_or_effort_carries_no_hint(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([error(400, "messages: bad\x1b[31m order")])
    with pytest.raises(ProviderRejected) as rejected:
        await provider.call(make_request())
    assert (
        str(rejected.value) == "the Anthropic API rejected the request (400: messages: bad order)"
    )


async def test_an_overloaded_api_says_so(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([error(529, "Overloaded")])
    with pytest.raises(ProviderUnavailable, match=r"overloaded \(529: Overloaded\)") as busy:
        await provider.call(make_request())
    assert busy.value.status == 529
    assert busy.value.request_id == "req_fake_1"


async def test_a_reply_that_is_not_a_message_names_the_base_url_flag(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([{"content": None, "stop_reason": "end_turn", "usage": usage()}])
    with pytest.raises(ProviderError, match=r"other than a Messages API reply; check --base-url"):
        await provider.call(make_request())


async def test_a_refused_connection_names_the_base_url_redacted() -> None:
    # Bound but not listening: connecting is refused, and while the socket is held no other
    # process (another test worker) can take the port.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        provider = AnthropicProvider(
            API_KEY, base_url=f"http://127.0.0.1:{port}/?token=s3cret", max_retries=0
        )
        try:
            with pytest.raises(ProviderUnreachable) as unreachable:
                await provider.call(make_request())
        finally:
            await provider.aclose()
    assert f"http://127.0.0.1:{port}/?token=REDACTED" in str(unreachable.value)
    assert "s3cret" not in str(unreachable.value)
    assert "--base-url" in str(unreachable.value)


async def test_a_call_past_its_timeout_names_call_timeout() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        provider = AnthropicProvider(API_KEY, base_url=f"http://127.0.0.1:{port}", max_retries=0)
        try:
            with pytest.raises(ProviderTimeout, match=r"llm\.budget\.call_timeout \(50ms\)"):
                await provider.call(make_request(call_timeout=timedelta(milliseconds=50)))
        finally:
            await provider.aclose()


async def test_the_http_debug_file_is_private_and_hides_the_key(
    messages_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    debug = tmp_path / "http-debug.log"
    provider = AnthropicProvider(
        API_KEY, base_url=messages_api.base_url, http_debug_path=debug, max_retries=0
    )
    messages_api.script([reply(text("the answer"))])
    try:
        await provider.call(make_request())
    finally:
        await provider.aclose()
    dumped = debug.read_text()
    assert stat.S_IMODE(debug.stat().st_mode) == 0o600
    assert "POST" in dumped
    assert "list the streams" in dumped
    assert "the answer" in dumped
    assert API_KEY not in dumped


async def test_the_trace_holds_one_request_and_one_response_line_per_call(
    messages_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    provider = AnthropicProvider(
        API_KEY, base_url=messages_api.base_url, trace_path=trace, max_retries=0
    )
    messages_api.script([reply(text("the answer"))])
    try:
        await provider.call(make_request())
    finally:
        await provider.aclose()
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    assert lines[0]["request"] == build_params(make_request())
    assert lines[1]["response"]["content"] == [text("the answer")]
    assert lines[1]["request_id"] == "req_fake_1"


def test_a_planted_symlink_is_replaced_rather_than_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    trace = tmp_path / "trace.jsonl"
    trace.symlink_to(victim)
    AnthropicProvider(API_KEY, trace_path=trace)._close_files()
    assert victim.read_text() == "keep me"
    assert not trace.is_symlink()
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600


def test_a_file_planted_between_unlink_and_create_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    debug = tmp_path / "http-debug.log"
    debug.symlink_to(victim)
    monkeypatch.setattr(Path, "unlink", lambda self, missing_ok=False: None)
    with pytest.raises(PrivateFileError, match=r"http-debug\.log"):
        AnthropicProvider(API_KEY, http_debug_path=debug)
    assert victim.read_text() == "keep me"


async def test_the_fake_serves_from_another_process(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([reply(text("from the script"))]))
    log = tmp_path / "requests.jsonl"
    port_file = tmp_path / "port"
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.fakes.messages_api",
        *("--script", str(script), "--log", str(log), "--port-file", str(port_file)),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    provider: AnthropicProvider | None = None
    try:
        assert server.stdout is not None
        port = int(await server.stdout.readline())
        provider = AnthropicProvider(API_KEY, base_url=f"http://127.0.0.1:{port}", max_retries=0)
        response = await provider.call(make_request())
    finally:
        if provider is not None:
            await provider.aclose()
        server.terminate()
        await server.wait()
    assert port_file.read_text() == str(port)
    assert response.message.text == "from the script"
    assert json.loads(log.read_text())["body"] == {**build_params(make_request()), "stream": True}


async def test_the_http_debug_file_hides_the_custom_headers_values(
    messages_api: FakeMessagesAPI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Gateway-Token: gw-secret-1\nX-Team: blue")
    debug = tmp_path / "http-debug.log"
    provider = AnthropicProvider(
        API_KEY, base_url=messages_api.base_url, http_debug_path=debug, max_retries=0
    )
    messages_api.script([reply(text("the answer"))])
    try:
        await provider.call(make_request())
    finally:
        await provider.aclose()
    dumped = debug.read_text()
    assert "gw-secret-1" not in dumped
    assert "blue" not in dumped
    assert "x-gateway-token" in dumped.lower()


@pytest.mark.parametrize("key", ["sk-ant-abc\n", "sk-ant abc", "sk-ant-\x7fabc"])
def test_an_api_key_with_whitespace_or_control_has_its_own_sentence(key: str) -> None:
    with pytest.raises(ProviderError, match="holds a space, a line break or another control"):
        AnthropicProvider(key)
