import json
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.tools.fiskapp.introspect import (
    IntrospectionError,
    introspect,
    parse_application_model,
)
from tests.fakes.fiskapp import application, command, sample_model, write_fake_app


def document(model: dict[str, Any]) -> bytes:
    return json.dumps(model).encode()


async def test_a_fisk_application_describes_itself(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model())

    model = await introspect(str(app))

    assert model.name == "ops"
    assert [c.name for c in model.commands] == ["status", "secrets", "debug", "stream", "cache"]


async def test_a_missing_application_names_application_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"

    with pytest.raises(IntrospectionError, match=f'^application_path "{missing}" was not found'):
        await introspect(str(missing))


async def test_a_file_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model())
    app.chmod(0o644)

    with pytest.raises(IntrospectionError, match="is not executable"):
        await introspect(str(app))


async def test_a_hung_application_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model(), behaviour="hang-on-introspect")

    with pytest.raises(IntrospectionError) as raised:
        await introspect(str(app), timeout=0.5)

    assert str(raised.value).startswith(f'application_path "{app}" did not answer')
    assert "within 500ms and was stopped" in str(raised.value)


async def test_a_failing_application_reports_its_status_and_output(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model(), behaviour="fail-on-introspect")

    with pytest.raises(IntrospectionError) as raised:
        await introspect(str(app))

    message = str(raised.value)
    assert "exited with status 3" in message
    assert "introspection is broken today" in message
    assert "\n" not in message


async def test_malformed_json_is_refused(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model(), behaviour="malformed-introspect")

    with pytest.raises(IntrospectionError, match="printed malformed JSON"):
        await introspect(str(app))


async def test_empty_output_is_refused(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model(), behaviour="silent-introspect")

    with pytest.raises(IntrospectionError, match="printed nothing"):
        await introspect(str(app))


async def test_a_document_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model(), behaviour="array-introspect")

    with pytest.raises(IntrospectionError, match="printed a JSON array rather than an object"):
        await introspect(str(app))


async def test_output_over_the_cap_is_refused_not_truncated(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model(), behaviour="huge-introspect")

    with pytest.raises(IntrospectionError, match="printed more than 1024 bytes"):
        await introspect(str(app), output_limit=1024)


async def test_a_document_of_exactly_the_cap_is_accepted(tmp_path: Path) -> None:
    model = sample_model()
    app = write_fake_app(tmp_path, model)
    size = len(json.dumps(model)) + 1  # the fake ends its document with a newline

    assert (await introspect(str(app), output_limit=size)).name == "ops"
    with pytest.raises(IntrospectionError, match="printed more than"):
        await introspect(str(app), output_limit=size - 1)


async def test_sixteen_mebibytes_and_one_byte_is_refused(tmp_path: Path) -> None:
    app = write_fake_app(tmp_path, sample_model(), behaviour="huge-introspect")

    with pytest.raises(IntrospectionError, match="printed more than 16 MiB"):
        await introspect(str(app))


def test_a_leaf_without_a_schema_needs_a_newer_fisk() -> None:
    model = application(commands=[command("stream", commands=[command("ls", schema=None)])])

    with pytest.raises(IntrospectionError) as raised:
        parse_application_model(document(model), "./app")

    assert 'command "stream ls" has no precomputed schema' in str(raised.value)
    assert "fisk >= 0.9" in str(raised.value)


def test_a_hidden_leaf_without_a_schema_is_ignored() -> None:
    model = application(commands=[command("ls"), command("old", hidden=True, schema=None)])

    assert parse_application_model(document(model), "./app").commands[1].hidden


def test_the_plain_schema_is_used_when_there_is_no_restricted_one() -> None:
    model = application(commands=[command("ls", schema=None)])
    model["commands"][0]["schema"] = {"type": "object", "properties": {}}

    parsed = parse_application_model(document(model), "./app")

    assert parsed.commands[0].input_schema == {"type": "object", "properties": {}}


def test_a_schema_that_is_not_an_object_is_refused() -> None:
    model = application(commands=[command("ls", schema=None)])
    model["commands"][0]["restricted_schema"] = ["type", "object"]

    with pytest.raises(IntrospectionError, match='command "ls" has a schema that is not a JSON'):
        parse_application_model(document(model), "./app")


def test_a_schema_whose_root_is_not_an_object_is_refused() -> None:
    model = application(commands=[command("ls", schema={"type": "array"})])

    with pytest.raises(IntrospectionError, match='root type is "array" rather than "object"'):
        parse_application_model(document(model), "./app")


def test_a_command_name_that_makes_an_invalid_tool_name_is_refused() -> None:
    model = application(commands=[command("stream", commands=[command("rm.all")])])

    with pytest.raises(IntrospectionError) as raised:
        parse_application_model(document(model), "./app")

    assert '"stream_rm.all", which is not a valid tool name' in str(raised.value)


def test_a_tool_name_longer_than_64_characters_is_refused() -> None:
    model = application(commands=[command("x" * 65)])

    with pytest.raises(IntrospectionError, match="not a valid tool name"):
        parse_application_model(document(model), "./app")


def test_a_denied_command_is_not_held_to_tool_name_rules() -> None:
    model = application(commands=[command("rm.all", tags=["ai:deny"]), command("ls")])

    assert len(parse_application_model(document(model), "./app").commands) == 2


def test_a_model_that_does_not_decode_names_the_place() -> None:
    with pytest.raises(IntrospectionError, match=r"does not decode at commands\.0\.name"):
        parse_application_model(b'{"commands": [{"help": "no name"}]}', "./app")
