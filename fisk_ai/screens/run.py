"""The run screen: header, transcript, side panel, chat bar and status bar around one
conversation. Every full-screen run is a chat: the bar opens whenever a turn ends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from fisk_ai.agent.events import Event, PromptEvent, StatusEvent, ToolCallEvent
from fisk_ai.agent.outcome import Completed, RunResult, resumable
from fisk_ai.agent.replay import conversation_events
from fisk_ai.errors import FiskError
from fisk_ai.lineui.lines import resume_hint
from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.screens.help import HelpScreen
from fisk_ai.screens.question import ConfirmScreen, InputScreen, SelectScreen
from fisk_ai.screens.transcript import SearchInput
from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    Question,
    SelectQuestion,
)
from fisk_ai.tui.bridge import EventArrived, QuestionAsked, RunBridge
from fisk_ai.tui.status import Counters, RunState, StatusLine, budget_text, state_after_turn
from fisk_ai.tui.transcript import PROMPT_PREFIX, Transcript, plural
from fisk_ai.tui.widgets.transcript_view import TranscriptView
from fisk_ai.util.sanitize import single_line

# tmux and most terminals send Alt-Enter as a plain Enter; Ctrl-J reaches the app everywhere.
CHAT_PLACEHOLDER = "Ready for a follow-up. Enter sends, Ctrl-J a newline, /help for commands"
CONTEXT_CLEARED = "--- context cleared ---"
IN_RUN_RESUME = (
    "this run keeps its conversation; leave it and resume another with fisk run --resume ID"
)


@dataclass(frozen=True)
class ToolRow:
    name: str
    source: str
    gated: bool
    deferred: bool = False
    """Sent behind tool search: the model finds it by searching rather than seeing it."""


@dataclass(frozen=True)
class RunSetup:
    """What the screen shows about the run before any event arrives. ``prompt`` starts a new
    conversation; ``resume`` continues a stored one instead."""

    identity: str = ""
    model: str = ""
    prompt: str = ""
    resume: str = ""
    force: bool = False
    tools: tuple[ToolRow, ...] = ()
    max_tokens: int = 0
    bell: bool = True
    version: str = ""
    warnings: tuple[str, ...] = ()
    tool_output: bool = False
    """--tool-output: command output starts expanded rather than folded."""
    resume_flags: str = ""
    """The flags that reach a remote agent again, for the resume hint."""


# Keys that put a line break in the chat bar. A terminal without the kitty keyboard protocol
# sends Alt-Enter as a plain Enter, so Ctrl-J is there as well.
NEWLINE_KEYS = frozenset({"alt+enter", "ctrl+j"})


class ChatInput(TextArea):
    """The chat bar: Enter sends, Alt-Enter (or Ctrl-J) starts a new line, and Up on the first
    line or Down on the last recall this conversation's earlier prompts."""

    class Submitted(Message):
        """Enter in the chat bar; ``value`` is the whole text, line breaks included."""

        def __init__(self, chat: ChatInput, value: str) -> None:
            super().__init__()
            self.chat = chat
            self.value = value

        @property
        def control(self) -> ChatInput:
            return self.chat

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id, placeholder=CHAT_PLACEHOLDER, soft_wrap=True, highlight_cursor_line=False
        )
        self.sent: list[str] = []
        self._recall_index = 0

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0:
            self.action_recall(-1)
        else:
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == self.document.line_count - 1:
            self.action_recall(1)
        else:
            super().action_cursor_down(select)

    def remember(self, text: str) -> None:
        self.sent.append(text)
        self._recall_index = len(self.sent)

    def forget(self) -> None:
        self.sent.clear()
        self._recall_index = 0

    def action_recall(self, step: int) -> None:
        if not self.sent:
            return
        self._recall_index = max(0, min(len(self.sent), self._recall_index + step))
        in_range = self._recall_index < len(self.sent)
        self.value = self.sent[self._recall_index] if in_range else ""


STARTUP_WIDTH = 36
"""The width of the startup card's values, in characters."""
STARTUP_WARNINGS_SHOWN = 3
STARTUP_WAITING = "starting: waiting for first response"


