"""Fixtures for the MCP tests: entries for the SDK-written echo server over stdio and over
streamable HTTP, the latter served in this process on a socket bound before it starts."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from fisk_ai.config.models import McpClient

ECHO_SERVER = Path(__file__).resolve().parent / "echo_server.py"


def stdio_entry(name: str = "echo", **fields: Any) -> McpClient:
    """An mcp_clients entry starting the echo server as a stdio child."""
    return McpClient.model_validate(
        {
            "name": name,
            "alias": fields.pop("alias", name),
            "command": sys.executable,
            "args": [str(ECHO_SERVER)],
            **fields,
        }
    )


def http_entry(url: str, name: str = "web", **fields: Any) -> McpClient:
    return McpClient.model_validate(
        {"name": name, "alias": fields.pop("alias", name), "url": url, **fields}
    )


@contextlib.asynccontextmanager
async def served_over_http(app: Any) -> AsyncIterator[str]:
    """Serve an ASGI ``app`` on a free loopback port until the block ends; yields the URL of
    its /mcp endpoint once it accepts connections. The socket is bound the way `fisk mcp` binds
    its own, so what is timed over it is what `fisk mcp` serves."""
    import uvicorn

    from fisk_ai.mcpserver.listener import bind

    sock = bind("127.0.0.1", 0)
    started = asyncio.Event()

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            started.set()

    server = Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    await started.wait()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
def free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


RAW_SERVER = Path(__file__).resolve().parent / "raw_server.py"


def raw_entry(name: str = "raw", **env: str) -> McpClient:
    """An mcp_clients entry starting the hand-written handshake-era server of raw_server.py."""
    return McpClient.model_validate(
        {
            "name": name,
            "alias": name,
            "command": sys.executable,
            "args": [str(RAW_SERVER)],
            "env": env,
        }
    )
