"""A reply says which message it is and which model answered it, for the chat span's
``gen_ai.response.id`` and ``gen_ai.response.model``; two replies alike but for those are equal."""

from dataclasses import replace

from fisk_ai.llm.anthropic import AnthropicProvider, decode_response
from fisk_ai.llm.types import Message, Response, Role, TextBlock, Usage
from tests.fakes.messages_api import FakeMessagesAPI, reply, text
from tests.llm.anthropic_requests import make_request
from tests.llm.conftest import MODEL

BODY = {
    "id": "msg_01",
    "model": "claude-opus-4-8-20261101",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 1},
}


async def test_a_streamed_reply_carries_its_message_id_and_model(
    messages_api: FakeMessagesAPI, provider: AnthropicProvider
) -> None:
    messages_api.script([reply(text("x"))])
    response = await provider.call(make_request())
    assert (response.response_id, response.response_model) == ("msg_fake_1", MODEL)


def test_a_whole_body_is_decoded_with_its_message_id_and_model() -> None:
    response = decode_response(BODY)
    assert (response.response_id, response.response_model) == ("msg_01", BODY["model"])


def test_a_body_without_them_decodes_to_empty_values() -> None:
    bare = {key: value for key, value in BODY.items() if key not in {"id", "model"}}
    response = decode_response(bare)
    assert (response.response_id, response.response_model) == ("", "")


def test_replies_differing_only_in_id_and_model_are_equal() -> None:
    one = Response(Message(Role.ASSISTANT, (TextBlock("hi"),)), "end_turn", Usage(3, 1))
    assert replace(one, response_id="msg_01", response_model="m") == one