def startup_text(setup: RunSetup, directory: str | None = None) -> str:
    """The card shown until the first response: who is starting, on what, with which tools,
    and what went wrong on the way. It holds no clock or spinner, so it draws the same every
    time."""
    home = str(Path.home())
    if directory is None:
        directory = str(Path.cwd())
        if directory.startswith(home):
            directory = "~" + directory[len(home) :]
    gated = sum(1 for tool in setup.tools if tool.gated)
    tools = plural(len(setup.tools), "tool") + (f", {gated} gated" if gated else "")
    rows = [
        f"version  {single_line(setup.version, STARTUP_WIDTH) or '-'}",
        f"agent    {single_line(setup.identity, STARTUP_WIDTH) or '-'}",
        f"model    {single_line(setup.model, STARTUP_WIDTH) or '-'}",
        f"tools    {tools}",
        f"dir      {_left_elided(directory, STARTUP_WIDTH)}",
    ]
    if setup.warnings:
        rows += ["", plural(len(setup.warnings), "warning")]
        rows += [
            f"  {single_line(warning, STARTUP_WIDTH + 5)}"
            for warning in setup.warnings[:STARTUP_WARNINGS_SHOWN]
        ]
        hidden = len(setup.warnings) - STARTUP_WARNINGS_SHOWN
        if hidden > 0:
            rows.append(f"  and {hidden} more in the transcript")
    rows += ["", STARTUP_WAITING]
    return "\n".join(rows)


def _left_elided(text: str, limit: int) -> str:
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]


def side_panel_text(setup: RunSetup, counters: Counters, standing_approvals: int = 0) -> str:
    usage = counters.usage
    lines = ["Tools"]
    width = max((len(tool.name) for tool in setup.tools), default=0)
    for tool in setup.tools:
        notes = ("  gated" if tool.gated else "") + ("  deferred" if tool.deferred else "")
        lines.append(f"  {tool.name.ljust(width)}  {single_line(tool.source, 30)}{notes}")
    if not setup.tools:
        lines.append("  (none)")
    counted = [
        ("tokens in", str(usage.input_tokens)),
        ("tokens out", str(usage.output_tokens)),
        ("cache read", str(usage.cache_read_tokens)),
        ("cache write", str(usage.cache_create_tokens)),
        ("thinking", str(usage.thinking_tokens)),
        ("model calls", str(counters.model_calls)),
        ("tool calls", str(counters.tool_calls)),
        ("standing approvals", str(standing_approvals)),
        ("budget used", budget_text(counters, setup.max_tokens)),
    ]
    lines += ["", "Counters", *(f"  {label.ljust(19)}{value}" for label, value in counted)]
    return "\n".join(lines)


TURN_LABEL_WIDTH = 36


def turn_label(number: int, prompt_line: str) -> str:
    """A turn in the side panel: its number and the start of its prompt."""
    return f"{number:>3}  {single_line(prompt_line.removeprefix(PROMPT_PREFIX), TURN_LABEL_WIDTH)}"


def header_text(setup: RunSetup, session: str) -> str:
    parts = [f"fisk-ai {setup.version}".rstrip()]
    if setup.identity:
        parts.append(f"agent={single_line(setup.identity, 60)}")
    if setup.model:
        parts.append(f"model={single_line(setup.model, 40)}")
    if session:
        parts.append(f"session={session}")
    return "  ".join(parts)


