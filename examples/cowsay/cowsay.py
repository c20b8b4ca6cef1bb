#!/usr/bin/env python3
"""A cow that says and thinks things: the application behind the cowsay agent.

Run it yourself (`./cowsay.py say "Hello AI"`) or let fisk-ai drive it (`fisk run` in this
folder). The last line is all it takes to make a click application an agent.
"""

from __future__ import annotations

import textwrap

import click

from fisk_ai.tools.introspect import run

BUBBLE_WIDTH = 40

COW = r"""
        {trail}   ^__^
         {trail}  (oo)\_______
            (__)\       )\/\
                ||----w |
                ||     ||"""


def bubble_lines(message: str) -> list[str]:
    lines: list[str] = []
    for paragraph in message.splitlines() or [""]:
        lines.extend(textwrap.wrap(paragraph, BUBBLE_WIDTH) or [""])
    return lines


def bubble(message: str, *, thinking: bool) -> str:
    lines = bubble_lines(message)
    width = max(len(line) for line in lines)
    if thinking:
        edges = [("(", ")")] * len(lines)
    elif len(lines) == 1:
        edges = [("<", ">")]
    else:
        edges = [("/", "\\"), *[("|", "|")] * (len(lines) - 2), ("\\", "/")]
    body = [
        f"{left} {line.ljust(width)} {right}"
        for line, (left, right) in zip(lines, edges, strict=True)
    ]
    return "\n".join([" " + "_" * (width + 2), *body, " " + "-" * (width + 2)])


def render_cow(message: str, *, thinking: bool) -> str:
    trail = "o" if thinking else "\\"
    return bubble(message, thinking=thinking) + COW.format(trail=trail)


def refuse_emoji(ctx: click.Context, param: click.Parameter, message: str) -> str:
    if any(_is_emoji(character) for character in message):
        raise click.BadParameter("the cow cannot render emoji, use plain text", ctx, param)
    return message


def _is_emoji(character: str) -> bool:
    code = ord(character)
    return code >= 0x1F000 or 0x2600 <= code <= 0x27BF or code == 0xFE0F


@click.group(name="cowsay")
def cli() -> None:
    """Tools for the Cowsay LLM Agent"""


@cli.command()
@click.argument("message", callback=refuse_emoji, help="The message to send to the terminal")
def say(message: str) -> None:
    """Say something using a talking cow, does not accept emoji"""
    click.echo(render_cow(message, thinking=False))


@cli.command()
@click.argument("message", callback=refuse_emoji, help="The message to send to the terminal")
def think(message: str) -> None:
    """Think something using a thinking cow, does not accept emoji"""
    click.echo(render_cow(message, thinking=True))


if __name__ == "__main__":
    run(cli)
