"""`fisk run` full screen: draw the workstation, host the agent behind it, then reprint what
matters.

The configuration is checked before the screen is taken, so a mistake in it is told on the
normal terminal, and so is ``harness.no_tui``. Where the system can fork, the check runs in a
child process while this one imports the user interface, so reading the configuration schema
(pydantic) does not hold up the first frame; the child reports what the frame needs, or the
sentence that refuses the configuration. The first frame is drawn next, before the provider SDK
is imported or the broker is up: the startup card says what startup is doing (importing on a
thread keeps its spinner turning), and the first turn starts once the agent is hosted. A failure
while hosting closes the app and is told, in one sentence, on the restored terminal.

While the app runs, standard error is captured (library logging included) and written out after
the terminal is restored, with the warnings, the answer on stdout and the resume hint and
summary line on stderr, so all of it survives in the scrollback.

A SIGTERM is the first Ctrl-C followed by leaving: a turn in flight is asked to stop, the app
leaves once it has ended suspended (a running tool's result journaled), and the terminal is
restored and reprinted as on any exit. With no turn running it leaves at once; a second SIGTERM
while the stop waits gives the turn up, as a second Ctrl-C does.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from fisk_ai.errors import FiskError
from fisk_ai.serve.hosted import RunOptions, TelemetryReport, hosted_run

if TYPE_CHECKING:
    from fisk_ai.config import Config
    from fisk_ai.multiplex import Reporter
    from fisk_ai.sessions import SessionStore
    from fisk_ai.tui.bridge import RunBridge
    from fisk_ai.tui.setup import RunSetup
    from fisk_ai.workstation.app import FiskApp


FIRST_FRAME_FILE = "FISK_FIRST_FRAME_FILE"
"""When set, the path the workstation writes the wall-clock time of its first frame to (for
bench/workstation.py)."""
PHASE_LOADING = "loading the model SDK"
PHASE_HOSTING = "loading tools and starting the broker"
PHASE_CONNECTING = "connecting to the agent"


@dataclass(frozen=True)
class ConfigCheck:
    """What the first frame needs from a configuration that passed: whether it asks for lines,
    and the startup card's identity, model and telemetry row."""

    no_tui: bool
    identity: str
    model: str
    telemetry: str


def run_full_screen(options: RunOptions) -> int:
    """Run the workstation unless ``harness.no_tui`` asks for lines; return the exit code."""
    # A remote agent's configuration is its worker's; only a hosted run's can ask for lines.
    checking = None if options.nats_context else _ConfigCheckInChild.start(options)
    # Imported while the child checks the configuration: the two take about as long.
    import fisk_ai.workstation.app  # noqa: F401

    check = None if checking is None else checking.result()
    if check is not None and check.no_tui:
        from fisk_ai.lineui.run import run_line_mode

        return run_line_mode(options)
    return asyncio.run(_host(options, check))


def check_config(options: RunOptions) -> ConfigCheck:
    """Read and validate the configuration as a hosted run will; a mistake raises its
    ConfigError."""
    from fisk_ai.config import Mode, load

    cfg = load(options.config, Mode.AGENT)
    return ConfigCheck(
        no_tui=cfg.harness.no_tui,
        identity=cfg.identity,
        model=cfg.llm.model,
        telemetry=telemetry_row(cfg, no_telemetry=options.no_telemetry),
    )


class _ConfigCheckInChild:
    """``check_config`` in a forked child, its answer read back from a pipe: the check passed
    (``ConfigCheck``'s fields), refused the configuration (``refused``: the sentence), or failed
    some other way (nothing), in which case it is run again here so the failure surfaces as it
    would have."""

    def __init__(self, options: RunOptions, child: int | None, answer_fd: int) -> None:
        self._options = options
        self._child = child
        self._answer_fd = answer_fd

    @classmethod
    def start(cls, options: RunOptions) -> _ConfigCheckInChild:
        # --verbose wants a refusal's traceback, which stays in the child; a process that
        # already runs threads is not forked (only the forking thread would survive).
        if options.verbose or not hasattr(os, "fork") or threading.active_count() > 1:
            return cls(options, None, -1)
        answer_fd, child_fd = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - the child's coverage is not collected
            os.close(answer_fd)
            _answer_from_child(options, child_fd)
        os.close(child_fd)
        return cls(options, child, answer_fd)

    def result(self) -> ConfigCheck:
        if self._child is None:
            return check_config(self._options)
        with os.fdopen(self._answer_fd, "rb") as answer:
            written = answer.read()
        os.waitpid(self._child, 0)
        try:
            reported = json.loads(written)
        except ValueError:
            reported = {}
        if isinstance(reported, dict) and isinstance(reported.get("refused"), str):
            from fisk_ai.config import ConfigError

            raise ConfigError(reported["refused"])
        try:
            return ConfigCheck(**reported["passed"])
        except (KeyError, TypeError):
            return check_config(self._options)


