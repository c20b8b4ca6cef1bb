"""Tags on click commands, attached with a decorator and read back for the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

TAGS_ATTRIBUTE = "__fisk_tags__"

Tagged = TypeVar("Tagged", bound=Callable[..., Any])


def fisk_tags(*tags: str) -> Callable[[Tagged], Tagged]:
    """Tag a click command or group for fisk-ai, for example ``@fisk_tags("ai:confirm")``.

    Works above or below ``@click.command``; stacked decorators keep reading order, so the
    topmost tag comes first (the order matters: fisk-ai names the first gating tag it finds).
    """
    for tag in tags:
        if not isinstance(tag, str) or not tag or any(character.isspace() for character in tag):
            raise ValueError(f"fisk tag {tag!r} must be a non-empty string without whitespace")

    def attach(target: Tagged) -> Tagged:
        existing: tuple[str, ...] = tuple(getattr(target, TAGS_ATTRIBUTE, ()))
        setattr(target, TAGS_ATTRIBUTE, _unique((*tags, *existing)))
        return target

    return attach


def tags_of(command: click.Command) -> list[str]:
    """The command's tags: those attached to the command object, then those on its callback."""
    on_command: tuple[str, ...] = tuple(getattr(command, TAGS_ATTRIBUTE, ()))
    on_callback: tuple[str, ...] = ()
    if command.callback is not None:
        on_callback = tuple(getattr(command.callback, TAGS_ATTRIBUTE, ()))
    return list(_unique((*on_command, *on_callback)))


def _unique(tags: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tags))
