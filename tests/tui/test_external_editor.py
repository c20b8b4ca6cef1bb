"""Ctrl-G's editor: which one is chosen, how it is run, what comes back, and the terminal handed
over and taken back (in a real terminal under tmux; a headless app cannot hand one over)."""

from __future__ import annotations

import json
import shlex
import shutil
import stat
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from textual.app import App

from fisk_ai.tui.external_editor import (
    NO_EDITOR,
    NO_TERMINAL,
    EditorFailed,
    EditorUnavailable,
    edit_prompt,
    editor_command,
    run_editor,
)
from tests.tui.tmux_pane import Pane

REPO_ROOT = Path(__file__).resolve().parents[2]

EDITOR_SCRIPT = """#!{python}
import json, os, pathlib, stat, sys

path = pathlib.Path(sys.argv[-1])
record = {{
    "arguments": sys.argv[1:-1],
    "path": str(path),
    "mode": stat.S_IMODE(path.stat().st_mode),
    "text": path.read_text(),
}}
pathlib.Path(os.environ["EDITOR_RECORD"]).write_text(json.dumps(record))
if os.environ.get("EDITOR_ASKS"):
    # Read from the terminal, as a real editor does.
    word = input("the editor asks for a word: ")
else:
    word = "edited"
with path.open("a") as file:
    file.write(f" {{word}}\\n")
sys.exit(int(os.environ.get("EDITOR_STATUS", "0")))
"""
"""An editor that writes down how it was called and what it found, then appends a word (one
typed at the terminal, with ``EDITOR_ASKS`` set)."""


def write_editor(directory: Path, name: str = "fake-editor") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / name
    script.write_text(EDITOR_SCRIPT.format(python=sys.executable))
    script.chmod(0o755)
    return script


def environment(tmp_path: Path, **variables: str) -> dict[str, str]:
    """A PATH holding only the test's programs, and where the fake editor keeps its record."""
    return {
        "PATH": str(tmp_path / "bin"),
        "EDITOR_RECORD": str(tmp_path / "record.json"),
        **variables,
    }