def _answer_from_child(options: RunOptions, answer_fd: int) -> None:
    """The forked child: check, write the answer, and leave at once without the parent's
    exit handlers or buffered output."""
    answer: dict[str, object] = {}
    try:
        answer = {"passed": asdict(check_config(options))}
    except FiskError as refusal:
        answer = {"refused": str(refusal)}
    except BaseException:
        answer = {}  # the parent checks again, so the failure is told as it would have been
    finally:
        with contextlib.suppress(BaseException), os.fdopen(answer_fd, "wb") as pipe:
            pipe.write(json.dumps(answer).encode())
        os._exit(0)


@dataclass
class _Hosting:
    """What hosting left for the lines printed after the app: filled in as it goes."""

    warnings: list[str] = field(default_factory=list)
    """Raised while hosting: on the card, in the transcript, and again after the app."""
    model: str = ""
    resume_flags: str = ""
    kept: bool = False
    telemetry: TelemetryReport = field(default_factory=TelemetryReport)


async def _host(options: RunOptions, check: ConfigCheck | None) -> int:
    """Draw the first frame, then host the agent behind it while the startup card says what is
    happening; the first turn starts once the agent is up."""
    from fisk_ai.tui.bridge import RunBridge
    from fisk_ai.workstation.app import FiskApp

    bridge = RunBridge()
    app = FiskApp(bridge, _starting_setup(options, check))
    hosting = _Hosting()
    captured = io.StringIO()
    with _logging_into(captured), _terminated_as_stopped(app):
        app_running = asyncio.create_task(app.run_async())
        drawn = asyncio.create_task(app.first_frame.wait())
        await asyncio.wait({app_running, drawn}, return_when=asyncio.FIRST_COMPLETED)
        drawn.cancel()
        if app.first_frame.is_set():
            _mark_first_frame()
            host = asyncio.create_task(_host_behind(app, options, hosting, app_running))
            await asyncio.wait({app_running, host}, return_when=asyncio.FIRST_COMPLETED)
            if not app_running.done():
                # Hosting failed: the app goes, and the failure is told on the normal terminal.
                app.exit()
                await app_running
            elif not host.done() and app.run_screen.starting:
                host.cancel()  # left during startup: nothing was hosted to keep
            with contextlib.suppress(asyncio.CancelledError):
                await host
        await app_running
    return _reprint(app, options, hosting, captured.getvalue())


def _reprint(app: FiskApp, options: RunOptions, hosting: _Hosting, captured: str) -> int:
    """Write what matters of the run to the restored terminal; return the exit code."""
    from fisk_ai.agent.outcome import Completed, IterationsSpent, waits
    from fisk_ai.lineui.run import EXIT_INTERRUPTED, print_summary, stderr_line
    from fisk_ai.lineui.surface import write_answer
    from fisk_ai.presentation import resume_hint

    outcome = app.outcome
    for warning in hosting.warnings:
        stderr_line(warning)
    leftover = captured + "".join(app.captured_stderr)
    if leftover:
        sys.stderr.write(leftover if leftover.endswith("\n") else leftover + "\n")
    if outcome.answer:
        write_answer(
            outcome.answer, sys.stdout, render=sys.stdout.isatty() and not options.no_color
        )
    for session in outcome.abandoned:
        stderr_line(f"left conversation {session}; {resume_hint(session, hosting.resume_flags)}")
    result = outcome.result
    if outcome.error:
        stderr_line(f"run ended: {outcome.error}")
    if result is not None:
        print_summary(
            result,
            model=hosting.model,
            latency=timedelta(seconds=outcome.working_seconds),
            verbose=options.verbose,
            suspended=outcome.left_mid_turn,
            delivery=hosting.telemetry.delivery,
        )
    if hosting.kept:
        capped = result is not None and isinstance(result.outcome, IterationsSpent)
        stderr_line(resume_hint(outcome.session_id, hosting.resume_flags, next_prompt=capped))
    if outcome.left_mid_turn or (result and waits(result.outcome)):
        return EXIT_INTERRUPTED
    if outcome.error or result is None or not isinstance(result.outcome, Completed):
        return 1
    return 0


