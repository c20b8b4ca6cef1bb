"""Property: every reader of outside input ends in one clear error or success, never a
traceback (issue 16, Deliver 2). ``FISK_FUZZ_EXAMPLES`` sets the examples per property."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import event, given
from hypothesis import strategies as st

from fisk_ai.a2a.codec import decode, encode
from fisk_ai.a2a.errors import A2AError
from fisk_ai.a2a.messages import Identity, RequestPrompt, ToolRequest, new_request
from fisk_ai.a2a.vocabulary import Direction
from fisk_ai.config import Mode, load
from fisk_ai.errors import FiskError
from fisk_ai.lineui.sessions import summary, transcript
from fisk_ai.llm.replay import CassetteError, ReplayProvider
from fisk_ai.presentation import session_listing
from fisk_ai.sessions import FileSessionStore, fold
from fisk_ai.sessions.errors import SessionError
from fisk_ai.sessions.records import encode_record
from fisk_ai.tools.fiskapp.argv import ArgvError, render_argv
from fisk_ai.tools.fiskapp.introspect import IntrospectionError, parse_application_model
from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.validation import ArgumentsError, parse_arguments, validate_arguments
from fisk_ai.util.jsonx import JsonError, parse
from tests.fakes.fiskapp import sample_model
from tests.fuzz.strategies import documents, json_values, mutated
from tests.sessions.builders import journal, meta, result, turn

REPO = Path(__file__).resolve().parents[2]
PEER = Identity(name="peer")


@given(st.binary(max_size=200) | mutated('{"a": [1, "x", {"b": null}]}'))
def test_the_json_reader_is_total(data: bytes) -> None:
    try:
        parse(data)
    except JsonError:
        event("refused")
        return
    event("read")


def _messages() -> list[bytes]:
    return [
        encode(new_request(RequestPrompt, sender=PEER, prompt="list the streams")),
        encode(new_request(ToolRequest, sender=PEER, name="status", arguments={"a": 1})),
    ]


@given(st.sampled_from(_messages()).flatmap(lambda m: documents(json.loads(m))))
def test_the_codec_answers_every_message_with_a_message_or_an_a2a_error(data: bytes) -> None:
    for direction in Direction:
        try:
            decode(data, direction=direction)
        except A2AError as error:
            assert error.service_code == 400
            str(error).encode("utf-8")
            event(f"refused {direction.name}")
            continue
        event(f"read {direction.name}")


@given(documents(sample_model()))
def test_introspection_documents_load_or_name_the_problem(data: bytes) -> None:
    try:
        model = parse_application_model(data, "./app")
    except IntrospectionError as error:
        str(error).encode("utf-8")
        event("refused")
        return
    model.model_dump_json().encode("utf-8")
    event("read")


_TOOL = load_application(ApplicationModel.model_validate(sample_model()), "./app").tools[0]


@given(
    st.one_of(
        json_values.map(json.dumps),
        st.text(max_size=40),
        mutated('{"stream": "ORDERS", "force": true}').map(
            lambda data: data.decode("utf-8", "surrogateescape")
        ),
    )
)
def test_tool_arguments_become_an_argv_or_an_error_the_model_reads(text: str) -> None:
    try:
        arguments = parse_arguments(_TOOL.name, text)
    except ArgumentsError:
        event("refused: unreadable")
        return
    if validate_arguments(_TOOL.name, _TOOL.input_schema, arguments) is not None:
        event("refused: schema")
        return
    try:
        argv = render_argv(_TOOL.command, _TOOL.global_flags, arguments)
    except ArgvError:
        event("refused: argv")
        return
    event("runs")
    for token in argv:
        assert "\x00" not in token
        token.encode("utf-8")


def _good_journal() -> list[bytes]:
    records = journal(turn(1, "c1"), result("c1", "ok"), first=meta("fuzz", "hello"))
    return [encode_record(record) for record in records]


@given(st.integers(0, 2), mutated(_good_journal()[1].decode()))
def test_journals_read_or_are_marked_corrupt(position: int, line: bytes) -> None:
    lines = _good_journal()
    lines[position] = line
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder) / "runs"
        directory.mkdir(mode=0o700)
        path = directory / "fuzz.json"
        path.write_bytes(b"\n".join(lines) + b"\n")
        path.chmod(0o600)
        store = FileSessionStore(directory)
        session_listing(asyncio.run(store.list())).encode("utf-8")
        try:
            records = asyncio.run(store.read("fuzz"))
            conversation = fold(records)
        except SessionError:
            event("corrupt")
            return
        event("read")
        summary(conversation).encode("utf-8")
        "\n".join(transcript(conversation, thinking=True)).encode("utf-8")


_AGENT_YAML = (REPO / "examples" / "cowsay" / "agent.yaml").read_text()


@given(
    mutated(_AGENT_YAML)
    | mutated("llm:\n  model: m\n  budget:\n    max_tokens: 10\nidentity: x\n")
    | st.builds(
        lambda key, tag, value: f"{key}: {tag} {value}\n".encode("utf-8", "surrogatepass"),
        st.sampled_from(["identity", "application_path", "llm", "harness", "x"]),
        st.sampled_from(["", "!!int", "!!float", "!!bool", "!!timestamp", "!!binary", "!!str"]),
        st.text(max_size=12),
    )
)
def test_agent_yaml_loads_or_names_the_problem(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "agent.yaml"
        path.write_bytes(data)
        try:
            load(path, Mode.LENIENT)
        except FiskError as error:
            str(error).encode("utf-8")
            event("refused")
            return
        event("loaded")


_CASSETTE_LINE = (REPO / "examples" / "cowsay" / "joke.cassette").read_text().splitlines()[0]


@given(mutated(_CASSETTE_LINE))
def test_cassettes_load_or_name_the_line(line: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "c.cassette"
        path.write_bytes(line + b"\n" + _CASSETTE_LINE.encode() + b"\n")
        try:
            ReplayProvider(path)
        except CassetteError as error:
            str(error).encode("utf-8")
            event("refused")
            return
        event("loaded")
