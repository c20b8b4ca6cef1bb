"""The multiplexers a pane report can go to, and which one this process runs in.

Each adapter runs the multiplexer's own command line as an argument vector (never a shell) with
stdin closed, in a session of its own so a Ctrl-C meant for the run does not reach it. The
reporter bounds every delivery with a timeout; cancelling one kills the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fisk_ai.multiplex.reporter import Multiplexer, PaneReport, PaneState

__all__ = ["DeliveryFailed", "TmuxPane", "ZellijPane", "detect"]

_TMUX_PANE_ID = re.compile(r"%\d+")
_STDERR_LIMIT = 200


class DeliveryFailed(Exception):
    """The multiplexer's command exited non-zero; the reporter logs it at debug and moves on."""


async def _run(argv: Sequence[str]) -> str:
    """Run the command; return what it printed."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = await process.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        detail = stderr.decode(errors="replace").strip()[:_STDERR_LIMIT]
        raise DeliveryFailed(f"{argv[0]} {argv[1]} exited {process.returncode}: {detail}")
    return stdout.decode(errors="replace")


def _tmux_text(value: str) -> str:
    """Keep free text literal in a tmux argument vector.

    tmux splits commands at an argument ending in ``;`` unless it ends in ``\\;``, and it expands
    formats (``#{...}``, ``#(...)``, which runs a shell) in a pane title, so ``#`` is doubled.
    """
    if value.endswith(";"):
        return value[:-1] + "\\;"
    return value


def _tmux_title(value: str) -> str:
    return _tmux_text(value.replace("#", "##"))


@dataclass(frozen=True)
class TmuxPane:
    """A tmux pane: the window options ``@fisk_state`` and ``@fisk_reason`` and the pane title.

    The server is named by its socket path (from ``TMUX``) rather than left to the environment, so
    the adapter reaches the server the detected environment named. The title is set with
    ``select-pane -T`` rather than OSC 2 because the full-screen app owns the terminal: bytes
    written to it from the side would interleave with its frames.
    """

    socket_path: str
    pane_id: str
    titles_before: list[str] = field(default_factory=list, compare=False, repr=False)
    """The pane's title before the first report, read once, for ``restore`` to put back."""

    @property
    def name(self) -> str:
        return "tmux"

    def command(self, report: PaneReport) -> list[str]:
        """The one tmux invocation (three commands joined by ``;``) that delivers ``report``."""
        target = ["-t", self.pane_id]
        if report.state is PaneState.BLOCKED and report.reason:
            reason = ["set-option", "-w", *target, "@fisk_reason", _tmux_text(report.reason)]
        else:
            reason = ["set-option", "-w", "-u", *target, "@fisk_reason"]
        return [
            "tmux",
            "-S",
            self.socket_path,
            "set-option",
            "-w",
            *target,
            "@fisk_state",
            report.state.value,
            ";",
            *reason,
            ";",
            "select-pane",
            *target,
            "-T",
            _tmux_title(report.title),
        ]

    async def deliver(self, report: PaneReport) -> None:
        if not self.titles_before:
            shown = ["display-message", "-p", "-t", self.pane_id, "#{pane_title}"]
            title = await _run(["tmux", "-S", self.socket_path, *shown])
            self.titles_before.append(title.removesuffix("\n"))
        await _run(self.command(report))

    def restore_command(self) -> list[str]:
        """The tmux invocation that unsets the options and puts the pane's title back."""
        target = ["-t", self.pane_id]
        title = self.titles_before[0] if self.titles_before else ""
        return [
            "tmux",
            "-S",
            self.socket_path,
            "set-option",
            "-w",
            "-u",
            *target,
            "@fisk_state",
            ";",
            "set-option",
            "-w",
            "-u",
            *target,
            "@fisk_reason",
            ";",
            "select-pane",
            *target,
            "-T",
            _tmux_title(title),
        ]

    async def restore(self) -> None:
        await _run(self.restore_command())


@dataclass(frozen=True)
class ZellijPane:
    """A zellij pane, renamed to the report's title. Untested here: zellij is not installable.

    With ``ZELLIJ_PANE_ID`` known the rename names the pane, because a bare ``rename-pane`` renames
    whichever pane has focus, and that is the wrong one exactly when the operator is elsewhere.
    """

    pane_id: str | None

    @property
    def name(self) -> str:
        return "zellij"

    def command(self, report: PaneReport) -> list[str]:
        target = ["--pane-id", self.pane_id] if self.pane_id else []
        return ["zellij", "action", "rename-pane", *target, report.title]

    async def deliver(self, report: PaneReport) -> None:
        await _run(self.command(report))

    async def restore(self) -> None:
        target = ["--pane-id", self.pane_id] if self.pane_id else []
        await _run(["zellij", "action", "undo-rename-pane", *target])


def _tmux(environ: Mapping[str, str]) -> Multiplexer | None:
    server = environ.get("TMUX", "")
    pane_id = environ.get("TMUX_PANE", "")
    # TMUX is "<socket path>,<server pid>,<session>"; the path itself may hold commas.
    socket_path = server.rsplit(",", 2)[0] if server.count(",") >= 2 else server
    if not socket_path or not _TMUX_PANE_ID.fullmatch(pane_id):
        return None
    return TmuxPane(socket_path=socket_path, pane_id=pane_id)


def _zellij(environ: Mapping[str, str]) -> Multiplexer | None:
    if "ZELLIJ" not in environ:
        return None
    return ZellijPane(pane_id=environ.get("ZELLIJ_PANE_ID") or None)


_DETECTORS = (_tmux, _zellij)


def detect(environ: Mapping[str, str]) -> Multiplexer | None:
    """The multiplexer whose pane this environment describes, or None outside one.

    The first detector whose variables are present claims the process; tmux is asked first.
    """
    for detector in _DETECTORS:
        multiplexer = detector(environ)
        if multiplexer is not None:
            return multiplexer
    return None
