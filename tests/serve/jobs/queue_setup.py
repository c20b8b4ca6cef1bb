"""The work queue as `ajc` sets it up, and a prompt request as a Go asyncjobs client enqueues it."""

from __future__ import annotations

from nats.aio.client import Client as NatsClient
from nats.js.api import AckPolicy, ConsumerConfig, DiscardPolicy, RetentionPolicy, StreamConfig

from fisk_ai.serve.jobs.wire import TASKS_STREAM

QUEUE = "FISK_AI"
REQUEST = {
    "protocol": "io.choria.fisk-ai.v1.request.prompt",
    "id": "2fT8kMxQ1aBcDeFgHiJkLmNoPqR",
    "request": "2fT8kMxQ1aBcDeFgHiJkLmNoPqR",
    "conversation": "2fT8kMxQ1aBcDeFgHiJkLmNoPqR",
    "sequence": 0,
    "time": "2026-08-15T11:30:00Z",
    "sender": {"name": "ops-console"},
    "prompt": "Which streams have no consumers?",
}


async def make_storage(
    client: NatsClient, *, tasks: bool = True, consumer: bool = True, queue: str = QUEUE
) -> None:
    """What `ajc tasks initialize` and `ajc queue add FISK_AI --run-time 10m --tries 3
    --concurrent 10` create (for ``queue``)."""
    js = client.jetstream()
    if tasks:
        await js.add_stream(
            StreamConfig(name=TASKS_STREAM, subjects=["CHORIA_AJ.T.*"], max_msgs_per_subject=1)
        )
    await js.add_stream(
        StreamConfig(
            name=f"CHORIA_AJ_Q_{queue}",
            subjects=[f"CHORIA_AJ.Q.{queue}.>"],
            retention=RetentionPolicy.WORK_QUEUE,
            max_msgs_per_subject=1,
            discard=DiscardPolicy.NEW,
        )
    )
    if consumer:
        await js.add_consumer(
            f"CHORIA_AJ_Q_{queue}",
            ConsumerConfig(
                durable_name="WORKERS",
                ack_policy=AckPolicy.EXPLICIT,
                ack_wait=600,
                max_ack_pending=10,
                max_deliver=3,
            ),
        )
