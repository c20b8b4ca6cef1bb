"""The JetStream stream that holds sessions, as the user guide's `nats stream add` makes it."""

from __future__ import annotations

from typing import Any

from nats.js.api import DiscardPolicy, StreamConfig

STREAM = "FISK_SESSIONS"
PREFIX = "fisk.sessions"


def session_stream(**changes: Any) -> StreamConfig:
    """The stream the user guide's `nats stream add` makes, with ``changes`` applied."""
    settings: dict[str, Any] = {
        "name": STREAM,
        "subjects": [f"{PREFIX}.>"],
        "max_msgs_per_subject": 1,
        "discard": DiscardPolicy.NEW,
        "discard_new_per_subject": True,
    }
    settings.update(changes)
    return StreamConfig(**settings)
