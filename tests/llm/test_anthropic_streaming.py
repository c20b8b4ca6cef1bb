"""The provider reads the answer as a stream through the real SDK, hands its pieces on as they
arrive, and returns only a whole message: a broken stream is tried again as a whole call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from fisk_ai.llm import anthropic as anthropic_provider
from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.llm.deltas import Delta, DeltaKind, deltas_reported_to
from fisk_ai.llm.registry import ProviderRejected, ProviderTimeout, ProviderUnreachable
from fisk_ai.llm.retries import RetryNotice, retries_reported_to
from fisk_ai.llm.types import ThinkingBlock, ToolUseBlock
from tests.fakes.messages_api import FakeMessagesAPI, reply, text, thinking, tool_use, usage
from tests.llm.anthropic_requests import make_request
from tests.llm.conftest import API_KEY

ANSWER = "The ORDERS stream has three consumers, and none of them is behind."


@pytest.fixture(autouse=True)
def no_wait_between_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anthropic_provider, "MID_STREAM_RETRY_DELAY", 0.0)


@pytest.fixture
async def retrying(messages_api: FakeMessagesAPI) -> AsyncIterator[AnthropicProvider]:
    live = AnthropicProvider(API_KEY, base_url=messages_api.base_url, max_retries=1)
    yield live
    await live.aclose()


async def test_text_arrives_in_pieces_that_make_up_the_answer(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text(ANSWER), chunk=5)])
    pieces: list[Delta] = []
    with deltas_reported_to(pieces.append):
        response = await provider.call(make_request())
    assert len(pieces) == -(-len(ANSWER) // 5)
    assert "".join(piece.text for piece in pieces) == ANSWER
    assert response.message.text == ANSWER
    assert messages_api.requests[0]["stream"] is True


async def test_thinking_streams_as_thinking_and_keeps_its_signature(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(thinking("check the consumers first", "c2lnbmVk"), text("done"))])
    pieces: list[Delta] = []
    with deltas_reported_to(pieces.append):
        response = await provider.call(make_request())
    thought = "".join(piece.text for piece in pieces if piece.kind is DeltaKind.THINKING)
    assert thought == "check the consumers first"
    assert response.message.content[0] == ThinkingBlock("check the consumers first", b"c2lnbmVk")


async def test_tool_input_streamed_in_pieces_is_the_object_the_model_wrote(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    arguments = {"stream": "ORDERS", "subjects": ["orders.>", "returns.>"]}
    messages_api.script([reply(tool_use("tu_1", "stream_info", arguments), stop_reason="tool_use")])
    response = await provider.call(make_request())
    assert response.message.tool_uses == (
        ToolUseBlock(
            "tu_1", "stream_info", '{"stream": "ORDERS", "subjects": ["orders.>", "returns.>"]}'
        ),
    )
    assert response.stop_reason == "tool_use"


async def test_usage_is_what_the_closing_message_delta_counted(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text("hi"), usage_counts=usage(120, 48, cache_read=7))])
    response = await provider.call(make_request())
    assert (response.usage.input_tokens, response.usage.output_tokens) == (120, 48)
    assert response.usage.cache_read_tokens == 7


async def test_a_stream_cut_mid_answer_is_tried_again_and_returns_one_answer(
    messages_api: FakeMessagesAPI, retrying: AnthropicProvider
) -> None:
    messages_api.script([reply(text(ANSWER), cut_after=5), reply(text(ANSWER))])
    notices: list[RetryNotice] = []
    with retries_reported_to(notices.append):
        response = await retrying.call(make_request())
    assert response.message.text == ANSWER
    assert len(messages_api.requests) == 2
    assert [(notice.attempt, notice.attempts) for notice in notices] == [(2, 2)]


async def test_a_stream_cut_on_every_attempt_fails_naming_the_break(
    messages_api: FakeMessagesAPI, retrying: AnthropicProvider
) -> None:
    messages_api.script([reply(text(ANSWER), cut_after=5), reply(text(ANSWER), cut_after=5)])
    with pytest.raises(ProviderUnreachable, match="broke off mid-stream"):
        await retrying.call(make_request())


async def test_an_overloaded_error_event_mid_stream_is_retried(
    messages_api: FakeMessagesAPI, retrying: AnthropicProvider
) -> None:
    messages_api.script(
        [reply(text(ANSWER), error_after=(4, "overloaded_error")), reply(text("second try"))]
    )
    notices: list[RetryNotice] = []
    with retries_reported_to(notices.append):
        response = await retrying.call(make_request())
    assert response.message.text == "second try"
    assert [notice.status for notice in notices] == [529]


async def test_an_invalid_request_error_event_mid_stream_is_not_retried(
    messages_api: FakeMessagesAPI, retrying: AnthropicProvider
) -> None:
    messages_api.script([reply(text(ANSWER), error_after=(4, "invalid_request_error"))])
    with pytest.raises(ProviderRejected, match="invalid_request_error"):
        await retrying.call(make_request())
    assert len(messages_api.requests) == 1


async def test_a_stream_gone_quiet_past_the_call_timeout_times_out(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text(ANSWER))])
    release = messages_api.pause(1, after=4)
    try:
        with pytest.raises(ProviderTimeout, match="sent nothing for that long"):
            await provider.call(make_request(call_timeout=timedelta(milliseconds=300)))
    finally:
        release.set()


async def test_time_to_first_chunk_is_measured_for_a_streamed_answer(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text(ANSWER))])
    response = await provider.call(make_request())
    assert response.time_to_first_chunk is not None
    assert response.time_to_first_chunk >= 0
