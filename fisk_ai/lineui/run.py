"""`fisk run` on the line surface: reach the agent over a2a, run one turn, print the answer.

stdout receives the answer and nothing else; the calls, narration, warnings, the summary and how
to continue go to stderr. On a terminal each model turn's text is also written on stderr as it
arrives (see ``StreamingLineSurface``); when stdout is that same terminal the answer is not
printed a second time. The first Ctrl-C (or SIGTERM) asks the run to stop; the second gives
up. End of input (Ctrl-D) at a question is the first Ctrl-C too: the question is given up, not
answered, and the run ends suspended.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, TextIO

from fisk_ai.agent.outcome import Completed, IterationsSpent, RunResult, resumable, waits
from fisk_ai.lineui import output as json_output
from fisk_ai.lineui.output import JsonRun, OutputFormat, Pending, pending_of
from fisk_ai.lineui.prompter import InputClosed, TerminalPrompter
from fisk_ai.lineui.surface import LineSurface, StreamingLineSurface, write_answer
from fisk_ai.multiplex import PaneState, Reporter
from fisk_ai.presentation import RunSummary, resume_command, resume_hint, summary_line
from fisk_ai.serve.hosted import RunOptions, hosted_run
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.a2a.conversation import AgentConversation
    from fisk_ai.sessions import SessionStore
    from fisk_ai.telemetry import Delivery
    from fisk_ai.tools.questions import Answer, Question

SUSPEND_NOTICE = "stop requested: a running command is let finish; press ^C again to give up"
INPUT_CLOSED_NOTICE = "end of input at the question: stopping the run; press ^C to give up"
EXIT_INTERRUPTED = json_output.EXIT_INTERRUPTED


def run_line_mode(options: RunOptions, output: OutputFormat = OutputFormat.TEXT) -> int:
    """Run one turn (or resume one) and return the process exit code. ``output`` says what
    stdout receives: the answer, or the run as JSON (see ``fisk_ai.lineui.output``). Unless
    ``options.no_stream``, with stderr a terminal each model turn's text is shown there as it
    is written; otherwise each message is printed whole once complete."""
    return asyncio.run(_run(options, output, stream=not options.no_stream))


async def _run(options: RunOptions, output: OutputFormat, *, stream: bool) -> int:
    started = time.monotonic()
    on_terminal = sys.stderr.isatty()
    width = shutil.get_terminal_size().columns if on_terminal else None
    lines = (
        StreamingLineSurface(
            sys.stderr,
            render=not options.no_color,
            tool_output=options.tool_output,
            thinking=options.thinking,
            verbose=options.verbose,
            width=width,
        )
        if stream and on_terminal and output == OutputFormat.TEXT
        else LineSurface(
            sys.stderr,
            tool_output=options.tool_output,
            thinking=options.thinking,
            verbose=options.verbose,
            width=width,
        )
    )
    json_run = (
        None
        if output == OutputFormat.TEXT
        else JsonRun(lines, sys.stdout, stream=output == OutputFormat.STREAM_JSON)
    )
    surface = lines if json_run is None else json_run
    interrupts = _Interrupts(before_notice=lines.close)

    def terminal_prompter(reporter: Reporter) -> _EndOfInputStops:
        prompter = TerminalPrompter(sys.stdin, sys.stderr, reporter=reporter)
        interrupts.prompter = prompter
        return _EndOfInputStops(prompter, interrupts)

    async with hosted_run(
        options, events=surface, prompter_for=terminal_prompter, warn=stderr_line
    ) as hosted:
        conversation, reporter = hosted.conversation, hosted.reporter
        if options.resume and hosted.store is not None:
            resuming = resume_command(options.resume, hosted.resume_flags)
            await _refuse_a_conversation_between_turns(hosted.store, options.resume, resuming)
        reporter.report(PaneState.WORKING)
        turn = asyncio.ensure_future(
            conversation.resume(options.resume, force=options.force)
            if options.resume
            else conversation.start(options.prompt)
        )
        with interrupts.watching(conversation, turn):
            try:
                result = await turn
            except asyncio.CancelledError:
                lines.close()
                stderr_line("run abandoned; the conversation is kept up to its last step")
                hint = resume_hint(conversation.handle, hosted.resume_flags)
                if conversation.handle:
                    stderr_line(hint)
                if json_run is None:
                    return EXIT_INTERRUPTED
                return json_run.finish(
                    None,
                    session_id=conversation.handle,
                    model=hosted.model,
                    resume_command=resume_command(conversation.handle, hosted.resume_flags)
                    if conversation.handle
                    else "",
                )
            finally:
                reporter.report(PaneState.IDLE)
        pending: tuple[Pending, ...] = ()
        if json_run is not None and waits(result.outcome) and hosted.store is not None:
            pending = await pending_of(hosted.store, result.session_id)

    lines.close()
    if json_run is None and not _answer_on_screen(lines, result.answer):
        write_answer(result.answer, sys.stdout, render=sys.stdout.isatty() and not options.no_color)
    latency = timedelta(seconds=time.monotonic() - started)
    print_summary(
        result,
        model=hosted.model,
        latency=latency,
        verbose=options.verbose,
        delivery=hosted.telemetry.delivery,
    )
    if resumable(result.outcome):
        stderr_line(
            resume_hint(
                result.session_id,
                hosted.resume_flags,
                next_prompt=isinstance(result.outcome, IterationsSpent),
            )
        )
    if json_run is None:
        return _exit_code(result)
    return json_run.finish(
        result,
        session_id=result.session_id,
        model=hosted.model,
        pending=pending,
        resume_command=resume_command(result.session_id, hosted.resume_flags)
        if resumable(result.outcome)
        else "",
    )


async def _refuse_a_conversation_between_turns(
    store: SessionStore, session_id: str, resuming: str
) -> None:
    """A conversation resting between turns, or whose last turn used all its iterations, takes
    its next prompt from the chat bar only; a line-mode resume of it would answer nothing and
    print the last ending again. ``resuming`` is the command that continues it on a terminal."""
    from fisk_ai.agent.replay import stopped_at_the_iteration_cap
    from fisk_ai.errors import FiskError
    from fisk_ai.sessions import SessionError, fold

    try:
        stored = fold(await store.read(session_id))
    except (SessionError, FiskError):
        return  # The resume itself says what is wrong with it.
    if stored.between_turns or stopped_at_the_iteration_cap(stored):
        raise FiskError(
            f"conversation {session_id} is waiting for its next prompt, which only the full "
            f"screen takes; continue it on a terminal without --no-tui: {resuming}"
        )


def _answer_on_screen(lines: LineSurface, answer: str) -> bool:
    """Whether the answer was written on stderr as it arrived and stdout is that same
    terminal, so printing it on stdout would show it twice."""
    shown = isinstance(lines, StreamingLineSurface) and lines.shown_answer == answer
    return shown and _same_terminal(sys.stdout, sys.stderr)


def _same_terminal(one: TextIO, other: TextIO) -> bool:
    try:
        return (
            one.isatty()
            and other.isatty()
            and os.path.samestat(os.fstat(one.fileno()), os.fstat(other.fileno()))
        )
    except (OSError, ValueError):
        return False


def print_summary(
    result: RunResult,
    *,
    model: str,
    latency: timedelta,
    verbose: bool,
    suspended: bool = False,
    delivery: Delivery | None = None,
) -> None:
    """The run summary on stderr after a blank line, how many spans reached the collector when
    the agent exported telemetry (``delivery``), and why the run ended when it did not answer.
    ``suspended`` marks a run left mid-turn whatever its last stop reason."""
    summary = RunSummary(
        suspended=suspended or waits(result.outcome),
        session=result.session_id,
        model=model,
        llm_calls=result.llm_calls,
        tool_calls=result.tool_calls,
        remote_tool_calls=result.remote_tool_calls,
        usage=result.usage,
        latency=latency,
    )
    stderr_line("")
    stderr_line(summary_line(summary, verbose=verbose))
    if delivery is not None:
        stderr_line(f"telemetry: {single_line(delivery.summary())}")
    if result.message:
        stderr_line(f"run ended: {single_line(result.message)}")


def _exit_code(result: RunResult) -> int:
    if isinstance(result.outcome, Completed):
        return 0
    if waits(result.outcome):
        return EXIT_INTERRUPTED
    return 1


class _Interrupts:
    """How the operator stops the run. The first SIGINT or SIGTERM, or end of input at a
    question, asks the turn to stop (a question on screen is given up, which is not an answer);
    a second interrupt gives the run up at once. ``before_notice`` ends the text being written
    so the stop notice gets a line of its own."""

    def __init__(self, *, before_notice: Callable[[], None]) -> None:
        self.prompter: TerminalPrompter | None = None
        self._before_notice = before_notice
        self._conversation: AgentConversation | None = None
        self._turn: asyncio.Future[RunResult] | None = None
        self._stopping: asyncio.Task[None] | None = None

    @contextlib.contextmanager
    def watching(
        self, conversation: AgentConversation, turn: asyncio.Future[RunResult]
    ) -> Iterator[None]:
        """Take SIGINT and SIGTERM as interrupts of ``turn`` until the block ends."""
        self._conversation, self._turn = conversation, turn
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self._interrupted)
        try:
            yield
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)

    async def input_closed(self) -> None:
        """End of input at a question: the first interrupt, done before the question is given
        up, so the agent drops the question rather than take it for nobody's answer."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(INPUT_CLOSED_NOTICE))
        await asyncio.shield(self._stopping)

    def _interrupted(self) -> None:
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(SUSPEND_NOTICE))
        elif self._turn is not None:
            self._turn.cancel()

    async def _stop(self, notice: str) -> None:
        # Said once the agent has the request, so what it says is already under way.
        if self._conversation is not None:
            await self._conversation.stop()
        self._before_notice()
        stderr_line(f"\n{notice}")
        if self.prompter is not None:
            self.prompter.interrupt()


class _EndOfInputStops:
    """The terminal prompter, where end of input at a question stops the run first."""

    def __init__(self, prompter: TerminalPrompter, interrupts: _Interrupts) -> None:
        self._prompter = prompter
        self._interrupts = interrupts

    def can_prompt(self) -> bool:
        return self._prompter.can_prompt()

    async def ask(self, question: Question) -> Answer:
        try:
            return await self._prompter.ask(question)
        except InputClosed:
            await self._interrupts.input_closed()
            raise


def stderr_line(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
