"""Serving the ACP agent on standard input and output until the client goes.

Standard output carries protocol frames and nothing else: the protocol writes to a duplicate of
it, and file descriptor 1 itself is pointed at standard error before anything is hosted, so a
stray print, a library's output or a child process that inherits it lands in the log instead.

When standard input ends (the client quit or crashed) or a SIGTERM arrives, every running turn
is stopped as Esc stops it and waited for, so its journal ends at a safe point and the session
can be loaded again; then the agent is let go.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
from typing import TYPE_CHECKING, cast

from fisk_ai.errors import FiskError

if TYPE_CHECKING:
    from acp.interfaces import Agent

    from fisk_ai.config import Config
    from fisk_ai.serve.local import RunOptions

__all__ = ["serve_acp"]

FRAME_LIMIT = 50 * 1024 * 1024
"""The longest frame read from the client, in bytes (a prompt may embed whole files)."""


def serve_acp(cfg: Config, options: RunOptions) -> int:
    """Host the agent of ``cfg`` and serve it over ACP on stdio; return the exit code."""
    for name, descriptor in (("standard input", 0), ("standard output", 1)):
        if not _streams_frames(descriptor):
            raise FiskError(
                f"fisk acp speaks the Agent Client Protocol over pipes, and its {name} is a "
                "file; start it from an ACP client such as Zed or Toad"
            )
    protocol_out = _claim_stdout()
    return asyncio.run(_serve(cfg, options, protocol_out))


def _streams_frames(descriptor: int) -> bool:
    """Whether ``descriptor`` is a pipe, a socket or a terminal, which the event loop can
    watch (a regular file or /dev/null it cannot)."""
    mode = os.fstat(descriptor).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(descriptor)


def _claim_stdout() -> int:
    """A descriptor for the protocol's frames; fd 1 becomes a copy of stderr."""
    sys.stdout.flush()
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    return protocol_out


async def _serve(cfg: Config, options: RunOptions, protocol_out: int) -> int:
    from acp.agent.connection import AgentSideConnection

    from fisk_ai.acp.sessions import AcpAgent
    from fisk_ai.serve.local import host_local_agent
    from fisk_ai.util.sanitize import single_line

    def say(text: str) -> None:
        print(single_line(text), file=sys.stderr, flush=True)

    async with host_local_agent(
        cfg,
        options,
        interactive=True,
        elicit=True,
        warn=lambda text: say(f"warning: {text}"),
        note=say,
    ) as hosted:
        reader, writer = await _protocol_streams(protocol_out)
        agent = AcpAgent(hosted, identity=cfg.identity)
        # The SDK's Agent protocol lists every method ACP has; the router answers "method not
        # found" for those this agent does not offer.
        connection = AgentSideConnection(cast("Agent", agent), writer, reader, listening=False)
        listening = asyncio.get_running_loop().create_task(connection.listen())
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, listening.cancel)
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await listening
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            await agent.wind_down()
            await connection.close()
    return 0


async def _protocol_streams(protocol_out: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=FRAME_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    frames = os.fdopen(protocol_out, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, frames)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
