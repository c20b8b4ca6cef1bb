"""The fake Messages API shared by several tests in turn, each through a window of its own."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.fakes.messages_api import FakeMessagesAPI, reply, text


def ask(api: FakeMessagesAPI, words: str) -> Any:
    request = urllib.request.Request(
        f"{api.base_url}/v1/messages",
        data=json.dumps({"model": "m", "messages": [{"role": "user", "content": words}]}).encode(),
        headers={"content-type": "application/json", "x-api-key": "k"},
    )
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read())


def test_a_window_numbers_its_requests_from_one_after_an_earlier_windows() -> None:
    with FakeMessagesAPI() as api:
        first = api.window()
        first.script([reply(text("one"))])
        ask(api, "first")
        first.close()

        second = api.window()
        second.script([reply(text("two"))])
        answer = ask(api, "second")
        second.close()

    assert answer["content"] == [{"type": "text", "text": "two"}]
    assert [request["messages"][0]["content"] for request in second.requests] == ["second"]
    assert second.request_arrived(1).is_set()


def test_a_turn_left_unasked_fails_its_test_and_not_the_next() -> None:
    with FakeMessagesAPI() as api:
        careless = api.window()
        careless.script([reply(text("never asked for"))])
        with pytest.raises(AssertionError, match="1 scripted turns never asked for"):
            careless.close()

        next_test = api.window()
        next_test.script([reply(text("its own"))])
        answer = ask(api, "next")
        next_test.close()

    assert answer["content"] == [{"type": "text", "text": "its own"}]


def test_a_request_past_the_windows_turns_fails_its_close() -> None:
    with FakeMessagesAPI() as api:
        window = api.window()
        with pytest.raises(urllib.error.HTTPError):
            ask(api, "nothing scripted")

        with pytest.raises(AssertionError, match="1 requests for 0 scripted turns"):
            window.close()
