"""`fisk run` full screen: host the agent, run the workstation, then reprint what matters.

The screen is taken only after the agent is hosted, so a configuration or tool failure is told on
a terminal somebody can read. While the app runs, standard error is captured (library logging
included) and written out after the terminal is restored, with the warnings, the answer on stdout
and the resume hint and summary line on stderr, so all of it survives in the scrollback.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING

from fisk_ai.agent.outcome import Completed, waits
from fisk_ai.errors import FiskError
from fisk_ai.lineui.run import EXIT_INTERRUPTED, print_summary, run_line_mode, stderr_line
from fisk_ai.lineui.surface import write_answer
from fisk_ai.multiplex import Reporter
from fisk_ai.presentation import resume_hint
from fisk_ai.serve.hosted import RunOptions, hosted_run

if TYPE_CHECKING:
    from fisk_ai.sessions import SessionStore


def run_full_screen(options: RunOptions) -> int:
    """Run the workstation unless ``harness.no_tui`` asks for lines; return the exit code."""
    from fisk_ai.config import Mode, load

    # A remote agent's configuration is its worker's; only a hosted run's can ask for lines.
    if not options.nats_context and load(options.config, Mode.AGENT).harness.no_tui:
        return run_line_mode(options)
    return asyncio.run(_host(options))


async def _host(options: RunOptions) -> int:
    from fisk_ai import __version__
    from fisk_ai.screens.run import RunSetup, ToolRow
    from fisk_ai.tools.base import Confirmable
    from fisk_ai.tools.builtin.deferral import plan_definitions
    from fisk_ai.tui.app import FiskApp
    from fisk_ai.tui.bridge import RunBridge

    started = time.monotonic()
    warnings: list[str] = []
    bridge = RunBridge()

    def prompter_for(reporter: Reporter) -> RunBridge:
        bridge.report_to(reporter)
        return bridge

    async with hosted_run(
        options, events=bridge, prompter_for=prompter_for, warn=warnings.append, interactive=True
    ) as hosted:
        cfg, model, resume_flags = hosted.config, hosted.model, hosted.resume_flags
        bridge.bind(hosted.conversation, store=hosted.store, tools=hosted.tools)
        confirm_tags = tuple(cfg.harness.confirm_tags)
        # The model of every provider fisk ships offers tool search.
        plan = plan_definitions(hosted.tools, supported=True, disabled=cfg.llm.no_tool_search)
        deferred = {definition.name for definition in plan.definitions if definition.defer_loading}
        rows = []
        for source in hosted.tools.sources:
            for tool in source.tools:
                gated = isinstance(tool, Confirmable) and bool(tool.confirm_trigger(confirm_tags))
                rows.append(ToolRow(tool.name, source.label, gated, tool.name in deferred))
        setup = RunSetup(
            identity=hosted.conversation.identity,
            model=model,
            prompt=options.prompt,
            resume=options.resume,
            force=options.force,
            tools=tuple(rows),
            max_tokens=cfg.llm.budget.max_tokens,
            bell=not cfg.harness.no_bell,
            version=__version__,
            warnings=tuple(warnings),
            tool_output=options.tool_output,
            resume_flags=resume_flags,
        )
        app = FiskApp(bridge, setup)
        captured = io.StringIO()
        with _logging_into(captured):
            await app.run_async()
        outcome = app.outcome
        # A conversation removed behind the run's back (a store without leases) has nothing
        # left to resume.
        kept = bool(outcome.session_id) and (
            hosted.store is None or await _exists(hosted.store, outcome.session_id)
        )

    for warning in warnings:
        stderr_line(warning)
    leftover = captured.getvalue() + "".join(app.captured_stderr)
    if leftover:
        sys.stderr.write(leftover if leftover.endswith("\n") else leftover + "\n")
    if outcome.answer:
        write_answer(
            outcome.answer, sys.stdout, render=sys.stdout.isatty() and not options.no_color
        )
    for session in outcome.abandoned:
        stderr_line(f"left conversation {session}; {resume_hint(session, resume_flags)}")
    result = outcome.result
    if outcome.error:
        stderr_line(f"run ended: {outcome.error}")
    if result is not None:
        print_summary(
            result,
            model=model,
            latency=timedelta(seconds=time.monotonic() - started),
            verbose=options.verbose,
            suspended=outcome.left_mid_turn,
            delivery=hosted.telemetry.delivery,
        )
    if kept:
        stderr_line(resume_hint(outcome.session_id, resume_flags))
    if outcome.left_mid_turn or (result and waits(result.outcome)):
        return EXIT_INTERRUPTED
    if outcome.error or result is None or not isinstance(result.outcome, Completed):
        return 1
    return 0


async def _exists(store: SessionStore, session_id: str) -> bool:
    try:
        return await store.exists(session_id)
    except FiskError:
        return True  # Unknown is not gone: the hint may still help.


@contextlib.contextmanager
def _logging_into(buffer: io.StringIO) -> Iterator[None]:
    """Point every handler writing to the terminal's stderr at ``buffer`` while the app runs;
    anything written to sys.stderr itself is captured by the app."""
    moved: list[tuple[logging.StreamHandler[io.TextIOBase], object]] = []
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream in (
            sys.stderr,
            sys.__stderr__,
        ):
            moved.append((handler, handler.setStream(buffer)))
    try:
        yield
    finally:
        for handler, stream in moved:
            handler.setStream(stream)  # type: ignore[arg-type]
