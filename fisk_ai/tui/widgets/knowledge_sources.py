"""The explorer's list of indexed documents: each with its chunk count, and marked when its file
changed or went since it was indexed. Enter reads the document from its first chunk."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.knowledge.access import SourceState


def common_directory(paths: Sequence[str]) -> str:
    """The directory every path is under ("" when they share none), so the list can leave it
    out and name it once in its title."""
    parents = [str(PurePosixPath(path).parent) for path in paths]
    if not parents or "." in parents:
        return ""
    try:
        common = os.path.commonpath(parents)
    except ValueError:  # Absolute and relative paths together share nothing.
        return ""
    return "" if common == "/" else common


def source_prompt(source: SourceState, directory: str) -> Text:
    """One document: its chunk count, its path under ``directory``, and why it is stale when
    it is."""
    shown = source.path[len(directory) + 1 :] if directory else source.path
    prompt = Text.assemble((f"{source.chunks:>4} ", "dim"), single_line(shown))
    if source.stale:
        prompt.append(f"\n     {source.stale}", style="bold yellow")
    return prompt


class SourceList(OptionList):
    """The indexed documents, by path, under the directory they share (named in the title).
    Each option's id is the document's whole path."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Read document"),
    ]

    def show_sources(self, sources: Sequence[SourceState]) -> None:
        directory = common_directory([source.path for source in sources])
        self.border_title = f"sources in {single_line(directory)}/" if directory else "sources"
        self.clear_options()
        self.add_options(
            Option(source_prompt(source, directory), id=source.path) for source in sources
        )
        if sources:
            self.highlighted = 0
