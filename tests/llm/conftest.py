"""Fixtures for the provider tests: a running fake Messages API and a provider pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from fisk_ai.llm.anthropic import AnthropicProvider
from tests.fakes.messages_api import FakeMessagesAPI

API_KEY = "sk-test-not-a-real-key"
MODEL = "claude-opus-4-8"


@pytest.fixture
def messages_api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as api:
        yield api


@pytest.fixture
async def provider(messages_api: FakeMessagesAPI) -> AsyncIterator[AnthropicProvider]:
    live = AnthropicProvider(API_KEY, base_url=messages_api.base_url, max_retries=0)
    yield live
    await live.aclose()
