"""The session store a command uses, from agent.yaml and the --state-dir flag."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fisk_ai import config
from fisk_ai.errors import FiskError
from fisk_ai.sessions import (
    FileSessionStore,
    SessionError,
    SessionStore,
    default_state_directory,
    lookup_backend,
)
from fisk_ai.sessions.backends import backend_requires_nats

if TYPE_CHECKING:
    from nats.aio.client import Client as NatsClient

__all__ = [
    "STARTUP_PROBE_SESSION",
    "check_session_store",
    "open_session_store",
    "session_store_for",
]

_log = logging.getLogger(__name__)

STARTUP_PROBE_SESSION = "s-startup-probe"
"""The session id a startup probe looks up; any id will do, since only the lookup matters."""


async def check_session_store(store: SessionStore) -> None:
    """Reach ``store`` once, as a process that serves runs does before it takes any, so a
    missing stream or an unreachable server fails the start rather than the first run that
    arrives. Raises a FiskError naming harness.sessions."""
    try:
        await store.exists(STARTUP_PROBE_SESSION)
    except SessionError as error:
        raise FiskError(f"harness.sessions cannot be used: {error}") from None


def session_store_for(cfg: config.Config | None, state_dir: str | None) -> SessionStore:
    """The configured session backend; ``--state-dir`` overrides the file backend's directory
    and is refused with any other backend rather than silently ignored.

    A backend that reaches NATS does so through the configuration's ``nats_context`` (the
    selected context when it is empty): the context file is read here, and the connection is
    made when the store is first used and closed once it is idle.
    """
    if cfg is None:
        return FileSessionStore(Path(state_dir) if state_dir else default_state_directory())
    sessions = cfg.harness.sessions
    return open_session_store(
        sessions.backend.value,
        sessions.backend_options.model_dump(),
        nats_context=cfg.nats_context,
        state_dir=state_dir,
    )


def open_session_store(
    backend: str,
    options: Mapping[str, Any],
    *,
    nats_context: str = "",
    state_dir: str | None = None,
) -> SessionStore:
    """The session store registered as ``backend``, built from its ``options`` block, and given
    a NATS connection through ``nats_context`` when it declared that it needs one.

    ``state_dir`` replaces the directory of a backend kept in one (its options have a
    ``directory``) and is refused by any other.
    """
    factory = lookup_backend(backend)
    arguments = dict(options)
    if state_dir:
        if "directory" not in arguments:
            raise FiskError(
                f"--state-dir applies only to the file session backend (or another kept in a "
                f"directory), and harness.sessions.backend is {backend}; drop the flag"
            )
        arguments["directory"] = state_dir
    if "directory" in arguments:
        # A relative directory resolves against the working directory, like every store path.
        arguments["directory"] = Path(arguments["directory"])
    if backend_requires_nats(backend):
        arguments.update(_nats_arguments(backend, nats_context))
    return factory(**arguments)


def _nats_arguments(backend: str, nats_context: str) -> dict[str, Any]:
    """What a backend that reaches NATS is given: the context's name, a way to connect through
    it, and its JetStream options."""
    from fisk_ai.broker.context import connect_options, jetstream_options, load_context

    context = load_context(nats_context or None)

    async def open_connection() -> NatsClient:
        import nats

        try:
            return await nats.connect(
                **connect_options(context), name="fisk-ai sessions", error_cb=_note_client_error
            )
        except (nats.errors.Error, OSError) as failure:
            reason = str(failure).removeprefix("nats: ").strip() or type(failure).__name__
            raise SessionError(
                f"cannot reach NATS at {context.redacted_url} through NATS context "
                f"{context.name} for the {backend} session backend ({reason}); check the "
                "context's url and credentials"
            ) from None

    return {
        "nats_context": context.name,
        "open_connection": open_connection,
        "jetstream_options": jetstream_options(context),
    }


async def _note_client_error(error: Exception) -> None:
    # nats-py reports every failed attempt here; without a callback it prints a traceback.
    _log.debug("session store NATS client error: %s", error)
