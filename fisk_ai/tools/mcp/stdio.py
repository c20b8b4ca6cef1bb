"""A stdio MCP server as a child process in a process group of its own: newline-delimited
JSON-RPC over its stdin and stdout, as the streams the SDK's client reads and writes.

It stands in for the SDK's stdio transport for one reason, stopping. The SDK ends every child
the same way: stdin closed, two seconds to leave, then its group signalled. A server that hung
in the handshake was given that grace after its ``timeout`` had already run out. Here a start
the connection abandons kills the group at once, while an ordinary close keeps the SDK's order:
stdin closed, a grace, SIGTERM to the group, a grace, SIGKILL.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TextIO

import anyio
from anyio.streams.text import TextReceiveStream

if TYPE_CHECKING:
    from anyio.abc import Process
    from mcp.client._transport import TransportStreams
    from mcp.shared.message import SessionMessage

__all__ = ["GRACE_SECONDS", "stdio_child"]

GRACE_SECONDS = 2.0
"""How long a child is given to leave after its stdin closes, and again after SIGTERM."""


@contextlib.asynccontextmanager
async def stdio_child(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    errlog: TextIO,
    *,
    abandoned: Callable[[], bool],
) -> AsyncIterator[TransportStreams]:
    """Start ``command`` and carry messages to and from it until the block ends; then stop the
    child and its whole group, at once when ``abandoned()`` says the start was given up on."""
    import mcp_types
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [command, *args], env=dict(env), stderr=errlog, start_new_session=True
    )
    from_child, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, to_child = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        pending = ""
        try:
            async with from_child:
                async for chunk in TextReceiveStream(process.stdout):
                    *lines, pending = (pending + chunk).split("\n")
                    for line in lines:
                        message: SessionMessage | Exception
                        try:
                            parsed = mcp_types.jsonrpc_message_adapter.validate_json(
                                line, by_name=False
                            )
                            message = SessionMessage(parsed)
                        except ValueError as exc:
                            message = exc
                        await from_child.send(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        # Whatever the child still writes is read and dropped, so it is never stuck writing
        # to a full pipe when it should be leaving.
        with contextlib.suppress(Exception):
            async for _ in process.stdout:
                pass

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with to_child:
                async for outgoing in to_child:
                    data = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The child stopped reading: end the session's read side rather than leave a
            # request waiting for an answer that cannot come.
            await from_child.aclose()

    async with anyio.create_task_group() as pipes:
        pipes.start_soon(read_stdout)
        pipes.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, at_once=abandoned())
                for stream in (read_stream, write_stream, from_child, to_child):
                    await stream.aclose()
            pipes.cancel_scope.cancel()


async def _stop(process: Process, *, at_once: bool) -> None:
    if at_once:
        _signal_group(process.pid, signal.SIGKILL)
    else:
        assert process.stdin is not None
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
        if not await _exited(process, GRACE_SECONDS):
            _signal_group(process.pid, signal.SIGTERM)
            if not await _exited(process, GRACE_SECONDS):
                _signal_group(process.pid, signal.SIGKILL)
    if await _exited(process, GRACE_SECONDS):
        with contextlib.suppress(Exception):
            await process.aclose()


def _signal_group(group: int, number: signal.Signals) -> None:
    # The child leads its own session, so its pid is its group's id: the signal reaches
    # every process it started, even those whose parent already left.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, number)


async def _exited(process: Process, seconds: float) -> bool:
    """Whether the child has exited within ``seconds``. anyio's wait is for the exit alone,
    not for the pipes too, which a grandchild may hold open."""
    with anyio.move_on_after(seconds):
        await process.wait()
    return process.returncode is not None
