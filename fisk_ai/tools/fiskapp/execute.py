"""Running an application subprocess: its own process group, one pipe, bounded memory.

Both output streams share one pipe so their interleaving survives. The child leads a new process
group, so stopping it stops whatever it forked too. On Linux the child also dies (SIGKILL) when
the run that started it dies, even killed outright, so a SIGKILLed run leaves no tool running.
Memory is bounded however much the child prints: command output is kept as a head and a tail, and
introspection output is refused past a cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fisk_ai.util.lifetime import die_with_this_process

OUTPUT_LIMIT = 64 * 1024
TRUNCATION_MARKER = "\n...[output truncated]...\n"

# How long the pipe may stay open after the child is gone: a grandchild that left the group can
# hold it forever, and the caller must not hang on it.
PIPE_DRAIN_GRACE = 10.0


class OutputCapture:
    """Keeps the first ``limit`` bytes and the last ``limit / 2`` bytes of a stream.

    When the stream is longer than ``limit``, the result is the first half-limit bytes, a marker,
    and the last half-limit bytes. Memory stays near ``1.5 * limit`` however long the stream.
    """

    __slots__ = ("_head", "_limit", "_tail", "_total")

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self._limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    def write(self, data: bytes) -> None:
        self._total += len(data)
        room = self._limit - len(self._head)
        if room > 0:
            self._head += data[:room]
        keep = self._limit // 2
        if len(data) >= keep:
            self._tail[:] = data[-keep:]
        else:
            self._tail += data
            if len(self._tail) > keep:
                del self._tail[: len(self._tail) - keep]

    @property
    def total(self) -> int:
        return self._total

    def result(self) -> tuple[str, bool]:
        """The captured text (UTF-8, invalid bytes replaced) and whether it was truncated."""
        if self._total <= self._limit:
            return self._head.decode("utf-8", errors="replace"), False
        head = self._head[: self._limit // 2].decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        return head + TRUNCATION_MARKER + tail, True


class _PipeReader(asyncio.Protocol):
    def __init__(self, sink: Callable[[bytes], None], closed: asyncio.Future[None]) -> None:
        self._sink = sink
        self._closed = closed

    def data_received(self, data: bytes) -> None:
        self._sink(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._closed.done():
            self._closed.set_result(None)


@dataclass
class ChildProcess:
    """A started child whose combined output is being fed to a sink."""

    process: asyncio.subprocess.Process
    transport: asyncio.ReadTransport
    pipe_closed: asyncio.Future[None]

    def kill_group(self) -> None:
        """SIGKILL the child's whole process group; a group already gone is not an error."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def settle(self, limit_seconds: float | None, grace: float = PIPE_DRAIN_GRACE) -> bool:
        """Wait for the child to exit, killing its group past ``limit_seconds``, then give the
        pipe up to ``grace`` seconds to drain. Returns whether the limit was reached."""
        timed_out = False
        try:
            await asyncio.wait_for(self.process.wait(), limit_seconds)
        except TimeoutError:
            timed_out = True
            self.kill_group()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), grace)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.pipe_closed), grace)
        self.transport.close()
        return timed_out

    async def abandon(self, grace: float = PIPE_DRAIN_GRACE) -> None:
        """Stop everything at once, for a caller cancelled mid-run, and reap the child so it is
        not left to the event loop's finaliser."""
        self.kill_group()
        self.transport.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), grace)


async def start_child(
    program: str,
    args: Sequence[str],
    *,
    cwd: Path | None,
    env: Mapping[str, str],
    sink: Callable[[bytes], None],
) -> ChildProcess:
    """Start ``program`` with ``args`` (never through a shell), stdin closed, stdout and stderr
    into one pipe read into ``sink``, as the leader of a new process group.

    Raises OSError when the program cannot be started.
    """
    read_fd, write_fd = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            program,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            # A run killed outright stops nothing itself; the kernel kills the group's leader.
            preexec_fn=die_with_this_process(signal.SIGKILL),
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)

    loop = asyncio.get_running_loop()
    closed: asyncio.Future[None] = loop.create_future()
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(lambda: _PipeReader(sink, closed), pipe)
    except BaseException:
        pipe.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        raise
    return ChildProcess(process, transport, closed)


@dataclass(frozen=True)
class CommandRun:
    """What one run of a command produced.

    ``exit_code`` follows the shell's convention for a child killed by a signal (128 + signal).
    """

    output: str
    truncated: bool
    exit_code: int
    timed_out: bool


async def run_command(
    program: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    work_dir: Path | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - expiry must kill the process group
    output_limit: int = OUTPUT_LIMIT,
    drain_grace: float = PIPE_DRAIN_GRACE,
) -> CommandRun:
    """Run one command to completion, or stop its process group after ``timeout`` seconds.

    A non-zero exit is an ordinary result. Raises OSError when the program cannot be started.
    """
    capture = OutputCapture(output_limit)
    child = await start_child(program, args, cwd=work_dir, env=env, sink=capture.write)
    try:
        timed_out = await child.settle(timeout, drain_grace)
    except BaseException:
        await child.abandon(drain_grace)
        raise
    output, truncated = capture.result()
    return CommandRun(
        output=output,
        truncated=truncated,
        exit_code=exit_code_of(child.process.returncode),
        timed_out=timed_out,
    )


def exit_code_of(returncode: int | None) -> int:
    """A process's exit status, with a death by signal N reported as 128 + N."""
    if returncode is None:
        return -1
    if returncode < 0:
        return 128 - returncode
    return returncode
