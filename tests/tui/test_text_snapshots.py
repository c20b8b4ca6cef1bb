"""Issue 20's pictures of text that reads right, at 80x24 and 160x45: a long table fitted to the
width, prose full of em dashes and curly quotes, a colored code block, and tool output folded
only when it is long."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fisk_ai.agent.events import Event, PromptEvent, TextEvent, ToolCallEvent, ToolResultEvent
from fisk_ai.tools.base import ExecRecord
from tests.tui.awkward_texts import COW, EM_DASH_PROSE, LONG_TABLE, PYTHON_BLOCK
from tests.tui.sample import long_output
from tests.tui.viewer_app import ViewerApp

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 45), id="160x45")]
SnapCompare = Callable[..., bool]


def answered(prompt: str, text: str) -> list[Event]:
    return [PromptEvent(prompt), TextEvent(text, final=True)]


@pytest.mark.parametrize("size", SIZES)
def test_a_long_table(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    """The columns shrink to the width, the long cells wrap inside them, the counts stay
    right-aligned, and no row is blank."""
    app = ViewerApp(answered("which streams are there?", LONG_TABLE), tmp_path)
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_em_dash_prose(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    """Rows end at spaces: no word is cut next to an em dash or a curly quote."""
    app = ViewerApp(answered("how are the streams?", EM_DASH_PROSE), tmp_path)
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_a_code_block(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    """Keywords, names, numbers and the comment in their own colors; the comment's wrapped
    rows start at the block's indent."""
    app = ViewerApp(answered("how do I tell a lagging stream?", PYTHON_BLOCK), tmp_path)
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", SIZES)
def test_tool_output(snap_compare: SnapCompare, tmp_path: Path, size: tuple[int, int]) -> None:
    """A cow shows whole; a 40-line listing shows its first lines and names Ctrl-O."""
    events: list[Event] = [
        PromptEvent("tell me a joke"),
        ToolCallEvent("c1", "say", {"message": "Why did the cow go to outer space?"}),
        ToolResultEvent("c1", COW, exec=ExecRecord("say", 0)),
        ToolCallEvent("long", "stream_ls", {}, ("stream", "ls")),
        long_output(40),
    ]
    app = ViewerApp(events, tmp_path)
    assert snap_compare(app, terminal_size=size)
