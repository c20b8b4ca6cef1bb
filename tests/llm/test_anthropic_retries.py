"""The provider says when the SDK is about to retry a model call, and after how long."""

from __future__ import annotations

from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.llm.retries import RetryNotice, retries_reported_to
from tests.fakes.messages_api import FakeMessagesAPI, error, reply, text
from tests.llm.anthropic_requests import make_request
from tests.llm.conftest import API_KEY


async def test_an_overloaded_api_is_retried_and_each_retry_is_reported() -> None:
    notices: list[RetryNotice] = []
    with FakeMessagesAPI() as api:
        api.script(
            [
                error(529, "Overloaded", retry_after_ms=20),
                error(429, "slow down", retry_after_ms=30),
                reply(text("made it")),
            ]
        )
        provider = AnthropicProvider(API_KEY, base_url=api.base_url, max_retries=2)
        try:
            with retries_reported_to(notices.append):
                response = await provider.call(make_request())
        finally:
            await provider.aclose()
    assert response.message.text == "made it"
    assert notices == [
        RetryNotice(attempt=2, attempts=3, wait_seconds=0.02, status=529),
        RetryNotice(attempt=3, attempts=3, wait_seconds=0.03, status=429),
    ]


async def test_a_retry_nobody_listens_for_is_still_made() -> None:
    with FakeMessagesAPI() as api:
        api.script([error(529, "Overloaded", retry_after_ms=10), reply(text("fine"))])
        provider = AnthropicProvider(API_KEY, base_url=api.base_url, max_retries=1)
        try:
            response = await provider.call(make_request())
        finally:
            await provider.aclose()
    assert response.message.text == "fine"
    assert len(api.requests) == 2
