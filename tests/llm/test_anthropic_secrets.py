"""What `--http-debug` and the provider's error sentences may show: never the API key or a
custom header's value, not in a header line, a response body or an error an endpoint echoed
the request's headers into."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fisk_ai.llm.anthropic import AnthropicProvider
from fisk_ai.llm.registry import ProviderAuthError
from fisk_ai.llm.types import Request, user_text
from tests.fakes.messages_api import FakeMessagesAPI, error, reply, text
from tests.llm.conftest import API_KEY, MODEL

GATEWAY_TOKEN = "gw-token-5f3a9c1e7b"
CUSTOM_HEADERS = f"X-Gateway-Token: {GATEWAY_TOKEN}\nX-Team: blue"
ECHOED_HEADERS = (
    f"request headers: x-api-key: {API_KEY}, x-gateway-token: {GATEWAY_TOKEN}, "
    "x-team: blue, user-agent: AsyncAnthropic/Python"
)


def request() -> Request:
    return Request(model=MODEL, system=("You run NATS commands.",), messages=(user_text("hi"),))


@pytest.fixture(autouse=True)
def custom_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", CUSTOM_HEADERS)


async def debugged_call(messages_api: FakeMessagesAPI, debug: Path) -> None:
    provider = AnthropicProvider(
        API_KEY, base_url=messages_api.base_url, http_debug_path=debug, max_retries=0
    )
    try:
        await provider.call(request())
    finally:
        await provider.aclose()


async def test_a_response_body_echoing_the_key_is_logged_masked(
    messages_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    debug = tmp_path / "http-debug.log"
    # In one piece: a stream that splits the text splits the key, leaving nothing whole to mask.
    messages_api.script([reply(text(f"your key is {API_KEY} via {GATEWAY_TOKEN}"), chunk=4096)])
    await debugged_call(messages_api, debug)
    dumped = debug.read_text()
    assert API_KEY not in dumped
    assert GATEWAY_TOKEN not in dumped
    assert "your key is REDACTED via REDACTED" in dumped


async def test_an_error_body_echoing_the_request_headers_is_logged_masked(
    messages_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    debug = tmp_path / "http-debug.log"
    messages_api.script([error(401, ECHOED_HEADERS)])
    with pytest.raises(ProviderAuthError):
        await debugged_call(messages_api, debug)
    dumped = debug.read_text()
    assert API_KEY not in dumped
    assert GATEWAY_TOKEN not in dumped
    assert "x-team: blue" not in dumped
    assert "x-team: REDACTED" in dumped


async def test_a_401_echoing_the_request_headers_names_no_credential(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([error(401, ECHOED_HEADERS)])
    with pytest.raises(ProviderAuthError) as refused:
        await provider.call(request())
    sentence = str(refused.value)
    assert API_KEY not in sentence
    assert GATEWAY_TOKEN not in sentence
    assert "blue" not in sentence
    assert "x-api-key: REDACTED" in sentence
    assert sentence.startswith("the Anthropic API refused the API key (401: request headers:")


async def test_a_credential_header_in_a_json_body_keeps_its_name_and_loses_its_value(
    messages_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    debug = tmp_path / "http-debug.log"
    echoed = json.dumps({"authorization": f"Bearer {API_KEY}", "cookie": "session=abc"})
    messages_api.script([reply(text(echoed))])
    await debugged_call(messages_api, debug)
    dumped = debug.read_text()
    assert "session=abc" not in dumped
    assert API_KEY not in dumped
