"""The prompts engine as `fisk serve` hosts it: the resources its runs share, and the engine
over them.

The provider, the tool set (with the remote_tools hosts), the session store, the memory store and
the run settings are built once at startup and handed to every turn, so a missing key, an
unreachable peer, a missing memory bucket or a bad --state-dir fails the process before the
first caller does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.a2a.transport import Transport
    from fisk_ai.agent.application import ApplicationTools
    from fisk_ai.agent.resources import Resources
    from fisk_ai.config import Config
    from fisk_ai.llm.types import Provider
    from fisk_ai.serve.prompts.engine import PromptsServer
    from fisk_ai.serve.prompts.intake import PromptsChannel
    from fisk_ai.telemetry import Telemetry

__all__ = ["answer_prompts", "prompts_channel", "shared_resources"]

_log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def shared_resources(
    cfg: Config,
    *,
    provider: Provider,
    application_tools: ApplicationTools,
    state_dir: str | None,
    work_dir: Path | None,
    warn: Callable[[str], None],
    no_telemetry: bool = False,
) -> AsyncIterator[Resources]:
    """What every run of every channel of one `fisk serve` process shares: the provider, the
    tool set (remote_tools hosts and MCP sessions connected once), the session, memory and
    knowledge stores and the run settings, and the telemetry handle (off with
    ``no_telemetry``). On exit the connections they hold close; the provider stays the
    caller's to close."""
    from fisk_ai.agent.application import live_tool_set, run_system_prompt
    from fisk_ai.agent.resources import Resources
    from fisk_ai.agent.settings import settings_from_config
    from fisk_ai.knowledge.access import open_knowledge
    from fisk_ai.serve.memory import open_memory
    from fisk_ai.serve.observability import start_hosted_telemetry
    from fisk_ai.serve.remote import import_remote_tools
    from fisk_ai.serve.stores import session_store_for
    from fisk_ai.tools.mcp.sessions import open_mcp_sessions

    store = session_store_for(cfg, state_dir)
    # Resolved before anything is opened, so a bad endpoint fails the start; flushed last.
    telemetry = start_hosted_telemetry(cfg, no_telemetry=no_telemetry, note=_say)
    async with (
        _flushed_at_exit(telemetry),
        open_memory(cfg) as memory,
        open_knowledge(cfg) as knowledge,
        import_remote_tools(cfg, strict=True) as remote,
        # Connected once at startup and shared by every run; a server that cannot be reached
        # stops the worker from starting, and a run never opens or closes a session.
        open_mcp_sessions(cfg.mcp_clients, warn=warn) as mcp,
    ):
        for warning in remote.warnings:
            warn(warning)
        tools = live_tool_set(
            cfg,
            application_tools,
            remote.hosts,
            memory.store if memory is not None else None,
            mcp,
            knowledge=knowledge,
        )
        settings = settings_from_config(cfg, work_dir=work_dir, interactive=True)
        yield Resources(
            settings,
            provider,
            tools,
            store,
            system=run_system_prompt(cfg),
            memory=memory,
            telemetry=telemetry,
        )


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@contextlib.asynccontextmanager
async def _flushed_at_exit(telemetry: Telemetry) -> AsyncIterator[None]:
    try:
        yield
    finally:
        delivery = await asyncio.to_thread(telemetry.shutdown)
        if telemetry.enabled:
            _say(f"telemetry: {delivery.summary()}")


def prompts_channel(
    cfg: Config, transport: Transport, resources: Resources, *, gates: int
) -> PromptsChannel:
    """The prompts channel of ``cfg`` over ``resources``, for a Server the caller builds."""
    from fisk_ai.serve.prompts.intake import PromptsChannel
    from fisk_ai.serve.prompts.options import PromptsOptions

    a2a = cfg.expose.agent.a2a
    assert a2a is not None and a2a.prompts is not None, "SERVE validation admits nothing else"
    if gates and not a2a.prompts.elicit:
        _log.info(
            "%d gated tools are refused in answered prompts, since nobody is asked without "
            "expose.agent.a2a.prompts.elicit",
            gates,
        )
    return PromptsChannel(
        transport,
        resources,
        PromptsOptions(
            identity=cfg.identity,
            workers=a2a.prompts.workers,
            request_timeout=a2a.request_timeout,
            elicit=a2a.prompts.elicit,
        ),
    )


@contextlib.asynccontextmanager
async def answer_prompts(
    cfg: Config,
    transport: Transport,
    *,
    provider: Provider,
    application_tools: ApplicationTools,
    state_dir: str | None,
    work_dir: Path | None,
    warn: Callable[[str], None],
) -> AsyncIterator[PromptsServer]:
    """Start answering prompts for ``cfg.identity`` on ``transport``; on exit the engine
    abandons any turn still running (each caller is told), and the remote_tools connection
    closes. The provider stays the caller's to close."""
    from fisk_ai.serve.prompts.engine import PromptsServer

    async with shared_resources(
        cfg,
        provider=provider,
        application_tools=application_tools,
        state_dir=state_dir,
        work_dir=work_dir,
        warn=warn,
    ) as resources:
        channel = prompts_channel(cfg, transport, resources, gates=len(application_tools.gates))
        server = PromptsServer(transport, resources, channel.options)
        await server.start()
        try:
            yield server
        finally:
            await server.close()
