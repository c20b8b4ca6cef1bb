from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from fisk_ai.tools.introspect import application_model, run


@pytest.fixture
def application() -> click.Group:
    @click.group(name="app")
    @click.option("--context", default="dev")
    @click.pass_context
    def app(ctx: click.Context, context: str) -> None:
        ctx.obj = context

    @app.command()
    @click.option("--loud", is_flag=True)
    @click.argument("name")
    @click.pass_obj
    def greet(context: str, loud: bool, name: str) -> None:
        text = f"hello {name} in {context}"
        click.echo(text.upper() if loud else text)

    return app


def test_introspect_flag_prints_the_model_and_exits_zero(
    application: click.Group, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(application, ["--fisk-introspect"], version="2.0")
    assert exited.value.code == 0
    assert json.loads(capsys.readouterr().out) == application_model(application, version="2.0")


def test_introspect_flag_among_other_arguments_is_not_introspection(
    application: click.Group, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(application, ["greet", "--fisk-introspect"])
    assert exited.value.code != 0
    assert capsys.readouterr().out == ""


def test_tool_call_order_reaches_the_root_option(
    application: click.Group, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(application, ["greet", "--context=prod", "--loud", "--", "ada"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == "HELLO ADA IN PROD\n"


def test_plain_command_accepts_its_own_name_first(capsys: pytest.CaptureFixture[str]) -> None:
    @click.command(name="greet")
    @click.argument("who")
    def greet(who: str) -> None:
        click.echo(f"hello {who}")

    with pytest.raises(SystemExit) as exited:
        run(greet, ["greet", "--", "ada"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == "hello ada\n"


def test_importing_the_helper_loads_no_heavy_library() -> None:
    probe = (
        "import sys, fisk_ai.tools.introspect; "
        "print(sorted(m for m in ('jsonschema', 'pydantic', 'rich', 'textual', 'anthropic', "
        "'yaml') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
