"""The run screen's side panel: the run's tools and counters, and its turns to jump to."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from fisk_ai.tui.setup import RunSetup
from fisk_ai.tui.status import Counters, budget_text
from fisk_ai.tui.transcript import PROMPT_PREFIX, Transcript
from fisk_ai.util.sanitize import single_line

TURN_LABEL_WIDTH = 36


def side_panel_text(
    setup: RunSetup, counters: Counters, standing_approvals: int = 0, width: int = 0
) -> str:
    """The tools and the counters; given the panel's ``width``, each tool stays on one row:
    its source is shortened first (ending in an ellipsis), then its name."""
    usage = counters.usage
    lines = ["Tools"]
    name_width = max((len(tool.name) for tool in setup.tools), default=0)
    if width:
        # A long name takes at most half the row, leaving the source a start.
        name_width = min(name_width, max(width // 2 - 4, 8))
    for tool in setup.tools:
        notes = ("  gated" if tool.gated else "") + ("  deferred" if tool.deferred else "")
        name = f"  {_cut(tool.name, name_width).ljust(name_width)}  "
        source = single_line(tool.source, 30)
        if width and len(name) + len(source) + len(notes) > width:
            room = width - len(name) - len(notes)
            source = _cut(source, room) if room > 1 else ""
        lines.append(f"{name}{source}{notes}".rstrip())
    if not setup.tools:
        lines.append("  (none)")
    counted = [
        ("tokens in", f"{usage.input_tokens:,}"),
        ("tokens out", f"{usage.output_tokens:,}"),
        ("cache read", f"{usage.cache_read_tokens:,}"),
        ("cache write", f"{usage.cache_create_tokens:,}"),
        ("thinking", f"{usage.thinking_tokens:,}"),
        ("model calls", f"{counters.model_calls:,}"),
        ("tool calls", f"{counters.tool_calls:,}"),
        ("standing approvals", str(standing_approvals)),
        ("budget used", budget_text(counters, setup.max_tokens)),
    ]
    lines += ["", "Counters"]
    for label, value in counted:
        row = f"  {label.ljust(19)}{value}"
        if width and len(row) > width:
            # Too long for the panel: the value goes under its label rather than wrapping.
            lines += [f"  {label}", f"    {value}"]
        else:
            lines.append(row)
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "\u2026"


def turn_label(number: int, prompt_line: str) -> str:
    """A turn in the side panel: its number and the start of its prompt."""
    return f"{number:>3}  {single_line(prompt_line.removeprefix(PROMPT_PREFIX), TURN_LABEL_WIDTH)}"


class SidePanel(VerticalScroll):
    """Hidden until F2. It draws only while shown, so a run that never opens it pays nothing
    for the counters moving on every model call. It scrolls within itself, so on a short
    terminal the counters and the turns below the tools can still be reached; the run screen
    narrows it on a narrow terminal."""

    DEFAULT_CSS = """
    SidePanel {
        display: none;
        width: 48;
        border-left: solid $primary;
        padding: 0 1;
        background: $surface;
        scrollbar-size-vertical: 1;
        &:focus { border-left: thick $accent; }
        & > #side-facts { height: auto; }
        & > #turns-title { margin-top: 1; }
        & > #turns {
            height: auto;
            border: none;
            border-left: blank;
            padding: 0;
            &:focus { border: none; border-left: thick $accent; background-tint: $accent 10%; }
        }
    }
    """

    setup: var[RunSetup] = var(RunSetup)
    """Bound to the run screen's setup: the tools change once the agent is hosted."""
    counters: var[Counters] = var(Counters)
    """Bound to the run screen's counters."""
    standing_approvals: var[frozenset[str]] = var(frozenset[str]())
    """Bound to the run screen's standing approvals."""

    class TurnChosen(Message):
        """Enter on a turn: ``block`` is its prompt's block in the transcript."""

        def __init__(self, block: int) -> None:
            super().__init__()
            self.block = block

    def __init__(self, setup: RunSetup, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(SidePanel.setup, setup)
        self._turn_blocks: list[int] = []

    def compose(self) -> ComposeResult:
        yield Static("", markup=False, id="side-facts")
        yield Static("Turns (Enter jumps)", markup=False, id="turns-title")
        yield OptionList(id="turns")

    def allow_focus(self) -> bool:
        # A Tab stop only while there is something to scroll to (a short terminal); otherwise
        # the turns list is the panel's one stop.
        return self.max_scroll_y > 0

    def watch_setup(self) -> None:
        self._show_facts()

    def watch_counters(self) -> None:
        self._show_facts()

    def watch_standing_approvals(self) -> None:
        self._show_facts()

    def on_resize(self) -> None:
        # The tool rows are cut to the panel's width, which the run screen narrows.
        self._show_facts()

    def toggle(self, transcript: Transcript) -> None:
        """Show or hide the panel; shown, it catches up with the run."""
        self.display = not self.display
        self._show_facts()
        self.show_turns(transcript)

    def _show_facts(self) -> None:
        if not self.display:
            return
        facts = side_panel_text(
            self.setup,
            self.counters,
            len(self.standing_approvals),
            width=self.scrollable_content_region.width,
        )
        self.query_one("#side-facts", Static).update(facts)

    def show_turns(self, transcript: Transcript) -> None:
        """List the prompts of ``transcript``, keeping the highlight where it was."""
        if not self.display:
            return
        blocks = transcript.prompt_blocks()
        if blocks == self._turn_blocks:
            return
        self._turn_blocks = blocks
        turns = self.query_one("#turns", OptionList)
        highlighted = turns.highlighted
        turns.clear_options()
        turns.add_options(
            Option(
                Content(turn_label(number, transcript.lines[transcript.blocks[block].start])),
                id=str(block),
            )
            for number, block in enumerate(blocks, start=1)
        )
        if highlighted is not None and blocks:
            turns.highlighted = min(highlighted, len(blocks) - 1)

    @on(OptionList.OptionSelected, "#turns")
    def _turn_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(self.TurnChosen(int(event.option.id)))
