from __future__ import annotations

import pytest

from fisk_ai.a2a.errors import InvalidMessage, NoResponders, RemoteServiceError
from fisk_ai.a2a.transport import (
    Delivery,
    cancel_subject,
    discovery_subject,
    elicit_subject,
    reply_failure,
    service_error_headers,
    task_subject,
    tool_subject,
)


def test_the_subjects_follow_the_v1_layout() -> None:
    assert discovery_subject("nats-worker") == "choria.fisk-ai.discovery.nats-worker"
    assert tool_subject("nats-worker") == "choria.fisk-ai.tool.nats-worker"
    assert task_subject("nats-worker") == "choria.fisk-ai.task.nats-worker"
    assert cancel_subject("nats-worker", "docs1") == "choria.fisk-ai.cancel.nats-worker.docs1"
    assert elicit_subject("nats-worker", "docs1") == "choria.fisk-ai.elicit.nats-worker.docs1"


@pytest.mark.parametrize("request_tag", ["docs.1", "*", ">", "", "r" * 65])
def test_a_request_tag_that_is_not_one_subject_token_builds_no_subject(request_tag: str) -> None:
    with pytest.raises(ValueError, match="request"):
        cancel_subject("nats-worker", request_tag)


def test_an_identity_with_a_wildcard_builds_no_subject() -> None:
    with pytest.raises(ValueError, match="identity"):
        task_subject("nats.*")


def test_an_empty_status_503_reply_means_no_responders() -> None:
    reply = Delivery("_INBOX.x", b"", headers={"Status": "503"})

    failure = reply_failure(reply, "choria.fisk-ai.tool.ghost")

    assert isinstance(failure, NoResponders)
    assert "choria.fisk-ai.tool.ghost" in str(failure)


def test_a_service_error_reply_carries_its_code_and_description() -> None:
    refusal = InvalidMessage("the message is not valid JSON")
    reply = Delivery("_INBOX.x", b"", headers=service_error_headers(refusal))

    failure = reply_failure(reply, "choria.fisk-ai.task.w")

    assert isinstance(failure, RemoteServiceError)
    assert failure.service_code == 400
    assert failure.description == "the message is not valid JSON"


def test_an_ordinary_reply_is_no_failure() -> None:
    assert reply_failure(Delivery("_INBOX.x", b"{}"), "choria.fisk-ai.tool.w") is None


def test_service_error_headers_are_the_nats_micro_ones() -> None:
    headers = service_error_headers(InvalidMessage("bad", service_code=500))

    assert headers == {"Nats-Service-Error": "bad", "Nats-Service-Error-Code": "500"}


def test_a_deliverys_headers_cannot_be_changed() -> None:
    delivery = Delivery("s", b"", headers={"a": "b"})

    with pytest.raises(TypeError):
        delivery.headers["a"] = "c"  # type: ignore[index]
