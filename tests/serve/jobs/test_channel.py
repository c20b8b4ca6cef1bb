"""The queued-jobs channel against a real nats-server with JetStream: binding, tasks written as
an asyncjobs Go client writes them, answers and state read back as a Go client reads them."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient
from nats.js.api import StreamConfig

from fisk_ai.agent.resources import Resources
from fisk_ai.broker.server import EmbeddedBroker, locate_server_binary
from fisk_ai.errors import FiskError
from fisk_ai.serve.jobs.channel import JobsChannel, JobsOptions, job_session_id
from fisk_ai.serve.jobs.wire import TASKS_STREAM, bind_queue, enqueue, load_task
from fisk_ai.serve.server import HostedChannels
from fisk_ai.sessions.file import FileSessionStore
from fisk_ai.sessions.fold import fold
from tests.agent.conftest import SETTINGS, toolset
from tests.fakes.provider import ScriptedProvider, answer
from tests.serve.jobs.queue_setup import QUEUE, REQUEST, make_storage

pytestmark = pytest.mark.skipif(
    locate_server_binary() is None, reason="no nats-server binary on this machine"
)


async def test_binding_fails_naming_what_to_create(client: NatsClient) -> None:
    js = client.jetstream()
    with pytest.raises(FiskError) as missing:
        await bind_queue(js, QUEUE)
    assert str(missing.value) == (
        'building the jobs endpoint: connecting to queue "FISK_AI": storage not ready: stream '
        "CHORIA_AJ_TASKS does not exist, create it with 'ajc tasks initialize'"
    )
    await js.add_stream(StreamConfig(name=TASKS_STREAM, subjects=["CHORIA_AJ.T.*"]))
    with pytest.raises(FiskError, match="ajc queue add FISK_AI") as no_queue:
        await bind_queue(js, QUEUE)
    assert "expose.agent.jobs.queue" in str(no_queue.value)
    await js.delete_stream(TASKS_STREAM)
    await make_storage(client, consumer=False)
    with pytest.raises(FiskError, match="consumer WORKERS"):
        await bind_queue(js, QUEUE)


async def test_the_consumer_settings_are_read_back(client: NatsClient) -> None:
    await make_storage(client)
    settings = await bind_queue(client.jetstream(), QUEUE)
    assert settings.run_time.total_seconds() == 600
    assert (settings.tries, settings.concurrency) == (3, 10)


async def run_jobs(
    client: NatsClient, tmp_path: Path, provider: ScriptedProvider, task_ids: list[str]
) -> list[dict[str, Any]]:
    resources = Resources(SETTINGS, provider, toolset(), FileSessionStore(tmp_path / "runs"))
    settings = await bind_queue(client.jetstream(), QUEUE)
    channel = JobsChannel(client, resources, JobsOptions(identity="worker"), settings)
    await channel.open()
    hosted = HostedChannels("worker", resources, [(channel, 1)])
    hosted.start()
    documents: list[dict[str, Any]] = []
    try:
        for task_id in task_ids:
            for _ in range(200):
                task = await load_task(client.jetstream(), task_id)
                assert task is not None
                if task.state in {"complete", "terminated"}:
                    documents.append(task.document)
                    break
                await asyncio.sleep(0.05)
            else:
                pytest.fail(f"task {task_id} never finished")
    finally:
        await hosted.drain()
        await hosted.close()
        await channel.shutdown()
    return documents


async def test_a_task_a_go_client_wrote_is_answered_on_the_record(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    # A Go NewTask(type, request) stores the object's bytes; ajc tasks add TYPE PAYLOAD stores
    # the string, so its bytes are a JSON string literal.
    as_object = json.dumps(REQUEST).encode()
    as_string = json.dumps(json.dumps(REQUEST)).encode()
    first = await enqueue(client, QUEUE, "fisk-ai:run", as_object, task_id="-leading:dash")
    second = await enqueue(client, QUEUE, "fisk-ai:run", as_string)
    stored = await load_task(client.jetstream(), first)
    assert stored is not None
    created = stored.document["created"]
    provider = ScriptedProvider([answer("ORDERS has none."), answer("PAYMENTS has none.")])
    documents = await run_jobs(client, tmp_path, provider, [first, second])
    done = documents[0]
    assert done["state"] == "complete"
    assert done["tries"] == 1
    assert done["created"] == created
    assert base64.b64decode(done["payload"]) == as_object
    payload = done["result"]["payload"]
    assert payload["protocol"] == "io.choria.fisk-ai.v1.result"
    assert payload["request"] == REQUEST["id"]
    assert payload["recipient"] == {"name": "ops-console"}
    assert payload["stop_reason"] == "end_turn"
    assert payload["text"] == "ORDERS has none."
    assert documents[1]["result"]["payload"]["text"] == "PAYMENTS has none."
    assert provider.calls == 2
    session = job_session_id("worker", first)
    assert session.startswith("j-") and len(session) == 66
    records = await FileSessionStore(tmp_path / "runs").read(session)
    meta = fold(records).meta
    assert (meta.caller, meta.conversation_token) == ("ops-console", "")


async def test_an_unrunnable_payload_is_terminated_with_the_reason(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    wrong = dict(REQUEST, protocol="io.choria.fisk-ai.v1.request.resume")
    task_id = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(wrong).encode())
    provider = ScriptedProvider([])
    (document,) = await run_jobs(client, tmp_path, provider, [task_id])
    assert document["state"] == "terminated"
    assert document["last_err"].startswith("the payload is not a valid v1 request")
    assert "result" not in document
    assert provider.calls == 0


async def test_a_job_whose_journal_completed_is_answered_without_the_model(
    client: NatsClient, tmp_path: Path
) -> None:
    await make_storage(client)
    task_id = await enqueue(client, QUEUE, "fisk-ai:run", json.dumps(REQUEST).encode())
    await run_jobs(client, tmp_path, ScriptedProvider([answer("done once")]), [task_id])
    # The worker died after the journal completed and before the ack: the task is offered again.
    js = client.jetstream()
    task = await load_task(js, task_id)
    assert task is not None
    task.document["state"] = "active"
    task.document["tried"] = "2020-01-01T00:00:00.000000000Z"
    del task.document["result"]
    await js.publish(f"CHORIA_AJ.T.{task_id}", json.dumps(task.document).encode())
    await js.publish(
        f"CHORIA_AJ.Q.{QUEUE}.{task_id}", json.dumps({"kind": 0, "job": task_id}).encode()
    )
    provider = ScriptedProvider([])
    (document,) = await run_jobs(client, tmp_path, provider, [task_id])
    assert document["result"]["payload"]["text"] == "done once"
    assert document["tries"] == 2
    assert provider.calls == 0


async def test_the_files_jobs_keys_choose_queue_task_type_context_and_payload_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fisk_ai import config
    from fisk_ai.serve.jobs.hosting import take_jobs

    cfg = config.parse(
        "identity: worker\nsystem_prompt: You count.\nllm: {model: m}\n"
        "expose:\n  agent:\n    jobs:\n"
        "      queue: INVENTORY\n      task_type: inventory:run\n      workers: 2\n"
        "      nats_context: stock\n      max_payload: 400\n",
        config.Mode.SERVE,
    )
    async with EmbeddedBroker(jetstream=True) as broker:
        contexts = tmp_path / "nats" / "context"
        contexts.mkdir(parents=True)
        (contexts / "stock.json").write_text(json.dumps({"url": broker.url, "token": broker.token}))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        client = await broker.connect(name="test")
        await make_storage(client, queue="INVENTORY")
        fits = await enqueue(client, "INVENTORY", "inventory:run", json.dumps(REQUEST).encode())
        too_big = dict(REQUEST, prompt="x" * 500)
        over = await enqueue(client, "INVENTORY", "inventory:run", json.dumps(too_big).encode())
        other_type = await enqueue(client, "INVENTORY", "fisk-ai:run", json.dumps(REQUEST).encode())
        resources = Resources(
            SETTINGS, ScriptedProvider([answer("42 crates")]), toolset(), FileSessionStore(tmp_path)
        )
        async with take_jobs(cfg, resources, workers=None) as channel:
            assert channel.options.workers == 2
            hosted = HostedChannels("worker", resources, [(channel, channel.options.workers)])
            hosted.start()
            try:
                states: dict[str, str] = {}
                for _ in range(200):
                    for task_id in (fits, over):
                        task = await load_task(client.jetstream(), task_id)
                        assert task is not None
                        states[task_id] = task.state
                    if {states[fits], states[over]} <= {"complete", "terminated"}:
                        break
                    await asyncio.sleep(0.05)
            finally:
                await hosted.drain()
                await hosted.close()
        finished = await load_task(client.jetstream(), over)
        untouched = await load_task(client.jetstream(), other_type)
        await client.close()

    assert (states[fits], states[over]) == ("complete", "terminated")
    assert finished is not None
    assert "over the 400-byte expose.agent.jobs.max_payload" in finished.document["last_err"]
    assert untouched is not None and untouched.state == "new"
