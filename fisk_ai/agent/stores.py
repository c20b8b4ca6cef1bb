"""The session store a command uses, from agent.yaml and the --state-dir flag."""

from __future__ import annotations

from pathlib import Path

from fisk_ai import config
from fisk_ai.errors import FiskError
from fisk_ai.sessions import FileSessionStore, SessionStore, default_state_directory, lookup_backend


def session_store_for(cfg: config.Config | None, state_dir: str | None) -> SessionStore:
    """The configured session backend; ``--state-dir`` overrides the file backend's directory
    and is refused with any other backend rather than silently ignored."""
    if cfg is None:
        return FileSessionStore(Path(state_dir) if state_dir else default_state_directory())
    sessions = cfg.harness.sessions
    if sessions.backend is not config.StoreBackend.FILE:
        if state_dir:
            raise FiskError(
                f"--state-dir applies only to the file session backend, and "
                f"harness.sessions.backend is {sessions.backend.value}; drop the flag"
            )
        factory = lookup_backend(sessions.backend.value)
        return factory(**sessions.options)
    options = sessions.backend_options
    assert isinstance(options, config.FileSessionsOptions)
    # A relative directory resolves against the working directory, like every store path.
    return FileSessionStore(Path(state_dir) if state_dir else Path(options.directory))
