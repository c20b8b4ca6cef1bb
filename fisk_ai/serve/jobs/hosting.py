"""The queued-jobs channel as `fisk serve` hosts it: its own connection to the queue's NATS
context, the storage bound (never created), the consumer's settings read back."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from fisk_ai.errors import FiskError

if TYPE_CHECKING:
    from fisk_ai.agent.resources import Resources
    from fisk_ai.config import Config
    from fisk_ai.serve.jobs.channel import JobsChannel

__all__ = ["take_jobs"]


@contextlib.asynccontextmanager
async def take_jobs(
    cfg: Config, resources: Resources, *, workers: int | None
) -> AsyncIterator[JobsChannel]:
    """The jobs channel of ``cfg`` over ``resources``, bound to its queue and open; ``workers``
    (the --workers flag) overrides expose.agent.jobs.workers. The connection closes on exit."""
    from fisk_ai.broker.context import connect_options, load_context
    from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions
    from fisk_ai.serve.jobs.wire import bind_queue, check_queue_name
    from fisk_ai.serve.stores import check_session_store

    jobs = cfg.expose.agent.jobs
    assert jobs is not None, "only called with expose.agent.jobs set"
    if workers is not None and workers < 1:
        raise FiskError(f"--workers {workers} runs no job; give 1 or more")
    check_queue_name(jobs.queue, where="expose.agent.jobs.queue")
    # A job that cannot journal would only go back to the queue, again and again.
    await check_session_store(resources.store)
    context = load_context(jobs.nats_context or cfg.nats_context or None)
    import nats

    try:
        client = await nats.connect(
            **connect_options(context),
            name=f"fisk-ai {cfg.identity} jobs",
            max_reconnect_attempts=-1,
        )
    except Exception as error:
        reason = str(error) or type(error).__name__
        raise FiskError(
            f"building the jobs endpoint: cannot connect to NATS at {context.redacted_url} (NATS "
            f'context "{context.name}"): {reason}; check expose.agent.jobs.nats_context and the '
            "context's url and credentials"
        ) from None
    try:
        settings = await bind_queue(client.jetstream(), jobs.queue)
        channel = JobsChannel(
            client,
            resources,
            JobsOptions(
                identity=cfg.identity,
                queue=jobs.queue,
                task_type=jobs.task_type,
                workers=workers if workers is not None else jobs.workers,
                max_payload=jobs.max_payload,
            ),
            settings,
        )
        await channel.open()
        try:
            yield channel
        finally:
            await channel.shutdown()
    finally:
        await client.close()
