"""The one-line entry point: a click application that also answers --fisk-introspect."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import click

from fisk_ai.tools.introspect.hoist import hoist_group_options
from fisk_ai.tools.introspect.model import application_model, application_name

INTROSPECT_FLAG = "--fisk-introspect"


def run(
    cli: click.Group | click.Command,
    argv: Sequence[str] | None = None,
    *,
    name: str | None = None,
    version: str | None = None,
) -> None:
    """Run a click application so fisk-ai can drive it: ``if __name__ == "__main__": run(cli)``.

    With ``--fisk-introspect`` as the only argument, print the ApplicationModel JSON and exit 0.
    Otherwise run the application on argv (default ``sys.argv[1:]``) after moving group options
    that fisk-ai placed after the command path back to where click expects them.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == [INTROSPECT_FLAG]:
        model = application_model(cli, name=name, version=version)
        sys.stdout.write(json.dumps(model) + "\n")
        sys.stdout.flush()
        sys.exit(0)
    if not isinstance(cli, click.Group) and arguments[:1] == [application_name(cli, name)]:
        # The model presents a lone command as the application's only subcommand, so
        # fisk-ai names it first; the command itself expects no such word.
        arguments = arguments[1:]
    cli.main(args=hoist_group_options(cli, arguments), prog_name=name)
