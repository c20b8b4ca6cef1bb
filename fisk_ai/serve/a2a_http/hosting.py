"""The A2A HTTP endpoint as `fisk serve` hosts it, beside the prompts channel it is a door into.

The listening socket is bound before the banner is printed, so the banner and the card name the
port in use (port 0 picks a free one). The agent card is served to anyone; with
``token_env`` every JSON-RPC call must carry ``Authorization: Bearer <token>``, and without one
on an address other than loopback the operator is warned that anyone reaching the port runs the
agent. The endpoint closes when the worker's stack unwinds, after the prompts channel drained.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fisk_ai.errors import FiskError
from fisk_ai.util.listening import QuietServer, listening_socket

if TYPE_CHECKING:
    from fisk_ai.a2a.transport import Transport
    from fisk_ai.agent.resources import Resources
    from fisk_ai.config import A2aHttpExposure, Config

__all__ = [
    "A2A_HTTP_CLIENT",
    "RPC_PATH",
    "A2aHttpEndpoint",
    "serve_a2a_http",
    "unauthenticated_warning",
]

RPC_PATH = "/"
A2A_HTTP_CLIENT = "a2a-http"
"""The sender name the endpoint's prompts carry, as the operator log shows it."""

_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_App = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


@dataclass(frozen=True)
class A2aHttpEndpoint:
    """What the started endpoint is: where it listens, the URL its card gives callers, where
    the card is, and whether calls need the bearer token."""

    listening: str
    url: str
    card_url: str
    bearer: bool


def unauthenticated_warning(address: str) -> str:
    return (
        f"expose.agent.a2a_http listens on {address} without a token: anyone who reaches it "
        "runs this agent's tools against a prompt of their choosing; set "
        "expose.agent.a2a_http.token_env (docs/a2a.md, A2A 1.0 over HTTP)"
    )


@contextlib.asynccontextmanager
async def serve_a2a_http(
    cfg: Config,
    transport: Transport,
    resources: Resources,
    *,
    version: str,
    application: str,
    warn: Callable[[str], None],
    environ: Mapping[str, str] | None = None,
) -> AsyncIterator[A2aHttpEndpoint]:
    """The A2A endpoint of ``cfg``, listening, until the block ends."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
    from starlette.applications import Starlette

    from fisk_ai.a2a.messages import Identity
    from fisk_ai.a2a.prompts_client import PromptsClient
    from fisk_ai.config.funnel import is_loopback_address
    from fisk_ai.serve.a2a_http.card import agent_card
    from fisk_ai.serve.a2a_http.executor import PromptsExecutor

    http = cfg.expose.agent.a2a_http
    a2a = cfg.expose.agent.a2a
    assert http is not None and a2a is not None, "SERVE validation admits nothing else"
    token = _token(http, os.environ if environ is None else environ)
    if not token and not is_loopback_address(http.address):
        warn(unauthenticated_warning(http.address))
    sock = listening_socket(
        http.address,
        http.port,
        address_setting="expose.agent.a2a_http.address",
        port_setting="expose.agent.a2a_http.port",
    )
    try:
        listening = _listening_url(sock)
        url = http.public_url or listening
        tools = resources.tools() if callable(resources.tools) else resources.tools
        card = agent_card(
            identity=cfg.identity,
            version=version,
            application=application,
            url=url,
            tools=tools,
            bearer=bool(token),
        )
        executor = PromptsExecutor(
            PromptsClient(
                transport,
                cfg.identity,
                request_timeout=a2a.request_timeout,
                sender=Identity(name=A2A_HTTP_CLIENT),
            ),
            question_window=a2a.request_timeout,
        )
        handler = DefaultRequestHandler(
            agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
        )
        app = Starlette(
            routes=[
                *create_agent_card_routes(card),
                *create_jsonrpc_routes(handler, rpc_url=RPC_PATH, enable_v0_3_compat=True),
            ]
        )
        asgi: _App = _BearerGate(app, token, open_path=AGENT_CARD_WELL_KNOWN_PATH) if token else app
        import uvicorn

        server = QuietServer(uvicorn.Config(asgi, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve(sockets=[sock]), name="a2a-http")
        try:
            await _started(server, serving)
            yield A2aHttpEndpoint(
                listening=listening,
                url=url,
                card_url=url.rstrip("/") + AGENT_CARD_WELL_KNOWN_PATH,
                bearer=bool(token),
            )
        finally:
            server.should_exit = True
            await asyncio.gather(serving, return_exceptions=True)
            await handler.aclose()
            await executor.aclose()
    finally:
        sock.close()


def _token(http: A2aHttpExposure, environ: Mapping[str, str]) -> str:
    if not http.token_env:
        return ""
    token = environ.get(http.token_env, "").strip()
    if not token:
        raise FiskError(
            f"expose.agent.a2a_http.token_env names {http.token_env}, which is not set; "
            "export the bearer token callers must send before starting fisk serve"
        )
    return token


def _listening_url(sock: socket.socket) -> str:
    """The URL a caller on this host reaches the endpoint at."""
    import ipaddress

    host, port = sock.getsockname()[:2]
    if ipaddress.ip_address(host).is_unspecified:
        host = "127.0.0.1" if ":" not in host else "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}{RPC_PATH}"


class _BearerGate:
    """Lets through a request carrying the token, and the card's path to anyone; answers the
    rest 401 with the challenge RFC 6750 names."""

    def __init__(self, app: _App, token: str, *, open_path: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()
        self._open_path = open_path

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http" or scope.get("path") == self._open_path:
            await self._app(scope, receive, send)
            return
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if secrets.compare_digest(given, self._expected):
            await self._app(scope, receive, send)
            return
        body = b'{"error":"this endpoint needs Authorization: Bearer <token>"}'
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="fisk-ai"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def _started(server: QuietServer, serving: asyncio.Task[None]) -> None:
    """Return once ``server`` listens; raise what stopped it first."""
    if not await server.listening(serving):
        serving.result()
        raise FiskError("the A2A HTTP endpoint stopped before it listened")
