"""What a redelivered job is answered when its journal will not resume, or has already
finished, against a real nats-server: a failed run in the queue's own terms (never a command
line's --force), and a finished one with the totals its first answer had."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from fisk_ai.agent.outcome import RunResult
from fisk_ai.agent.resources import Resources
from fisk_ai.agent.settings import AgentSettings
from fisk_ai.broker.server import locate_server_binary
from fisk_ai.llm.errors import ProviderError
from fisk_ai.serve.jobs.channel import (
    JOB_RESUME_ADVICE,
    JobsChannel,
    JobsOptions,
    job_session_id,
)
from fisk_ai.serve.jobs.wire import bind_queue, enqueue
from fisk_ai.serve.server import HostedChannels
from fisk_ai.sessions.file import FileSessionStore
from tests.agent.conftest import SETTINGS, make_runner, toolset
from tests.fakes.events import RecordingSink
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage
from tests.serve.jobs.states import watching

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)

TASK_ID = "2Jz0refusalwording0000000000"
SESSION = job_session_id("worker", TASK_ID)


async def first_delivery(
    store: FileSessionStore, provider: ScriptedProvider, settings: AgentSettings
) -> RunResult:
    """The run of the job's first delivery, journaled under the job's session."""
    async with make_runner(
        provider=provider, tools=toolset(), store=store, events=RecordingSink(), settings=settings
    ) as runner:
        return await runner.start(str(REQUEST["prompt"]), session_id=SESSION)


async def redelivered(client: NatsClient, store: FileSessionStore) -> dict[str, object]:
    """The task record once the job, delivered again, is complete."""
    await make_storage(client)
    resources = Resources(SETTINGS, ScriptedProvider([answer("ran again")]), toolset(), store)
    channel = JobsChannel(
        client,
        resources,
        JobsOptions(identity="worker"),
        await bind_queue(client.jetstream(), QUEUE),
    )
    await channel.open()
    hosted = HostedChannels("worker", resources, [(channel, 1)])
    async with watching(client) as states:
        hosted.start()
        try:
            await enqueue(
                client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode(), task_id=TASK_ID
            )
            return await states.reached(client, TASK_ID, "complete")
        finally:
            await hosted.drain()
            await hosted.close()
            await channel.shutdown()


async def test_a_job_refused_across_a_changed_model_is_a_failed_run(
    client: NatsClient, tmp_path: Path
) -> None:
    store = FileSessionStore(tmp_path / "runs")
    await first_delivery(
        store,
        ScriptedProvider([ProviderError("the endpoint went away")]),
        dataclasses.replace(SETTINGS, model="earlier-model"),
    )

    done = await redelivered(client, store)

    payload = done["result"]["payload"]  # type: ignore[index]
    assert payload["protocol"] == "io.choria.fisk-ai.v1.error"
    assert payload["code"] == "failed"
    assert "force: true" in payload["error"]


async def test_a_redelivered_job_that_had_finished_answers_with_its_first_totals(
    client: NatsClient, tmp_path: Path
) -> None:
    store = FileSessionStore(tmp_path / "runs")
    first = await first_delivery(store, ScriptedProvider([answer("3", tokens=40)]), SETTINGS)

    done = await redelivered(client, store)

    payload = done["result"]["payload"]  # type: ignore[index]
    assert payload["text"] == "3"
    assert payload["usage"] == {
        "input_tokens": first.usage.input_tokens,
        "output_tokens": first.usage.output_tokens,
        "llm_calls": 1,
    }


async def test_a_job_refused_across_a_changed_provider_names_no_command_line_force(
    client: NatsClient, tmp_path: Path
) -> None:
    store = FileSessionStore(tmp_path / "runs")
    await first_delivery(
        store,
        ScriptedProvider([ProviderError("the endpoint went away")], provider="earlier-provider"),
        SETTINGS,
    )

    done = await redelivered(client, store)

    payload = done["result"]["payload"]  # type: ignore[index]
    assert payload["code"] == "failed"
    assert "can never be resumed with scripted" in payload["error"]
    assert "--force" not in payload["error"]
    assert JOB_RESUME_ADVICE.never in payload["error"]
