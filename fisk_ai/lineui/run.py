"""`fisk run` on the line surface: reach the agent over a2a, run one turn, print the answer.

stdout receives the answer and nothing else; the calls, narration, warnings, the summary and how
to continue go to stderr. The first Ctrl-C (or SIGTERM) asks the run to stop at its next safe
point; the second gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING

from fisk_ai.agent.outcome import Completed, RunResult, resumable, waits
from fisk_ai.lineui.prompter import TerminalPrompter
from fisk_ai.lineui.surface import LineSurface, write_answer
from fisk_ai.multiplex import PaneState, Reporter
from fisk_ai.presentation import RunSummary, resume_hint, summary_line
from fisk_ai.serve.hosted import RunOptions, hosted_run
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.a2a.conversation import AgentConversation
    from fisk_ai.telemetry import Delivery

SUSPEND_NOTICE = "stop requested: finishing the current step; press ^C again to give up"
EXIT_INTERRUPTED = 130


def run_line_mode(options: RunOptions) -> int:
    """Run one turn (or resume one) and return the process exit code."""
    return asyncio.run(_run(options))


async def _run(options: RunOptions) -> int:
    started = time.monotonic()
    surface = LineSurface(
        sys.stderr,
        tool_output=options.tool_output,
        thinking=options.thinking,
        verbose=options.verbose,
        width=shutil.get_terminal_size().columns if sys.stderr.isatty() else None,
    )
    prompters: list[TerminalPrompter] = []

    def terminal_prompter(reporter: Reporter) -> TerminalPrompter:
        prompters.append(TerminalPrompter(sys.stdin, sys.stderr, reporter=reporter))
        return prompters[0]

    async with hosted_run(
        options, events=surface, prompter_for=terminal_prompter, warn=stderr_line
    ) as hosted:
        conversation, reporter, prompter = hosted.conversation, hosted.reporter, prompters[0]
        reporter.report(PaneState.WORKING)
        turn = asyncio.ensure_future(
            conversation.resume(options.resume, force=options.force)
            if options.resume
            else conversation.start(options.prompt)
        )
        with _interrupts(conversation, prompter, turn):
            try:
                result = await turn
            except asyncio.CancelledError:
                stderr_line("run abandoned; the conversation is kept up to its last step")
                if conversation.handle:
                    stderr_line(resume_hint(conversation.handle, hosted.resume_flags))
                return EXIT_INTERRUPTED
            finally:
                reporter.report(PaneState.IDLE)

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
        stderr_line(resume_hint(result.session_id, hosted.resume_flags))
    return _exit_code(result)


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


@contextlib.contextmanager
def _interrupts(
    conversation: AgentConversation, prompter: TerminalPrompter, turn: asyncio.Future[RunResult]
) -> Iterator[None]:
    """First SIGINT/SIGTERM: ask the turn to stop at its next safe point (a question on screen
    is given up, which is not an answer). Second: give the run up at once."""
    loop = asyncio.get_running_loop()
    presses = 0
    stopping: set[asyncio.Task[None]] = set()

    async def stop() -> None:
        # Said once the agent has the request, so "finishing the current step" is already true.
        await conversation.stop()
        stderr_line(f"\n{SUSPEND_NOTICE}")
        prompter.interrupt()

    def interrupted() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            task = loop.create_task(stop())
            stopping.add(task)
            task.add_done_callback(stopping.discard)
        else:
            turn.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupted)
    try:
        yield
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)


def stderr_line(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
