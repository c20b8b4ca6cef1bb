"""Every JSON reader is bounded and total: deep nesting and lone surrogates give one clear error
(or a replacement character), never a RecursionError or a UnicodeEncodeError (issue 16, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import InvalidMessage
from fisk_ai.a2a.messages import Identity, RequestPrompt, new_request
from fisk_ai.a2a.vocabulary import Direction
from fisk_ai.llm.replay import CassetteError, ReplayProvider
from fisk_ai.tools.fiskapp.introspect import IntrospectionError, parse_application_model
from tests.fakes.fiskapp import sample_model

DEEP = 100_000
COWSAY = Path(__file__).parents[2] / "examples" / "cowsay"


def test_nested_introspection_output_is_an_introspection_error() -> None:
    document = b'{"name": "app", "x": ' + b"[" * DEEP + b"]" * DEEP + b"}"
    with pytest.raises(IntrospectionError, match="nests deeper than"):
        parse_application_model(document, "./app")


def test_a_lone_surrogate_in_help_text_becomes_a_replacement_character() -> None:
    model = sample_model()
    model["help"] = "PLACEHOLDER"
    document = json.dumps(model).replace("PLACEHOLDER", "bad \\ud800 help").encode()
    parsed = parse_application_model(document, "./app")
    assert parsed.help == "bad \ufffd help"
    parsed.model_dump_json().encode("utf-8")


def test_a_nested_cassette_line_is_a_cassette_error(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    cassette.write_bytes(b'{"request": ' + b"[" * DEEP + b"]" * DEEP + b"}\n{}\n")
    with pytest.raises(CassetteError, match="line 1"):
        ReplayProvider(cassette)


@pytest.mark.parametrize(
    "data",
    [
        b'{"protocol": "io.choria.fisk-ai.v1.request.prompt", "x": '
        + b"[" * DEEP
        + b"]" * DEEP
        + b"}",
        b'{"a":' * DEEP + b"1" + b"}" * DEEP,
        b'{"protocol": "io.choria.fisk-ai.v1.request.prompt", "x": '
        + b"[" * 101
        + b"]" * 101
        + b"}",
    ],
    ids=["deep", "deep-objects", "past-the-bound"],
)
def test_a_nested_message_is_refused_with_a_400(data: bytes) -> None:
    with pytest.raises(InvalidMessage, match="nests deeper than") as raised:
        decode(data, direction=Direction.TO_AGENT)
    assert raised.value.service_code == 400


def test_a_lone_surrogate_travels_as_a_replacement_character() -> None:
    message = new_request(RequestPrompt, sender=Identity(name="peer"), prompt="bad \ud800 text")
    data = encode(message)
    data.decode("utf-8")
    received = decode(data, direction=Direction.TO_AGENT)
    assert isinstance(received, RequestPrompt)
    assert received.prompt == "bad \ufffd text"


@pytest.mark.parametrize("count", ["1e999", "9" * 5000], ids=["past-a-float", "5000-digits"])
def test_an_out_of_range_usage_count_is_a_cassette_error(count: str, tmp_path: Path) -> None:
    recorded = (COWSAY / "joke.cassette").read_text().splitlines()
    first = json.loads(recorded[0])
    first["response"]["usage"]["input_tokens"] = "COUNT"
    lines = [json.dumps(first).replace('"COUNT"', count), *recorded[1:]]
    cassette = tmp_path / "c.jsonl"
    cassette.write_text("\n".join(lines) + "\n")
    with pytest.raises(CassetteError, match=r"line 1 .*(out of range|digits)"):
        ReplayProvider(cassette)