class RunScreen(Screen[None]):
    CSS_PATH = "run.tcss"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "toggle_panel", "Side panel"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("f3", "sessions", "Sessions"),
    ]

    def __init__(self, bridge: RunBridge, setup: RunSetup) -> None:
        super().__init__()
        self.bridge = bridge
        self.setup = setup
        self.status = StatusLine(model=setup.model)
        self.counters = Counters()
        self.turn_running = False
        self.stop_requested = False
        self.last_result: RunResult | None = None
        self.last_answer = ""
        self.error = ""
        self.abandoned: list[str] = []
        """Conversations /clear walked away from, to be named again on exit."""
        self._question_screen: ModalScreen[object] | None = None
        self.standing_approvals: set[str] = set()
        """The commands the operator answered Always for, in this conversation."""
        self._turn_blocks: list[int] = []

    def compose(self) -> ComposeResult:
        yield Static(header_text(self.setup, ""), markup=False, id="header")
        with Horizontal(id="body"):
            yield TranscriptView(
                Transcript(output_folded=not self.setup.tool_output), id="transcript"
            )
            with Vertical(id="side-panel"):
                yield Static("", markup=False, id="side-facts")
                yield Static("Turns (Enter jumps)", markup=False, id="turns-title")
                yield OptionList(id="turns")
        yield SearchInput(placeholder="search (Enter finds, Esc cancels)", id="search")
        card = Static(startup_text(self.setup), markup=False, id="startup")
        card.border_title = "fisk-ai"
        yield card
        yield ChatInput(id="chat")
        yield Static(self.status.text(), markup=False, id="status")

    @property
    def view(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    @property
    def chat(self) -> ChatInput:
        return self.query_one(ChatInput)

    def on_mount(self) -> None:
        self.bridge.attach(self.post_message)
        self.chat.display = False
        self.query_one("#search").display = False
        self.query_one("#side-panel").display = False
        self._refresh_panels()
        setup = self.setup
        for warning in setup.warnings:
            self.view.add_meta(warning)
        if setup.resume:
            self.query_one("#startup").display = False
            self._begin(lambda: self._read_back_and_resume(setup.resume, force=setup.force))
        else:
            self.view.append([PromptEvent(setup.prompt)])
            self.chat.remember(setup.prompt)
            self._begin(lambda: self.bridge.start(setup.prompt))

    async def _read_back_and_resume(self, session_id: str, *, force: bool) -> RunResult:
        """Show the stored conversation as it was left, then continue it."""
        try:
            conversation = await self.bridge.conversation(session_id)
        except FiskError as error:
            self.view.add_meta(f"cannot read back session {session_id}: {single_line(str(error))}")
            conversation = None
        events: list[Event] = []
        if conversation is not None:
            self.standing_approvals = set(conversation.standing_grants)
            events = conversation_events(conversation, self.bridge.tools)
        elif self.bridge.store is None:
            try:
                events = await self.bridge.replay(session_id)
            except FiskError as error:
                self.view.add_meta(f"cannot read back {session_id}: {single_line(str(error))}")
        self.view.append(events)
        for event in events:
            if isinstance(event, PromptEvent):
                self.chat.remember(event.text)
        self.view.add_meta(f'--- resuming "{session_id}" ---')
        return await self.bridge.resume(session_id, force=force)

    def move_to(self, state: RunState) -> None:
        self.status = self.status.moved(state)
        self._show_status()

    def _show_status(self) -> None:
        bar = self.query_one("#status", Static)
        bar.update(self.status.text())
        for known in RunState:
            bar.set_class(known is self.status.state, known.css_class)

    def _refresh_panels(self) -> None:
        session = self.bridge.session_id
        self.status = StatusLine(
            state=self.status.state,
            counters=self.counters,
            model=self.setup.model,
            session=session,
        )
        self._show_status()
        self.query_one("#header", Static).update(header_text(self.setup, session))
        self._refresh_side_panel()

    def _refresh_side_panel(self) -> None:
        if not self.query_one("#side-panel").display:
            return
        facts = side_panel_text(self.setup, self.counters, len(self.standing_approvals))
        self.query_one("#side-facts", Static).update(facts)
        transcript = self.view.transcript
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
    def jump_to_turn(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is None:
            return
        block = int(event.option.id)
        if block < len(self.view.transcript):
            self.view.show_block(block)
            self.view.focus()

    def _begin(self, turn: Callable[[], Awaitable[RunResult]]) -> None:
        self.turn_running = True
        self.stop_requested = False
        self.chat.display = False
        self.view.focus()
        self.move_to(RunState.RUNNING)
        self.run_worker(self._run_turn(turn), group="turn", exit_on_error=False)

    async def _run_turn(self, turn: Callable[[], Awaitable[RunResult]]) -> None:
        try:
            result = await turn()
        except FiskError as error:
            self.error = single_line(str(error), 2000)
            self.view.add_meta(f"run ended: {self.error}")
            self.move_to(RunState.ERROR)
        except Exception as error:  # The screen must survive whatever the run raises.
            self.error = single_line(f"{type(error).__name__}: {error}", 2000)
            self.view.add_meta(f"run ended: {self.error}")
            self.move_to(RunState.ERROR)
        else:
            self._finished(result)
        # Not in a finally: a turn cancelled because the app is closing was left mid-turn, and
        # the outcome must say so.
        self.turn_running = False
        self._hide_startup()
        self._refresh_panels()
        self._open_chat()

    def _finished(self, result: RunResult) -> None:
        self.last_result = result
        self.error = ""
        self.counters = Counters(
            usage=result.usage, model_calls=result.llm_calls, tool_calls=result.tool_calls
        )
        state = state_after_turn(result.outcome)
        if isinstance(result.outcome, Completed):
            self.last_answer = result.answer
        else:
            self.view.add_meta(f"--- run {state.word} ---")
            if result.message:
                self.view.add_meta(f"run ended: {single_line(result.message, 2000)}")
            if resumable(result.outcome):
                self.view.add_meta(resume_hint(result.session_id, self.setup.resume_flags))
        self.move_to(state)

    def _open_chat(self) -> None:
        if self.status.state is RunState.COMPLETE:
            self.move_to(RunState.AWAITING_INPUT)
        chat = self.chat
        chat.display = True
        chat.value = ""
        chat.focus()

    def _hide_startup(self) -> None:
        self.query_one("#startup").display = False

    def on_key(self) -> None:
        self._hide_startup()

    def on_event_arrived(self, message: EventArrived) -> None:
        event = message.event
        if not isinstance(event, PromptEvent):
            self._hide_startup()
        if isinstance(event, StatusEvent) and event.usage is not None:
            self.counters = self.counters.after_model_call(event.usage)
            self._refresh_panels()
        elif isinstance(event, ToolCallEvent):
            self.counters = self.counters.after_tool_call()
            self._refresh_panels()
        self.view.append([event])

    def on_question_asked(self, message: QuestionAsked) -> None:
        answer = message.answer
        if answer.done():
            return
        self._hide_startup()
        self.move_to(RunState.BLOCKED)
        if self.setup.bell:
            self.app.bell()
        modal = _modal_for(message.question)

        def answered(value: object) -> None:
            self._question_screen = None
            question = message.question
            if value is ApprovalChoice.ALWAYS and isinstance(question, ApprovalQuestion):
                self.standing_approvals.add(question.tool_name)
                self._refresh_side_panel()
            if not answer.done():
                answer.set_result(_as_answer(value))
            if self.turn_running:
                self.move_to(RunState.RUNNING)

        def given_up(_: object) -> None:
            # The question was interrupted rather than answered: take its modal down.
            if self._question_screen is modal and modal.is_current:
                self._question_screen = None
                modal.dismiss(None)

        self._question_screen = modal
        answer.add_done_callback(given_up)
        self.app.push_screen(modal, answered)

    def request_stop(self) -> None:
        """The first Ctrl-C: the turn stops at its next safe point; a question on screen is given
        up, which is not an answer."""
        self.stop_requested = True
        self.move_to(RunState.SUSPENDING)
        self.notify("stop requested: finishing the current step; press ^C again to leave")
        self.bridge.request_stop()

    def clear_screen(self) -> None:
        self.view.clear()
        self._refresh_side_panel()
        self.notify("screen cleared; the conversation is kept", timeout=2)

    def on_transcript_view_search_requested(self) -> None:
        field = self.query_one("#search", SearchInput)
        field.display = True
        field.focus()

    @on(Input.Submitted, "#search")
    def searched(self, event: Input.Submitted) -> None:
        event.stop()
        field = self.query_one("#search", SearchInput)
        count = self.view.search(event.value)
        field.value = ""
        field.display = False
        self.view.focus()
        found = f"{count} matching lines ({self.view.match_label})" if count else "no match"
        self.notify(found, timeout=2, markup=False)

    @on(ChatInput.Submitted)
    async def submitted(self, event: ChatInput.Submitted) -> None:
        event.stop()
        text = event.value
        if not text.strip() or self.turn_running:
            return
        self.chat.value = ""
        if text.startswith("//"):
            self._send(text[1:])
            return
        if text.startswith("/"):
            await self._command(text)
            return
        self._send(text)

    async def _command(self, text: str) -> None:
        name, _, rest = text.partition(" ")
        if name == "/help":
            self.action_help()
        elif name == "/exit":
            self.app.exit()
        elif name == "/clear":
            await self._clear_conversation()
            if rest.strip():
                self._send(rest.strip())
        else:
            self.notify(
                f"unknown command {single_line(name, 40)}; /help lists the commands",
                severity="warning",
                markup=False,
            )

    async def _clear_conversation(self) -> None:
        session = self.bridge.session_id
        await self.bridge.clear()
        if session:
            self.abandoned.append(session)
        self.last_result = None
        self.last_answer = ""
        self.counters = Counters()
        self.standing_approvals = set()
        self.chat.forget()
        self.view.add_meta(CONTEXT_CLEARED)
        self.notify("context cleared", timeout=2)
        self._refresh_panels()

    def _send(self, prompt: str) -> None:
        self.chat.remember(prompt)
        self.view.append([PromptEvent(prompt)])
        self._refresh_side_panel()
        if self.bridge.session_id:
            self._begin(lambda: self.bridge.follow_up(prompt))
        else:
            self._begin(lambda: self.bridge.start(prompt))

    def action_toggle_panel(self) -> None:
        panel = self.query_one("#side-panel")
        panel.display = not panel.display
        self._refresh_side_panel()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_sessions(self) -> None:
        store = self.bridge.store
        if store is None:
            self.notify("no session store is known to this run", severity="warning")
            return
        from fisk_ai.screens.sessions import SessionBrowser

        self.app.push_screen(SessionBrowser(store, closes_app=False, resume_refused=IN_RUN_RESUME))


def _modal_for(question: Question) -> ModalScreen[object]:
    modal: ModalScreen[object]
    if isinstance(question, ApprovalQuestion):
        modal = ApprovalScreen(question)  # type: ignore[assignment]
    elif isinstance(question, ConfirmQuestion):
        modal = ConfirmScreen(question)  # type: ignore[assignment]
    elif isinstance(question, SelectQuestion):
        modal = SelectScreen(question)  # type: ignore[assignment]
    else:
        modal = InputScreen(question)  # type: ignore[assignment]
    return modal


def _as_answer(value: object) -> Answer:
    if value is None or isinstance(value, ApprovalChoice | bool | int | str):
        return value
    return None
