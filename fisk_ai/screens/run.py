"""The run screen: header, transcript, side panel, chat bar and status bar around one
conversation. Every full-screen run is a chat: the bar opens whenever a turn ends."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import ClassVar, assert_never

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static

from fisk_ai.agent.events import (
    Event,
    PromptEvent,
    StatusEvent,
    StatusPhase,
    TextDeltaEvent,
    TextEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
    WarningKind,
)
from fisk_ai.agent.outcome import Completed, NotRun, Refusal, RunResult, resumable
from fisk_ai.errors import FiskError
from fisk_ai.llm.types import Usage
from fisk_ai.presentation import stored_ending_lines, turn_end_lines
from fisk_ai.screens.approval import ApprovalScreen
from fisk_ai.screens.help import HelpScreen
from fisk_ai.screens.question import (
    AnswerT,
    ConfirmScreen,
    InputScreen,
    QuestionModal,
    QuestionT,
    SelectScreen,
)
from fisk_ai.tools.questions import (
    Answer,
    ApprovalChoice,
    ApprovalQuestion,
    ConfirmQuestion,
    DeclineWithReason,
    InputQuestion,
    SelectQuestion,
)
from fisk_ai.tui.bridge import DeltaArrived, EventArrived, QuestionAsked, RunBridge
from fisk_ai.tui.chat_commands import ESCAPED_SLASH, ChatCommand
from fisk_ai.tui.prompt_history import PromptHistory
from fisk_ai.tui.setup import RunSetup
from fisk_ai.tui.status import (
    Counters,
    RetryWait,
    RunState,
    can_move,
    state_after_turn,
)
from fisk_ai.tui.transcript import Transcript, plural
from fisk_ai.tui.widgets.chat_input import ChatInput
from fisk_ai.tui.widgets.queued_prompts import QueuedPrompts
from fisk_ai.tui.widgets.run_header import RunHeader
from fisk_ai.tui.widgets.search_input import SearchInput
from fisk_ai.tui.widgets.side_panel import SidePanel
from fisk_ai.tui.widgets.startup_card import SPINNER_SECONDS, StartupCard
from fisk_ai.tui.widgets.status_bar import StatusBar
from fisk_ai.tui.widgets.transcript_view import TranscriptView
from fisk_ai.util.sanitize import single_line

CONTEXT_CLEARED = "--- context cleared ---"
NEW_OUTPUT_BELOW = "v new output below: Ctrl-End follows"
MODEL_WAIT = "waiting for the model"
MODEL_WRITING = "the model is writing"
MODEL_THINKING = "the model is thinking"
STREAM_STOPPED = "(stopped while it was being written: this text is not kept in the conversation)"
STOPPING = "stopping"
STOP_NOTICE = "stopping the turn; Ctrl-C again leaves"
STANDING_APPROVAL_RAN = "ran under your standing approval (Always)"
CONTINUE_HERE = "a follow-up continues this conversation; leaving prints how to resume it"
NARROW_BELOW = 100
ONCE_PER_CONVERSATION = frozenset({WarningKind.TOOLS_SENT_DIRECTLY})
"""Warnings about the run's setup rather than the turn: shown on the first turn only."""
IN_RUN_RESUME = (
    "this run keeps its conversation; leave it and resume another with fisk run --resume ID"
)


@dataclass(frozen=True)
class RunningCall:
    """A tool call the screen has seen start and not yet end."""

    name: str
    display: str
    started: int
    """The screen's tick it started running at: its call, or the answer to its approval."""


def approval_answer_text(
    question: ApprovalQuestion, answer: object, *, given_up: bool = False
) -> str:
    """How an approval was answered, as the transcript keeps it."""
    command = single_line(question.display, 200)
    match answer:
        case ApprovalChoice.ONCE:
            return f"approved once: {command}"
        case ApprovalChoice.ALWAYS:
            return f"approved always (this conversation): {command}"
        case DeclineWithReason():
            return f'declined (told the agent: "{single_line(answer.sentence, 200)}"): {command}'
        case _ if given_up:
            return f"approval given up (Ctrl-C): {command}"
        case _:
            return f"declined: {command}"


