"""Reorder a fisk-ai tool call so click sees each group's options where it expects them.

fisk-ai renders a call as ``[command path..., global flags..., command flags..., "--",
positionals...]``. click only accepts a group's options between the group's name and the next
subcommand, so an option that belongs to a group but arrives after the full path is moved back
to sit right behind that group. Nothing after the first ``--`` is ever touched.
"""

from __future__ import annotations

from collections.abc import Sequence

import click


def hoist_group_options(cli: click.Command, argv: Sequence[str]) -> list[str]:
    """The argv with every group's own options moved back to that group's position."""
    words = list(argv)
    separator = words.index("--") if "--" in words else len(words)
    head, tail = words[:separator], words[separator:]

    chain: list[click.Command] = [cli]
    segments: list[list[str]] = [[]]
    context = click.Context(cli)
    index = 0
    while index < len(head):
        word = head[index]
        if word.startswith("-") and word != "-":
            level, option = _owner(chain, word)
            width = _word_count(option, word, remaining=len(head) - index - 1)
            segments[level].extend(head[index : index + width])
            index += width
            continue
        current = chain[-1]
        if isinstance(current, click.Group):
            subcommand = current.get_command(context, word)
            if subcommand is not None:
                chain.append(subcommand)
                segments.append([word])
                context = click.Context(subcommand, parent=context, info_name=word)
                index += 1
                continue
        segments[-1].append(word)
        index += 1
    return [word for segment in segments for word in segment] + tail


def _owner(chain: Sequence[click.Command], word: str) -> tuple[int, click.Option | None]:
    """The innermost command on the path that declares the option, as click would resolve it."""
    for level in range(len(chain) - 1, -1, -1):
        option = _matching_option(chain[level], word)
        if option is not None:
            return level, option
    return len(chain) - 1, None


def _matching_option(command: click.Command, word: str) -> click.Option | None:
    spelled = _option_spelling(word)
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        if spelled in param.opts or spelled in param.secondary_opts:
            return param
        # A short option may carry its value glued on (-cprod), or further short flags (-fv).
        if not word.startswith("--") and len(word) > 2 and word[:2] in param.opts:
            return param
    return None


def _option_spelling(word: str) -> str:
    if word.startswith("--") and "=" in word:
        return word.split("=", 1)[0]
    return word


def _takes_value(option: click.Option) -> bool:
    return not option.is_flag and not option.count


def _word_count(option: click.Option | None, word: str, *, remaining: int) -> int:
    """How many words the option occupies: itself plus any separate values."""
    if option is None or not _takes_value(option):
        return 1
    if word.startswith("--") and "=" in word:
        return 1
    if not word.startswith("--") and len(word) > 2:
        return 1
    return 1 + min(max(option.nargs, 1), remaining)
