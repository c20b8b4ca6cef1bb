"""The memory store a host opens once for all its runs, from agent.yaml.

The file backend resolves a relative directory against the working directory, like every store
path, and is checked at startup (a symlinked or non-directory path fails then, not on the first
write). The jetstream backend connects through the configuration's ``nats_context`` (the
selected context when it is empty), binds the bucket at startup, and keeps that connection for
as long as the host runs; a bucket that is missing or of the wrong shape fails the host before
any run starts.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from fisk_ai import config
from fisk_ai.memory import MemoryStoreError, StoreInfo, UnopenedStore, lookup_backend

if TYPE_CHECKING:
    from fisk_ai.agent.resources import MemoryAccess
    from fisk_ai.memory import MemoryStore

__all__ = ["memory_location", "open_memory", "unopened_memory"]

_log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_memory(cfg: config.Config) -> AsyncIterator[MemoryAccess | None]:
    """The memory every run of ``cfg`` shares, or None when harness.memory is not enabled."""
    from fisk_ai.agent.resources import MemoryAccess

    memory = cfg.harness.memory
    if not memory.enabled:
        yield None
        return
    options = memory.backend_options
    factory = lookup_backend(memory.backend.value)
    if isinstance(options, config.FileMemoryOptions):
        store: MemoryStore = factory(directory=Path(options.directory))
        # Listing checks the directory the way every later call will.
        await store.list()
        yield MemoryAccess(store, index=not memory.no_index)
        return

    assert isinstance(options, config.JetStreamMemoryOptions)
    from fisk_ai.broker.context import connect_options, jetstream_options, load_context
    from fisk_ai.memory.jetstream import JetStreamMemoryStore

    context = load_context(cfg.nats_context or None)
    import nats

    try:
        connection = await nats.connect(
            **connect_options(context), name="fisk-ai memory", error_cb=_note_client_error
        )
    except (nats.errors.Error, OSError) as failure:
        reason = str(failure).removeprefix("nats: ").strip() or type(failure).__name__
        raise MemoryStoreError(
            f"cannot reach NATS at {context.redacted_url} through NATS context {context.name} "
            f"for the jetstream memory backend ({reason}); check the context's url and "
            "credentials, or change nats_context"
        ) from None
    try:
        store = factory(
            bucket=options.bucket,
            connection=connection,
            prefix=options.prefix if options.prefix is not None else cfg.identity,
            require_read_before_update=not options.no_require_read_before_update,
            nats_context=context.name,
            jetstream_options=jetstream_options(context),
        )
        if isinstance(store, JetStreamMemoryStore):
            await store.bind()
        yield MemoryAccess(store, index=not memory.no_index)
    finally:
        with contextlib.suppress(Exception):
            await connection.close()


def unopened_memory(cfg: config.Config) -> MemoryStore | None:
    """A stand-in store for listing the memory tools without opening anything (``fisk info``)."""
    if not cfg.harness.memory.enabled:
        return None
    return UnopenedStore(StoreInfo(cfg.harness.memory.backend.value))


def memory_location(cfg: config.Config) -> str:
    """Where the configuration keeps memory, in a phrase for a banner: the backend and the
    directory or bucket (with its prefix), or "disabled"."""
    memory = cfg.harness.memory
    if not memory.enabled:
        return "disabled"
    options = memory.backend_options
    if isinstance(options, config.FileMemoryOptions):
        where = options.directory
    else:
        prefix = options.prefix if options.prefix is not None else cfg.identity
        where = f"{options.bucket}, prefix {prefix}" if prefix else f"{options.bucket}, flat"
    access = ", read-only" if memory.read_only else ""
    return f"{memory.backend.value} ({where}{access})"


async def _note_client_error(error: Exception) -> None:
    # nats-py reports every failed attempt here; without a callback it prints a traceback.
    _log.debug("memory store NATS client error: %s", error)
