"""`fisk run` on the line surface: host the agent, run one turn, print the answer.

stdout receives the answer and nothing else; the calls, narration, warnings, the summary and how
to continue go to stderr. The first Ctrl-C (or SIGTERM) asks the run to stop at its next safe
point; the second gives up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from fisk_ai.agent.loop import StopReason
from fisk_ai.agent.resources import ProviderOptions
from fisk_ai.agent.runner import RunResult
from fisk_ai.lineui.lines import RunSummary, resume_hint, summary_line
from fisk_ai.lineui.prompter import TerminalPrompter
from fisk_ai.lineui.surface import LineSurface, write_answer
from fisk_ai.multiplex import PaneState, Reporter, detect
from fisk_ai.util.sanitize import single_line

if TYPE_CHECKING:
    from fisk_ai.agent.events import EventSink
    from fisk_ai.agent.runner import Runner
    from fisk_ai.config import Config
    from fisk_ai.tools.questions import Prompter
    from fisk_ai.tools.toolset import ToolSet

SUSPEND_NOTICE = "stop requested: finishing the current step; press ^C again to give up"
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class RunOptions:
    config: str
    prompt: str
    resume: str = ""
    force: bool = False
    state_dir: str | None = None
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    tool_output: bool = False
    thinking: bool = False
    no_color: bool = False
    verbose: bool = False


def run_line_mode(options: RunOptions) -> int:
    """Run one turn (or resume one) and return the process exit code."""
    return asyncio.run(_run(options))


@dataclass(frozen=True)
class HostedRun:
    """What a surface needs from a hosted agent: its configuration, tools, reporter, runner."""

    config: Config
    tools: ToolSet
    reporter: Reporter
    runner: Runner


@contextlib.asynccontextmanager
async def hosted_run(
    options: RunOptions,
    *,
    events: EventSink,
    prompter_for: Callable[[Reporter], Prompter],
    warn: Callable[[str], None],
    interactive: bool = False,
) -> AsyncIterator[HostedRun]:
    """Host the agent of ``options.config`` for one surface: the provider, the application and
    remote tools, the session store, the pane reporter and the runner; all closed on exit."""
    from fisk_ai.agent.application import load_application_tools, run_tool_set
    from fisk_ai.agent.resources import build_provider
    from fisk_ai.agent.runner import Runner, settings_from_config
    from fisk_ai.config import Mode, load
    from fisk_ai.serve.remote import import_remote_tools
    from fisk_ai.serve.stores import session_store_for

    cfg = load(options.config, Mode.AGENT)
    provider = build_provider(cfg, options.provider)
    # The remote_tools connection is lent to the imported tools for the whole run.
    connections = contextlib.AsyncExitStack()
    try:
        application_tools = await load_application_tools(cfg)
        remote = await connections.enter_async_context(import_remote_tools(cfg, strict=True))
        for warning in (*application_tools.warnings, *remote.warnings):
            warn(f"warning: {single_line(warning)}")
        tools = run_tool_set(cfg, application_tools, remote.hosts)
        store = session_store_for(cfg, options.state_dir)
        reporter = Reporter(cfg.identity, detect(os.environ))
        connections.push_async_callback(reporter.aclose)
        runner = Runner(
            settings_from_config(cfg, interactive=interactive, verbose=options.verbose),
            provider=provider,
            tools=tools,
            store=store,
            events=events,
            prompter=prompter_for(reporter),
        )
        async with runner:
            yield HostedRun(config=cfg, tools=tools, reporter=reporter, runner=runner)
    finally:
        await connections.aclose()
        await provider.aclose()


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
        runner, reporter, prompter = hosted.runner, hosted.reporter, prompters[0]
        reporter.report(PaneState.WORKING)
        turn = asyncio.ensure_future(
            runner.resume(options.resume, force=options.force)
            if options.resume
            else runner.start(options.prompt)
        )
        with _interrupts(runner.suspend, prompter, turn):
            try:
                result = await turn
            except asyncio.CancelledError:
                stderr_line("run abandoned; the conversation is kept up to its last step")
                if runner.session_id:
                    stderr_line(resume_hint(runner.session_id))
                return EXIT_INTERRUPTED
            finally:
                reporter.report(PaneState.IDLE)
        model = hosted.config.llm.model

    answer = result.answer if result.stop_reason is StopReason.COMPLETED else ""
    write_answer(answer, sys.stdout, render=sys.stdout.isatty() and not options.no_color)
    _report(result, model, timedelta(seconds=time.monotonic() - started), options)
    return _exit_code(result)


def _report(result: RunResult, model: str, latency: timedelta, options: RunOptions) -> None:
    print_summary(result, model=model, latency=latency, verbose=options.verbose)
    if result.stop_reason in (StopReason.SUSPENDED, StopReason.MAX_ITERATIONS, StopReason.ERROR):
        stderr_line(resume_hint(result.session_id))


def print_summary(
    result: RunResult, *, model: str, latency: timedelta, verbose: bool, suspended: bool = False
) -> None:
    """The run summary on stderr after a blank line, and why the run ended when it did not
    answer. ``suspended`` marks a run left mid-turn whatever its last stop reason."""
    summary = RunSummary(
        suspended=suspended or result.stop_reason is StopReason.SUSPENDED,
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
    if result.stop_reason is not StopReason.COMPLETED and result.message:
        stderr_line(f"run ended: {single_line(result.message)}")


def _exit_code(result: RunResult) -> int:
    if result.stop_reason is StopReason.COMPLETED:
        return 0
    if result.stop_reason is StopReason.SUSPENDED:
        return EXIT_INTERRUPTED
    return 1


@contextlib.contextmanager
def _interrupts(
    suspend: asyncio.Event, prompter: TerminalPrompter, turn: asyncio.Future[RunResult]
) -> Iterator[None]:
    """First SIGINT/SIGTERM: stop at the next safe point (a question on screen is given up,
    which is not an answer). Second: give the run up at once."""
    loop = asyncio.get_running_loop()
    presses = 0

    def interrupted() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            stderr_line(f"\n{SUSPEND_NOTICE}")
            suspend.set()
            prompter.interrupt()
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
