"""An agent's resources, composed once for whoever hosts it: `fisk run` for its terminal,
`fisk serve` for its channels, or an embedder.

The order is the startup contract. Telemetry resolves first, so a bad endpoint fails before
anything is opened; then the session store, memory (a missing bucket or a bad directory fails
here), knowledge (an index of another format fails here), the remote_tools hosts and the MCP
servers, each connected once and shared by every run; then the tool set over all of them, where
a name collision fails. Everything closes in reverse order on exit, telemetry's flush last.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from fisk_ai.agent.application import ApplicationTools
    from fisk_ai.agent.resources import MemoryAccess, Resources
    from fisk_ai.config import Config
    from fisk_ai.llm.types import Provider
    from fisk_ai.memory import MemoryStore
    from fisk_ai.telemetry import Delivery

__all__ = ["Composition", "compose_agent", "injected_memory"]


@dataclass(frozen=True)
class Composition:
    """How one host wants the agent's resources: the session directory (``--state-dir``), the
    directory command tools run in, whether its runs are chats with an input bar, verbosity,
    whether telemetry is switched off (``--no-telemetry``), and an embedder's own memory
    store, used instead of opening the one harness.memory describes (``injected_memory``)."""

    state_dir: str | None = None
    work_dir: Path | None = None
    interactive: bool = False
    verbose: bool = False
    no_telemetry: bool = False
    memory_store: MemoryStore | None = None


@contextlib.asynccontextmanager
async def compose_agent(
    cfg: Config,
    composition: Composition,
    *,
    provider: Provider,
    application_tools: ApplicationTools,
    warn: Callable[[str], None],
    note: Callable[[str], None],
    delivered: Callable[[Delivery], None] = lambda _: None,
) -> AsyncIterator[Resources]:
    """What every run of the agent of ``cfg`` shares, until the block ends. ``warn`` gets each
    remote_tools and MCP warning, ``note`` the sentence telling why telemetry is off when
    exporter variables are set, and ``delivered`` what an exporting telemetry handle delivered,
    once it has flushed. The provider and ``application_tools`` are the caller's, built first
    so a missing key or a broken application fails before anything connects; the provider
    stays the caller's to close."""
    from fisk_ai.agent.application import (
        live_tool_set,
        operator_secret_env_names,
        run_system_prompt,
    )
    from fisk_ai.agent.resources import Resources
    from fisk_ai.agent.settings import settings_from_config
    from fisk_ai.knowledge.access import open_knowledge
    from fisk_ai.serve.memory import open_memory
    from fisk_ai.serve.observability import start_hosted_telemetry
    from fisk_ai.serve.remote import import_remote_tools
    from fisk_ai.serve.stores import check_session_store, session_store_for

    telemetry = start_hosted_telemetry(cfg, no_telemetry=composition.no_telemetry, note=note)

    async def flush() -> None:
        delivery = await asyncio.to_thread(telemetry.shutdown)
        if telemetry.enabled:
            delivered(delivery)

    async with contextlib.AsyncExitStack() as opened:
        opened.push_async_callback(flush)
        store = session_store_for(cfg, composition.state_dir)
        # Every store is reached before the first run, as the memory bucket is: a missing
        # stream fails the start, not each run that arrives.
        await check_session_store(store)
        memory = (
            await opened.enter_async_context(open_memory(cfg))
            if composition.memory_store is None
            else await injected_memory(cfg, composition.memory_store)
        )
        if memory is not None:
            info = memory.store.info()
            telemetry.memory_store(info.backend, info.location)
        knowledge = await opened.enter_async_context(open_knowledge(cfg))
        remote = await opened.enter_async_context(import_remote_tools(cfg, strict=True))
        for warning in remote.warnings:
            warn(warning)
        mcp = None
        if cfg.mcp_clients:
            # Imported only when configured: the MCP SDK costs a run that uses none its startup.
            from fisk_ai.tools.mcp.sessions import open_mcp_sessions

            mcp = await opened.enter_async_context(
                open_mcp_sessions(
                    cfg.mcp_clients, warn=warn, secret_env_names=operator_secret_env_names(cfg)
                )
            )
        tools = live_tool_set(
            cfg,
            application_tools,
            remote.hosts,
            memory.store if memory is not None else None,
            mcp,
            knowledge=knowledge,
        )
        settings = settings_from_config(
            cfg,
            interactive=composition.interactive,
            verbose=composition.verbose,
            work_dir=composition.work_dir,
        )
        current = tools() if callable(tools) else tools
        telemetry.ready(tools_by_kind=Counter(tool.kind.value for tool in current))
        yield Resources(
            settings,
            provider,
            tools,
            store,
            system=run_system_prompt(cfg),
            memory=memory,
            telemetry=telemetry,
        )


async def injected_memory(cfg: Config, store: MemoryStore) -> MemoryAccess:
    """The memory runs share when an embedder passes its own ``store``: harness.memory must be
    enabled (a store the runs would never use is refused, not ignored), a backend named in
    harness.memory.backend must be the store's, and the store is reached once before any run,
    as a configured one is."""
    from fisk_ai.agent.resources import MemoryAccess
    from fisk_ai.memory import MemoryStoreError, check_injected_backend

    memory = cfg.harness.memory
    if not memory.enabled:
        raise MemoryStoreError(
            "a memory store was passed in but harness.memory.enabled is false; set it to true "
            "for the runs to use the store"
        )
    named = memory.backend.value if "backend" in memory.model_fields_set else None
    check_injected_backend(store, named)
    await store.list()
    return MemoryAccess(store, index=not memory.no_index)