def record_of(tmp_path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((tmp_path / "record.json").read_text())
    return loaded


def edited_file_left(tmp_path: Path) -> bool:
    """Whether the file the editor was given is still there."""
    return Path(record_of(tmp_path)["path"]).exists()


def test_visual_is_chosen_over_editor(tmp_path: Path) -> None:
    visual = write_editor(tmp_path / "bin", "visual-editor")
    write_editor(tmp_path / "bin", "plain-editor")
    chosen = editor_command(environment(tmp_path, VISUAL="visual-editor", EDITOR="plain-editor"))
    assert chosen == [str(visual)]


def test_editor_words_are_split_as_a_shell_splits_them(tmp_path: Path) -> None:
    editor = write_editor(tmp_path / "bin")
    chosen = editor_command(environment(tmp_path, EDITOR="fake-editor --wait 'two words'"))
    assert chosen == [str(editor), "--wait", "two words"]


def test_vi_is_the_fallback_when_it_is_installed(tmp_path: Path) -> None:
    vi = write_editor(tmp_path / "bin", "vi")
    assert editor_command(environment(tmp_path)) == [str(vi)]


def test_no_editor_anywhere_says_to_set_editor(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    with pytest.raises(EditorUnavailable) as raised:
        editor_command(environment(tmp_path))
    assert str(raised.value) == NO_EDITOR
    assert "set EDITOR" in NO_EDITOR


def test_an_editor_not_installed_is_named_with_its_variable(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    with pytest.raises(EditorUnavailable, match="nano-not-here named by EDITOR"):
        editor_command(environment(tmp_path, EDITOR="nano-not-here"))


def test_an_editor_with_unbalanced_quotes_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(EditorUnavailable, match=r"^VISUAL .* fix its quoting$"):
        editor_command(environment(tmp_path, VISUAL="code 'wait"))


async def test_the_editor_s_changes_come_back_without_the_final_newline(tmp_path: Path) -> None:
    editor = write_editor(tmp_path / "bin")
    edited = await run_editor([str(editor)], "restart NATS", environment(tmp_path))
    assert edited == "restart NATS edited"


async def test_a_multi_line_prompt_reaches_the_editor_whole(tmp_path: Path) -> None:
    editor = write_editor(tmp_path / "bin")
    await run_editor([str(editor)], "first\n\nsecond", environment(tmp_path))
    assert record_of(tmp_path)["text"] == "first\n\nsecond"


async def test_the_editor_s_file_is_private_and_removed_afterwards(tmp_path: Path) -> None:
    editor = write_editor(tmp_path / "bin")
    await run_editor([str(editor)], "restart NATS", environment(tmp_path))
    record = record_of(tmp_path)
    assert record["mode"] == stat.S_IRUSR | stat.S_IWUSR
    assert not edited_file_left(tmp_path)


async def test_the_editor_gets_its_words_as_arguments_never_through_a_shell(
    tmp_path: Path,
) -> None:
    editor = write_editor(tmp_path / "bin")
    command = editor_command(environment(tmp_path, EDITOR="fake-editor '$(touch pwned)' ';'"))
    await run_editor(command, "x", environment(tmp_path))
    assert record_of(tmp_path)["arguments"] == ["$(touch pwned)", ";"]
    assert not (tmp_path / "pwned").exists()
    assert command[0] == str(editor)


async def test_an_editor_that_fails_changes_nothing_and_leaves_no_file(tmp_path: Path) -> None:
    editor = write_editor(tmp_path / "bin")
    with pytest.raises(EditorFailed, match="status 3"):
        await run_editor([str(editor)], "restart NATS", environment(tmp_path, EDITOR_STATUS="3"))
    assert not edited_file_left(tmp_path)


class NotesApp(App[None]):
    """Nothing but an app to hand the terminal from; it keeps what the editor gave back."""

    def __init__(self, environ: dict[str, str]) -> None:
        super().__init__()
        self.environ = environ
        self.edited: list[str | None] = []
        self.notices: list[str] = []

    def notify(self, message: str, **_: Any) -> None:
        self.notices.append(message)

    async def edit(self, text: str) -> None:
        self.edited.append(await edit_prompt(self, text, self.environ))


async def test_a_headless_app_says_it_cannot_hand_the_terminal_over(tmp_path: Path) -> None:
    write_editor(tmp_path / "bin")
    app = NotesApp(environment(tmp_path, EDITOR="fake-editor"))
    async with app.run_test(size=(80, 24)):
        await app.edit("restart NATS")
    assert app.edited == [None]
    assert app.notices == [NO_TERMINAL]
    assert not (tmp_path / "record.json").exists()


async def test_no_editor_is_said_in_one_notice_and_the_text_is_kept(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    app = NotesApp(environment(tmp_path))
    async with app.run_test(size=(80, 24)):
        await app.edit("restart NATS")
    assert app.edited == [None]
    assert app.notices == [NO_EDITOR]


def ticks_of(tmp_path: Path) -> int:
    """How many times the app in the terminal has changed its screen, as it last wrote it."""
    try:
        return int((tmp_path / "ticks").read_text() or 0)
    except FileNotFoundError:
        return 0


TERMINAL_APP = """
import json, os, sys
from textual.app import App
from textual.widgets import Static
from fisk_ai.tui.external_editor import edit_prompt


class EditingApp(App[None]):
    BINDINGS = [("ctrl+g", "edit", "Edit")]
    ticks = 0

    def compose(self):
        yield Static("ready for ctrl-g", id="state")
        yield Static("", id="ticks")

    def on_mount(self) -> None:
        # The screen keeps changing while the editor has the terminal, as it does in a turn.
        self.set_interval(0.01, self.tick)

    def tick(self) -> None:
        self.ticks += 1
        self.query_one("#ticks", Static).update(f"tick {self.ticks}")
        with open(os.environ["TICKS_FILE"], "w") as ticks:
            ticks.write(str(self.ticks))

    async def action_edit(self) -> None:
        edited = await edit_prompt(self, "restart NATS")
        self.query_one("#state", Static).update(f"back with: {edited}")


EditingApp().run()
"""


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_ctrl_g_hands_the_real_terminal_to_the_editor_and_takes_it_back(
    tmp_path: Path, tmux_environment: dict[str, str]
) -> None:
    editor = write_editor(tmp_path / "bin")
    script = tmp_path / "editing_app.py"
    script.write_text(TERMINAL_APP)
    pane = Pane(
        f"fisk-editor-{uuid.uuid4().hex[:8]}",
        {
            **tmux_environment,
            "EDITOR": str(editor),
            "EDITOR_RECORD": str(tmp_path / "record.json"),
            "EDITOR_ASKS": "1",
            "TICKS_FILE": str(tmp_path / "ticks"),
            "PYTHONPATH": str(REPO_ROOT),
            "TEXTUAL_ANIMATIONS": "none",
        },
    )
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}; sleep 600"
    pane.tmux(
        "-f", "/dev/null", "new-session", "-d", "-s", "run", "-x", "80", "-y", "24",
        "-c", str(tmp_path), command,
    )  # fmt: skip
    try:
        pane.wait_until(lambda: "ready for ctrl-g" in pane.screen(), "the app's first frame")
        pane.tmux("send-keys", "-t", "run", "C-g")
        pane.wait_until(lambda: "the editor asks for a word" in pane.screen(), "the editor")
        # Many frames drawn while the editor has the terminal, more than Textual's writer can
        # queue once it is stopped, must neither reach the editor nor block the app.
        since = ticks_of(tmp_path)
        pane.wait_until(lambda: ticks_of(tmp_path) > since + 100, "the app drawing meanwhile")
        assert "tick" not in pane.screen()
        pane.tmux("send-keys", "-t", "run", "typed", "Enter")
        pane.wait_until(lambda: "back with: restart NATS typed" in pane.screen(), "the app back")
        assert record_of(tmp_path)["text"] == "restart NATS"
        assert not edited_file_left(tmp_path)
    finally:
        pane.tmux("kill-server")
