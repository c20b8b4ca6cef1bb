"""Serving the MCP endpoint over streamable HTTP until interrupted.

The listening socket is bound before the banner is printed, so the banner names the port in use
(``--port 0`` picks a free one); every connection it accepts has Nagle's algorithm off. The
first interrupt (SIGINT or SIGTERM) drains: no new connection is taken and calls already running
finish; a second one stops at once.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fisk_ai.util.listening import QuietServer, listening_socket

if TYPE_CHECKING:
    from fisk_ai.mcpserver.serving import ToolCalls

__all__ = ["ENDPOINT_PATH", "ROOT_PATH", "bind", "endpoint_url", "serve_mcp", "streamable_app"]

ENDPOINT_PATH = "/mcp"
ROOT_PATH = "/"
DRAINING_LINE = "draining: finishing running calls; interrupt again to stop at once"
STOPPED_LINE = "MCP server stopped"


def bind(address: str, port: int) -> socket.socket:
    """A listening socket on ``address``:``port``, or an error naming the flags to change."""
    return listening_socket(
        address,
        port,
        address_setting="--address (or FISK_AI_MCP_ADDRESS, expose.agent.mcp.address)",
        port_setting="--port (or FISK_AI_MCP_PORT, expose.agent.mcp.port)",
    )


def endpoint_url(sock: socket.socket) -> str:
    """The URL a client on this host reaches the endpoint at."""
    host, port = sock.getsockname()[:2]
    if ipaddress.ip_address(host).is_unspecified:
        # Listening on every interface; a client on this host reaches it on loopback.
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}{ENDPOINT_PATH}"


def streamable_app(calls: ToolCalls, host: str) -> Any:
    """The ASGI app serving ``calls`` over streamable HTTP at /mcp and at the root, where the
    Go fisk-ai serves it (its docs configure clients with ``http://127.0.0.1:8080``)."""
    from starlette.routing import Route

    from fisk_ai.mcpserver.serving import build_server

    app = build_server(calls).streamable_http_app(streamable_http_path=ENDPOINT_PATH, host=host)
    endpoint = next(
        route.endpoint
        for route in app.routes
        if isinstance(route, Route) and route.path == ENDPOINT_PATH
    )
    app.router.routes.append(Route(ROOT_PATH, endpoint=endpoint))
    return app


async def serve_mcp(
    calls: ToolCalls,
    sock: socket.socket,
    *,
    announce: Callable[[], None],
    say: Callable[[str], None],
) -> int:
    """Serve ``calls`` on ``sock`` until interrupted; 0 after a clean drain."""
    import uvicorn

    app = streamable_app(calls, str(sock.getsockname()[0]))
    server = QuietServer(uvicorn.Config(app, log_level="warning", lifespan="on"))
    folded = HangUpFolding(say)
    loop = asyncio.get_running_loop()
    interrupts = 0

    def interrupted() -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1:
            say(DRAINING_LINE)
            server.should_exit = True
        else:
            server.force_exit = True

    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, interrupted)
    folded.install()
    try:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        if await server.listening(serving):
            announce()
        await serving
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)
        folded.remove()
        sock.close()
    say(STOPPED_LINE)
    return 0


HUNG_UP_LINE = "mcp: a client went away before its answer was sent; the answer was dropped"
# The SDK's transport and uvicorn each log a client's hang-up mid-call with a traceback.
_TRANSPORT_LOGGERS = ("mcp.server.streamable_http", "uvicorn.error")


class HangUpFolding(logging.Filter):
    """Folds the tracebacks the SDK's transport and uvicorn log when a client hangs up during
    a call into one line on the operator's log. A client going away is routine, and its stack
    says nothing the operator can act on; any other failure keeps its first line, and
    ``--verbose`` keeps every traceback."""

    def __init__(self, say: Callable[[str], None]) -> None:
        super().__init__()
        self._say = say

    def install(self) -> None:
        for name in _TRANSPORT_LOGGERS:
            logging.getLogger(name).addFilter(self)

    def remove(self) -> None:
        for name in _TRANSPORT_LOGGERS:
            logging.getLogger(name).removeFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is None or logging.getLogger().isEnabledFor(logging.INFO):
            return True
        failure = record.exc_info[1]
        if _after_hang_up(failure):
            # uvicorn's echo of a hang-up the transport already reported.
            return False
        if _is_hang_up(failure):
            self._say(HUNG_UP_LINE)
        else:
            self._say(f"mcp: {record.getMessage()}: {_first_line(failure)}")
        return False


def _is_hang_up(failure: BaseException | None) -> bool:
    import anyio

    while failure is not None:
        if isinstance(failure, anyio.ClosedResourceError | anyio.BrokenResourceError):
            return True
        failure = failure.__cause__ or failure.__context__
    return False


def _after_hang_up(failure: BaseException | None) -> bool:
    return (
        isinstance(failure, RuntimeError)
        and "after response already completed" in str(failure)
        and _is_hang_up(failure.__context__)
    )


def _first_line(failure: BaseException | None) -> str:
    text = str(failure).strip().splitlines()
    return f"{type(failure).__name__}: {text[0]}" if text else type(failure).__name__
