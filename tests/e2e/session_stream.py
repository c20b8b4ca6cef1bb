"""The JetStream stream the user guide has an operator add for sessions."""

from __future__ import annotations

from nats.js.api import DiscardPolicy, StreamConfig

from fisk_ai.broker.server import EmbeddedBroker

STREAM = "FISK_SESSIONS"


async def add_session_stream(broker: EmbeddedBroker) -> None:
    client = await broker.connect(name="operator")
    try:
        await client.jetstream().add_stream(
            StreamConfig(
                name=STREAM,
                subjects=["fisk.sessions.>"],
                max_msgs_per_subject=1,
                discard=DiscardPolicy.NEW,
                discard_new_per_subject=True,
            )
        )
    finally:
        await client.close()