class RunScreen(Screen[None]):
    """One conversation. Turns run in a worker that only awaits them and posts how they ended;
    the handlers here own the screen's state, kept in reactives that the header, the status bar,
    the startup card and the side panel are bound to and draw themselves from."""

    CSS_PATH = "run.tcss"
    AUTO_FOCUS = "#chat"
    # Textual declares this without ClassVar, so it is overridden as it is declared.
    HORIZONTAL_BREAKPOINTS: list[tuple[int, str]] | None = [  # noqa: RUF012
        (0, "-narrow"),
        (NARROW_BELOW, "-wide"),
    ]
    """Below ``NARROW_BELOW`` columns the side panel is a narrow strip (see run.tcss)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "stop_turn", "Stop the turn", show=False),
        Binding("ctrl+o", "toggle_last_output", "Expand the last result"),
        Binding("f2", "toggle_panel", "Side panel"),
        Binding("question_mark,f1", "help", "Help"),
        Binding("f3", "sessions", "Sessions"),
        Binding("f4", "knowledge", "Knowledge"),
    ]

    setup: var[RunSetup] = var(RunSetup, init=False)
    """What the run is: the tools and warnings arrive once the agent is hosted."""
    run_state: var[RunState] = var(RunState.RUNNING, init=False)
    """Where the run stands, as the status bar says it; ``validate_run_state`` is the state
    machine that decides which moves are allowed."""
    counters: var[Counters] = var(Counters, init=False)
    """What the conversation has used so far."""
    session_id: var[str] = var("", init=False)
    """The conversation's session, once the agent has taken its first prompt."""
    turn_running: var[bool] = var(False, init=False)
    """Whether a turn is in flight: Enter then queues rather than sends."""
    standing_approvals: var[frozenset[str]] = var(frozenset[str](), init=False)
    """The commands the operator answered Always for, in this conversation."""
    activity: var[str] = var("", init=False)
    """What the turn is doing now, for the status bar: a tool, the model, a stop."""
    activity_seconds: var[int] = var(0, init=False)
    """How long ``activity`` has run, in the screen's one-second ticks."""
    retry_wait: var[RetryWait | None] = var(None, init=False)
    """The model call waits to be retried (429, 529); counted down in the status bar."""
    help_key: var[str] = var("?", init=False)
    """The key that opens help where the focus is: F1 where ``?`` would be typed."""
    spinner_frame: var[int | None] = var(None, init=False)
    """The startup card's spinner while the agent is being hosted; None draws none."""
    leave_armed: var[bool] = var(False, init=False)
    """Ctrl-C was pressed on an empty bar with no turn running: the next one leaves."""

    class TurnEnded(Message, bubble=False):
        """The turn returned; ``result`` says how it ended."""

        def __init__(self, result: RunResult) -> None:
            super().__init__()
            self.result = result

    class TurnFailed(Message, bubble=False):
        """The turn raised; ``error`` is the sentence to show for it."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    class ConversationReadBack(Message, bubble=False):
        """A stored conversation as it was left, read before it resumes; ``problems`` say why
        any of it could not be read."""

        def __init__(
            self,
            session_id: str,
            events: list[Event],
            problems: list[str],
            standing_grants: frozenset[str],
            counters: Counters | None = None,
            ending: tuple[str, ...] = (),
        ) -> None:
            super().__init__()
            self.session_id = session_id
            self.events = events
            self.problems = problems
            self.standing_grants = standing_grants
            self.counters = counters
            self.ending = ending
            """How the stored conversation's last turn ended, as transcript lines."""

    def __init__(self, bridge: RunBridge, setup: RunSetup) -> None:
        super().__init__()
        self.bridge = bridge
        self.set_reactive(RunScreen.setup, setup)
        self.stop_requested = False
        self.last_result: RunResult | None = None
        self.last_answer = ""
        self.error = ""
        self.abandoned: list[str] = []
        """Conversations /clear walked away from, to be named again on exit."""
        self._worked_seconds = 0.0
        self._turn_started: float | None = None
        # How the read-back said the stored conversation's last turn ended.
        self._ending_read_back: tuple[str, ...] = ()
        self.warned: set[str] = set()
        """The once-per-conversation warnings already shown in this conversation."""
        self.ticks = 0
        """The screen's one-second ticks so far: what tool calls are timed with."""
        self.running_calls: dict[str, RunningCall] = {}
        """The tool calls between their call and their result, by call id, oldest first."""
        self.history = PromptHistory()
        """The prompts sent from every workstation, for Ctrl-R."""
        self.history_failed = False
        """Whether keeping a prompt in the history failed once already: said once, not per
        prompt."""
        self.spinner_timer: Timer | None = None
        """Turns the startup card's spinner while the agent is being hosted and until the card
        goes; None for a run that started hosted, whose card draws the same every time."""

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header").data_bind(RunScreen.setup, session=RunScreen.session_id)
        with Horizontal(id="body"):
            yield TranscriptView(
                Transcript(
                    output_folded=not self.setup.tool_output,
                    thinking_folded=not self.setup.thinking,
                ),
                id="transcript",
            )
            yield SidePanel(self.setup, id="side-panel").data_bind(
                RunScreen.setup, RunScreen.counters, RunScreen.standing_approvals
            )
        yield Static(NEW_OUTPUT_BELOW, markup=False, id="below")
        yield SearchInput(id="search")
        card = StartupCard(id="startup").data_bind(RunScreen.setup, spinner=RunScreen.spinner_frame)
        card.border_title = "fisk-ai"
        yield card
        yield QueuedPrompts(id="queued")
        yield ChatInput(id="chat")
        yield StatusBar(id="status").data_bind(
            RunScreen.setup,
            RunScreen.run_state,
            RunScreen.counters,
            RunScreen.activity,
            RunScreen.activity_seconds,
            RunScreen.retry_wait,
            RunScreen.help_key,
            session=RunScreen.session_id,
        )

    @property
    def view(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    @property
    def chat(self) -> ChatInput:
        return self.query_one(ChatInput)

    @property
    def side_panel(self) -> SidePanel:
        return self.query_one(SidePanel)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def startup_card(self) -> StartupCard:
        return self.query_one(StartupCard)

    @property
    def search_field(self) -> SearchInput:
        return self.query_one(SearchInput)

    @property
    def new_output_below(self) -> Static:
        return self.query_one("#below", Static)

    def on_mount(self) -> None:
        self.bridge.attach(self.post_message)
        self.new_output_below.display = False
        self.query_one(QueuedPrompts).display = False
        self.watch(self.view, "unseen", self._show_unseen, init=False)
        # Moves the activity's seconds; a snapshot test pauses it.
        self.ticker = self.set_interval(1, self._tick)
        self.search_field.display = False
        if self.setup.phase:
            self._show_startup_phase()
        else:
            self._start_run()

    @property
    def starting(self) -> bool:
        """Whether the agent is still being hosted: the first turn waits for ``hosted``."""
        return bool(self.setup.phase)

    def startup_phase(self, phase: str) -> None:
        """What startup is doing now, for the card and the status bar."""
        self.setup = replace(self.setup, phase=phase)
        self._show_startup_phase()

    def hosted(self, setup: RunSetup) -> None:
        """The agent is up: show what it is and start the first turn. What was typed meanwhile
        stays in the chat bar, and what Enter queued is sent when that turn ends."""
        self.setup = replace(setup, phase="")
        self._start_run()

    def _show_startup_phase(self) -> None:
        # The chat bar takes type-ahead as during a turn: Enter queues it for the first turn.
        self.turn_running = True
        self.activity_seconds = 0
        self.activity = self.setup.phase
        if self.spinner_timer is None:
            self.spinner_frame = 0
            self.spinner_timer = self.set_interval(SPINNER_SECONDS, self._spin)

    def _spin(self) -> None:
        if not self.startup_card.display:
            if self.spinner_timer is not None:
                self.spinner_timer.stop()
            return
        self.spinner_frame = (self.spinner_frame or 0) + 1

    def _start_run(self) -> None:
        setup = self.setup
        for warning in setup.warnings:
            self.view.add_meta(warning)
        if setup.resume:
            self._hide_startup()
            self._begin(lambda: self._read_back_and_resume(setup.resume, force=setup.force))
        else:
            self.view.append([PromptEvent(setup.prompt)])
            self.chat.remember(setup.prompt)
            self._keep_in_history(setup.prompt)
            self._begin(lambda: self.bridge.start(setup.prompt))

    def on_unmount(self) -> None:
        self.bridge.release()

    def validate_run_state(self, target: RunState) -> RunState:
        """A move the state machine does not allow keeps the current state: a question that
        arrives after a stop request does not make the run look as if it were going on."""
        return target if can_move(self.run_state, target) else self.run_state

    def _show_unseen(self, unseen: bool) -> None:
        self.new_output_below.display = unseen

    def _tick(self) -> None:
        """Once a second: the running tool's elapsed time moves."""
        self.ticks += 1
        if self.activity:
            self.activity_seconds += 1
        if self.retry_wait is not None:
            self.retry_wait = self.retry_wait.ticked()

    def watch_focused(self) -> None:
        # The help hint names a key that works where the focus is.
        self.help_key = "F1" if isinstance(self.focused, ChatInput | SearchInput) else "?"

    def watch_turn_running(self, running: bool) -> None:
        """The chat bar stays open and focused through a turn, so what the operator types
        while the agent works lands there. When a turn ends, the next queued prompt goes; a
        stopped turn sends none of them and puts them back in the bar."""
        chat = self.chat
        chat.running = running
        if not self.view.has_focus and not self.side_panel.has_focus_within:
            chat.focus()
        if running:
            return
        if self.stop_requested:
            chat.take_all_back()
        else:
            self.call_later(self._send_next)

    def on_chat_input_queue_changed(self, message: ChatInput.QueueChanged) -> None:
        self.query_one(QueuedPrompts).prompts = message.queued

    def on_side_panel_turn_chosen(self, message: SidePanel.TurnChosen) -> None:
        if message.block < len(self.view.transcript):
            self.view.show_block(message.block)
            self.view.focus()

    def _begin(self, turn: Callable[[], Awaitable[RunResult]]) -> None:
        self.stop_requested = False
        self.error = ""
        self.run_state = RunState.RUNNING
        self.turn_running = True
        self._turn_started = time.monotonic()
        self._wait_for_model()
        self._run_turn(turn)

    @property
    def working_seconds(self) -> float:
        """How long turns have run, the one in flight included: the summary's latency, which
        leaves out the time the chat bar waited for the operator."""
        running = 0.0 if self._turn_started is None else time.monotonic() - self._turn_started
        return self._worked_seconds + running

    def _wait_for_model(self) -> None:
        """Between tools the turn is waiting for the model; the status bar says so and counts."""
        self.activity_seconds = 0
        self.activity = MODEL_WAIT

    @work(group="turn", exit_on_error=False)
    async def _run_turn(self, turn: Callable[[], Awaitable[RunResult]]) -> None:
        """Await the turn and post how it went; the handlers do the rest. A turn cancelled
        because the app is closing posts nothing, so the screen still has a turn running and
        the outcome counts it as left mid-turn."""
        try:
            result = await turn()
        except FiskError as error:
            self.post_message(self.TurnFailed(single_line(str(error), 2000)))
        except Exception as error:  # The screen must survive whatever the run raises.
            error_sentence = single_line(f"{type(error).__name__}: {error}", 2000)
            self.post_message(self.TurnFailed(error_sentence))
        else:
            self.post_message(self.TurnEnded(result))

    async def _read_back_and_resume(self, session_id: str, *, force: bool) -> RunResult:
        """Post the stored conversation as it was left, for the screen to show, then continue
        it."""
        self.post_message(await self._read_back(session_id))
        # Imported here, as the read-back's: the first frame does without the a2a client.
        from fisk_ai.a2a.conversation import TurnFailed

        try:
            return await self.bridge.resume(session_id, force=force)
        except TurnFailed as failed:
            refused = failed.outcome
            if not (
                self.bridge.store is None
                and isinstance(refused, NotRun)
                and refused.refusal is Refusal.NOT_STARTED
            ):
                raise
        # An agent `fisk serve` hosts takes no resume of a conversation whose last turn is over:
        # reading it back is all it accepts until the next prompt, which the chat bar now sends
        # as this conversation's.
        return RunResult(Completed(""), session_id)

    async def _read_back(self, session_id: str) -> RunScreen.ConversationReadBack:
        problems: list[str] = []
        try:
            conversation = await self.bridge.conversation(session_id)
        except FiskError as error:
            problems.append(f"cannot read back session {session_id}: {single_line(str(error))}")
            conversation = None
        events: list[Event] = []
        grants = frozenset[str]()
        counters = None
        ending: tuple[str, ...] = ()
        if conversation is not None:
            # Imported here: it brings in the session stores, which the first frame can do
            # without.
            from fisk_ai.agent.replay import conversation_events

            grants = conversation.standing_grants
            events = conversation_events(conversation, self.bridge.tools)
            ending = tuple(stored_ending_lines(conversation))
            # The bars count the whole conversation from the first frame of a resume.
            counters = Counters(
                usage=conversation.usage,
                model_calls=conversation.llm_calls,
                tool_calls=conversation.tool_calls,
            )
        elif self.bridge.store is None:
            try:
                events = await self.bridge.replay(session_id)
            except FiskError as error:
                problems.append(f"cannot read back {session_id}: {single_line(str(error))}")
        return self.ConversationReadBack(session_id, events, problems, grants, counters, ending)

    def on_run_screen_conversation_read_back(self, message: RunScreen.ConversationReadBack) -> None:
        for problem in message.problems:
            self.view.add_meta(problem)
        self.standing_approvals = message.standing_grants
        if message.counters is not None:
            self.counters = message.counters
        self.view.append(message.events)
        for line in message.ending:
            self.view.add_meta(line)
        self._ending_read_back = message.ending
        for event in message.events:
            if isinstance(event, PromptEvent):
                self.chat.remember(event.text)
        self.view.add_meta(f'--- resuming "{message.session_id}" ---')
        self.side_panel.show_turns(self.view.transcript)

    def on_run_screen_turn_failed(self, message: RunScreen.TurnFailed) -> None:
        self.view.keep_streamed(STREAM_STOPPED)
        self.error = message.error
        self.view.add_meta(f"run ended: {self.error}")
        self.run_state = RunState.ERROR
        self._turn_over()

    def on_run_screen_turn_ended(self, message: RunScreen.TurnEnded) -> None:
        # The note sits under the text it is about, above the lines that end the turn.
        self.view.keep_streamed(STREAM_STOPPED)
        result = message.result
        self.last_result = result
        self.error = ""
        ending_read_back, self._ending_read_back = self._ending_read_back, ()
        # A resume that ran nothing ends as the read-back already said.
        said_already = ending_read_back and result.llm_calls == self.counters.model_calls
        self.counters = Counters(
            usage=result.usage, model_calls=result.llm_calls, tool_calls=result.tool_calls
        )
        state = state_after_turn(result.outcome)
        if isinstance(result.outcome, Completed):
            self.last_answer = result.answer
        else:
            ending = turn_end_lines(state.word, result.message)
            if not (said_already and tuple(ending) == ending_read_back):
                for line in ending:
                    self.view.add_meta(line)
            if resumable(result.outcome):
                self.view.add_meta(CONTINUE_HERE)
        self.run_state = state
        self._turn_over()

    def _turn_over(self) -> None:
        if self._turn_started is not None:
            self._worked_seconds += time.monotonic() - self._turn_started
            self._turn_started = None
        self._hide_startup()
        self.activity = ""
        self.retry_wait = None
        if self.stop_requested:
            # "press ^C again to leave" is over once the turn has stopped.
            self.app.clear_notifications()
        if self.run_state is RunState.COMPLETE:
            self.run_state = RunState.AWAITING_INPUT
        # A turn refused before any model call moved no counter, yet the bars may have a
        # session to name by now.
        self.session_id = self.bridge.session_id
        self.running_calls.clear()
        self.turn_running = False

    def _hide_startup(self) -> None:
        self.startup_card.display = False

    def on_key(self, event: events.Key) -> None:
        # While the agent is being hosted the card is the only sign of progress, so it stays.
        if not self.starting:
            self._hide_startup()
        if event.key != "ctrl+c":
            self.leave_armed = False

    def on_text_area_changed(self) -> None:
        self.leave_armed = False

    def takes_typing(self, event: events.Key | events.Paste) -> bool:
        """Whether a printable key or a paste made outside the chat bar belongs in it. The
        transcript's and the panel's one-letter keys act only while the bar is empty: once the
        operator is writing, every letter is part of what they write."""
        if isinstance(self.focused, ChatInput | Input):
            return False
        if isinstance(event, events.Paste):
            return True
        if not event.is_printable:
            return False
        if self.chat.text:
            return True
        return event.key not in self.app.active_bindings

    def on_event_arrived(self, message: EventArrived) -> None:
        event = message.event
        if isinstance(event, WarningEvent) and event.kind in ONCE_PER_CONVERSATION:
            if event.kind in self.warned:
                return
            self.warned.add(event.kind)
        seconds = None
        if isinstance(event, ToolCallEvent):
            self.running_calls[event.id] = RunningCall(
                event.name, single_line(event.display, 60), self.ticks
            )
        elif isinstance(event, ToolResultEvent) and event.call_id in self.running_calls:
            seconds = self.ticks - self.running_calls.pop(event.call_id).started
        self.view.append([event], seconds=seconds)
        self.session_id = self.bridge.session_id
        # Whatever comes after a retry notice means the retry was made.
        self.retry_wait = None
        match event:
            case PromptEvent():
                # The operator's own words: the startup card waits for the agent's.
                self.side_panel.show_turns(self.view.transcript)
                return
            case StatusEvent():
                self._status_arrived(event)
            case ToolCallEvent():
                self._tool_started(event)
            case ToolResultEvent():
                if not self.stop_requested:
                    self._wait_for_model()
            case TextEvent() | ThinkingEvent() | WarningEvent():
                pass
            case _:
                assert_never(event)
        self._hide_startup()

    def on_delta_arrived(self, message: DeltaArrived) -> None:
        # A stop shows at once: what is on screen is all the answer will show.
        if self.stop_requested:
            return
        self._hide_startup()
        self.view.add_delta(message.event)
        if self.activity in (MODEL_WAIT, MODEL_THINKING, MODEL_WRITING):
            writing = isinstance(message.event, TextDeltaEvent)
            self.activity = MODEL_WRITING if writing else MODEL_THINKING

    def _status_arrived(self, event: StatusEvent) -> None:
        match event:
            case StatusEvent(phase=StatusPhase.RETRYING):
                self.retry_wait = RetryWait(
                    math.ceil(event.wait_seconds), event.attempt, event.attempts
                )
                # The countdown goes once the retry is made; the transcript keeps that it was.
                self.view.add_meta(f"model busy: {self.retry_wait.text}")
            case StatusEvent(phase=StatusPhase.STANDING_APPROVAL) if self.running_calls:
                # Tools run one at a time: the call it is about is the last one announced.
                running = list(self.running_calls.values())[-1]
                self.standing_approvals = self.standing_approvals | {running.name}
                self.view.add_meta(f"{STANDING_APPROVAL_RAN}: {running.display}")
            case StatusEvent(usage=Usage() as usage):
                self.counters = self.counters.after_model_call(usage)
            case _:
                pass

    def _tool_started(self, event: ToolCallEvent) -> None:
        self.counters = self.counters.after_tool_call()
        display = self.running_calls[event.id].display
        if not self.stop_requested:
            self.activity_seconds = 0
            self.activity = display

    def on_question_asked(self, message: QuestionAsked) -> None:
        answer = message.answer
        if answer.done():
            return
        self._hide_startup()
        self.run_state = RunState.BLOCKED
        if self.setup.bell:
            self.app.bell()
        question = message.question
        match question:
            case ApprovalQuestion():
                self._ask(ApprovalScreen(question), answer)
            case ConfirmQuestion():
                self._ask(ConfirmScreen(question), answer)
            case SelectQuestion():
                self._ask(SelectScreen(question), answer)
            case InputQuestion():
                self._ask(InputScreen(question), answer)
            case _:
                assert_never(question)

    def _held_back(self, key: str, text: str) -> None:
        """A key typed for the chat bar reached a question as it opened: it lands in the bar,
        through the bar's own queue, behind the keys that reached the bar before the question."""
        if key == "paste":
            self.chat.call_later(self.chat.insert, text)
        else:
            self.chat.call_later(self.chat.take_key, key, text or None)

    def _ask(
        self, modal: QuestionModal[QuestionT, AnswerT], answer: asyncio.Future[Answer]
    ) -> None:
        """Put ``modal`` up: what it is dismissed with answers the question, and the question
        being given up takes it down."""

        def answered(value: AnswerT | None) -> None:
            question = modal.question
            running = (
                self.running_calls.get(question.tool_use_id)
                if isinstance(question, ApprovalQuestion)
                else None
            )
            if value is ApprovalChoice.ALWAYS and running is not None:
                # The gate grants by tool name, which a question over a2a does not carry.
                self.standing_approvals = self.standing_approvals | {running.name}
            if isinstance(question, ApprovalQuestion):
                self.view.add_meta(approval_answer_text(question, value, given_up=answer.done()))
                if running is not None:
                    # The command runs from now: its time leaves out the operator's.
                    self.running_calls[question.tool_use_id] = replace(running, started=self.ticks)
                    self.activity_seconds = 0
            if not answer.done():
                answer.set_result(value)
            if self.turn_running:
                self.run_state = RunState.RUNNING

        def given_up(asked: asyncio.Future[Answer]) -> None:
            interrupted = asked.cancelled() or asked.exception() is not None
            if interrupted and modal.is_current:
                modal.dismiss(None)

        answer.add_done_callback(given_up)
        modal.hand_back = self._held_back
        self.app.push_screen(modal, answered)

    def request_stop(self) -> None:
        """The first Ctrl-C: the turn stops at its next safe point; a question on screen is given
        up, which is not an answer."""
        if self.starting:
            # Nothing runs yet to stop at a safe point: leave, as with no turn running.
            self.app.exit()
            return
        self.stop_requested = True
        self.run_state = RunState.SUSPENDING
        self.activity_seconds = 0
        # A model call stops at once; a running command is given its grace, counted here.
        running = [call.display for call in self.running_calls.values()]
        self.activity = f"{STOPPING}: {running[-1]}" if running else STOPPING
        self.notify(STOP_NOTICE, markup=False)
        self.bridge.request_stop()

    def action_stop_turn(self) -> None:
        """Esc: stop the turn in flight, as the first Ctrl-C does."""
        if self.turn_running and not self.stop_requested:
            self.request_stop()

    def action_scroll_transcript(self, how: str) -> None:
        """PageUp, PageDown, Ctrl-Home and Ctrl-End from the chat bar scroll the transcript."""
        view = self.view
        match how:
            case "page_up":
                view.action_page_up()
            case "page_down":
                view.action_page_down()
            case "top":
                view.action_top()
            case _:
                view.action_bottom()

    def action_toggle_last_output(self) -> None:
        self.view.toggle_last_output()

    def clear_screen(self) -> None:
        self.view.clear()
        self.side_panel.show_turns(self.view.transcript)
        self.notify("screen cleared; the conversation is kept", timeout=2)

    def on_transcript_view_search_requested(self) -> None:
        field = self.search_field
        field.display = True
        field.focus()

    def on_transcript_view_match_shown(self, message: TranscriptView.MatchShown) -> None:
        self.notify(message.position, timeout=2, markup=False)

    @on(Input.Submitted, "#search")
    def searched(self, event: Input.Submitted) -> None:
        event.stop()
        field = self.search_field
        count = self.view.search(event.value)
        field.value = ""
        field.display = False
        self.view.focus()
        position = self.view.match_position
        found = f"{plural(count, 'matching line')} ({position})" if count else "no match"
        self.notify(found, timeout=2, markup=False)

    @on(ChatInput.Submitted)
    async def submitted(self, event: ChatInput.Submitted) -> None:
        """Enter moved a prompt into the chat bar's outbox: it goes now unless a turn is
        running, and waits there, shown as queued, until the turns before it have ended."""
        event.stop()
        await self._send_next()

    async def _send_next(self) -> None:
        if self.turn_running:
            return
        text = self.chat.take_next()
        if text is None:
            return
        if text.startswith(ESCAPED_SLASH):
            self._send(text[1:], typed=text)
            return
        if text.startswith("/"):
            await self._command(text)
            return
        self._send(text)

    async def _command(self, text: str) -> None:
        name, _, rest = text.partition(" ")
        command = ChatCommand.named(name)
        if command is ChatCommand.HELP:
            self.action_help()
        elif command is ChatCommand.EXIT:
            self.app.exit()
        elif command is ChatCommand.CLEAR:
            await self._clear_conversation()
            if rest.strip():
                self._send(rest.strip())
        else:
            # Nothing is lost to a typo: the text goes back into the bar to be corrected.
            self.chat.give_back(text)
            self.notify(
                f"unknown command {single_line(name, 40)}; /help lists the commands"
                " (//text sends text starting with a slash)",
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
        self.standing_approvals = frozenset()
        self.warned.clear()
        self.chat.forget()
        self.view.add_meta(CONTEXT_CLEARED)
        self.notify("context cleared", timeout=2)
        self.session_id = self.bridge.session_id

    def _send(self, prompt: str, *, typed: str | None = None) -> None:
        """Send ``prompt``; Up recalls it as it was ``typed`` (``//text`` stays escaped)."""
        self.view.follow_tail()
        self.chat.remember(prompt if typed is None else typed)
        self._keep_in_history(prompt if typed is None else typed)
        self.view.append([PromptEvent(prompt)])
        self.side_panel.show_turns(self.view.transcript)
        if self.bridge.session_id:
            self._begin(lambda: self.bridge.follow_up(prompt))
        else:
            self._begin(lambda: self.bridge.start(prompt))

    @work(thread=True, group="history", exit_on_error=False)
    def _keep_in_history(self, typed: str) -> None:
        """Add ``typed`` to the prompt history Ctrl-R searches, off the screen's loop: the file
        is locked, read and appended to."""
        try:
            self.history.add(typed)
        except FiskError as error:
            if not self.history_failed:
                self.history_failed = True
                self.app.call_from_thread(
                    self.notify, single_line(str(error)), severity="warning", markup=False
                )

    def action_search_history(self) -> None:
        """Ctrl-R: search the prompts sent from every workstation; the one chosen replaces
        what the bar holds, which Ctrl-Z brings back."""

        # Imported here, as the other screens opened by a key are: the first frame needs none.
        from fisk_ai.screens.history_search import HistorySearch

        def chosen(prompt: str | None) -> None:
            if prompt is not None:
                self.chat.replace_text(prompt)

        try:
            entries = self.history.entries()
        except FiskError as error:
            self.notify(single_line(str(error)), severity="warning", markup=False)
            return
        self.app.push_screen(HistorySearch(entries), chosen)

    @work(group="editor", exclusive=True, exit_on_error=False)
    async def action_edit_in_editor(self) -> None:
        """Ctrl-G: edit the prompt in $VISUAL or $EDITOR. A worker, since the editor may run
        for minutes and the screen's messages must not wait behind it."""
        from fisk_ai.tui.external_editor import edit_prompt

        edited = await edit_prompt(self.app, self.chat.text)
        if edited is not None:
            self.chat.replace_text(edited)

    def action_toggle_panel(self) -> None:
        panel = self.side_panel
        had_focus = panel.has_focus_within
        panel.toggle(self.view.transcript)
        if had_focus and not panel.display:
            # Keys must land somewhere: the chat bar, where the operator writes.
            self.chat.focus()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_knowledge(self) -> None:
        from fisk_ai.screens.knowledge import NOT_ENABLED, KnowledgeExplorer, explorer_index

        index = explorer_index(self.bridge.tools)
        if index is None:
            self.notify(NOT_ENABLED, severity="warning", markup=False)
            return
        self.app.push_screen(KnowledgeExplorer(index))

    def action_sessions(self) -> None:
        store = self.bridge.store
        if store is None:
            self.notify("no session store is known to this run", severity="warning")
            return
        from fisk_ai.screens.sessions import SessionBrowser

        self.app.push_screen(SessionBrowser(store), self._session_chosen)

    def _session_chosen(self, session_id: str | None) -> None:
        if session_id:
            self.notify(IN_RUN_RESUME, severity="warning", markup=False)
