"""The wire check the serving tests run on every message: a kind with no schema of its own is
held to the event framing, as a Go receiver holds it, rather than failing or being let through."""

from __future__ import annotations

import json

import pytest

from fisk_ai.a2a.codec import encode
from fisk_ai.a2a.events import delta_message
from fisk_ai.a2a.messages import Identity, RequestPrompt, new_request, reply_header
from fisk_ai.agent.events import DeltaEvent, TextDeltaEvent, ThinkingDeltaEvent
from tests.serve.wire import assert_conforms

CALLER = Identity(name="peer")
WORKER = Identity(name="ops")


def delta_bytes(event: DeltaEvent) -> bytes:
    request = new_request(RequestPrompt, sender=CALLER, prompt="hello")
    return encode(delta_message(event, reply_header(request, sender=WORKER, sequence=3)))


@pytest.mark.parametrize("event", [TextDeltaEvent("Three str"), ThinkingDeltaEvent("Look")])
def test_a_delta_message_conforms_by_the_event_framing(event: DeltaEvent) -> None:
    assert_conforms(delta_bytes(event))


def test_a_delta_message_without_its_block_is_caught_by_the_event_framing() -> None:
    sent = json.loads(delta_bytes(TextDeltaEvent("Three str")))
    del sent["block"]

    with pytest.raises(AssertionError, match="'block' is a required property"):
        assert_conforms(json.dumps(sent).encode())


def test_a_kind_that_is_not_an_event_and_has_no_schema_is_refused() -> None:
    sent = json.loads(delta_bytes(TextDeltaEvent("x")))
    sent["protocol"] = "io.choria.fisk-ai.v1.request.shout"

    with pytest.raises(AssertionError, match="no schema in the set names this kind"):
        assert_conforms(json.dumps(sent).encode())