async def _host_behind(
    app: FiskApp,
    options: RunOptions,
    hosting: _Hosting,
    app_running: asyncio.Task[None],
) -> None:
    """Host the agent while the app shows the startup card, hand the screen what it needs,
    and keep the agent up until the app has stopped."""
    from fisk_ai.multiplex import PaneState
    from fisk_ai.tools.base import Confirmable
    from fisk_ai.tools.builtin.deferral import plan_definitions
    from fisk_ai.tui.setup import RunSetup, ToolRow

    bridge, screen = app.bridge, app.run_screen

    def prompter_for(reporter: Reporter) -> RunBridge:
        bridge.report_to(reporter)
        # Starting up is work: the pane says so before the first turn does. That turn, which
        # every run begins with, reports idle when it ends.
        reporter.report(PaneState.WORKING)
        return bridge

    if not (options.nats_context or options.provider.replay):
        screen.startup_phase(PHASE_LOADING)
        # The SDK takes about a second to import; on a thread the spinner keeps turning.
        await asyncio.to_thread(_import_for_hosting)
    screen.startup_phase(PHASE_CONNECTING if options.nats_context else PHASE_HOSTING)
    async with hosted_run(
        options,
        events=bridge,
        prompter_for=prompter_for,
        warn=hosting.warnings.append,
        interactive=True,
    ) as hosted:
        cfg = hosted.config
        hosting.model, hosting.resume_flags = hosted.model, hosted.resume_flags
        hosting.telemetry = hosted.telemetry
        bridge.bind(hosted.conversation, store=hosted.store, tools=hosted.tools)
        confirm_tags = tuple(cfg.harness.confirm_tags)
        # The model of every provider fisk ships offers tool search.
        plan = plan_definitions(
            hosted.tools, supported=True, disabled=cfg.llm.no_tool_search, model=cfg.llm.model
        )
        deferred = {definition.name for definition in plan.definitions if definition.defer_loading}
        rows = []
        for source in hosted.tools.sources:
            for tool in source.tools:
                gated = isinstance(tool, Confirmable) and bool(tool.confirm_trigger(confirm_tags))
                rows.append(ToolRow(tool.name, source.label, gated, tool.name in deferred))
        screen.hosted(
            RunSetup(
                identity=hosted.conversation.identity,
                model=hosted.model,
                prompt=options.prompt,
                resume=options.resume,
                force=options.force,
                tools=tuple(rows),
                max_tokens=cfg.llm.budget.max_tokens,
                bell=bell_wanted(cfg),
                version=screen.setup.version,
                warnings=tuple(hosting.warnings),
                tool_output=options.tool_output,
                thinking=options.thinking,
                resume_flags=hosted.resume_flags,
                telemetry=screen.setup.telemetry,
            )
        )
        await asyncio.shield(app_running)
        outcome = app.outcome
        # A conversation removed behind the run's back (a store without leases) has nothing
        # left to resume.
        hosting.kept = bool(outcome.session_id) and (
            hosted.store is None or await _exists(hosted.store, outcome.session_id)
        )


def _starting_setup(options: RunOptions, check: ConfigCheck | None) -> RunSetup:
    """What the first frame can say before anything is hosted: the configuration is checked."""
    from fisk_ai import __version__
    from fisk_ai.tui.setup import RunSetup

    return RunSetup(
        identity=options.identity or (check.identity if check is not None else ""),
        model=check.model if check is not None else "",
        prompt=options.prompt,
        resume=options.resume,
        force=options.force,
        version=__version__,
        tool_output=options.tool_output,
        thinking=options.thinking,
        telemetry=check.telemetry if check is not None else "",
        phase=PHASE_LOADING,
    )


def bell_wanted(cfg: Config) -> bool:
    """Whether a question that waits on the operator rings the terminal's bell."""
    return not cfg.harness.no_bell


def telemetry_row(cfg: Config | None, *, no_telemetry: bool) -> str:
    """The startup card's telemetry row: where spans go, or what turned export off. A remote
    agent's telemetry is its worker's, so there is no row."""
    if cfg is None:
        return ""
    from fisk_ai.serve.observability import NO_TELEMETRY_FLAG
    from fisk_ai.telemetry import DEFAULT_ENDPOINT, TelemetrySettings, export_on, off_switch
    from fisk_ai.util.redact import redact_url

    settings = TelemetrySettings(
        enabled=cfg.telemetry.enabled, disabled_by=NO_TELEMETRY_FLAG if no_telemetry else ""
    )
    if export_on(settings):
        return f"on, to {redact_url(cfg.telemetry.endpoint or DEFAULT_ENDPOINT)}"
    switch = off_switch(settings)
    return f"off ({switch})" if switch else "off"


def _import_for_hosting() -> None:
    """The modules hosting needs and takes long to import: the provider SDK above all."""
    import fisk_ai.serve.local  # noqa: F401

    # A failure here resurfaces, with its real cause, at the first call that needs the SDK.
    with contextlib.suppress(Exception):
        import anthropic  # noqa: F401


@contextlib.contextmanager
def _terminated_as_stopped(app: FiskApp) -> Iterator[None]:
    """While the app runs, a SIGTERM stops the turn and then leaves (see ``terminate``)."""
    loop = asyncio.get_running_loop()
    # The handler runs outside the app's message loop; the app takes it as one of its messages.
    loop.add_signal_handler(signal.SIGTERM, lambda: app.call_later(terminate, app))
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def terminate(app: FiskApp) -> None:
    """SIGTERM: stop the turn in flight as the first Ctrl-C does, and leave once it has ended;
    leave at once when no turn runs or a stop already waits."""
    screen = app.run_screen
    if not screen.turn_running or screen.stop_requested:
        app.exit()
        return
    app.watch(screen, "turn_running", lambda running: None if running else app.exit(), init=False)
    screen.request_stop()


def _mark_first_frame() -> None:
    path = os.environ.get(FIRST_FRAME_FILE)
    if path:
        Path(path).write_text(f"{time.time():.6f}\n")


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
